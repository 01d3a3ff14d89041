// The Registry page (issue 14, point 3): browse and search the MCP Registry set in Settings,
// open an entry, fill in what it needs, and install it. Installing only adds the server: the
// trust dialog then shows exactly what would run or be contacted, and nothing starts before
// the person allows it (SP-01, SP-10). Secret fields are password fields; their values are
// sent once with the install and go to the keyring. What its tools will cost per turn cannot be
// known before it runs (registry entries list no tools); the dialog says so, and the trust
// dialog repeats it for the new server.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type {
  RegistryDetailDto_Serialize as RegistryDetailDto,
  RegistryEntryDto_Serialize as RegistryEntryDto,
  RegistryInputDto_Serialize as RegistryInputDto,
  RegistryOptionDto_Serialize as RegistryOptionDto,
} from "../../ipc/bindings";
import { emptyState, h } from "../../app/dom";
import { modal } from "../../app/modal";
import { trustDialog } from "../servers";
import { loadCosts, REGISTRY_COST_NOTE } from "../catalog";
import { answersFor, fieldKey, kindLabel, missingRequired, short } from "./form";
import "./registry.css";

export function mountRegistry(root: HTMLElement): () => void {
  const query = h("input", { type: "search", class: "registry-query", placeholder: "Search server names", "aria-label": "Search the registry" });
  const list = h("section", { class: "registry-list", "aria-live": "polite" });
  const notice = h("p", { class: "notice registry-offline", role: "status", hidden: true });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const more = h("button", { type: "button", class: "registry-more", hidden: true }, "More");
  let cursor: string | null = null;

  const showError = (msg: string | null) => {
    error.textContent = msg ?? "";
    error.hidden = msg === null;
  };

  const load = async (append: boolean, refresh = false) => {
    const text = query.value.trim();
    const r = await attempt(ipc.registrySearch(text === "" ? null : text, append ? cursor : null, refresh));
    if (r instanceof IpcFailure) return showError(r.message);
    showError(null);
    notice.textContent = r.offline ?? "";
    notice.hidden = r.offline === null;
    cursor = r.next_cursor;
    more.hidden = cursor === null;
    const rows = r.entries.map(row);
    if (append) list.append(...rows);
    else list.replaceChildren(...(rows.length ? rows : [emptyState("Nothing found", "No active entry matches. Try another name.")]));
  };

  const row = (e: RegistryEntryDto) =>
    h("article", { class: "registry-entry", "data-name": e.name },
      h("h2", {}, e.title ?? e.name, " ", h("span", { class: "version" }, e.version)),
      e.title ? h("p", { class: "registry-name" }, e.name) : null,
      h("p", { class: "description" }, short(e.description)),
      h("button", { type: "button", class: "registry-open", onclick: () => void open(e.name) }, e.installable ? "Details and install…" : "Details"));

  const open = async (name: string) => {
    const r = await attempt(ipc.registryShow(name));
    if (r instanceof IpcFailure) return showError(r.message);
    root.append(detailDialog(r, (server) => void review(server)));
  };

  // The new server's trust dialog, exactly as the Servers page shows it.
  const review = async (server: string) => {
    const v = await attempt(ipc.trustView(server, []));
    if (v instanceof IpcFailure) return showError(v.message);
    root.append(trustDialog(v, (fp, bindings) => void attempt(ipc.approveServer(server, fp, bindings)).then((a) => {
      if (a instanceof IpcFailure) showError(a.message);
    }), async (bindings) => {
      const again = await attempt(ipc.trustView(server, bindings));
      return again instanceof IpcFailure ? again.message : again;
    }, loadCosts()));
  };

  const search = h("form", { class: "registry-search", onsubmit: (ev: Event) => { ev.preventDefault(); void load(false); } },
    query, h("button", { type: "submit" }, "Search"),
    h("button", { type: "button", class: "registry-refresh", onclick: () => void load(false, true) }, "Refresh"));
  more.addEventListener("click", () => void load(true));
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Registry")),
    h("p", { class: "hint" }, "Servers published in the MCP Registry (the registry URL is in Settings). Installing adds a server; you approve exactly what it runs before it starts."),
    search, notice, error, list, more,
  );
  void load(false);
  return () => {};
}

