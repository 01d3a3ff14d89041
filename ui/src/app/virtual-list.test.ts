import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createVirtualList } from "./virtual-list";

type Item = { id: string; name: string };
const make = (n: number, from = 0): Item[] => Array.from({ length: n }, (_, i) => ({ id: `t${i + from}`, name: `tool ${i + from}` }));

// jsdom has no layout: the viewport is injected and requestAnimationFrame is flushed by hand.
let frames: FrameRequestCallback[] = [];
const flush = () => {
  const run = frames;
  frames = [];
  run.forEach((f) => f(0));
};
beforeEach(() => {
  frames = [];
  vi.stubGlobal("requestAnimationFrame", (f: FrameRequestCallback) => frames.push(f));
});
afterEach(() => vi.unstubAllGlobals());

function setup(extra: Partial<Parameters<typeof createVirtualList<Item>>[0]> = {}) {
  const render = vi.fn((it: Item) => {
    const el = document.createElement("span");
    el.textContent = it.name;
    return el;
  });
  const list = createVirtualList<Item>({
    rowHeight: 40,
    key: (it) => it.id,
    render,
    label: "Tools",
    viewportHeight: () => 400,
    ...extra,
  });
  document.body.replaceChildren(list.element);
  return { list, render };
}
const rows = (el: HTMLElement) => Array.from(el.querySelectorAll<HTMLElement>("[role=option]"));
const indices = (el: HTMLElement) => rows(el).map((r) => Number(r.dataset.index)).sort((a, b) => a - b);
const key = (el: HTMLElement, k: string) => el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));

