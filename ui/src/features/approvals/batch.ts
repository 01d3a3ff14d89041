// The batch review (AP-06): every pending request in one list, each with its server and tool,
// who asks, why, the guard's warning and the full pretty-printed arguments in a <details>, and
// its own Run once / Don't run. "Run all N once" answers exactly the requests listed when it is
// pressed, and only after "I have reviewed all N calls" is ticked; a request that arrives later
// is added to the list and unticks the box, so nothing is answered without having been listed.
// "Deny all" says no to every listed request. Closing the review answers nothing.
import type { ApprovalAnswerDto_Deserialize, ApprovalDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { modal } from "../../app/modal";
import { askedBy, message, prettyArguments, reasonLine, warningBox } from "./args";

/** Answers one request by nonce; resolves to Rust's refusal, or null when accepted. */
export type BatchAnswer = (nonce: string, answer: ApprovalAnswerDto_Deserialize) => Promise<string | null>;

export interface BatchHandle {
  dialog: HTMLDialogElement;
  /** The pending list changed: drops what is gone, lists what is new. */
  update: (pending: ApprovalDto[]) => void;
}

const ONCE: ApprovalAnswerDto_Deserialize = { kind: "allow", arguments: null, scope: "once", constraints: [] };
const NO: ApprovalAnswerDto_Deserialize = { kind: "deny", reason: null };
/** Arguments this short are shown open. */
const OPEN_LINES = 12;

interface Item { li: HTMLLIElement; error: HTMLElement; buttons: HTMLButtonElement[] }

export function batchDialog(initial: ApprovalDto[], answer: BatchAnswer, onClose: () => void): BatchHandle {
  const items = new Map<string, Item>();
  let busy = false;
  let closed = false;
  const list = h("ol", { class: "batch-list", "aria-label": "Pending tool calls" });
  const title = h("h2", { id: "batch-title" });
  const confirm = h("input", { type: "checkbox", class: "batch-confirm" });
  const confirmText = h("span", {});
  const runAll = h("button", { type: "button", class: "primary batch-run-all", disabled: true });
  const denyAll = h("button", { type: "button", class: "batch-deny-all" }, "Deny all");
  const back = h("button", { type: "button", class: "batch-close", autofocus: true }, "Close");
  const error = h("p", { class: "batch-error error", role: "alert", hidden: true });

  const refresh = () => {
    const n = items.size;
    title.textContent = `${n} tool ${n === 1 ? "call" : "calls"} waiting`;
    confirmText.textContent = ` I have reviewed all ${n} ${n === 1 ? "call" : "calls"}`;
    runAll.textContent = `Run all ${n} once`;
    runAll.disabled = busy || !confirm.checked || n === 0;
    denyAll.disabled = busy || n === 0;
    confirm.disabled = busy || n === 0;
    for (const it of items.values()) for (const b of it.buttons) b.disabled = busy;
  };
  const drop = (nonce: string) => {
    items.get(nonce)?.li.remove();
    items.delete(nonce);
    refresh();
    if (items.size === 0 && !busy) done();
  };
  /** Answers one listed request; true when accepted. */
  const one = async (nonce: string, a: ApprovalAnswerDto_Deserialize): Promise<boolean> => {
    const it = items.get(nonce);
    if (!it) return false;
    let r: string | null;
    try {
      r = await answer(nonce, a);
    } catch (e) {
      r = message(e);
    }
    if (r === null) {
      drop(nonce);
      return true;
    }
    it.error.hidden = false;
    it.error.textContent = r;
    return false;
  };
  /** Answers every request listed right now, one after another. */
  const all = async (a: ApprovalAnswerDto_Deserialize) => {
    if (busy) return;
    const nonces = [...items.keys()];
    busy = true;
    error.hidden = true;
    refresh();
    let failed = 0;
    for (const n of nonces) if (items.has(n) && !(await one(n, a))) failed++;
    busy = false;
    confirm.checked = false;
    refresh();
    if (failed > 0) {
      error.hidden = false;
      error.textContent = `${failed} ${failed === 1 ? "call was" : "calls were"} not answered; see below.`;
    } else if (items.size === 0) done();
  };
  const single = async (nonce: string, a: ApprovalAnswerDto_Deserialize) => {
    if (busy) return;
    busy = true;
    refresh();
    await one(nonce, a);
    busy = false;
    refresh();
    if (items.size === 0) done();
  };

  const add = (req: ApprovalDto) => {
    const text = prettyArguments(req.arguments);
    const lines = text.split("\n").length;
    const err = h("p", { class: "batch-item-error error", role: "alert", hidden: true });
    const yes = h("button", { type: "button", class: "batch-allow" }, "Run once");
    const no = h("button", { type: "button", class: "batch-deny" }, "Don't run");
    yes.addEventListener("click", () => void single(req.nonce, ONCE));
    no.addEventListener("click", () => void single(req.nonce, NO));
    const who = askedBy(req);
    const li = h("li", { class: "batch-item", "data-nonce": req.nonce },
      h("div", { class: "batch-item-head" }, h("strong", { class: "batch-target" }, `${req.server} › ${req.tool}`), h("span", { class: "batch-origin hint" }, who)),
      reasonLine(req),
      warningBox(req, false),
      h("details", { class: "batch-args", open: lines <= OPEN_LINES },
        h("summary", {}, `Arguments (${lines} ${lines === 1 ? "line" : "lines"})`),
        h("pre", { class: "approval-args", tabindex: "0" }, text)),
      err,
      h("div", { class: "actions" }, no, yes),
    );
    items.set(req.nonce, { li, error: err, buttons: [yes, no] });
    list.append(li);
  };

  const update = (pending: ApprovalDto[]) => {
    const live = new Set(pending.map((p) => p.nonce));
    for (const n of [...items.keys()]) if (!live.has(n)) drop(n);
    if (closed) return;
    let added = false;
    for (const p of pending) {
      if (items.has(p.nonce)) continue;
      add(p);
      added = true;
    }
    // A new request has not been reviewed yet.
    if (added) confirm.checked = false;
    refresh();
  };

  confirm.addEventListener("change", refresh);
  runAll.addEventListener("click", () => {
    if (confirm.checked) void all(ONCE);
  });
  denyAll.addEventListener("click", () => void all(NO));
  const m = modal("batch-dialog", "Review all pending tool calls", [
    title,
    h("p", { class: "hint" }, "Every call below waits for your answer. Open each one's arguments before running it."),
    list,
    error,
    h("label", { class: "batch-confirm-label" }, confirm, confirmText),
    h("div", { class: "actions batch-actions" }, back, denyAll, runAll),
  ]);
  m.dialog.setAttribute("aria-labelledby", "batch-title");
  const done = () => {
    if (closed) return;
    closed = true;
    m.close();
    onClose();
  };
  back.addEventListener("click", done);
  m.dialog.addEventListener("cancel", done);
  m.dialog.addEventListener("close", done);
  for (const p of initial) add(p);
  refresh();
  queueMicrotask(() => back.focus());
  return { dialog: m.dialog, update };
}
