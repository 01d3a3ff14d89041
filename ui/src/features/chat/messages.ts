// Renders a stored conversation, and the turn being streamed: user and assistant bubbles (the
// assistant's Markdown rendered safely), tool-call cards matched to their results by call id,
// images, the summaries that replaced older messages, and each message's actions. Every stored
// message that shows anything is one `.msg-block` carrying its id in `data-id`.
import { h } from "../../app/dom";
import type { ChatEventDto, MessageDto, PartDto, SummaryDto, TurnRedactionDto } from "../../ipc/bindings";
import { messageActions } from "./actions";
import type { ActionHandlers } from "./actions";
import { assistantBubble, messageImages, userBubble } from "./bubbles";
import { summaryBlock } from "./info";
import { renderMarkdown } from "./markdown";
import { toolCard } from "./tool-card";
import type { ToolCard } from "./tool-card";
import type { MountOptions } from "../apps";

export { userBubble } from "./bubbles";

const NOTES: Record<string, string> = {
  cancelled: "Stopped.",
  interrupted: "Interrupted: the app closed while this answer was arriving.",
  incomplete: "Still arriving…",
};

export interface RenderOptions {
  /** Summaries to place after the message each one runs through. */
  summaries?: SummaryDto[];
  /** Without handlers, messages get no actions. */
  actions?: ActionHandlers;
  /** The conversation shown: the apps of its calls are shown in it (AP-10). */
  conversation?: string | null;
}

/** Where a live turn's apps are shown: its conversation (`null` for a new chat until the turn
 * ends) and the agent answering. */
export interface ShownIn {
  conversation: string | null;
  agent: string | null;
}

