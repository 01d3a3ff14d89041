// The add/edit server dialog: local (stdio) or remote (Streamable HTTP), validated as you type.
// Values ticked "secret", and values that look like credentials, go to the OS keyring in the
// server's own namespace; the form never reads them back: editing shows a stored secret as "set"
// or "not set", and leaving it empty keeps it (SE-05). Another namespace's secret (a provider's
// key) can only be bound in the approval dialog.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { AddServerRequest, FormEntryDto, ServerFormDto, ValueEntry } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { confirmReplace } from "./confirm-replace";
import { validate } from "./validate";

/** The add dialog, or with `existing` the edit dialog of that server. */
export function addServerDialog(onAdded: () => void, existing?: ServerFormDto): HTMLDialogElement {
  let kind: "stdio" | "http" = existing?.kind ?? "stdio";
  const kept = new Set<string>();
  const name = h("input", { name: "name", placeholder: "filesystem", autocomplete: "off" });
  const command = h("input", { name: "command", placeholder: "npx", autocomplete: "off" });
  const args = h("textarea", { name: "args", rows: "3", placeholder: "one argument per line" });
  const cwd = h("input", { name: "cwd", placeholder: "(default)" });
  const url = h("input", { name: "url", placeholder: "https://example.com/mcp" });
  const values: { row: HTMLElement; name: HTMLInputElement; value: HTMLInputElement; secret: HTMLInputElement }[] = [];
  const valueList = h("div", { class: "values" });
  const problems = h("ul", { class: "problems", "aria-live": "polite" });
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const submit = h("button", { class: "primary", type: "submit" }, existing ? "Save" : "Add server");

  const request = (): AddServerRequest => {
    const entries: ValueEntry[] = values.map((v) => ({ name: v.name.value.trim(), value: v.value.value, secret: v.secret.checked }));
    return kind === "stdio"
      ? { kind, name: name.value.trim(), command: command.value.trim(), args: args.value.split("\n").filter((a) => a !== ""), cwd: cwd.value.trim(), env: entries }
      : { kind, name: name.value.trim(), url: url.value.trim(), headers: entries };
  };

  const check = () => {
    const errors = validate(request(), kept);
    problems.replaceChildren(...Object.entries(errors).map(([k, v]) => h("li", {}, `${k}: ${v}`)));
    submit.disabled = Object.keys(errors).length > 0;
  };

  const addValue = (from?: FormEntryDto) => {
    const n = h("input", { placeholder: kind === "stdio" ? "NAME" : "Header-Name", class: "v-name" });
    const v = h("input", { placeholder: "value", class: "v-value" });
    const s = h("input", { type: "checkbox", class: "v-secret" });
    if (from) {
      n.value = from.name;
      v.value = from.value;
      s.checked = from.secret;
      if (from.secret) {
        v.type = "password";
        v.placeholder = from.secret_set ? "set; leave empty to keep" : "not set; enter the value";
        v.classList.add(from.secret_set ? "secret-set" : "secret-unset");
        if (from.secret_set) kept.add(from.name);
      }
    }
    const entry = { row: h("div", { class: "value-row" }), name: n, value: v, secret: s };
    s.addEventListener("change", () => (v.type = s.checked ? "password" : "text"));
    entry.row.append(n, v, h("label", {}, s, " store as secret"),
      h("button", { type: "button", onclick: () => { values.splice(values.indexOf(entry), 1); entry.row.remove(); check(); } }, "×"));
    values.push(entry);
    valueList.append(entry.row);
    check();
  };

  const stdioFields = h("div", { class: "fields" },
    h("label", {}, "Command", command), h("label", {}, "Arguments", args), h("label", {}, "Working directory", cwd));
  const httpFields = h("div", { class: "fields", hidden: true }, h("label", {}, "URL", url));
  const valuesTitle = h("h3", {}, "Environment variables");
  const setKind = (k: "stdio" | "http") => {
    kind = k;
    stdioFields.hidden = k !== "stdio";
    httpFields.hidden = k !== "http";
    valuesTitle.textContent = k === "stdio" ? "Environment variables" : "Headers";
    check();
  };

  const form = h("form", { method: "dialog" },
    h("h2", {}, existing ? `Edit ${existing.name}` : "Add a server"),
    h("div", { class: "kind-choice", role: "radiogroup" },
      h("label", {}, h("input", { type: "radio", name: "kind", value: "stdio", checked: kind === "stdio", disabled: !!existing, onchange: () => setKind("stdio") }), " Local (stdio)"),
      h("label", {}, h("input", { type: "radio", name: "kind", value: "http", checked: kind === "http", disabled: !!existing, onchange: () => setKind("http") }), " Remote (Streamable HTTP)"),
    ),
    existing?.kind === "stdio" ? h("p", { class: "hint" }, "Changing what runs voids its approval: you will review it again before it starts.") : null,
    h("label", {}, "Name", name),
    stdioFields, httpFields,
    valuesTitle, valueList,
    h("button", { type: "button", onclick: () => addValue() }, "+ Add"),
    problems, failure,
    h("div", { class: "actions" }, h("button", { type: "button", class: "cancel", onclick: () => close() }, "Cancel"), submit),
  );
  form.addEventListener("input", check);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const send = (replace: boolean) => (existing ? attempt(ipc.updateServer(request(), replace)) : attempt(ipc.addServer(request(), replace)));
    let r = await send(false);
    // A secret is stored already under a name this server would use (left over from an earlier
    // server of the same name): replaced only when the person says so.
    if (r instanceof IpcFailure && r.code === "secret_exists" && (await confirmReplace(r.message))) {
      r = await send(true);
    }
    if (r instanceof IpcFailure) {
      failure.textContent = r.message;
      failure.hidden = false;
      return;
    }
    close();
    onAdded();
  });

  const dialog = h("dialog", { class: "add-dialog", "aria-label": existing ? `Edit ${existing.name}` : "Add a server" }, form);
  const close = () => {
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
  };
  dialog.addEventListener("cancel", close);
  if (existing) {
    name.value = existing.name;
    name.readOnly = true;
    if (existing.kind === "stdio") {
      command.value = existing.command;
      args.value = existing.args.join("\n");
      cwd.value = existing.cwd;
    } else {
      url.value = existing.url;
    }
    setKind(existing.kind);
    (existing.kind === "stdio" ? existing.env : existing.headers).forEach((e) => addValue(e));
  }
  check();
  queueMicrotask(() => {
    if (typeof dialog.showModal === "function" && !dialog.open) dialog.showModal();
    name.focus();
  });
  return dialog;
}
