// The approval dialog (AP-01): every tool call, whether a person started it from the catalog or
// a model asked for it, waits in Rust until this dialog answers its nonce. It shows the server,
// the tool and the full arguments (scrollable, never truncated). The person may edit the
// arguments before running, or say why not. "Don't run" has the focus; Escape or closing the
// dialog means no, without a reason. One dialog at a time, oldest request first.
//
// An answer can be refused by Rust (edited arguments that do not match the tool's schema): the
// request then stays pending, so the dialog stays open with the reason shown and can be answered
// again. It closes only once an answer was accepted.
import { commands, events } from "../../ipc/bindings";
import type { ApprovalAnswerDto_Deserialize, ApprovalDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** Sends one answer; resolves to why it was refused, or null (or nothing) when accepted. */
export type AnswerFn = (answer: ApprovalAnswerDto_Deserialize) => Promise<string | null | void> | string | null | void;

/** Parses edited arguments: they must be one JSON object, as the tool's input is. */
export function parseArguments(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; why: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, why: `the arguments are not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, why: "the arguments must be a JSON object ({ … })" };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The same JSON value, whatever the whitespace; unparsable text compares as text. */
function sameArguments(edited: Record<string, unknown>, original: string): boolean {
  const o = parseArguments(original);
  return o.ok && JSON.stringify(o.value) === JSON.stringify(edited);
}

/** Builds the dialog for one request; it closes once `answer` accepts an answer. */
export function approvalDialog(req: ApprovalDto, answer: AnswerFn): HTMLDialogElement {
  let answered = false;
  let inFlight = false;
  let editor: HTMLTextAreaElement | null = null;
  const dialog = h("dialog", { class: "approval-dialog", "aria-labelledby": "approval-title", "data-nonce": req.nonce });
  const error = h("p", { class: "approval-error error", role: "alert", hidden: true });
  const args = h("pre", { class: "approval-args", tabindex: "0" }, req.arguments);
  const edit = h("button", { type: "button", class: "approval-edit" }, "Edit arguments");
  const reason = h("input", {
    type: "text", class: "approval-reason", autocomplete: "off", maxlength: "4000",
    placeholder: "Reason (optional, sent to the model)", "aria-label": "Reason for not running it (optional, sent to the model)",
  });
  const deny = h("button", { type: "button", class: "deny", autofocus: true }, "Don't run");
  const allow = h("button", { type: "button", class: "primary allow" }, "Run");

  const showError = (m: string | null) => {
    error.hidden = m === null;
    error.textContent = m ?? "";
  };
  const setBusy = (busy: boolean) => {
    for (const b of [deny, allow, edit]) b.disabled = busy;
    dialog.setAttribute("aria-busy", String(busy));
  };
  const finish = () => {
    answered = true;
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
  };
  const refused = (why: string) => {
    inFlight = false;
    setBusy(false);
    showError(why);
    // A close that raced the refusal: the request is still pending, so show it again.
    if (dialog.isConnected && !dialog.open) {
      try {
        dialog.showModal();
      } catch {
        dialog.setAttribute("open", "");
      }
    }
  };
  const settle = (r: string | null | void) => (typeof r === "string" ? refused(r) : finish());
  const reply = (a: ApprovalAnswerDto_Deserialize) => {
    if (answered || inFlight) return;
    inFlight = true;
    setBusy(true);
    showError(null);
    let r: ReturnType<AnswerFn>;
    try {
      r = answer(a);
    } catch (e) {
      return refused(e instanceof Error ? e.message : String(e));
    }
    if (!(r instanceof Promise)) return settle(r);
    r.then(settle, (e: unknown) => refused(e instanceof Error ? e.message : String(e)));
  };

  edit.addEventListener("click", () => {
    if (editor) return;
    const parsed = parseArguments(req.arguments);
    const text = parsed.ok ? JSON.stringify(parsed.value, null, 2) : req.arguments;
    editor = h("textarea", {
      class: "approval-args-edit", spellcheck: "false", autocomplete: "off",
      rows: String(Math.min(Math.max(text.split("\n").length + 1, 4), 24)), "aria-label": "Arguments (a JSON object)",
    });
    editor.value = text;
    args.replaceWith(editor);
    edit.hidden = true;
    editor.focus();
  });
  allow.addEventListener("click", () => {
    let edited: string | null = null;
    if (editor) {
      const p = parseArguments(editor.value);
      if (!p.ok) {
        showError(`Not run: ${p.why}.`);
        editor.focus();
        return;
      }
      if (!sameArguments(p.value, req.arguments)) edited = editor.value;
    }
    reply({ kind: "allow", arguments: edited });
  });
  const sayNo = () => reply({ kind: "deny", reason: reason.value.trim() || null });
  deny.addEventListener("click", sayNo);
  reason.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing) {
      ev.preventDefault();
      sayNo();
    }
  });

  const who = req.origin === "model"
    ? `The model asks to run this${req.conversation ? ` in conversation ${req.conversation}` : ""}.`
    : "You asked to run this tool. Check the arguments before it runs.";
  const parts: (HTMLElement | null)[] = [
    h("h2", { id: "approval-title" }, `Run ${req.tool} on ${req.server}?`),
    h("p", {}, who),
    req.hints.length > 0
      ? h("p", { class: "hint" }, `The server describes it as: ${req.hints.join(", ")}. That is its claim, not a guarantee.`)
      : null,
    h("div", { class: "approval-args-head" }, h("h3", {}, "Arguments"), edit),
    args,
    error,
    h("div", { class: "actions approval-actions" }, reason, deny, allow),
  ];
  dialog.append(...parts.filter((p): p is HTMLElement => p !== null));
  dialog.addEventListener("cancel", (ev) => {
    ev.preventDefault();
    reply({ kind: "deny", reason: null });
  });
  dialog.addEventListener("close", () => reply({ kind: "deny", reason: null }));
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
        const dialog = approvalDialog(next, async (answer) => {
          const r = await commands.answerApproval(next.nonce, answer);
          // Refused: still pending (a sync keeps the dialog); or gone (a sync removes it).
          if (r.status === "error") {
            void sync();
            return r.error.message;
          }
          if (shown?.nonce === next.nonce) shown = null;
          void sync();
          return null;
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