/** A call's arguments as an object (the card shows them as pretty JSON text). */
function parseArgs(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const texts = (parts: PartDto[]) => parts.flatMap((p) => (p.type === "text" ? [p.text] : []));
const images = (parts: PartDto[]) => parts.flatMap((p) => (p.type === "image" ? [p] : []));

/** Message ids are integers as text; anything else sorts first. */
const idNumber = (id: string) => (/^\d+$/.test(id) ? Number(id) : -1);

/** Puts each summary right after the last shown message at or before the one it runs through. */
function placeSummaries(nodes: HTMLElement[], summaries: SummaryDto[]): HTMLElement[] {
  const out = [...nodes];
  for (const s of [...summaries].reverse()) {
    const through = idNumber(s.through);
    let at = -1;
    out.forEach((n, i) => {
      if (n.dataset.id !== undefined && idNumber(n.dataset.id) <= through) at = i;
    });
    out.splice(at + 1, 0, summaryBlock(s.messages, s.text, s.model));
  }
  return out;
}

/**
 * The apps a live turn showed in `log`, by call id, until the next render of `log` takes them.
 * The chat re-renders the stored conversation as soon as a turn ends (nothing else can be
 * opened while it runs), and the store keeps no views: without this, an app would vanish
 * with the turn. The frame is mounted anew (a frame cannot move in the document without
 * reloading); later renders show the result text only.
 */
const shownApps = new WeakMap<HTMLElement, Map<string, MountOptions>>();

/** Renders stored messages into `log`. */
export function renderMessages(log: HTMLElement, messages: MessageDto[], opts: RenderOptions = {}): void {
  const cards = new Map<string, ToolCard>();
  const apps = shownApps.get(log);
  shownApps.delete(log);
  const nodes: HTMLElement[] = [];
  const lastAnswer = [...messages].reverse().find((m) => m.role !== "user")?.id;
  for (const m of messages) {
    const block = h("div", { class: "msg-block", "data-id": m.id, "data-role": m.role === "user" ? "user" : "assistant" });
    const text = texts(m.parts);
    const pics = images(m.parts);
    if (m.role === "user") {
      for (const p of m.parts) if (p.type === "tool_result") cards.get(p.call_id)?.setResult(p.is_error, p.text, null);
      // A message of tool results only is shown on the cards of its calls.
      if (text.length === 0 && pics.length === 0) continue;
      block.append(userBubble(text.join("\n"), pics));
    } else {
      let bubble: ReturnType<typeof assistantBubble> | null = null;
      for (const p of m.parts) {
        if (p.type === "text" || p.type === "image") {
          if (!bubble) block.append((bubble = assistantBubble()).el);
          bubble.body.append(p.type === "text" ? renderMarkdown(p.text) : messageImages([p]));
        } else if (p.type === "tool_call") {
          const card = toolCard(p.name, p.arguments);
          cards.set(p.id, card);
          const app = apps?.get(p.id);
          // Mounted anew, in the conversation the store now names (a new chat had none live).
          if (app) card.setApp({ ...app, conversation: opts.conversation ?? app.conversation ?? null });
          block.append(card.el);
          bubble = null;
        }
      }
      const note = m.status === "failed" ? `Failed: ${m.error ?? "unknown error"}` : NOTES[m.status];
      if (note) block.append(h("p", { class: `msg-note ${m.status === "failed" ? "error" : "hint"}` }, note));
    }
    if (opts.actions) {
      block.append(messageActions(block, {
        id: m.id,
        text: text.join(m.role === "user" ? "\n" : "\n\n"),
        editable: m.role === "user" && text.length > 0,
        regenerate: m.id === lastAnswer,
        hasImages: pics.length > 0,
        handlers: opts.actions,
      }));
    }
    nodes.push(block);
  }
  log.replaceChildren(...placeSummaries(nodes, opts.summaries ?? []));
}

/** How a provider profile id reads in a sentence. */
const VENDORS: Record<string, string> = { openai: "OpenAI", anthropic: "Anthropic", openrouter: "OpenRouter", deepseek: "DeepSeek", custom: "a custom provider" };

/** What a redaction notice explains when pointed at (title) and to screen readers. */
export const REDACTION_EXPLAINED = "Switchboard replaced these with placeholders such as [REDACTED_EMAIL_1] before the request left this machine: the model never saw the values. Its answer gets them back here as it arrives, and the calls it makes before they run. Only the kinds and counts of what was redacted are recorded. Switch it off for this conversation at the top of the chat.";

/** The lasting notice of what one turn had redacted, for one provider. */
export function turnRedactionNotice(t: TurnRedactionDto): HTMLElement {
  const to = VENDORS[t.provider] ?? t.provider;
  return h("p", { class: "msg-note hint chat-redacted chat-redacted-turn", "data-turn": t.message_id, title: REDACTION_EXPLAINED },
    `Redacted before sending to ${to}: ${t.counts.map((c) => c.label).join(", ")}`);
}

/**
 * Puts each turn's redaction notice right after the person's message that started it (where
 * the live notice stood), replacing the lasting ones shown before (a live turn's own notice
 * stays); a turn whose message is not shown (a superseded branch) gets none. Returns the
 * notices placed.
 */
export function placeTurnRedactions(log: HTMLElement, turns: TurnRedactionDto[]): HTMLElement[] {
  log.querySelectorAll(".chat-redacted-turn").forEach((n) => n.remove());
  const placed: HTMLElement[] = [];
  for (const t of turns) {
    if (t.counts.length === 0) continue;
    const block = Array.from(log.querySelectorAll<HTMLElement>(".msg-block[data-id]")).find((b) => b.dataset.id === t.message_id);
    if (!block) continue;
    // After the message and any notice already placed for it (one per provider).
    let at: Element = block;
    while (at.nextElementSibling?.classList.contains("chat-redacted-turn")) at = at.nextElementSibling;
    const note = turnRedactionNotice(t);
    at.after(note);
    placed.push(note);
  }
  return placed;
}

/** The turn being streamed into `log`: text deltas, tool cards, summaries, the end. */
export class LiveTurn {
  private text = "";
  private bubble: ReturnType<typeof assistantBubble> | null = null;
  private timer: number | undefined;
  private readonly cards = new Map<string, ToolCard>();
  /** Each call's server, tool and the arguments that ran, for the MCP App its result may show. */
  private readonly calls = new Map<string, { server: string | null; tool: string | null; args: string }>();
  /** The error the turn failed with, if it did (the store may hold no answer to show it on). */
  failedWith: string | null = null;
  /** One line per kind of notice (tool cost, redaction, over budget), updated in place. */
  private readonly notices = new Map<string, HTMLElement>();

  /** `before` is the person's new message, if any: a summary made for this turn goes above it. */
  constructor(
    private readonly log: HTMLElement,
    private readonly delayMs = 50,
    private readonly before: Node | null = null,
    private readonly shown: ShownIn = { conversation: null, agent: null },
  ) {}

  /** Shows `el` as the turn's notice of `kind`, in place of the one before. */
  private notice(kind: string, el: HTMLElement): void {
    const old = this.notices.get(kind);
    if (old && old.parentNode === this.log) old.replaceWith(el);
    else if (this.before && this.before.parentNode === this.log) this.log.insertBefore(el, this.before.nextSibling);
    else this.log.append(el);
    this.notices.set(kind, el);
  }

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
        this.calls.set(ev.call_id, { server: ev.server ?? null, tool: ev.tool ?? null, args: ev.arguments });
        this.log.append(card.el);
        break;
      }
      case "tool_running": {
        const card = this.cards.get(ev.call_id);
        card?.setStatus("running");
        if (typeof ev.edited_arguments === "string") {
          card?.setEdited(ev.edited_arguments);
          const call = this.calls.get(ev.call_id);
          if (call) call.args = ev.edited_arguments;
        }
        break;
      }
      case "tool_progress":
        this.cards.get(ev.call_id)?.setProgress({ progress: ev.progress.progress ?? 0, total: ev.progress.total ?? null, message: ev.progress.message ?? null });
        break;
      case "tool_result": {
        const card = this.cards.get(ev.call_id);
        card?.setResult(ev.is_error, ev.text, ev.duration_ms ?? null);
        // The result (or its tool) has an MCP App: show it under the card, in its jail.
        const call = this.calls.get(ev.call_id);
        if (card && call?.server && call.tool && ev.app_view) {
          const app: MountOptions = {
            server: call.server, uri: ev.app_view, toolName: call.tool, arguments: parseArgs(call.args), result: null,
            conversation: this.shown.conversation, agent: this.shown.agent,
          };
          card.setApp(app);
          const apps = shownApps.get(this.log) ?? new Map<string, MountOptions>();
          apps.set(ev.call_id, app);
          shownApps.set(this.log, apps);
        }
        break;
      }
      case "compacted": {
        const block = summaryBlock(ev.messages, ev.summary);
        block.classList.add("live");
        if (this.before && this.before.parentNode === this.log) this.log.insertBefore(block, this.before);
        else this.log.append(block);
        break;
      }
      case "failed":
        this.failedWith = ev.error;
        this.render();
        this.log.append(h("p", { class: "msg-note error", role: "alert" }, `Failed: ${ev.error}`));
        break;
      case "cancelled":
        this.render();
        this.log.append(h("p", { class: "msg-note hint" }, NOTES.cancelled));
        break;
      case "tools_cost": {
        const tokens = ev.tokens === null ? "unknown" : `${ev.estimate ? "≈" : ""}${ev.tokens}`;
        const share = ev.share_percent === null ? "" : ` (${ev.share_percent.toFixed(1)}% of the context)`;
        this.notice("tools-cost", h("p", { class: "msg-note hint chat-tools-cost" },
          `Tools: ${tokens} tokens for ${ev.tools} definitions${share}`));
        break;
      }
      case "tools_over_budget":
        this.notice("tools-over", h("p", { class: "msg-note warning chat-tools-over", role: "alert" },
          `The tool definitions take ${ev.share_percent === null ? "a large share" : `${ev.share_percent.toFixed(0)}%`} of the model's context (more than ${ev.limit_percent}%); consider turning off servers this conversation does not need.`));
        break;
      case "redacted":
        this.notice("redacted", h("p", { class: "msg-note hint chat-redacted" },
          `Redacted before sending: ${ev.counts.map((c) => c.label).join(", ")}. The model saw placeholders; its answer and the calls it makes get the real values back on this machine.`));
        this.notices.get("redacted")?.setAttribute("title", REDACTION_EXPLAINED);
        break;
      case "handed_over": {
        // The next agent's words start a new bubble, under a line saying who took over.
        this.render();
        this.bubble = null;
        // The apps its calls show from now on are shown in the new agent's answer.
        this.shown.agent = ev.to;
        const note = ev.note.trim();
        this.log.append(h("p", { class: "msg-note hint chat-handover" },
          `Agent ${ev.from} handed the conversation over to agent ${ev.to}.`, note ? ` Its note: ${note}` : null));
        break;
      }
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
