// The approval dialog (AP-01): every tool call, whether a person started it from the catalog or
// a model asked for it, waits in Rust until this dialog answers its nonce. It shows the server,
// the tool, why the policy asks, the guard's warning and the full arguments (scrollable, never
// truncated). The person may edit the arguments before running, or say why not. "Don't run" has
// the focus; Escape or closing the dialog means no, without a reason. One dialog at a time,
// oldest request first; when more wait, "Review all N" opens the batch review (AP-06).
//
// "Always, with these arguments…" opens the conditions Rust suggests from this call's arguments
// (the same domain, a folder, only SELECT statements, exactly this value), all ticked; the grant
// it makes allows later calls only while every ticked condition holds (AP-02).
//
// An answer can be refused by Rust (edited arguments that do not match the tool's schema): the
// request then stays pending, so the dialog stays open with the reason shown and can be answered
// again. It closes only once an answer was accepted.
import { events } from "../../ipc/bindings";
import { attempt, failureMessage, ipc } from "../../ipc/client";
import type { ApprovalAnswerDto_Deserialize, ApprovalDto, ConstraintDto, ScopeDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { attachFindings } from "./findings";
import { hintsLine, message, parseArguments, reasonLine, sameArguments, warningBox, whoAsks } from "./args";
import { batchDialog, type BatchHandle } from "./batch";
import { pipelineAsk } from "../pipelines";

export { parseArguments } from "./args";

/** Sends one answer; resolves to why it was refused, or null (or nothing) when accepted. */
export type AnswerFn = (answer: ApprovalAnswerDto_Deserialize) => Promise<string | null | void> | string | null | void;

/** Shows "N more waiting" and "Review all N" when `total` (this request included) is above 1. */
/** The dialog's question: what would happen, naming the server. */
function title(req: ApprovalDto): string {
  switch (req.kind) {
    case "resource": return `Read ${req.tool} from ${req.server}?`;
    case "prompt": return `Get the prompt ${req.tool} from ${req.server}?`;
    case "pipeline": return `Run the pipeline ${req.tool}?`;
    default: return `Run ${req.tool} on ${req.server}?`;
  }
}

export function showQueue(dialog: HTMLElement, total: number): void {
  const q = dialog.querySelector<HTMLElement>(".approval-queue");
  if (!q) return;
  q.hidden = total <= 1;
  const more = q.querySelector(".approval-waiting");
  const all = q.querySelector(".approval-review-all");
  if (more) more.textContent = `${total - 1} more waiting`;
  if (all) all.textContent = `Review all ${total}`;
}

/** The "Always, with these arguments…" expander: each suggested condition as a ticked box. */
export function constraintsChooser(suggested: ConstraintDto[], onAllow: (chosen: string[]) => void): HTMLElement | null {
  if (suggested.length === 0) return null;
  const boxes = suggested.map((c) => {
    const box = h("input", { type: "checkbox", class: "constraint-choice", checked: true });
    box.dataset.condition = c.condition_json;
    return box;
  });
  const go = h("button", { type: "button", class: "allow-always-constrained" }, "Always allow with these conditions");
  const sync = () => {
    const none = boxes.every((b) => !b.checked);
    go.disabled = none;
    go.title = none
      ? "Tick at least one condition, or use “Always allow this tool”"
      : "Run this call, and later calls of this tool without asking while every ticked condition holds";
  };
  boxes.forEach((b) => b.addEventListener("change", sync));
  go.addEventListener("click", () => {
    const chosen = boxes.filter((b) => b.checked).map((b) => b.dataset.condition ?? "");
    if (chosen.length > 0) onAllow(chosen);
  });
  sync();
  return h("details", { class: "approval-constraints" },
    h("summary", {}, "Always, with these arguments…"),
    h("p", { class: "hint" }, "Later calls of this tool run without asking only when all the ticked conditions hold; any other call asks again."),
    h("ul", { class: "constraint-list" }, ...suggested.map((c, i) =>
      h("li", {}, h("label", {}, boxes[i] ?? null, " ", h("span", { class: "constraint-text" }, c.description))))),
    h("div", { class: "actions" }, go),
  );
}

/** Builds the dialog for one request; it closes once `answer` accepts an answer. */
export function approvalDialog(req: ApprovalDto, answer: AnswerFn, onReviewAll?: () => void): HTMLDialogElement {
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
  const allow = h("button", { type: "button", class: "primary allow", title: "Run this call only; ask again next time" }, "Run once");
  // A grant answered to an agent covers that agent only (another agent, or the plain model,
  // is still asked): the buttons say whom.
  // An app's grant covers that app only (AP-10).
  const whom = req.origin === "app" ? " for this app" : req.origin === "model" && req.agent ? ` for agent ${req.agent}` : "";
  const conversation = req.origin === "model" || (req.origin === "app" && req.conversation)
    ? h("button", { type: "button", class: "allow-conversation", title: `Run this call, and later calls of this tool${whom} in this conversation, without asking` }, `Allow${whom} in this conversation`)
    : null;
  const always = h("button", {
    type: "button", class: "allow-always",
    title: `Run this call and later calls of this tool${whom} without asking. The grant is bound to the tool's current definition ` +
      "(it lapses if the server changes the tool) and can be revoked on the Policy page.",
  }, whom ? `Always allow${whom}` : "Always allow this tool");
  const queue = h("div", { class: "approval-queue", hidden: true },
    h("span", { class: "approval-waiting" }),
    h("button", { type: "button", class: "approval-review-all", onclick: () => onReviewAll?.() }),
  );

  const showError = (m: string | null) => {
    error.hidden = m === null;
    error.textContent = m ?? "";
  };
  const setBusy = (busy: boolean) => {
    for (const b of [deny, allow, conversation, always, edit]) if (b) b.disabled = busy;
    dialog.querySelectorAll<HTMLButtonElement>(".allow-always-constrained").forEach((b) => (b.disabled = busy));
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
      return refused(message(e));
    }
    if (!(r instanceof Promise)) return settle(r);
    r.then(settle, (e: unknown) => refused(message(e)));
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
  const allowWith = (scope: ScopeDto, constraints: string[] = []) => {
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
    reply({ kind: "allow", arguments: edited, scope, constraints });
  };
  allow.addEventListener("click", () => allowWith("once"));
  conversation?.addEventListener("click", () => allowWith("conversation"));
  always.addEventListener("click", () => allowWith("always"));
  const constrained = constraintsChooser(req.suggested_constraints ?? [], (chosen) => allowWith("always", chosen));
  const sayNo = () => reply({ kind: "deny", reason: reason.value.trim() || null });
  deny.addEventListener("click", sayNo);
  reason.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing) {
      ev.preventDefault();
      sayNo();
    }
  });

  // Only a tool call takes edited arguments or grants; a read or a prompt is answered once.
  if (req.kind !== "tool") {
    edit.hidden = true;
    always.hidden = true;
    if (conversation) conversation.hidden = true;
    if (constrained) constrained.hidden = true;
  }
  const parts: (HTMLElement | null)[] = [
    h("h2", { id: "approval-title" }, title(req)),
    queue,
    h("p", { class: "approval-who" }, whoAsks(req)),
    reasonLine(req),
    hintsLine(req),
    warningBox(req),
    pipelineAsk(req),
    // A pipeline's steps and flows are shown above; its request as JSON stays one click away.
    ...(req.kind === "pipeline"
      ? [h("details", { class: "approval-pipeline-json" }, h("summary", {}, "The request as JSON"), args)]
      : [h("div", { class: "approval-args-head" }, h("h3", {}, "Arguments"), edit), args]),
    error,
    h("div", { class: "actions approval-actions" }, reason, deny),
    h("div", { class: "actions approval-allow-actions" }, always, conversation, allow),
    constrained,
  ];
  dialog.append(...parts.filter((p): p is HTMLElement => p !== null));
  dialog.addEventListener("cancel", (ev) => {
    ev.preventDefault();
    reply({ kind: "deny", reason: null });
  });
  // Removed because it was answered elsewhere or withdrawn: not a "no".
  dialog.addEventListener("close", () => dialog.isConnected && reply({ kind: "deny", reason: null }));
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

