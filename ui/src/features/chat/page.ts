// The Chat page: conversations on the left (newest first, full-text search, new, rename,
// delete), the open conversation on the right with a provider/model picker and a composer.
// A turn streams over a Channel into the log; when it ends the conversation is re-read from
// the store. Tool calls the model asks for are answered in the approval dialog (origin "model").
import { Channel } from "@tauri-apps/api/core";
import { commands } from "../../ipc/bindings";
import type { ChatEventDto, ChatEventDto_Deserialize, ConversationDto, ProviderDto } from "../../ipc/bindings";
import { emptyState, h } from "../../app/dom";
import { LiveTurn, renderMessages, userBubble } from "./messages";
import { providersDialog } from "./providers";
import "./chat.css";

const newRunId = () => `chat-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

export function mountChat(root: HTMLElement): () => void {
  let stopped = false;
  let providers: ProviderDto[] = [];
  let current: string | null = null;
  let running: string | null = null;

  const search = h("input", { type: "search", class: "chat-search", placeholder: "Search conversations", "aria-label": "Search conversations" });
  const convList = h("ul", { class: "conv-list", "aria-label": "Conversations" });
  const newChat = h("button", { type: "button", class: "primary new-chat" }, "New chat");
  const providerSel = h("select", { class: "chat-provider", "aria-label": "Provider" });
  const model = h("input", { class: "chat-model", list: "chat-models", placeholder: "model", "aria-label": "Model", autocomplete: "off" });
  const models = h("datalist", { id: "chat-models" });
  const manage = h("button", { type: "button", class: "chat-providers" }, "Providers…");
  const log = h("div", { class: "chat-log", "aria-live": "polite" });
  const input = h("textarea", { class: "chat-input", rows: "3", placeholder: "Message (Enter sends, Shift+Enter for a new line)", "aria-label": "Message" });
  // Disabled until the providers are known: a send before that would have no model to go to.
  const sendBtn = h("button", { type: "submit", class: "primary chat-send", disabled: true }, "Send");
  const stopBtn = h("button", { type: "button", class: "danger chat-stop", hidden: true }, "Stop");
  const failure = h("p", { class: "error chat-error", role: "alert", hidden: true });
  const composer = h("form", { class: "composer" }, input, h("div", { class: "composer-actions" }, sendBtn, stopBtn));

  const fail = (m: string | null) => {
    failure.hidden = m === null;
    failure.textContent = m ?? "";
  };
  const openProviders = () => document.body.append(providersDialog(() => void loadProviders()));
  manage.addEventListener("click", openProviders);

  const setBusy = (busy: boolean) => {
    input.disabled = busy;
    sendBtn.hidden = busy;
    stopBtn.hidden = !busy;
    providerSel.disabled = busy;
  };

  const pickProvider = () => {
    const p = providers.find((x) => x.name === providerSel.value);
    models.replaceChildren(...(p?.models ?? []).map((m) => h("option", { value: m })));
    model.value = p?.model ?? "";
  };
  providerSel.addEventListener("change", pickProvider);

  const showEmpty = () => {
    if (providers.length === 0) {
      const add = h("button", { type: "button", class: "primary", onclick: openProviders }, "Add a provider");
      log.replaceChildren(emptyState("No model provider yet", "Chat needs a model: add a provider (OpenAI, Anthropic, a local Ollama…) with its API key."), h("div", { class: "chat-center" }, add));
    } else {
      log.replaceChildren(emptyState("Start a conversation", "Ask anything. The model can use the tools of your running servers; you approve each call."));
    }
  };

  async function loadProviders() {
    const r = await commands.listProviders();
    if (stopped) return;
    if (r.status === "error") return fail(r.error.message);
    providers = r.data;
    sendBtn.disabled = false;
    const keep = providerSel.value;
    providerSel.replaceChildren(...providers.map((p) => h("option", { value: p.name }, `${p.name}${p.key_set || !p.key_required ? "" : " (no key)"}`)));
    if (providers.some((p) => p.name === keep)) providerSel.value = keep;
    else pickProvider();
    if (current === null && running === null) showEmpty();
  }

  function convItem(id: string, title: string, sub: string | null): HTMLElement {
    const open = h("button", { type: "button", class: "conv-open" }, h("span", { class: "conv-title" }, title || "Untitled"), sub ? h("span", { class: "conv-preview hint" }, sub) : null);
    open.addEventListener("click", () => void openConversation(id));
    const rename = h("button", { type: "button", class: "conv-rename", title: "Rename", "aria-label": `Rename ${title}` }, "✎");
    const del = h("button", { type: "button", class: "conv-delete danger", title: "Delete", "aria-label": `Delete ${title}` }, "×");
    const li = h("li", { class: `conv${id === current ? " current" : ""}`, "data-id": id }, open, rename, del);
    rename.addEventListener("click", () => {
      const field = h("input", { class: "conv-rename-input", "aria-label": "New title" });
      field.value = title;
      const done = async (save: boolean) => {
        if (save && field.value.trim() !== "" && field.value !== title) {
          const r = await commands.renameConversation(id, field.value.trim());
          if (r.status === "error") fail(r.error.message);
        }
        void loadList();
      };
      field.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") void done(true);
        if (ev.key === "Escape") void done(false);
      });
      field.addEventListener("blur", () => void done(true), { once: true });
      li.replaceChildren(field);
      field.focus();
    });
    del.addEventListener("click", async () => {
      if (del.dataset.confirm !== "1") {
        del.dataset.confirm = "1";
        del.textContent = "Delete?";
        return;
      }
      const r = await commands.deleteConversation(id);
      if (r.status === "error") fail(r.error.message);
      if (current === id) {
        current = null;
        showEmpty();
      }
      void loadList();
    });
    return li;
  }

  async function loadList() {
    const q = search.value.trim();
    if (q !== "") {
      const r = await commands.searchConversations(q);
      if (stopped) return;
      if (r.status === "error") return fail(r.error.message);
      convList.replaceChildren(...(r.data.length === 0 ? [h("li", { class: "hint" }, "No match.")] : r.data.map((s) => convItem(s.conversation, s.title, s.snippet))));
      return;
    }
    const r = await commands.listConversations();
    if (stopped) return;
    if (r.status === "error") return fail(r.error.message);
    const items = [...r.data].sort((a: ConversationDto, b: ConversationDto) => (b.updated_ms ?? 0) - (a.updated_ms ?? 0));
    convList.replaceChildren(...(items.length === 0 ? [h("li", { class: "hint" }, "No conversation yet.")] : items.map((c) => convItem(c.id, c.title, c.preview))));
  }
  let searchTimer: number | undefined;
  search.addEventListener("input", () => {
    window.clearTimeout(searchTimer);
    searchTimer = window.setTimeout(() => void loadList(), 200);
  });

  async function openConversation(id: string) {
    if (running !== null) return;
    current = id;
    fail(null);
    convList.querySelectorAll(".conv").forEach((li) => li.classList.toggle("current", (li as HTMLElement).dataset.id === id));
    const r = await commands.loadConversation(id);
    if (stopped || current !== id) return;
    if (r.status === "error") return fail(r.error.message);
    renderMessages(log, r.data);
    log.scrollTop = log.scrollHeight;
  }

  newChat.addEventListener("click", () => {
    if (running !== null) return;
    current = null;
    fail(null);
    convList.querySelectorAll(".conv").forEach((li) => li.classList.remove("current"));
    showEmpty();
    input.focus();
  });

  async function send() {
    const text = input.value;
    if (text.trim() === "" || running !== null) return;
    if (providers.length === 0 || providerSel.value === "") return openProviders();
    fail(null);
    const runId = newRunId();
    running = runId;
    setBusy(true);
    if (current === null) log.replaceChildren();
    log.append(userBubble(text));
    input.value = "";
    const turn = new LiveTurn(log);
    const channel = new Channel<ChatEventDto_Deserialize>();
    channel.onmessage = (ev: ChatEventDto) => {
      if (!stopped) turn.handle(ev);
      log.scrollTop = log.scrollHeight;
    };
    const r = await commands.sendMessage(runId, current, providerSel.value, model.value.trim() || null, text, channel);
    running = null;
    if (stopped) return;
    turn.render();
    setBusy(false);
    if (r.status === "error") {
      fail(r.error.message);
      if (current === null) input.value = text;
      return;
    }
    current = r.data;
    await loadList();
    await openConversation(r.data);
    if (turn.failedWith !== null && failure.hidden) fail(turn.failedWith);
    input.focus();
  }
  composer.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void send();
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      void send();
    }
  });
  stopBtn.addEventListener("click", () => {
    if (running !== null) void commands.cancelChat(running);
  });

  root.replaceChildren(h("section", { class: "chat" },
    h("aside", { class: "chat-side" }, newChat, search, convList),
    h("div", { class: "chat-main" },
      h("div", { class: "chat-top" }, providerSel, model, models, manage),
      log, failure, composer),
  ));
  void loadProviders();
  void loadList();
  return () => {
    stopped = true;
    window.clearTimeout(searchTimer);
    if (running !== null) void commands.cancelChat(running);
  };
}
