// The chat's redaction switch (issue 16, point 5), and the lasting notices of what each turn
// had redacted. The switch says whether what this conversation sends to the picked provider
// has its secrets and personal data replaced by placeholders: on/off for this conversation,
// "off in Settings" when switched off for all, "not needed" for a model on this machine
// (nothing leaves it). A new chat has nothing to switch yet: its first message is redacted
// when redaction is on, and the switch appears once the conversation exists.
//
// Why it watches the log: the chat page re-renders the transcript whenever a conversation is
// opened or a turn ends. Watching that (the log's own children, not the streamed text) lets
// this module refresh the switch and put each turn's notice back at its turn after every
// re-render, with nothing but a mount line in the page, which other features edit too.
import { h } from "../../app/dom";
import { ipc } from "../../ipc/client";
import type { RedactionStateDto } from "../../ipc/bindings";
import { placeTurnRedactions } from "./messages";
import "./redaction.css";

export interface RedactionSwitchOptions {
  /** The transcript, re-rendered by the page. */
  log: HTMLElement;
  /** The open conversation, `null` for a new chat. */
  conversation: () => string | null;
  /** The provider picker. */
  provider: HTMLSelectElement;
}

export interface RedactionSwitch {
  el: HTMLElement;
  /** Reads the state and the turns' notices again. */
  refresh(): Promise<void>;
  /** Stops watching. */
  stop(): void;
}

/** The state line for `s`, and whether the box can be toggled. */
export function describeState(s: RedactionStateDto | null, conversation: string | null): { text: string; title: string; checked: boolean; enabled: boolean } {
  if (s === null) return { text: "Redaction: unknown", title: "The redaction state could not be read.", checked: true, enabled: false };
  if (s.local) return { text: "Redaction: not needed (local model)", title: "This provider runs on this machine: nothing leaves it, so nothing is redacted.", checked: false, enabled: false };
  if (!s.enabled) return { text: "Redaction: off in Settings", title: "Redaction is switched off for every conversation on the Settings page.", checked: false, enabled: false };
  if (conversation === null) return { text: "Redaction: on", title: "Secrets and personal data in this chat are replaced by placeholders before they go to the model. Once the chat has its first message, it can be switched off for this conversation here.", checked: true, enabled: false };
  return s.on_for_conversation
    ? { text: "Redaction: on", title: "Secrets and personal data (API keys, tokens, private keys, passwords in URLs, e-mail addresses, card and phone numbers, your own patterns) are replaced by placeholders before this conversation's messages, attachments and tool results go to the model. Untick to send them as they are.", checked: true, enabled: true }
    : { text: "Redaction: off for this conversation", title: "This conversation's messages, attachments and tool results go to the model as they are. Tick to redact them again.", checked: false, enabled: true };
}

/** Calls a command: its data, or `null` when it failed or does not exist (an older back
 *  end, a test without it). */
async function call<T>(f: () => Promise<T>): Promise<{ data: T } | null> {
  try {
    return { data: await f() };
  } catch {
    return null;
  }
}

export function redactionSwitch(opts: RedactionSwitchOptions): RedactionSwitch {
  const box = h("input", { type: "checkbox", class: "chat-redaction-toggle", "aria-label": "Redact secrets and personal data in this conversation" });
  const state = h("span", { class: "chat-redaction-state" });
  const el = h("label", { class: "chat-redaction hint" }, box, state);
  const error = (m: string) => {
    state.textContent = m;
    el.classList.add("error");
  };
  let shownFor = "";
  let firstSeen: Element | null = null;

  const show = (s: RedactionStateDto | null, conversation: string | null) => {
    const d = describeState(s, conversation);
    el.classList.remove("error");
    state.textContent = d.text;
    el.title = d.title;
    box.checked = d.checked;
    box.disabled = !d.enabled;
    el.dataset.state = s === null ? "unknown" : s.local ? "local" : !s.enabled ? "disabled" : s.on_for_conversation ? "on" : "off";
  };

  async function refresh(): Promise<void> {
    const conversation = opts.conversation();
    const provider = opts.provider.value || null;
    shownFor = `${conversation ?? ""}\u0000${provider ?? ""}`;
    const [s, t] = await Promise.all([
      call(() => ipc.redactionState(conversation, provider)),
      conversation === null ? Promise.resolve(null) : call(() => ipc.turnRedactions(conversation)),
    ]);
    if (opts.conversation() !== conversation) return;
    show(s?.data ?? null, conversation);
    if (conversation !== null) placeTurnRedactions(opts.log, t?.data ?? []);
    firstSeen = opts.log.firstElementChild;
  }

  box.addEventListener("change", async () => {
    const conversation = opts.conversation();
    if (conversation === null) return;
    box.disabled = true;
    const r = await call(() => ipc.setConversationRedaction(conversation, box.checked));
    if (r === null) {
      error("Redaction: the switch could not be saved");
      box.disabled = false;
      return;
    }
    await refresh();
  });
  opts.provider.addEventListener("change", () => void refresh());

  // A re-render of the transcript (a conversation opened, a turn ended) replaces the log's
  // children, so its first child changes; streaming only appends. Read again on a re-render
  // or when the conversation changed.
  let queued = false;
  const observer = new MutationObserver(() => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      const key = `${opts.conversation() ?? ""}\u0000${opts.provider.value}`;
      if (key !== shownFor || opts.log.firstElementChild !== firstSeen) void refresh();
    });
  });
  observer.observe(opts.log, { childList: true });
  void refresh();
  return { el, refresh, stop: () => observer.disconnect() };
}