/** Answers by nonce; resolves to Rust's refusal, or null when accepted. */
async function send(nonce: string, a: ApprovalAnswerDto_Deserialize): Promise<string | null> {
  const r = await attempt(ipc.answerApproval(nonce, a));
  return failureMessage(r);
}

/** Keeps the oldest pending request on screen until none are left. */
export function mountApprovals(root: HTMLElement): () => void {
  let shown: { nonce: string; dialog: HTMLDialogElement } | null = null;
  let batch: BatchHandle | null = null;
  let pending: ApprovalDto[] = [];
  let busy = false;
  let again = false;
  const openBatch = () => {
    if (batch) return;
    batch = batchDialog(pending, async (nonce, a) => {
      const r = await send(nonce, a);
      void sync();
      return r;
    }, () => {
      batch = null;
      void sync();
    });
    root.append(batch.dialog);
  };
  const sync = async (): Promise<void> => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      pending = await ipc.pendingApprovals();
      if (shown && !pending.some((p) => p.nonce === shown?.nonce)) {
        // Answered elsewhere or withdrawn (the run was cancelled).
        shown.dialog.remove();
        shown = null;
      }
      batch?.update(pending);
      const next = pending[0];
      // While the batch review is open it is the one place to answer; the next single
      // dialog waits until it closes.
      if (!shown && next && !batch) {
        const dialog = approvalDialog(next, async (answer) => {
          const r = await send(next.nonce, answer);
          // Refused: still pending (a sync keeps the dialog); or gone (a sync removes it).
          if (r === null && shown?.nonce === next.nonce) shown = null;
          void sync();
          return r;
        }, openBatch);
        shown = { nonce: next.nonce, dialog };
        root.append(dialog);
        void attachFindings(dialog, next.server, next.tool); // TD-04 flags
      }
      if (shown) showQueue(shown.dialog, pending.length);
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
