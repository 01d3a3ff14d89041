// Keyboard shortcuts: new chat, search, moving between pages, and a `?` overlay that lists
// them. The pages are the tab bar's buttons (main.ts), found in the DOM and clicked, so this
// file knows nothing of how pages mount and main.ts only installs it.
//
// The mapping from a key press to an action is a pure function (`shortcutFor`), tested on its
// own; `installShortcuts` only looks the action up and carries it out. While a modal dialog is
// open (an approval, a question) no shortcut acts: the dialog is what needs an answer, and a
// page switch behind it would only hide where the person was.
import { h } from "../../app/dom";

/** What a shortcut does. */
export type Action =
  | { kind: "page"; index: number }
  | { kind: "next-page" }
  | { kind: "previous-page" }
  | { kind: "new-chat" }
  | { kind: "search" }
  | { kind: "settings" }
  | { kind: "help" };

/** The key press, as much of a KeyboardEvent as the mapping reads. */
export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
  /** Whether focus is in a field where typing a character means text. */
  inText: boolean;
}

/** The shortcuts as listed on the Settings page and in the overlay. */
export const SHORTCUTS: { keys: string; what: string }[] = [
  { keys: "Ctrl+N", what: "New chat" },
  { keys: "Ctrl+K", what: "Search (the page's search box; conversations on other pages)" },
  { keys: "Ctrl+1 … Ctrl+9", what: "Go to the first … ninth page" },
  { keys: "Ctrl+PageDown / Ctrl+PageUp", what: "Next / previous page" },
  { keys: "Ctrl+,", what: "Settings" },
  { keys: "← → Home End", what: "Move between pages while the tab bar has the focus" },
  { keys: "?", what: "Show these shortcuts" },
  { keys: "Esc", what: "Close a dialog or this list" },
];

/** The action a key press asks for, or null. Ctrl and ⌘ are the same modifier. */
export function shortcutFor(k: KeyPress): Action | null {
  const mod = k.ctrlKey || k.metaKey;
  if (mod && !k.altKey) {
    if (/^[1-9]$/.test(k.key) && !k.shiftKey) return { kind: "page", index: Number(k.key) - 1 };
    switch (k.key) {
      case "PageDown": return { kind: "next-page" };
      case "PageUp": return { kind: "previous-page" };
    }
    if (k.shiftKey) return null;
    switch (k.key.toLowerCase()) {
      case "n": return { kind: "new-chat" };
      case "k": return { kind: "search" };
      case ",": return { kind: "settings" };
    }
    return null;
  }
  if (k.key === "?" && !mod && !k.altKey && !k.inText) return { kind: "help" };
  return null;
}

/** Whether an element takes typed text (a `?` there is a question mark, not a shortcut). */
export function isTextField(el: Element | null): boolean {
  if (!el) return false;
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
  if (el instanceof HTMLInputElement) {
    return !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(el.type);
  }
  return (el as HTMLElement).isContentEditable === true;
}

function tabs(): HTMLButtonElement[] {
  return [...document.querySelectorAll<HTMLButtonElement>("nav.tabs [role=tab]")];
}

function goTo(tab: HTMLButtonElement | undefined) {
  if (!tab) return;
  tab.click();
  tab.focus();
}

function currentIndex(all: HTMLButtonElement[]): number {
  return all.findIndex((t) => t.getAttribute("aria-selected") === "true");
}

/** After a page mounts: its search box, if it has one. */
function pageSearch(): HTMLInputElement | null {
  return document.querySelector<HTMLInputElement>("#page input[type=search], #page .tool-search, #page .log-search");
}

/** The overlay listing the shortcuts; a second `?` or Esc closes it. */
export function shortcutsOverlay(): HTMLDialogElement {
  const close = h("button", { type: "button", class: "primary shortcuts-close" }, "Close");
  const dialog = h("dialog", { class: "shortcuts-dialog", "aria-labelledby": "shortcuts-title" },
    h("h2", { id: "shortcuts-title" }, "Keyboard shortcuts"),
    shortcutsTable(),
    h("div", { class: "actions" }, close));
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  return dialog;
}

/** The shortcuts as a table (the overlay and the Settings page). */
export function shortcutsTable(): HTMLTableElement {
  return h("table", { class: "shortcuts-table" },
    h("tbody", {}, ...SHORTCUTS.map((s) => h("tr", {}, h("th", { scope: "row" }, h("kbd", {}, s.keys)), h("td", {}, s.what)))));
}

/** Carries out one action. */
export function perform(a: Action): void {
  const all = tabs();
  const byPage = (p: string) => all.find((t) => t.dataset.page === p);
  switch (a.kind) {
    case "page": return goTo(all[a.index]);
    case "next-page":
    case "previous-page": {
      if (all.length === 0) return;
      const step = a.kind === "next-page" ? 1 : -1;
      return goTo(all[(currentIndex(all) + step + all.length) % all.length]);
    }
    case "settings": return goTo(byPage("settings"));
    case "new-chat": {
      const chat = byPage("chat");
      if (chat && chat.getAttribute("aria-selected") !== "true") goTo(chat);
      document.querySelector<HTMLButtonElement>("#page .new-chat")?.click();
      document.querySelector<HTMLElement>("#page textarea")?.focus();
      return;
    }
    case "search": {
      let box = pageSearch();
      if (!box) {
        goTo(byPage("chat"));
        box = pageSearch();
      }
      box?.focus();
      box?.select();
      return;
    }
    case "help": {
      const open = document.querySelector<HTMLDialogElement>("dialog.shortcuts-dialog");
      if (open) return open.close();
      const d = shortcutsOverlay();
      document.body.append(d);
      try {
        d.showModal();
      } catch {
        d.setAttribute("open", "");
      }
      d.querySelector<HTMLButtonElement>(".shortcuts-close")?.focus();
      return;
    }
  }
}

/** Listens for shortcuts on the whole window; returns how to stop. */
export function installShortcuts(target: Document = document): () => void {
  const onKey = (ev: KeyboardEvent) => {
    if (ev.defaultPrevented || ev.isComposing) return;
    const action = shortcutFor({
      key: ev.key, ctrlKey: ev.ctrlKey, metaKey: ev.metaKey, altKey: ev.altKey, shiftKey: ev.shiftKey,
      inText: isTextField(target.activeElement),
    });
    if (!action) return;
    // A modal asks for an answer first; only the help overlay may close itself.
    const modal = target.querySelector("dialog[open]");
    if (modal && !(action.kind === "help" && modal.classList.contains("shortcuts-dialog"))) return;
    ev.preventDefault();
    perform(action);
  };
  target.addEventListener("keydown", onKey);
  return () => target.removeEventListener("keydown", onKey);
}
