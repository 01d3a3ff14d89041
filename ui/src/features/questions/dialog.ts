// The questions dialog: what a server asks of the person, beside the approval dialog and answered
// the same way, by nonce. A form to fill in and a URL to open (AP-07), a sampling request and
// the model's answer to it (AP-08), a tool result held before a model reads it (AP-05). Every
// kind names the server that asks, in the title and in `.question-server`.
//
// The safe answer has the focus (Cancel for forms and URLs, Deny or Withhold otherwise), never
// the one that sends or opens anything. Escape or closing the dialog cancels a form or URL and
// denies the rest, without a reason. Rust checks every answer against its question; a refused
// answer keeps the dialog open with Rust's reason, to be answered again. One question at a time,
// oldest first. All untrusted text goes in as text (h()); nothing here loads a URL.
import { events } from "../../ipc/bindings";
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import type {
  ProviderDto_Serialize as ProviderDto,
  QuestionDto_Serialize as QuestionDto,
  ReplyDto_Deserialize as ReplyDto,
} from "../../ipc/bindings";
import { h } from "../../app/dom";
import { renderToolResult, type ToolResultDto } from "../catalog";
import { formBody } from "./form";
import { urlBody } from "./url";
import { responseBody, samplingBody } from "./sampling";
import "./questions.css";

/** Sends one answer; resolves to why it was refused, or null (or nothing) when accepted. */
export type ReplyFn = (reply: ReplyDto) => Promise<string | null | void> | string | null | void;

export interface QuestionOptions {
  /** The configured model providers, for a sampling request. */
  loadProviders?: () => Promise<ProviderDto[]>;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The dialog's title: what is asked, and by which server. */
export function questionTitle(q: QuestionDto): string {
  const k = q.question;
  switch (k.kind) {
    case "form": return `${q.server} asks you to fill in a form`;
    case "url": return `${q.server} asks you to open a web page`;
    case "sampling": return `${q.server} asks for a model completion`;
    case "sampling_response": return `Send the model's answer to ${q.server}?`;
    case "tool_result": return `Let the model read this result of ${k.tool} (${q.server})?`;
  }
}

/** "N more waiting", when more than this one waits. */
export function showQuestionQueue(dialog: HTMLElement, total: number): void {
  const q = dialog.querySelector<HTMLElement>(".question-queue");
  if (!q) return;
  q.hidden = total <= 1;
  q.textContent = `${total - 1} more ${total - 1 === 1 ? "question" : "questions"} waiting`;
}

interface Body {
  parts: HTMLElement[];
  /** The answer the main button sends, or why it cannot be sent yet. */
  accept(): { ok: true; reply: ReplyDto } | { ok: false; why: string };
  acceptLabel: string;
  declineLabel: string;
  /** Forms and URLs have the protocol's three answers; the rest have yes and no (with a reason). */
  elicit: boolean;
}

function body(q: QuestionDto, opts: QuestionOptions): Body {
  const k = q.question;
  switch (k.kind) {
    case "form": {
      const f = formBody(k);
      return {
        parts: f.parts, acceptLabel: "Accept", declineLabel: "Decline", elicit: true,
        accept: () => {
          const v = f.value();
          return v.ok ? { ok: true, reply: { kind: "accept", content: JSON.stringify(v.value) } }
            : { ok: false, why: `Not sent: ${v.errors.slice(0, 5).join("; ")}` };
        },
      };
    }
    case "url":
      return { parts: urlBody(k), acceptLabel: "Open in browser", declineLabel: "Decline", elicit: true, accept: () => ({ ok: true, reply: { kind: "accept", content: null } }) };
    case "sampling": {
      const s = samplingBody(k);
      const load = opts.loadProviders ?? (() => Promise.resolve([]));
      load().then(s.setProviders, () => s.setProviders([]));
      return {
        parts: s.parts, acceptLabel: "Run", declineLabel: "Deny", elicit: false,
        accept: () => {
          const v = s.value();
          return v.ok ? { ok: true, reply: { kind: "run_sampling", ...v.value } } : { ok: false, why: `Not run: ${v.why}.` };
        },
      };
    }
    case "sampling_response": {
      const r = responseBody(k);
      return { parts: r.parts, acceptLabel: "Send", declineLabel: "Deny", elicit: false, accept: () => ({ ok: true, reply: { kind: "send_response", text: r.text() } }) };
    }
    case "tool_result": {
      const parts: (HTMLElement | null)[] = [
        h("p", { class: "question-reason-text hint" }, `Held because ${k.reason}.`),
        k.conversation ? h("p", { class: "hint" }, `The model of conversation ${k.conversation} would read it.`) : null,
        h("div", { class: "question-result" }, renderToolResult(k.result as ToolResultDto)),
      ];
      return {
        parts: parts.filter((p): p is HTMLElement => p !== null),
        acceptLabel: "Send to model", declineLabel: "Withhold", elicit: false,
        accept: () => ({ ok: true, reply: { kind: "send_result" } }),
      };
    }
  }
}

/** Builds the dialog for one question; it closes once `answer` accepts an answer. */
export function questionDialog(q: QuestionDto, answer: ReplyFn, opts: QuestionOptions = {}): HTMLDialogElement {
  let answered = false;
  let inFlight = false;
  const dialog = h("dialog", { class: "question-dialog", "aria-labelledby": "question-title", "data-kind": q.question.kind, "data-nonce": q.nonce });
  const b = body(q, opts);
  const error = h("p", { class: "question-error error", role: "alert", hidden: true });
  const accept = h("button", { type: "button", class: "primary question-accept" }, b.acceptLabel);
  const decline = h("button", { type: "button", class: "question-decline" }, b.declineLabel);
  const cancel = b.elicit ? h("button", { type: "button", class: "question-cancel" }, "Cancel") : null;
  const reason = b.elicit ? null : h("input", {
    type: "text", class: "question-reason", autocomplete: "off", maxlength: "2000",
    placeholder: "Reason (optional, passed on)", "aria-label": `Reason for “${b.declineLabel}” (optional, passed on)`,
  });
  const safe = cancel ?? decline;

  const showError = (m: string | null) => {
    error.hidden = m === null;
    error.textContent = m ?? "";
  };
  const setBusy = (busy: boolean) => {
    for (const x of [accept, decline, cancel]) if (x) x.disabled = busy;
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
    if (dialog.isConnected && !dialog.open) {
      try {
        dialog.showModal();
      } catch {
        dialog.setAttribute("open", "");
      }
    }
  };
  const reply = (r: ReplyDto) => {
    if (answered || inFlight) return;
    inFlight = true;
    setBusy(true);
    showError(null);
    let out: ReturnType<ReplyFn>;
    try {
      out = answer(r);
    } catch (e) {
      return refused(message(e));
    }
    const settle = (x: string | null | void) => (typeof x === "string" ? refused(x) : finish());
    if (!(out instanceof Promise)) return settle(out);
    out.then(settle, (e: unknown) => refused(message(e)));
  };
  const no = (): ReplyDto => (b.elicit ? { kind: "decline" } : { kind: "deny", reason: reason?.value.trim() || null });
  const dismiss = (): ReplyDto => (b.elicit ? { kind: "cancel" } : { kind: "deny", reason: null });

  accept.addEventListener("click", () => {
    const v = b.accept();
    if (v.ok) reply(v.reply);
    else showError(v.why);
  });
  decline.addEventListener("click", () => reply(no()));
  cancel?.addEventListener("click", () => reply(dismiss()));
  reason?.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing) {
      ev.preventDefault();
      reply(no());
    }
  });

  dialog.append(
    h("h2", { id: "question-title" }, questionTitle(q)),
    h("p", { class: "question-queue", hidden: true }),
    q.question.kind === "tool_result"
      ? h("p", { class: "question-server" }, "A result from the server ", h("strong", { class: "question-server-name" }, q.server),
        ", held for you before the model reads it.")
      : h("p", { class: "question-server" }, "Asked by the server ", h("strong", { class: "question-server-name" }, q.server)),
    ...b.parts,
    error,
    h("div", { class: "actions question-actions" }, reason, cancel, decline, accept),
  );
  dialog.addEventListener("cancel", (ev) => {
    ev.preventDefault();
    reply(dismiss());
  });
  // Closed without an answer (not removed because it was answered or withdrawn): a dismissal.
  dialog.addEventListener("close", () => dialog.isConnected && reply(dismiss()));
  queueMicrotask(() => {
    try {
      if (dialog.isConnected && !dialog.open) dialog.showModal();
    } catch {
      dialog.setAttribute("open", "");
    }
    safe.focus();
  });
  return dialog;
}

