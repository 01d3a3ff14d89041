// Renders a stored conversation, and the turn being streamed: user and assistant bubbles (the
// assistant's Markdown rendered safely), tool-call cards matched to their results by call id.
import { h } from "../../app/dom";
import type { ChatEventDto, MessageDto } from "../../ipc/bindings";
import { renderMarkdown } from "./markdown";
import { toolCard } from "./tool-card";
import type { ToolCard } from "./tool-card";

const NOTES: Record<string, string> = {
  cancelled: "Stopped.",
  interrupted: "Interrupted: the app closed while this answer was arriving.",
  incomplete: "Still arriving…",
};

export function userBubble(text: string): HTMLElement {
  return h("div", { class: "msg msg-user" }, h("div", { class: "bubble" }, text));
}

function assistantBubble(): { el: HTMLElement; body: HTMLElement } {
  const body = h("div", { class: "bubble md" });
  return { el: h("div", { class: "msg msg-assistant" }, body), body };
}

/** Renders stored messages into `log`. */
export function renderMessages(log: HTMLElement, messages: MessageDto[]): void {
  const cards = new Map<string, ToolCard>();
  const nodes: HTMLElement[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      const text = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
      if (text !== "") nodes.push(userBubble(text));
      for (const p of m.parts) {
        if (p.type === "tool_result") cards.get(p.call_id)?.setResult(p.is_error, p.text, null);
        if (p.type === "image") nodes.push(h("div", { class: "msg msg-user" }, h("p", { class: "hint" }, "[image]")));
      }
      continue;
    }
    let bubble: ReturnType<typeof assistantBubble> | null = null;
    for (const p of m.parts) {
      if (p.type === "text") {
        if (!bubble) nodes.push((bubble = assistantBubble()).el);
        bubble.body.append(renderMarkdown(p.text));
      } else if (p.type === "tool_call") {
        const card = toolCard(p.name, p.arguments);
        cards.set(p.id, card);
        nodes.push(card.el);
        bubble = null;
      }
    }
    const note = m.status === "failed" ? `Failed: ${m.error ?? "unknown error"}` : NOTES[m.status];
    if (note) nodes.push(h("p", { class: `msg-note ${m.status === "failed" ? "error" : "hint"}` }, note));
  }
  log.replaceChildren(...nodes);
}

/** The turn being streamed into `log`: text deltas, tool cards, the end. */
export class LiveTurn {
  private text = "";
  private bubble: ReturnType<typeof assistantBubble> | null = null;
  private timer: number | undefined;
  private readonly cards = new Map<string, ToolCard>();
  /** The error the turn failed with, if it did (the store may hold no answer to show it on). */
  failedWith: string | null = null;

  constructor(private readonly log: HTMLElement, private readonly delayMs = 50) {}

  handle(ev: ChatEventDto): void {
    switch (ev.event) {
      case "text_delta":
        if (!this.bubble) {
          this.bubble = assistantBubble();
          this.text = "";
          this.log.append(this.bubble.el);
        }
        this.text += ev.text;
        if (this.timer === undefined) this.timer = window.setTimeout(() => this.render(), this.delayMs);
        break;
      case "tool_call_proposed": {
        this.render();
        this.bubble = null;
        const card = toolCard(ev.name, ev.arguments, ev.server, ev.tool);
        this.cards.set(ev.call_id, card);
        this.log.append(card.el);
        break;
      }
      case "tool_running":
        this.cards.get(ev.call_id)?.setStatus("running");
        break;
      case "tool_progress":
        this.cards.get(ev.call_id)?.setProgress({ progress: ev.progress.progress ?? 0, total: ev.progress.total ?? null, message: ev.progress.message ?? null });
        break;
      case "tool_result":
        this.cards.get(ev.call_id)?.setResult(ev.is_error, ev.text, ev.duration_ms ?? null);
        break;
      case "failed":
        this.failedWith = ev.error;
        this.render();
        this.log.append(h("p", { class: "msg-note error", role: "alert" }, `Failed: ${ev.error}`));
        break;
      case "cancelled":
        this.render();
        this.log.append(h("p", { class: "msg-note hint" }, NOTES.cancelled));
        break;
      default:
        break;
    }
  }

  /** Shows the text received so far (called at most every `delayMs` while streaming). */
  render(): void {
    window.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.bubble) this.bubble.body.replaceChildren(renderMarkdown(this.text));
  }
}
