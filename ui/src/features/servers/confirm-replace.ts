// Asks before a secret already in the keyring is replaced (SE-04: nothing overwrites a secret
// without the person confirming). Cancel has the focus; Escape or closing means no.
import { h } from "../../app/dom";
import { modal } from "../../app/modal";

/** Shows `message` (the host's sentence naming the secret) and resolves to the answer. */
export function confirmReplace(message: string, parent: HTMLElement = document.body): Promise<boolean> {
  return new Promise((resolve) => {
    let answered = false;
    const answer = (yes: boolean) => {
      if (answered) return;
      answered = true;
      resolve(yes);
      m.close();
    };
    const cancel = h("button", { autofocus: true, onclick: () => answer(false) }, "Cancel");
    const replace = h("button", { class: "danger", onclick: () => answer(true) }, "Replace it");
    const m = modal("confirm-dialog replace-secret", "Replace a stored secret?", [
      h("h2", {}, "Replace a stored secret?"),
      h("p", {}, message),
      h("div", { class: "actions" }, cancel, replace),
    ]);
    m.dialog.addEventListener("cancel", () => answer(false));
    parent.append(m.dialog);
  });
}
