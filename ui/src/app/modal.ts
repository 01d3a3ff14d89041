// A modal <dialog> that removes itself when closed; Escape closes it (the "cancel" event).
import { h } from "./dom";

export function modal(className: string, label: string, parts: (HTMLElement | null)[]): { dialog: HTMLDialogElement; close: () => void } {
  const dialog = h("dialog", { class: className, "aria-label": label });
  const close = () => {
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
  };
  dialog.append(...parts.filter((p): p is HTMLElement => p !== null));
  dialog.addEventListener("cancel", close);
  queueMicrotask(() => {
    if (typeof dialog.showModal === "function" && !dialog.open) dialog.showModal();
  });
  return { dialog, close };
}
