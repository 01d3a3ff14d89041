// The conversation list of the Chat page: newest first, full-text search, rename in place and
// delete with a second click to confirm. Titles, previews and snippets are shown as text.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { ConversationDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

export interface ConversationListOptions {
  /** The conversation shown on the right, if any. */
  current(): string | null;
  open(id: string): void;
  /** `id` was deleted. */
  deleted(id: string): void;
  fail(message: string): void;
}

export interface ConversationList {
  search: HTMLInputElement;
  list: HTMLUListElement;
  reload(): Promise<void>;
  /** Marks `id` (or none) as the open one. */
  mark(id: string | null): void;
  stop(): void;
}

export function conversationList(o: ConversationListOptions): ConversationList {
  let stopped = false;
  const search = h("input", { type: "search", class: "chat-search", placeholder: "Search conversations", "aria-label": "Search conversations" });
  const list = h("ul", { class: "conv-list", "aria-label": "Conversations" });

  function convItem(id: string, title: string, sub: string | null): HTMLElement {
    const open = h("button", { type: "button", class: "conv-open" }, h("span", { class: "conv-title" }, title || "Untitled"), sub ? h("span", { class: "conv-preview hint" }, sub) : null);
    open.addEventListener("click", () => o.open(id));
    const rename = h("button", { type: "button", class: "conv-rename", title: "Rename", "aria-label": `Rename ${title}` }, "✎");
    const del = h("button", { type: "button", class: "conv-delete danger", title: "Delete", "aria-label": `Delete ${title}` }, "×");
    const li = h("li", { class: `conv${id === o.current() ? " current" : ""}`, "data-id": id }, open, rename, del);
    rename.addEventListener("click", () => {
      const field = h("input", { class: "conv-rename-input", "aria-label": "New title" });
      field.value = title;
      const done = async (save: boolean) => {
        if (save && field.value.trim() !== "" && field.value !== title) {
          const r = await attempt(ipc.renameConversation(id, field.value.trim()));
          if (r instanceof IpcFailure) o.fail(r.message);
        }
        void reload();
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
      const r = await attempt(ipc.deleteConversation(id));
      if (r instanceof IpcFailure) o.fail(r.message);
      else o.deleted(id);
      void reload();
    });
    return li;
  }

  async function reload() {
    const q = search.value.trim();
    if (q !== "") {
      const r = await attempt(ipc.searchConversations(q));
      if (stopped) return;
      if (r instanceof IpcFailure) return o.fail(r.message);
      list.replaceChildren(...(r.length === 0 ? [h("li", { class: "hint" }, "No match.")] : r.map((s) => convItem(s.conversation, s.title, s.snippet))));
      return;
    }
    const r = await attempt(ipc.listConversations());
    if (stopped) return;
    if (r instanceof IpcFailure) return o.fail(r.message);
    const items = [...r].sort((a: ConversationDto, b: ConversationDto) => (b.updated_ms ?? 0) - (a.updated_ms ?? 0));
    list.replaceChildren(...(items.length === 0 ? [h("li", { class: "hint" }, "No conversation yet.")] : items.map((c) => convItem(c.id, c.title, c.preview ?? null))));
  }

  let timer: number | undefined;
  search.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void reload(), 200);
  });

  return {
    search,
    list,
    reload,
    mark: (id) => list.querySelectorAll<HTMLElement>(".conv").forEach((li) => li.classList.toggle("current", id !== null && li.dataset.id === id)),
    stop: () => {
      stopped = true;
      window.clearTimeout(timer);
    },
  };
}
