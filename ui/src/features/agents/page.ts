// The Agents page (issue 15, point 1): the agent profiles as a table (name, provider and model,
// the tools each may see, its limits, whom it may delegate to) with Edit and Remove, a form for a
// new or edited profile, and the profiles as a TOML file to export or import. Profiles can come
// from someone else's file, so everything shown goes in as text through h(); Rust checks every
// save and import and answers a refusal with a sentence, shown as it is.
import "./agents.css";
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import type { AgentDto_Serialize as Agent } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { modal } from "../../app/modal";
import { budgetSummary, scopeSummary, toAgent, toForm, type AgentForm, type Delegation } from "./form";

function confirmRemove(name: string, onYes: () => void): HTMLDialogElement {
  const cancel = h("button", { type: "button", class: "agents-confirm-no", autofocus: true }, "Cancel");
  const ok = h("button", { type: "button", class: "danger agents-confirm-yes" }, "Remove");
  const title = `Remove agent ${name}?`;
  const m = modal("confirm-dialog agents-confirm", title, [h("h2", {}, title),
    h("p", {}, "Its profile is deleted; past runs keep its name."), h("div", { class: "actions" }, cancel, ok)]);
  cancel.addEventListener("click", m.close);
  ok.addEventListener("click", () => {
    m.close();
    onYes();
  });
  queueMicrotask(() => cancel.focus());
  return m.dialog;
}

function delegatesText(a: Agent): string {
  if (a.delegates === null || a.delegates === undefined) return "every agent";
  return a.delegates.length === 0 ? "nobody" : a.delegates.join(", ");
}

const field = (label: string, input: HTMLElement, hint?: string) =>
  h("label", { class: "agents-field" }, h("span", {}, label), input, hint ? h("span", { class: "hint" }, hint) : null);

