// The approval dialog (SP-01, SP-10, SE-04): exactly what a local server runs (executable,
// every argument, the working directory, every environment variable with its value) or where a
// remote server connects (the URL and every header), with secrets shown by their binding, never
// their value. A field that takes a secret can be bound here, and only here, to a secret outside
// the server's own namespace (a provider's key, another server's secret); the view is worked out
// again by the host so the person approves exactly what will be used. When the caller passes
// the catalog's costs, the dialog also says what the server's tools add to every turn, or that
// this is unknown until it first runs (issue 16): said before the person decides.
import type { CatalogCostsDto } from "../../ipc/bindings";
import { enableCostNote } from "../catalog";
import type { BindingRequest_Deserialize as BindingRequest, TrustViewDto_Serialize as TrustViewDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** Works out the view again with these bindings; a string is an error to show. */
export type Rebind = (bindings: BindingRequest[]) => Promise<TrustViewDto | string>;

/** The approval dialog. Deny has the focus; Escape or closing means no. */
export function trustDialog(
  view: TrustViewDto,
  approve: (fingerprint: string, bindings: BindingRequest[]) => void,
  rebind?: Rebind,
  costs?: Promise<CatalogCostsDto | null>,
): HTMLDialogElement {
  const dialog = h("dialog", { class: "trust-dialog", "aria-labelledby": "trust-title" });
  const close = () => {
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
  };
  let shown = view;
  let bindings: BindingRequest[] = [];
  const plan = h("dl", { class: "plan" });
  const warnings = h("ul", { class: "warnings" });
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  // Filled in when the costs arrive; stays hidden when they cannot be read.
  const cost = h("p", { class: "enable-cost", hidden: true });
  void costs?.then((c) => {
    const note = enableCostNote(c, view.name);
    cost.textContent = note ?? "";
    cost.hidden = note === null;
  });
  const deny = h("button", { onclick: close, autofocus: true }, "Don't allow");
  const allow = h("button", { class: "primary", onclick: () => { approve(shown.fingerprint, bindings); close(); } },
    view.remote ? "Allow and connect" : "Allow and start");

  const render = (v: TrustViewDto) => {
    shown = v;
    plan.replaceChildren(...v.lines.flatMap(([k, val]) => [h("dt", {}, k), h("dd", {}, h("code", {}, val))]));
    warnings.replaceChildren(...v.warnings.map((w) => h("li", {}, w)));
    warnings.hidden = v.warnings.length === 0;
  };

  // One choice per field that takes a secret: the server's own, or a binding.
  const choices = view.fields.map((f) => {
    const select = h("select", { class: "bind", "data-field": f.field, "aria-label": `Secret for ${f.field}` },
      h("option", { value: "" }, "this server's own secret"),
      ...view.bind_options.map((o) => h("option", { value: o }, o)));
    select.value = f.bound ?? "";
    return { field: f.field, initial: f.bound ?? "", select };
  });
  const onChange = async () => {
    bindings = choices
      .filter((c) => c.select.value !== c.initial)
      .map((c) => ({ field: c.field, to: c.select.value === "" ? null : c.select.value }));
    if (!rebind) return;
    allow.disabled = true;
    const r = await rebind(bindings);
    if (typeof r === "string") {
      failure.textContent = r;
      failure.hidden = false;
      return;
    }
    failure.hidden = true;
    render(r);
    allow.disabled = false;
  };
  for (const c of choices) c.select.addEventListener("change", () => void onChange());

  render(view);
  const parts: (HTMLElement | null)[] = [
    h("h2", { id: "trust-title" }, view.remote ? `Allow ${view.name} to connect like this?` : `Allow ${view.name} to run this?`),
    h("p", {}, view.remote
      ? "This is exactly where it connects and what it sends, with hidden characters shown escaped. Nothing is sent before you allow it."
      : "This is exactly what will run on your computer, with hidden characters shown escaped."),
    plan,
    warnings,
    cost,
    choices.length > 0 && view.bind_options.length > 0 && rebind
      ? h("fieldset", { class: "bindings" },
        h("legend", {}, "Secrets"),
        h("p", { class: "hint" }, "A server uses its own secrets. Choose another only if you mean to lend it, for example a provider's API key."),
        ...choices.map((c) => h("label", {}, `${c.field} `, c.select)))
      : null,
    failure,
    h("div", { class: "actions" }, deny, allow),
  ];
  dialog.append(...parts.filter((p): p is HTMLElement => p !== null));
  dialog.addEventListener("cancel", close);
  queueMicrotask(() => {
    if (typeof dialog.showModal === "function") dialog.showModal();
    deny.focus();
  });
  return dialog;
}