/** An entry's details and install form; `installed` gets the new server's name. */
export function detailDialog(d: RegistryDetailDto, installed: (server: string) => void): HTMLDialogElement {
  const usable = d.options.filter((o) => o.refused === null);
  let chosen: RegistryOptionDto | null = usable[0] ?? null;
  const values = new Map<string, string>();
  const fields = h("div", { class: "registry-fields" });
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const name = h("input", { type: "text", class: "registry-server-name", value: d.suggested_name ?? "", "aria-label": "Server name" });
  const install = h("button", { type: "button", class: "primary registry-install", disabled: chosen === null }, "Install…");

  const renderFields = () => {
    values.clear();
    fields.replaceChildren(...(chosen?.inputs ?? []).map(field));
  };
  const field = (i: RegistryInputDto) => {
    const id = `reg-${fieldKey(i).replace(/[^A-Za-z0-9_-]/g, "_")}`;
    const label = h("label", { for: id }, `${i.name} (${kindLabel(i.kind)}${i.required ? ", required" : ""}${i.secret ? ", secret: kept in the keyring" : ""})`);
    const control = i.choices.length
      ? h("select", { id, "data-key": fieldKey(i) }, h("option", { value: "" }, i.default ? `default: ${i.default}` : "—"), ...i.choices.map((c) => h("option", { value: c }, c)))
      : h("input", { id, "data-key": fieldKey(i), type: i.secret ? "password" : "text", autocomplete: "off", placeholder: i.default ?? "" });
    control.addEventListener("input", () => values.set(fieldKey(i), (control as HTMLInputElement).value));
    control.addEventListener("change", () => values.set(fieldKey(i), (control as HTMLInputElement).value));
    return h("div", { class: "registry-field" }, label, control, i.description ? h("p", { class: "hint" }, short(i.description, 400)) : null);
  };

  const options = h("fieldset", { class: "registry-options" }, h("legend", {}, "How to run it"),
    ...d.options.map((o) => h("label", { class: o.refused ? "refused" : "" },
      h("input", { type: "radio", name: "registry-option", value: String(o.index), disabled: o.refused !== null, checked: o === chosen,
        onchange: () => { chosen = o; install.disabled = false; renderFields(); } }),
      " ", h("code", {}, o.label),
      o.refused ? h("span", { class: "refused-reason" }, ` — cannot be used: ${o.refused}`) : null)));

  const { dialog, close } = modal("registry-dialog", `Install ${d.entry.name}`, [
    h("h2", {}, d.entry.title ?? d.entry.name, " ", h("span", { class: "version" }, d.entry.version)),
    h("p", { class: "registry-name" }, d.entry.name),
    h("p", { class: "description" }, short(d.entry.description, 2000)),
    d.entry.repository ? h("p", { class: "hint" }, `Source: ${d.entry.repository}`) : null,
    // Issue 16: the cost is said before installing, honestly: the registry lists no tools.
    h("p", { class: "hint registry-cost" }, REGISTRY_COST_NOTE),
    options,
    h("div", { class: "registry-field" }, h("label", {}, "Server name here"), name),
    fields,
    failure,
    h("div", { class: "actions" }, h("button", { type: "button", onclick: () => close() }, "Cancel"), install),
  ]);
  install.addEventListener("click", () => void (async () => {
    if (!chosen) return;
    const missing = missingRequired(chosen.inputs, values);
    if (missing.length) {
      failure.textContent = `Required: ${missing.join(", ")}`;
      failure.hidden = false;
      return;
    }
    install.disabled = true;
    const r = await attempt(ipc.registryInstall({
      registry_name: d.entry.name, version: d.entry.version, option: chosen.index,
      server_name: name.value.trim(), answers: answersFor(chosen.inputs, values),
    }));
    values.clear();
    if (r instanceof IpcFailure) {
      failure.textContent = r.message;
      failure.hidden = false;
      install.disabled = false;
      return;
    }
    close();
    installed(r);
  })());
  renderFields();
  return dialog;
}
