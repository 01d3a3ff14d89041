// Install links (docs/links.md): a `switchboard://add?config=...` link, given to this app or
// passed on by a second launch, proposes a server. It always lands here, in a trust dialog that
// shows exactly what would run (executable, every argument, working directory, every
// environment variable) or where it would connect (URL, every header), as the host worked it out
// from the link (SP-01). Nothing is added and nothing runs before "Add and start"; "Don't add",
// Escape or closing the dialog leaves nothing behind. Fields the link marks "ask" are typed here
// and go to the keyring; a link never carries a secret.
//
// The window never sends a spec back: approval sends the link and the fingerprint it was shown,
// and the host parses the link again and refuses if what would run is not what was shown.
import { events } from "../../ipc/bindings";
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import type { LinkProposalDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** Adds the proposed server; resolves to an error to show, or null once it was added. */
export type ApproveFn = (fingerprint: string, secrets: { field: string; value: string }[]) => Promise<string | null>;

/** The dialog for a link the host could not read: why, and nothing to approve. */
export function refusedDialog(reason: string, done: () => void): HTMLDialogElement {
  const dialog = h("dialog", { class: "trust-dialog link-dialog link-refused", "aria-labelledby": "link-title" });
  const close = () => {
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
    done();
  };
  dialog.append(
    h("h2", { id: "link-title" }, "This link was refused"),
    h("p", { class: "error", role: "alert" }, reason),
    h("p", { class: "hint" }, "Nothing was added. A link can only propose a server; see docs/links.md for the format."),
    h("div", { class: "actions" }, h("button", { class: "link-cancel", onclick: close, autofocus: true }, "Close")),
  );
  dialog.addEventListener("cancel", close);
  queueMicrotask(() => { if (typeof dialog.showModal === "function") dialog.showModal(); });
  return dialog;
}

/** The trust dialog for a proposed server. "Don't add" has the focus. */
export function linkDialog(p: LinkProposalDto, approve: ApproveFn, done: () => void): HTMLDialogElement {
  const dialog = h("dialog", { class: "trust-dialog link-dialog", "aria-labelledby": "link-title" });
  const close = () => {
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
    done();
  };
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const inputs = p.asked.map((field) => ({
    field,
    input: h("input", { type: "password", class: "link-secret", "data-field": field, autocomplete: "off", "aria-label": `Value of ${field}` }),
  }));
  const cancel = h("button", { class: "link-cancel", onclick: close, autofocus: true }, "Don't add");
  const allow = h("button", { class: "primary link-approve" }, p.remote ? "Add and connect" : "Add and start");
  allow.addEventListener("click", () => {
    allow.disabled = true;
    void approve(p.fingerprint, inputs.map((i) => ({ field: i.field, value: i.input.value }))).then((err) => {
      if (err === null) return close();
      failure.textContent = err;
      failure.hidden = false;
      allow.disabled = false;
    });
  });
  const plan = h("dl", { class: "plan" }, ...p.lines.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, h("code", {}, v))]));
  const warnings = h("ul", { class: "warnings" }, ...p.warnings.map((w) => h("li", {}, w)));
  warnings.hidden = p.warnings.length === 0;
  const parts: (HTMLElement | null)[] = [
    h("h2", { id: "link-title" }, p.remote ? `Add ${p.name} and let it connect like this?` : `Add ${p.name} and let it run this?`),
    h("p", {}, "A link proposes this server. Nothing has been added and nothing runs unless you allow it. "
      + (p.remote
        ? "This is exactly where it connects and what it sends, with hidden characters shown escaped."
        : "This is exactly what will run on your computer, with hidden characters shown escaped.")),
    p.renamed_from ? h("p", { class: "hint link-renamed" }, `You already have a server named ${p.renamed_from}; this one would be added as ${p.name}.`) : null,
    plan,
    warnings,
    inputs.length > 0
      ? h("fieldset", { class: "link-asked" },
        h("legend", {}, "Values to enter"),
        h("p", { class: "hint" }, "The link asks for these. They go to your keyring, not into the configuration; leave one empty to set it later."),
        ...inputs.map((i) => h("label", {}, `${i.field} `, i.input)))
      : null,
    failure,
    h("div", { class: "actions" }, cancel, allow),
  ];
  dialog.append(...parts.filter((e): e is HTMLElement => e !== null));
  dialog.addEventListener("cancel", close);
  queueMicrotask(() => {
    if (typeof dialog.showModal === "function") dialog.showModal();
    cancel.focus();
  });
  return dialog;
}

/** Shows a dialog for every link the app receives, one at a time, oldest first. */
export function mountLinks(root: HTMLElement): () => void {
  const queue: string[] = [];
  let open = false;
  const next = async (): Promise<void> => {
    const link = queue.shift();
    if (open || link === undefined) return;
    open = true;
    const done = () => { open = false; void next(); };
    const r = await attempt(ipc.proposeLink(link));
    if (r instanceof IpcFailure) {
      root.append(refusedDialog(r.message, done));
      return;
    }
    root.append(linkDialog(r, async (fingerprint, secrets) => {
      const a = await attempt(ipc.approveLink(link, fingerprint, secrets));
      return failureMessage(a);
    }, done));
  };
  const take = async () => {
    const links = await ipc.takeLinks().catch(() => [] as string[]);
    queue.push(...links);
    if (!open) void next();
  };
  const unlisten = events.linkReceived.listen(() => void take());
  void take();
  return () => void unlisten.then((stop) => stop());
}
