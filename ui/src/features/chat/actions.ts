// The small toolbar of one message: Edit (the person's text messages: an inline editor whose
// "Save & send" replaces the message and everything after it), Regenerate (the last answer),
// Fork from here (every message) and Copy. The buttons are always in the tab order and shown
// fully on hover or focus; while a turn runs the page disables all but Copy (setActionsBusy).
import { h } from "../../app/dom";
import { userBubble } from "./bubbles";

export interface ActionHandlers {
  /** Send `text` in place of the person's message `id` (shown in `block`). */
  edit(id: string, text: string, block: HTMLElement): void;
  /** Answer the last message again; `block` is the answer being replaced. */
  regenerate(block: HTMLElement): void;
  /** Copy the conversation up to message `id` into a new one. */
  fork(id: string): void;
}

export interface ActionOptions {
  id: string;
  /** The message's text, for Copy and the editor. */
  text: string;
  /** A person's message with text: it can be edited. */
  editable: boolean;
  /** The last answer: it can be regenerated. */
  regenerate: boolean;
  /** The message has images, which an edit does not keep. */
  hasImages: boolean;
  handlers: ActionHandlers;
}

/** Disables (or re-enables) every action that starts a turn or changes conversations. */
export function setActionsBusy(scope: HTMLElement, busy: boolean): void {
  scope.querySelectorAll<HTMLButtonElement>(".msg-actions button:not(.msg-copy), .msg-editor .msg-edit-save").forEach((b) => {
    b.disabled = busy;
  });
}

function copyButton(text: string): HTMLButtonElement {
  const copy = h("button", { type: "button", class: "msg-copy", "aria-label": "Copy message text" }, "Copy");
  let timer: number | undefined;
  copy.addEventListener("click", () => {
    const done = (label: string) => {
      copy.textContent = label;
      window.clearTimeout(timer);
      timer = window.setTimeout(() => (copy.textContent = "Copy"), 1500);
    };
    const clip = navigator.clipboard;
    if (!clip) return done("Copy failed");
    clip.writeText(text).then(() => done("Copied"), () => done("Copy failed"));
  });
  return copy;
}

function openEditor(block: HTMLElement, bar: HTMLElement, o: ActionOptions): void {
  if (block.querySelector(".msg-editor")) return;
  const msg = block.querySelector<HTMLElement>(".msg");
  const field = h("textarea", { class: "msg-edit-input", rows: String(Math.min(Math.max(o.text.split("\n").length, 2), 12)), "aria-label": "Edit your message" });
  field.value = o.text;
  const save = h("button", { type: "button", class: "primary msg-edit-save" }, "Save & send");
  const cancel = h("button", { type: "button", class: "msg-edit-cancel" }, "Cancel");
  const editor = h("div", { class: "msg-editor" },
    field,
    h("p", { class: "hint" }, `Sending replaces this message and everything after it.${o.hasImages ? " Its images are not kept." : ""}`),
    h("div", { class: "actions" }, save, cancel),
  );
  const close = () => {
    editor.remove();
    if (msg) msg.hidden = false;
    bar.hidden = false;
  };
  const submit = () => {
    const text = field.value;
    if (text.trim() === "" || save.disabled) return;
    editor.remove();
    const bubble = userBubble(text);
    if (msg) msg.replaceWith(bubble);
    else block.prepend(bubble);
    bar.hidden = false;
    o.handlers.edit(o.id, text, block);
  };
  save.addEventListener("click", submit);
  cancel.addEventListener("click", () => {
    close();
    bar.querySelector<HTMLButtonElement>(".msg-edit")?.focus();
  });
  field.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      ev.preventDefault();
      close();
      bar.querySelector<HTMLButtonElement>(".msg-edit")?.focus();
    } else if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.isComposing) {
      ev.preventDefault();
      submit();
    }
  });
  if (msg) msg.hidden = true;
  bar.hidden = true;
  (msg ?? bar).after(editor);
  field.focus();
}

/** The toolbar for one message; `block` is the element holding the message. */
export function messageActions(block: HTMLElement, o: ActionOptions): HTMLElement {
  const bar = h("div", { class: "msg-actions", role: "toolbar", "aria-label": "Message actions" });
  if (o.editable) {
    const edit = h("button", { type: "button", class: "msg-edit", "aria-label": "Edit this message and send it again" }, "Edit");
    edit.addEventListener("click", () => openEditor(block, bar, o));
    bar.append(edit);
  }
  if (o.regenerate) {
    const again = h("button", { type: "button", class: "msg-regenerate", "aria-label": "Regenerate this answer" }, "Regenerate");
    again.addEventListener("click", () => o.handlers.regenerate(block));
    bar.append(again);
  }
  const fork = h("button", { type: "button", class: "msg-fork", "aria-label": "Fork the conversation from this message" }, "Fork from here");
  fork.addEventListener("click", () => o.handlers.fork(o.id));
  bar.append(fork, copyButton(o.text));
  return bar;
}