describe("createVirtualList", () => {
  it("is a labelled, focusable listbox", () => {
    const { list } = setup();
    expect(list.element.getAttribute("role")).toBe("listbox");
    expect(list.element.getAttribute("tabindex")).toBe("0");
    expect(list.element.getAttribute("aria-label")).toBe("Tools");
  });

  it("renders only the visible window of 5,000 items, in one pass", () => {
    const { list, render } = setup();
    list.setItems(make(5000));
    const n = rows(list.element).length;
    // 10 visible rows + 8 overscan below (none above at the top).
    expect(n).toBe(18);
    expect(n).toBeLessThan(40);
    expect(render).toHaveBeenCalledTimes(n);
    expect(render.mock.calls.length).toBeLessThanOrEqual(10 + 2 * 8);
    expect((list.element.firstElementChild as HTMLElement).style.height).toBe(`${5000 * 40}px`);
  });

  it("would fail if it rendered everything: the DOM does not grow with the item count", () => {
    const { list } = setup();
    list.setItems(make(100));
    const small = rows(list.element).length;
    list.setItems(make(50000));
    expect(rows(list.element).length).toBe(small);
    expect(list.element.textContent).not.toContain("tool 4999");
  });

  it("renders the right window after scrolling, coalesced into one frame", () => {
    const { list, render } = setup();
    list.setItems(make(5000));
    render.mockClear();
    list.element.scrollTop = 2000 * 40;
    list.element.dispatchEvent(new Event("scroll"));
    list.element.dispatchEvent(new Event("scroll"));
    expect(frames.length).toBe(1);
    expect(indices(list.element)[0]).toBe(0); // nothing changes before the frame
    flush();
    expect(indices(list.element)).toEqual(Array.from({ length: 26 }, (_, i) => 1992 + i));
    const row = list.element.querySelector<HTMLElement>('[data-index="2000"]')!;
    expect(row.style.top).toBe(`${2000 * 40}px`);
    expect(row.textContent).toBe("tool 2000");
    expect(render).toHaveBeenCalledTimes(26);
  });

  it("keeps rows that stay in view when scrolling a little", () => {
    const { list, render } = setup();
    list.setItems(make(5000));
    render.mockClear();
    list.element.scrollTop = 40;
    list.element.dispatchEvent(new Event("scroll"));
    flush();
    expect(render).toHaveBeenCalledTimes(1); // only row 18 is new
  });

  it("moves the selection with the keyboard and scrolls it into view", () => {
    const onSelect = vi.fn();
    const { list } = setup({ onSelect });
    list.setItems(make(5000));
    key(list.element, "ArrowDown");
    expect(list.selected()?.id).toBe("t0");
    key(list.element, "ArrowDown");
    expect(list.selected()?.id).toBe("t1");
    key(list.element, "ArrowUp");
    expect(list.selected()?.id).toBe("t0");
    key(list.element, "ArrowUp");
    expect(list.selected()?.id).toBe("t0");
    expect(onSelect.mock.calls.map((c) => c[0].id)).toEqual(["t0", "t1", "t0"]);

    key(list.element, "PageDown");
    expect(list.selected()?.id).toBe("t10");
    expect(list.element.scrollTop).toBe(11 * 40 - 400);
    key(list.element, "PageUp");
    expect(list.selected()?.id).toBe("t0");
    expect(list.element.scrollTop).toBe(0);

    const opt = list.element.querySelector('[aria-selected="true"]')!;
    expect(opt.textContent).toBe("tool 0");
    expect(list.element.getAttribute("aria-activedescendant")).toBe(opt.id);
    expect(list.element.querySelectorAll('[aria-selected="true"]').length).toBe(1);
  });

  it("End selects the last item and renders it; Home goes back", () => {
    const { list } = setup();
    list.setItems(make(5000));
    key(list.element, "End");
    expect(list.selected()?.id).toBe("t4999");
    expect(list.element.scrollTop).toBe(5000 * 40 - 400);
    const active = document.getElementById(list.element.getAttribute("aria-activedescendant")!);
    expect(active?.textContent).toBe("tool 4999");
    expect(active?.getAttribute("aria-selected")).toBe("true");
    key(list.element, "Home");
    expect(list.selected()?.id).toBe("t0");
    expect(list.element.scrollTop).toBe(0);
  });

  it("activates on Enter and double-click; selects on click", () => {
    const onActivate = vi.fn();
    const { list } = setup({ onActivate });
    list.setItems(make(50));
    key(list.element, "Enter");
    expect(onActivate).not.toHaveBeenCalled(); // nothing selected yet
    list.element.querySelector<HTMLElement>('[data-index="3"] span')!.click();
    expect(list.selected()?.id).toBe("t3");
    key(list.element, "Enter");
    expect(onActivate).toHaveBeenCalledWith(expect.objectContaining({ id: "t3" }));
    list.element.querySelector('[data-index="5"]')!.dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
    expect(onActivate).toHaveBeenLastCalledWith(expect.objectContaining({ id: "t5" }));
  });

  it("keeps the selection by key across setItems and clears it when the key is gone", () => {
    const onSelect = vi.fn();
    const { list } = setup({ onSelect });
    list.setItems(make(100));
    list.select(7);
    expect(onSelect).toHaveBeenCalledTimes(1);
    // t7 moves to index 2
    list.setItems(make(95, 5));
    expect(list.selected()?.id).toBe("t7");
    expect(list.element.querySelector('[aria-selected="true"]')?.textContent).toBe("tool 7");
    expect(onSelect).toHaveBeenCalledTimes(1);
    list.setItems(make(5, 50));
    expect(list.selected()).toBeNull();
    expect(onSelect).toHaveBeenLastCalledWith(null);
    expect(list.element.hasAttribute("aria-activedescendant")).toBe(false);
  });

  it("drops the selection when asked not to keep it", () => {
    const { list } = setup();
    list.setItems(make(10));
    list.select(2);
    list.setItems(make(10), false);
    expect(list.selected()).toBeNull();
  });

  it("renders nothing for an empty list and ignores keys", () => {
    const { list, render } = setup();
    list.setItems([]);
    expect(rows(list.element)).toEqual([]);
    key(list.element, "End");
    list.select(3);
    expect(list.selected()).toBeNull();
    expect(render).not.toHaveBeenCalled();
  });

  it("refresh re-renders the visible rows from the current items", () => {
    const { list, render } = setup();
    const items = make(20);
    list.setItems(items);
    items[0].name = "renamed";
    render.mockClear();
    list.refresh();
    expect(render).toHaveBeenCalledTimes(18);
    expect(list.element.querySelector('[data-index="0"]')?.textContent).toBe("renamed");
  });
});