/** Answers by nonce; resolves to Rust's refusal, or null when accepted. */
async function send(nonce: string, r: ReplyDto): Promise<string | null> {
  const out = await attempt(ipc.answerQuestion(nonce, r));
  return failureMessage(out);
}

async function providers(): Promise<ProviderDto[]> {
  const r = await attempt(ipc.listProviders());
  return r instanceof IpcFailure ? [] : (r as ProviderDto[]);
}

/** Keeps the oldest waiting question on screen until none are left. */
export function mountQuestions(root: HTMLElement): () => void {
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
      const pending = (await ipc.pendingQuestions()) as QuestionDto[];
      if (shown && !pending.some((p) => p.nonce === shown?.nonce)) {
        // Answered elsewhere, or withdrawn (the server gave up, the call was cancelled).
        shown.dialog.remove();
        shown = null;
      }
      const next = pending[0];
      if (!shown && next) {
        const dialog = questionDialog(next, async (r) => {
          const refusal = await send(next.nonce, r);
          if (refusal === null && shown?.nonce === next.nonce) shown = null;
          void sync();
          return refusal;
        }, { loadProviders: providers });
        shown = { nonce: next.nonce, dialog };
        root.append(dialog);
      }
      if (shown) showQuestionQueue(shown.dialog, pending.length);
    } finally {
      busy = false;
    }
    if (again) {
      again = false;
      return sync();
    }
  };
  const unlisten = events.hostChanged.listen((e) => {
    if (e.payload.kind === "questions") void sync();
  });
  void sync();
  return () => void unlisten.then((stop) => stop());
}
