import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installShortcuts, isTextField, shortcutFor, type KeyPress } from "./shortcuts";

const key = (k: string, mods: Partial<KeyPress> = {}): KeyPress => ({
  key: k, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, inText: false, ...mods,
});

describe("shortcutFor", () => {
  it("maps Ctrl+digits to pages, and Cmd the same", () => {
    expect(shortcutFor(key("1", { ctrlKey: true }))).toEqual({ kind: "page", index: 0 });
    expect(shortcutFor(key("9", { metaKey: true }))).toEqual({ kind: "page", index: 8 });
    expect(shortcutFor(key("0", { ctrlKey: true }))).toBeNull();
    expect(shortcutFor(key("1"))).toBeNull();
    expect(shortcutFor(key("1", { ctrlKey: true, altKey: true }))).toBeNull();
  });
  it("maps new chat, search, settings and page stepping", () => {
    expect(shortcutFor(key("n", { ctrlKey: true }))).toEqual({ kind: "new-chat" });
    expect(shortcutFor(key("N", { ctrlKey: true }))).toEqual({ kind: "new-chat" });
    expect(shortcutFor(key("k", { ctrlKey: true }))).toEqual({ kind: "search" });
    expect(shortcutFor(key(",", { ctrlKey: true }))).toEqual({ kind: "settings" });
    expect(shortcutFor(key("PageDown", { ctrlKey: true }))).toEqual({ kind: "next-page" });
    expect(shortcutFor(key("PageUp", { ctrlKey: true }))).toEqual({ kind: "previous-page" });
    // Ctrl+Shift+N is the browser's, not ours.
    expect(shortcutFor(key("N", { ctrlKey: true, shiftKey: true }))).toBeNull();
  });
  it("works in text fields with Ctrl, but ? there is a question mark", () => {
    expect(shortcutFor(key("k", { ctrlKey: true, inText: true }))).toEqual({ kind: "search" });
    expect(shortcutFor(key("?", { shiftKey: true }))).toEqual({ kind: "help" });
    expect(shortcutFor(key("?", { shiftKey: true, inText: true }))).toBeNull();
  });
});

describe("isTextField", () => {
  it("tells text fields from other controls", () => {
    const text = document.createElement("input");
    const box = document.createElement("input");
    box.type = "checkbox";
    expect(isTextField(text)).toBe(true);
    expect(isTextField(document.createElement("textarea"))).toBe(true);
    expect(isTextField(box)).toBe(false);
    expect(isTextField(document.createElement("button"))).toBe(false);
    expect(isTextField(null)).toBe(false);
  });
});

describe("installShortcuts", () => {
  let stop: () => void = () => {};
  const pages = ["chat", "servers", "tools", "settings"];
  beforeEach(() => {
    const nav = document.createElement("nav");
    nav.className = "tabs";
    const main = document.createElement("main");
    main.id = "page";
    for (const p of pages) {
      const b = document.createElement("button");
      b.setAttribute("role", "tab");
      b.dataset.page = p;
      b.id = `tab-${p}`;
      b.addEventListener("click", () => {
        nav.querySelectorAll("[role=tab]").forEach((t) => t.setAttribute("aria-selected", String(t === b)));
        main.replaceChildren();
        if (p === "chat") {
          const search = document.createElement("input");
          search.type = "search";
          main.append(search);
        }
      });
      nav.append(b);
    }
    document.body.replaceChildren(nav, main);
    (nav.children[1] as HTMLButtonElement).click();
    stop = installShortcuts();
  });
  afterEach(() => stop());
  const selected = () => document.querySelector("[aria-selected=true]")?.getAttribute("data-page");
  const press = (k: string, mods: KeyboardEventInit = {}) =>
    document.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...mods }));

  it("switches pages by number and by step, wrapping around", () => {
    press("3", { ctrlKey: true });
    expect(selected()).toBe("tools");
    press("PageDown", { ctrlKey: true });
    expect(selected()).toBe("settings");
    press("PageDown", { ctrlKey: true });
    expect(selected()).toBe("chat");
    press("PageUp", { ctrlKey: true });
    expect(selected()).toBe("settings");
    press(",", { ctrlKey: true });
    expect(selected()).toBe("settings");
  });
  it("search goes to a page with a search box and focuses it", () => {
    press("k", { ctrlKey: true });
    expect(selected()).toBe("chat");
    expect((document.activeElement as HTMLInputElement).type).toBe("search");
  });
  it("does nothing while a modal dialog waits for an answer", () => {
    const d = document.createElement("dialog");
    d.setAttribute("open", "");
    document.body.append(d);
    press("1", { ctrlKey: true });
    expect(selected()).toBe("servers");
  });
  it("? opens and closes the list of shortcuts", () => {
    press("?", { shiftKey: true });
    const overlay = document.querySelector("dialog.shortcuts-dialog");
    expect(overlay).not.toBeNull();
    expect(overlay?.textContent).toContain("Ctrl+N");
    expect(overlay?.textContent).toContain("New chat");
  });
});
