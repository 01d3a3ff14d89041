import { afterEach, describe, expect, it, vi } from "vitest";
import { pressGuard } from "./press-guard";

const press = (el: Element, type: "mousedown" | "mouseup", button = 0) =>
  el.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, button }));

afterEach(() => vi.useRealTimers());

describe("pressGuard", () => {
  it("runs a redraw at once when nothing is pressed", () => {
    const el = document.createElement("div");
    document.body.append(el);
    const g = pressGuard(el);
    const redraw = vi.fn();
    g.run(redraw);
    expect(redraw).toHaveBeenCalledTimes(1);
    g.dispose();
  });

  it("holds redraws during a press and runs only the newest, after the click", () => {
    vi.useFakeTimers();
    const el = document.createElement("div");
    const button = document.createElement("button");
    el.append(button);
    document.body.append(el);
    const g = pressGuard(el);
    const order: string[] = [];
    button.addEventListener("click", () => order.push("click"));
    press(button, "mousedown");
    g.run(() => order.push("old"));
    g.run(() => order.push("new"));
    expect(order).toEqual([]);
    // The browser's mouseup and click, in one task; the held redraw comes after both.
    press(button, "mouseup");
    button.click();
    expect(order).toEqual(["click"]);
    vi.runAllTimers();
    expect(order).toEqual(["click", "new"]);
    g.dispose();
  });

  it("ignores presses elsewhere and of other buttons, and ends a press released outside", () => {
    vi.useFakeTimers();
    const el = document.createElement("div");
    const other = document.createElement("div");
    document.body.append(el, other);
    const g = pressGuard(el);
    const redraw = vi.fn();
    press(other, "mousedown");
    press(el, "mousedown", 2);
    g.run(redraw);
    expect(redraw).toHaveBeenCalledTimes(1);
    press(el, "mousedown");
    g.run(redraw);
    press(other, "mouseup");
    vi.runAllTimers();
    expect(redraw).toHaveBeenCalledTimes(2);
    g.dispose();
  });

  it("ends a press that became a drag (no mouseup comes)", () => {
    vi.useFakeTimers();
    const el = document.createElement("div");
    document.body.append(el);
    const g = pressGuard(el);
    const redraw = vi.fn();
    press(el, "mousedown");
    g.run(redraw);
    window.dispatchEvent(new Event("dragend"));
    vi.runAllTimers();
    expect(redraw).toHaveBeenCalledTimes(1);
    g.dispose();
  });

  it("runs a held redraw when disposed", () => {
    const el = document.createElement("div");
    document.body.append(el);
    const g = pressGuard(el);
    const redraw = vi.fn();
    press(el, "mousedown");
    g.run(redraw);
    g.dispose();
    expect(redraw).toHaveBeenCalledTimes(1);
  });
});
