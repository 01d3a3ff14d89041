// The Prompts page: the prompt templates every running server offers, each with a small form
// for its arguments, so a user can see exactly which messages a prompt expands to before using
// it. Argument values can be completed by the server when it says it supports completion; the
// suggestions go into a <datalist> whose id comes from a counter, never from a server name.
// Every server string goes in as text through h(); message contents go through renderContent.
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import { errorLine } from "../../app/error-line";
import type { PromptDto_Serialize, PromptResultDto_Serialize, ServerContextDto_Serialize } from "../../ipc/bindings";
import { emptyState as empty, h, matchesQuery as matches } from "../../app/dom";
import { onHostChange, setServerOptions } from "../../app/live";
import { pressGuard } from "../../app/press-guard";
import { renderContent } from "../catalog";
import { waitingBar } from "./waiting";
import "./context.css";

const LIMIT = 300;
/** How long typing pauses before a completion request, in ms. */
export const COMPLETE_DELAY = 200;
/** At most this many completion values are offered. */
const MAX_OPTIONS = 100;
let nextId = 0;


function renderResult(r: PromptResultDto_Serialize): Node[] {
  const out: Node[] = [];
  if (r.description) out.push(h("p", { class: "ctx-prompt-description" }, r.description));
  if (r.messages.length === 0) out.push(h("p", { class: "hint" }, "The prompt has no messages."));
  for (const m of r.messages) {
    // The role only picks one of two fixed classes; its text is shown as given.
    const cls = m.role === "assistant" ? "assistant" : "user";
    out.push(h("article", { class: `ctx-message role-${cls}` }, h("h4", { class: "ctx-role" }, m.role), renderContent(m.content)));
  }
  return out;
}