export function mountAgents(root: HTMLElement): () => void {
  let disposed = false;
  let editing: string | null = null;
  const body = h("tbody", {});
  const error = h("p", { class: "error agents-error", role: "alert", hidden: true });
  const status = h("p", { class: "notice agents-status", role: "status", hidden: true });
  const say = (el: HTMLElement, m: string | null) => {
    el.hidden = m === null;
    el.textContent = m ?? "";
  };

  // The form.
  const input = (cls: string, extra: Record<string, string> = {}) =>
    h("input", { class: cls, autocomplete: "off", spellcheck: "false", ...extra });
  const area = (cls: string, rows: string) => h("textarea", { class: cls, rows, spellcheck: "false" });
  const f = {
    name: input("agents-name"),
    description: input("agents-description"),
    provider: h("select", { class: "agents-provider" }),
    model: input("agents-model", { placeholder: "the provider's default" }),
    system: area("agents-system", "4"),
    servers: area("agents-servers", "2"),
    tools: area("agents-tools", "2"),
    ask: area("agents-ask", "2"),
    deny: area("agents-deny", "2"),
    delegation: h("select", { class: "agents-delegation" },
      h("option", { value: "any" }, "every agent"), h("option", { value: "none" }, "nobody"), h("option", { value: "some" }, "only these:")),
    delegates: area("agents-delegates", "2"),
    discovery: h("input", { type: "checkbox", class: "agents-discovery" }),
    maxTokens: input("agents-max-tokens", { inputmode: "numeric" }),
    maxCost: input("agents-max-cost", { inputmode: "decimal" }),
    maxCalls: input("agents-max-calls", { inputmode: "numeric" }),
    maxTime: input("agents-max-time", { inputmode: "numeric" }),
  };
  const formError = h("p", { class: "error agents-form-error", role: "alert", hidden: true });
  const formTitle = h("h2", { id: "agents-form-title" }, "New agent");
  const save = h("button", { type: "button", class: "primary agents-save" }, "Save");
  const cancel = h("button", { type: "button", class: "agents-cancel" }, "Cancel");
  const form = h("section", { class: "agents-form", "aria-labelledby": "agents-form-title", hidden: true },
    formTitle,
    field("Name", f.name, "Lowercase letters, digits, '-' and '_'."),
    field("What it is for", f.description, "The supervisor reads this when choosing whom to delegate to."),
    field("Provider", f.provider), field("Model", f.model), field("System prompt", f.system),
    field("Servers", f.servers, "One per line; * for every server. None: the agent sees no tools."),
    field("Tools", f.tools, "server/tool patterns, * as a wildcard; empty: every tool of those servers."),
    field("Always ask for", f.ask, "server/tool patterns; these calls ask even where your policy allows them."),
    field("Refuse", f.deny, "server/tool patterns; these calls are denied."),
    field("May delegate to", f.delegation), field("Agents", f.delegates, "One per line."),
    field("Find tools as needed", f.discovery, "For large catalogs: it is offered a search over the tools in its scope and loads what it needs, instead of every definition in every request. Calls still ask as usual."),
    h("div", { class: "agents-budget" },
      field("Tokens", f.maxTokens), field("Cost (USD)", f.maxCost), field("Tool calls", f.maxCalls), field("Time (s)", f.maxTime)),
    h("p", { class: "hint" }, "Blank limits are no limits."),
    formError, h("div", { class: "actions" }, cancel, save));
  const syncDelegates = () => (f.delegates.disabled = f.delegation.value !== "some");
  f.delegation.addEventListener("change", syncDelegates);
  f.delegation.addEventListener("input", syncDelegates);

  // Each opening of the form fills the provider list once; an answer for an earlier opening
  // that arrives late must not reset what the person has chosen since.
  let opening = 0;
  const fillProviders = async (chosen: string) => {
    const mine = ++opening;
    const r = await attempt(ipc.listProviders());
    if (mine !== opening) return;
    const names = r instanceof IpcFailure ? [] : r.map((p) => p.name);
    f.provider.replaceChildren(h("option", { value: "" }, "(choose a provider)"),
      ...names.map((n) => h("option", { value: n }, n)),
      ...(chosen && !names.includes(chosen) ? [h("option", { value: chosen }, `${chosen} (not configured)`)] : []));
    f.provider.value = chosen;
  };
  const open = (a: Agent | null) => {
    editing = a?.name ?? null;
    const v = toForm(a);
    for (const k of Object.keys(f) as (keyof AgentForm)[]) if (k !== "provider" && k !== "discovery") f[k].value = v[k];
    f.discovery.checked = v.discovery;
    f.name.readOnly = a !== null;
    formTitle.textContent = a ? `Edit agent ${a.name}` : "New agent";
    say(formError, null);
    syncDelegates();
    form.hidden = false;
    // Until the list arrives the select offers nothing, so no choice is made from a stale list
    // and then reset by the fresh one.
    f.provider.replaceChildren();
    void fillProviders(v.provider);
    (a ? f.description : f.name).focus();
  };
  const values = (): AgentForm => ({
    ...(Object.fromEntries(Object.entries(f).map(([k, el]) => [k, el.value])) as unknown as AgentForm),
    delegation: f.delegation.value as Delegation,
    discovery: f.discovery.checked,
  });
  cancel.addEventListener("click", () => (form.hidden = true));
  save.addEventListener("click", async () => {
    const checked = toAgent(values());
    if (!checked.ok) return say(formError, checked.why);
    // Disabled while the save is in flight only: the list's reload after it must not hold the
    // button of the next agent someone is already filling in.
    save.disabled = true;
    const r = await attempt(ipc.saveAgent(checked.agent, editing === null)).finally(() => (save.disabled = false));
    if (r instanceof IpcFailure) return say(formError, r.message);
    form.hidden = true;
    say(status, `Agent ${checked.agent.name} saved.`);
    await reload();
  });

  // The table.
  const row = (a: Agent) => h("tr", { class: "agent-row", "data-name": a.name },
    h("td", { class: "agent-name" }, h("strong", {}, a.name), a.description ? h("div", { class: "hint" }, a.description) : null),
    h("td", { class: "agent-model" }, a.model ? `${a.provider} · ${a.model}` : `${a.provider} (default model)`),
    h("td", { class: "agent-scope" }, scopeSummary(a),
      ...[...a.ask.map((p) => `ask ${p}`), ...a.deny.map((p) => `deny ${p}`)].map((t) => h("div", { class: "hint agent-override" }, t))),
    h("td", { class: "agent-budget" }, budgetSummary(a)),
    h("td", { class: "agent-delegates" }, delegatesText(a)),
    h("td", { class: "agent-actions" },
      h("button", { type: "button", class: "agent-edit", onclick: () => open(a), "aria-label": `Edit agent ${a.name}` }, "Edit"),
      h("button", { type: "button", class: "danger agent-remove", "aria-label": `Remove agent ${a.name}`,
        onclick: () => root.append(confirmRemove(a.name, async () => {
          const r = await attempt(ipc.removeAgent(a.name));
          say(error, failureMessage(r));
          if (!(r instanceof IpcFailure)) say(status, `Agent ${a.name} removed.`);
          await reload();
        })) }, "Remove")));
  let seq = 0;
  const reload = async () => {
    const mine = ++seq;
    const r = await attempt(ipc.listAgents());
    if (disposed || mine !== seq) return;
    if (r instanceof IpcFailure) return say(error, r.message);
    body.replaceChildren(...(r.length === 0
      ? [h("tr", {}, h("td", { colspan: "6", class: "hint agents-empty" }, "No agents yet. An agent is a model with its own instructions, tools and limits; add one with \"New agent\"."))]
      : r.map(row)));
  };

  // The file.
  const file = h("textarea", { class: "agents-toml", rows: "10", spellcheck: "false", "aria-label": "Agent profiles (TOML)" });
  const replace = h("input", { type: "checkbox", class: "agents-replace" });
  const fileError = h("pre", { class: "error agents-file-error", role: "alert", hidden: true });
  const exportBtn = h("button", { type: "button", class: "agents-export" }, "Show as TOML");
  const importBtn = h("button", { type: "button", class: "primary agents-import" }, "Import");
  exportBtn.addEventListener("click", async () => {
    const r = await attempt(ipc.exportAgents());
    if (r instanceof IpcFailure) return say(fileError, r.message);
    say(fileError, null);
    file.value = r;
  });
  importBtn.addEventListener("click", async () => {
    importBtn.disabled = true;
    try {
      const r = await attempt(ipc.importAgents(file.value, replace.checked));
      if (r instanceof IpcFailure) return say(fileError, r.message);
      say(fileError, null);
      const n = r.added.length + r.replaced.length;
      say(status, `${n} ${n === 1 ? "agent" : "agents"} imported${r.replaced.length ? ` (replaced: ${r.replaced.join(", ")})` : ""}.`);
      await reload();
    } finally {
      importBtn.disabled = false;
    }
  });

  const add = h("button", { type: "button", class: "primary add agents-new", onclick: () => open(null) }, "New agent");
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Agents"), add),
    h("p", { class: "hint" }, "Each agent runs on its own provider and model, sees only the servers and tools you give it, can only make your policy stricter, and stops at its limits."),
    error, status, form,
    h("div", { class: "agents-table-wrap" }, h("table", { class: "agents-table" },
      h("thead", {}, h("tr", {}, ...["Agent", "Runs on", "Tools", "Limits", "Delegates to", ""].map((t) => h("th", { scope: "col" }, t)))),
      body)),
    h("section", { class: "agents-file", "aria-labelledby": "agents-file-title" },
      h("h2", { id: "agents-file-title" }, "As a file"),
      h("p", { class: "hint" }, "Show the profiles as TOML to copy them, or paste a file and import it. An import checks every profile first: on a mistake nothing changes."),
      file, fileError,
      h("div", { class: "actions" }, exportBtn, h("label", { class: "agents-replace-label" }, replace, " replace agents with the same name"), importBtn)),
  );
  void reload();
  return () => {
    disposed = true;
  };
}
