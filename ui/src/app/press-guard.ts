// Holding redraws while a button is pressed. A click is a mousedown and a mouseup on the same
// element. The host pushes changes at any moment (a server starting, a price computed late). If
// one of them rebuilds a card or a row between the two, the element pressed is gone and the
// browser fires no click. The person's click is then lost: a row that does not select, an
// Approve that opens nothing. Pages that rebuild under the pointer route their redraws through
// a guard: while a press is in progress inside its element, the newest redraw waits. It runs
// just after the press ends, once the click (dispatched in the same task as the mouseup) has
// been handled.

export interface PressGuard {
  /** Runs `redraw` now, or, during a press inside the element, after it (the newest only). */
  run(redraw: () => void): void;
  /** Removes the guard's window listeners and runs a waiting redraw. */
  dispose(): void;
}

export function pressGuard(el: HTMLElement): PressGuard {
  let pressed = false;
  let waiting: (() => void) | null = null;
  const flush = () => {
    if (pressed || !waiting) return;
    const redraw = waiting;
    waiting = null;
    redraw();
  };
  const down = (ev: MouseEvent) => {
    if (ev.button === 0) pressed = true;
  };
  const up = () => {
    if (!pressed) return;
    pressed = false;
    // The click follows the mouseup in the same task: redraw after it.
    window.setTimeout(flush, 0);
  };
  el.addEventListener("mousedown", down, true);
  // On the window, so a release outside the element (or outside the window, which
  // loses focus) still ends the press. A press that becomes a drag (selected text, a link)
  // never sees its mouseup: the drag's end, or a cancelled pointer, ends it instead.
  const ends = ["mouseup", "dragend", "pointercancel"] as const;
  for (const e of ends) window.addEventListener(e, up, true);
  window.addEventListener("blur", up);
  return {
    run(redraw) {
      if (pressed) waiting = redraw;
      else redraw();
    },
    dispose() {
      for (const e of ends) window.removeEventListener(e, up, true);
      window.removeEventListener("blur", up);
      pressed = false;
      flush();
    },
  };
}
