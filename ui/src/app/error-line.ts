// A page's error line, fed by two sources: the page's own read of its data (which every host
// change repeats) and the last thing the person did there (a start, a toggle, a dialog that
// could not open). A successful re-read clears only the error it set itself. Pages re-read
// after every action, and a shared "hide on success" wiped the action's reason before anyone
// could read it.
import { h } from "./dom";

export interface ErrorLine {
  element: HTMLElement;
  /** What the last action reported: its failure, or null when it went through. */
  action(message: string | null): void;
  /** What the page's read reported: its failure, or null when it worked. */
  read(message: string | null): void;
}

export function errorLine(): ErrorLine {
  const element = h("p", { class: "error", role: "alert", hidden: true });
  let fromRead = false;
  const show = (message: string | null) => {
    element.textContent = message ?? "";
    element.hidden = message === null;
  };
  return {
    element,
    action(message) {
      fromRead = false;
      show(message);
    },
    read(message) {
      if (message !== null) {
        fromRead = true;
        show(message);
      } else if (fromRead) {
        fromRead = false;
        show(null);
      }
    },
  };
}