export function mountPrompts(root: HTMLElement): () => void {
  let servers: ServerContextDto_Serialize[] = [];
  let disposed = false;
  /** Open forms, kept across re-renders so typed values and results survive a search. */
  const forms = new Map<string, HTMLElement>();
  const open = new Set<string>();
  const timers = new Set<number>();
  const search = h("input", { type: "search", placeholder: "Search prompts", class: "prompt-search", "aria-label": "Search prompts" });
  const which = h("select", { class: "prompt-server", "aria-label": "Server" });
  const error = errorLine();
  const list = h("section", { class: "prompts" });
  const waiting = waitingBar("prompts", error.action);
  root.replaceChildren(h("header", { class: "bar" }, h("h1", {}, "Prompts"), search, which), error.element, waiting.element, list);
  // The cards are rebuilt on every host change: one rebuilt between a press and its release
  // would lose the click (app/press-guard.ts).
  const guard = pressGuard(list);

  const buildForm = (ctx: ServerContextDto_Serialize, p: PromptDto_Serialize): HTMLElement => {
    const server = ctx.server;
    const get = h("button", { type: "submit", class: "get-prompt primary" }, "Get prompt");
    const out = h("div", { class: "ctx-result", "aria-live": "polite" });
    const fields = p.arguments.map((a) => {
      const n = ++nextId;
      const id = `ctx-arg-${n}`;
      const listId = `ctx-arg-${n}-values`;
      const helpId = `ctx-arg-${n}-help`;
      const input = h("input", {
        id, type: "text", class: "ctx-arg", autocomplete: "off",
        "aria-required": a.required ? "true" : "false",
        "aria-describedby": a.description ? helpId : false,
        list: ctx.completions ? listId : false,
      });
      const datalist = ctx.completions ? h("datalist", { id: listId }) : null;
      if (datalist) {
        let timer: number | undefined;
        let seq = 0;
        input.addEventListener("input", () => {
          const mine = ++seq; // any later keystroke makes this request stale
          if (timer !== undefined) { window.clearTimeout(timer); timers.delete(timer); }
          const t = window.setTimeout(async () => {
            timers.delete(t);
            if (disposed) return;
            const r = await attempt(ipc.completePromptArgument(server, p.name, a.name, input.value));
            if (disposed || mine !== seq || r instanceof IpcFailure) return;
            datalist.replaceChildren(...r.slice(0, MAX_OPTIONS).map((v) => h("option", { value: v })));
          }, COMPLETE_DELAY);
          timer = t;
          timers.add(t);
        });
      }
      const el = h("div", { class: "ctx-field" },
        h("label", { for: id }, a.name, a.required ? " " : null, a.required ? h("span", { class: "ctx-required" }, "(required)") : null),
        input,
        datalist,
        a.description ? h("p", { id: helpId, class: "ctx-help" }, a.description) : null,
      );
      return { a, input, el };
    });
    const sync = () => { get.disabled = fields.some((f) => f.a.required && f.input.value.trim() === ""); };
    for (const f of fields) f.input.addEventListener("input", sync);
    sync();
    let getSeq = 0;
    const form = h("form", { class: "ctx-form" }, ...fields.map((f) => f.el), h("div", { class: "actions" }, get), out);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (get.disabled) return;
      const mine = ++getSeq;
      // Object.fromEntries makes own properties, so even an argument named __proto__ is sent.
      const args = Object.fromEntries(fields.filter((f) => f.input.value.trim() !== "").map((f) => [f.a.name, f.input.value]));
      out.replaceChildren(h("p", { class: "hint" }, "Getting the prompt…"));
      let shown: Node[];
      try {
        const r = await attempt(ipc.getPrompt(server, p.name, args, null));
        shown = r instanceof IpcFailure ? [h("p", { class: "error", role: "alert" }, r.message)] : renderResult(r);
      } catch (err) {
        shown = [h("p", { class: "error", role: "alert" }, err instanceof Error ? err.message : String(err))];
      }
      if (disposed || mine !== getSeq) return;
      out.replaceChildren(...shown);
    });
    if (fields.length === 0) form.prepend(h("p", { class: "hint" }, "This prompt takes no arguments."));
    return form;
  };

  const keyOf = (ctx: ServerContextDto_Serialize, p: PromptDto_Serialize) =>
    JSON.stringify([ctx.server, ctx.completions, p.name, p.arguments]);

  const promptCard = (ctx: ServerContextDto_Serialize, p: PromptDto_Serialize) => {
    const key = keyOf(ctx, p);
    const slotId = `ctx-prompt-${++nextId}`;
    const slot = h("div", { id: slotId, class: "ctx-slot" });
    const toggle = h("button", { class: "open", "aria-controls": slotId, "aria-label": `Open ${p.title ?? p.name}` });
    const show = (isOpen: boolean) => {
      toggle.textContent = isOpen ? "Close" : "Open";
      toggle.setAttribute("aria-expanded", String(isOpen));
      toggle.setAttribute("aria-label", `${isOpen ? "Close" : "Open"} ${p.title ?? p.name}`);
      if (!isOpen) { slot.replaceChildren(); return; }
      let form = forms.get(key);
      if (!form) { form = buildForm(ctx, p); forms.set(key, form); }
      slot.replaceChildren(form);
    };
    toggle.addEventListener("click", () => {
      const isOpen = !open.has(key);
      if (isOpen) open.add(key); else open.delete(key);
      show(isOpen);
      if (isOpen) slot.querySelector<HTMLElement>("input, button.get-prompt")?.focus();
    });
    show(open.has(key));
    return h("article", { class: "tool ctx-prompt" },
      h("div", { class: "head" },
        h("h3", {}, p.title ?? p.name),
        p.title ? h("code", { class: "tool-name" }, p.name) : null,
        h("span", { class: "tool-server-name" }, ctx.server),
        toggle,
      ),
      p.description ? h("p", { class: "description" }, p.description) : null,
      slot,
    );
  };

  const render = () => {
    if (servers.length === 0) {
      list.replaceChildren(empty("No running servers", "Approve a server on the Servers page; servers start when needed, and those not running yet are listed above with a Start button."));
      return;
    }
    if (servers.every((s) => s.prompts.length === 0)) {
      list.replaceChildren(empty("No prompts", "The running servers offer no prompts."));
      return;
    }
    const q = search.value.trim().toLowerCase();
    const entries = servers
      .filter((s) => which.value === "" || s.server === which.value)
      .flatMap((ctx) => ctx.prompts.filter((p) => matches(q, ctx.server, p.name, p.title, p.description)).map((p) => ({ ctx, p })));
    if (entries.length === 0) {
      list.replaceChildren(empty("Nothing matches", "No prompt matches the search and server filter."));
      return;
    }
    list.replaceChildren(
      h("p", { class: "count" }, `${entries.length} prompts`),
      ...entries.slice(0, LIMIT).map(({ ctx, p }) => promptCard(ctx, p)),
    );
  };

  const refresh = async () => {
    const r = await attempt(ipc.serverContext());
    if (disposed) return;
    error.read(failureMessage(r));
    if (r instanceof IpcFailure) return;
    servers = r;
    void waiting.update();
    // Forget forms of prompts that are gone or changed.
    const live = new Set(servers.flatMap((ctx) => ctx.prompts.map((p) => keyOf(ctx, p))));
    for (const k of [...forms.keys()]) if (!live.has(k)) forms.delete(k);
    for (const k of [...open]) if (!live.has(k)) open.delete(k);
    setServerOptions(which, servers.map((s) => s.server));
    guard.run(render);
  };

  search.addEventListener("input", render);
  which.addEventListener("change", render);
  const stop = onHostChange(["catalog", "status", "servers"], () => void refresh());
  void refresh();
  return () => {
    disposed = true;
    stop();
    guard.dispose();
    for (const t of timers) window.clearTimeout(t);
  };
}
