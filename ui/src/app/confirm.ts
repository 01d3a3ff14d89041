// The yes/no question every page asks before something that cannot be undone (remove a server,
// sign out): one dialog, so that Cancel has the focus everywhere. Shared by the servers and
// credentials pages, neither of which owns it.
import { h } from "./dom";
import { modal } from "./modal";

/** A yes/no question whose safe answer (Cancel) has the focus. */
export function confirmDialog(title: string, text: string, yes: string, onYes: () => void): HTMLDialogElement {
  const cancel = h("button", { autofocus: true }, "Cancel");
  const confirm = h("button", { class: "danger" }, yes);
  const m = modal("confirm-dialog", title, [h("h2", {}, title), h("p", {}, text), h("div", { class: "actions" }, cancel, confirm)]);
  cancel.addEventListener("click", m.close);
  confirm.addEventListener("click", () => {
    onYes();
    m.close();
  });
  return m.dialog;
}
