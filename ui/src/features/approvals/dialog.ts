// The approval dialog (AP-01): every tool call, whether a person started it from the catalog or
// a model asked for it, waits in Rust until this dialog answers its nonce. It shows the server,
// the tool and the full arguments (scrollable, never truncated). "Don't run" has the focus;
// Escape or closing the dialog means no. One dialog at a time, oldest request first.
import { commands, events } from "../../ipc/bindings";
import type { ApprovalDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** Builds the dialog for one request; `answer` is called exactly once. */
export function approvalDialog(req: ApprovalDto, answer: (allow: boolean) => void): HTMLDialogElement {
  let answered = false;
  const dialog = h("dialog", { class: "approval-dialog", "aria-labelledby": "approval-title", "data-nonce": req.nonce });
  const reply = (allow: boolean) => {
    if (answered) return;
    answered = true;
    answer(allow);
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
  };
  const deny = h("button", { class: "deny", autofocus: true, onclick: () => reply(false) }, "Don't run");
  const allow = h("button", { class: "primary allow", onclick: () => reply(true) }, "Run");
  const who = req.origin === "model"
    ? `The model asks to run this${req.conversation ? ` in conversation ${req.conversation}` : ""}.`
    : "You asked to run this tool. Check the arguments before it runs.";
  const parts: (HTMLElement | null)[] = [
    h("h2", { id: "approval-title" }, `Run ${req.tool} on ${req.server}?`),
    h("p", {}, who),
    req.hints.length > 0
      ? h("p", { class: "hint" }, `The server describes it as: ${req.hints.join(", ")}. That is its claim, not a guarantee.`)
      : null,
    h("h3", {}, "Arguments"),
    h("pre", { class: "approval-args", tabindex: "0" }, req.arguments),
    h("div", { class: "actions" }, deny, allow),
  ];
  dialog.append(...parts.filter((p): p is HTMLElement => p !== null));
  dialog.addEventListener("cancel", (ev) => {
    ev.preventDefault();
    reply(false);
  });
  dialog.addEventListener("close", () => reply(false));
  queueMicrotask(() => {
    try {
      if (dialog.isConnected && !dialog.open) dialog.showModal();
    } catch {
      dialog.setAttribute("open", ""); // no modal support (tests): still shown
    }
    deny.focus();
  });
  return dialog;
}

/** Keeps the oldest pending request on screen until none are left. */
export function mountApprovals(root: HTMLElement): () => void {
  let shown: { nonce: string; dialog: HTMLDialogElement } | null = null;
  let busy = false;
  let again = false;
  const sync = async (): Promise<void> => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      const pending = await commands.pendingApprovals();
      if (shown && !pending.some((p) => p.nonce === shown?.nonce)) {
        // Answered elsewhere or withdrawn (the run was cancelled).
        shown.dialog.remove();
        shown = null;
      }
      const next = pending[0];
      if (!shown && next) {
        const dialog = approvalDialog(next, (allow) => {
          shown = null;
          void commands.answerApproval(next.nonce, allow).then(() => sync());
        });
        shown = { nonce: next.nonce, dialog };
        root.append(dialog);
      }
    } finally {
      busy = false;
    }
    if (again) {
      again = false;
      return sync();
    }
  };
  const unlisten = events.hostChanged.listen((e) => {
    if (e.payload.kind === "approvals") void sync();
  });
  void sync();
  return () => void unlisten.then((stop) => stop());
}
