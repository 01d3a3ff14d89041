// The chat's progressive-discovery switch (issue 16, point 2). When ticked, this
// conversation's model is offered a search over the tool catalog and the tools it loads,
// instead of every tool definition in every request: for large catalogs, where the
// definitions alone can fill most of the context. In a new chat the choice is kept here and
// sent with the first message (`pending`), so even that first request is small; an agent can
// have it on from its profile.
//
// Like the redaction switch it watches the transcript's children to notice a conversation
// opened or a turn ended, so the page needs only a mount line.
import { h } from "../../app/dom";
import { ipc } from "../../ipc/client";
import "./discovery.css";

export interface DiscoverySwitchOptions {
  /** The transcript, re-rendered by the page. */
  log: HTMLElement;
  /** The open conversation, `null` for a new chat. */
  conversation: () => string | null;
}

export interface DiscoverySwitch {
  el: HTMLElement;
  /** Reads the state again. */
  refresh(): Promise<void>;
  /** Stops watching. */
  stop(): void;
  /** For a new chat, the choice to send with its first message (`null` when there is a
   *  conversation: it keeps its own setting). */
  pending(): boolean | null;
}

/** What the switch shows for `on` (`null`: unknown) in `conversation`. */
export function describeDiscovery(on: boolean | null, conversation: string | null): { text: string; title: string; checked: boolean; enabled: boolean; hidden: boolean } {
  if (conversation === null) {
    return { text: on ? "Find tools: on" : "Find tools", title: "Tick to start this chat with a search over your tools instead of every tool definition in every request: far fewer tokens per turn with a large catalog. Calls still ask for your approval.", checked: on === true, enabled: true, hidden: false };
  }
  if (on === null) return { text: "Find tools: unknown", title: "Whether this conversation finds tools on demand could not be read.", checked: false, enabled: false, hidden: false };
  return on
    ? { text: "Find tools: on", title: "The model is offered a search over your tools and loads the ones it needs, instead of every tool definition in every request (for large catalogs). Calls still ask for your approval. Untick to offer every tool again.", checked: true, enabled: true, hidden: false }
    : { text: "Find tools", title: "Tick to offer the model a search over your tools instead of every tool definition in every request: far fewer tokens per turn with a large catalog. Calls still ask for your approval.", checked: false, enabled: true, hidden: false };
}

async function call<T>(f: () => Promise<T>): Promise<{ data: T } | null> {
  try {
    return { data: await f() };
  } catch {
    return null;
  }
}

export function discoverySwitch(opts: DiscoverySwitchOptions): DiscoverySwitch {
  const box = h("input", { type: "checkbox", class: "chat-discovery-toggle", "aria-label": "Find tools on demand in this conversation" });
  const state = h("span", { class: "chat-discovery-state" });
  const el = h("label", { class: "chat-discovery hint" }, box, state);
  let shownFor: string | null | undefined;
  // A new chat's choice, sent with its first message; a conversation keeps its own setting.
  let pendingOn = false;
  let firstSeen: Element | null = null;

  const show = (on: boolean | null, conversation: string | null) => {
    const d = describeDiscovery(on, conversation);
    el.classList.remove("error");
    el.hidden = d.hidden;
    state.textContent = d.text;
    el.title = d.title;
    box.checked = d.checked;
    box.disabled = !d.enabled;
    el.dataset.state = on === null ? "unknown" : on ? "on" : "off";
  };

  async function refresh(): Promise<void> {
    const conversation = opts.conversation();
    shownFor = conversation;
    firstSeen = opts.log.firstElementChild;
    if (conversation === null) return show(pendingOn, null);
    pendingOn = false;
    const r = await call(() => ipc.conversationDiscovery(conversation));
    if (opts.conversation() !== conversation) return;
    show(r === null ? null : r.data, conversation);
  }

  box.addEventListener("change", async () => {
    const conversation = opts.conversation();
    if (conversation === null) {
      // Nothing to save yet: the first message carries it (`pending`).
      pendingOn = box.checked;
      return show(pendingOn, null);
    }
    box.disabled = true;
    const r = await call(() => ipc.setConversationDiscovery(conversation, box.checked));
    if (r === null) {
      state.textContent = "Find tools: the switch could not be saved";
      el.classList.add("error");
      box.disabled = false;
      return;
    }
    await refresh();
  });

  let queued = false;
  const observer = new MutationObserver(() => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      if (opts.conversation() !== shownFor || opts.log.firstElementChild !== firstSeen) void refresh();
    });
  });
  observer.observe(opts.log, { childList: true });
  void refresh();
  return { el, refresh, stop: () => observer.disconnect(), pending: () => (opts.conversation() === null ? pendingOn : null) };
}
