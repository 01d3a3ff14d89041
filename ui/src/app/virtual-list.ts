// A fixed-row-height virtualised listbox. The tools catalog can hold thousands of tools (5,000 must
// stay smooth), so only the rows in view (plus a little overscan) exist in the DOM; the rest is an
// empty spacer of the full height that keeps the scrollbar honest. Rows come from the caller's
// render function, which should build them with h(), so the no-innerHTML rule holds here too.
import "./virtual-list.css";

export interface VirtualList<T> {
  /** The scroll container: role="listbox", tabindex=0. The caller gives it a height via CSS. */
  element: HTMLElement;
  /** Replaces the items. The selection follows its key (default) or is cleared when keepSelectionKey is false. */
  setItems(items: T[], keepSelectionKey?: boolean): void;
  selected(): T | null;
  /** Selects the row at index (clamped) and scrolls it into view. */
  select(index: number): void;
  /** Re-renders the visible rows, e.g. after an item changed in place. */
  refresh(): void;
}

export interface VirtualListOptions<T> {
  rowHeight: number;
  overscan?: number;
  key: (item: T) => string;
  render: (item: T, index: number, selected: boolean) => HTMLElement;
  /** Called when the selected key changes (not when setItems keeps the same key). */
  onSelect?: (item: T | null) => void;
  onActivate?: (item: T) => void;
  label: string;
  viewportHeight?: () => number;
}

let lists = 0;

export function createVirtualList<T>(opts: VirtualListOptions<T>): VirtualList<T> {
  const rh = opts.rowHeight;
  const overscan = opts.overscan ?? 8;
  const prefix = `vlist${++lists}`;
  const spacer = document.createElement("div");
  spacer.className = "vlist-spacer";
  const element = document.createElement("div");
  element.className = "vlist";
  element.setAttribute("role", "listbox");
  element.setAttribute("tabindex", "0");
  element.setAttribute("aria-label", opts.label);
  element.append(spacer);

  let items: T[] = [];
  let selIndex = -1;
  let selKey: string | null = null;
  // Rows in the DOM by index, with what they were rendered from, so unchanged rows are kept.
  const rows = new Map<number, { el: HTMLElement; item: T; selected: boolean }>();
  let frame = 0;

  // Before layout (or in a detached element) clientHeight is 0; the window is an upper bound.
  const viewport = () => opts.viewportHeight?.() ?? (element.clientHeight || window.innerHeight);
  const pageRows = () => Math.max(1, Math.floor(viewport() / rh));

  const draw = (force: boolean) => {
    const first = Math.max(0, Math.floor(element.scrollTop / rh) - overscan);
    const last = Math.min(items.length, Math.ceil((element.scrollTop + viewport()) / rh) + overscan);
    for (const [i, row] of rows) {
      if (i < first || i >= last) {
        row.el.remove();
        rows.delete(i);
      }
    }
    for (let i = first; i < last; i++) {
      const item = items[i];
      const selected = i === selIndex;
      const old = rows.get(i);
      if (old && !force && old.item === item && old.selected === selected) continue;
      const el = document.createElement("div");
      el.className = "vlist-row";
      el.id = `${prefix}-${i}`;
      el.dataset.index = String(i);
      el.setAttribute("role", "option");
      el.setAttribute("aria-selected", String(selected));
      el.style.top = `${i * rh}px`;
      el.style.height = `${rh}px`;
      el.append(opts.render(item, i, selected));
      if (old) old.el.replaceWith(el);
      else spacer.append(el);
      rows.set(i, { el, item, selected });
    }
    if (rows.has(selIndex)) element.setAttribute("aria-activedescendant", `${prefix}-${selIndex}`);
    else element.removeAttribute("aria-activedescendant");
  };

  const schedule = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      draw(false);
    });
  };

  const setSelection = (index: number) => {
    const key = index >= 0 ? opts.key(items[index]) : null;
    const changed = key !== selKey;
    selIndex = index;
    selKey = key;
    if (changed) opts.onSelect?.(index >= 0 ? items[index] : null);
  };

  const select = (index: number) => {
    if (items.length === 0) return;
    const i = Math.min(items.length - 1, Math.max(0, index));
    setSelection(i);
    const top = i * rh;
    const vh = viewport();
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + rh > element.scrollTop + vh) element.scrollTop = top + rh - vh;
    draw(false);
  };

  element.addEventListener("scroll", schedule);
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(schedule).observe(element);

  element.addEventListener("keydown", (ev) => {
    if (items.length === 0) return;
    const at = selIndex;
    const moves: Record<string, () => number> = {
      ArrowDown: () => (at < 0 ? 0 : at + 1),
      ArrowUp: () => (at < 0 ? 0 : at - 1),
      PageDown: () => Math.max(at, 0) + pageRows(),
      PageUp: () => Math.max(at, 0) - pageRows(),
      Home: () => 0,
      End: () => items.length - 1,
    };
    if (ev.key in moves) {
      ev.preventDefault();
      select(moves[ev.key]());
    } else if (ev.key === "Enter" && selIndex >= 0) {
      ev.preventDefault();
      opts.onActivate?.(items[selIndex]);
    }
  });

  const rowIndex = (ev: Event) => {
    const row = (ev.target as Element | null)?.closest?.(".vlist-row") as HTMLElement | null;
    return row && spacer.contains(row) ? Number(row.dataset.index) : -1;
  };
  element.addEventListener("click", (ev) => {
    const i = rowIndex(ev);
    if (i >= 0) select(i);
  });
  element.addEventListener("dblclick", (ev) => {
    const i = rowIndex(ev);
    if (i >= 0) opts.onActivate?.(items[i]);
  });

  return {
    element,
    setItems(next, keepSelectionKey = true) {
      items = next;
      spacer.style.height = `${items.length * rh}px`;
      const found = keepSelectionKey && selKey !== null ? items.findIndex((it) => opts.key(it) === selKey) : -1;
      setSelection(found);
      draw(true);
    },
    selected: () => (selIndex >= 0 ? items[selIndex] : null),
    select,
    refresh: () => draw(true),
  };
}
