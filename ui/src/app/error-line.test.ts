import { describe, expect, it } from "vitest";
import { errorLine } from "./error-line";

const text = (e: HTMLElement) => (e.hidden ? null : e.textContent);

describe("a page's error line", () => {
  it("keeps an action's failure through successful re-reads, until the next action", () => {
    const line = errorLine();
    line.action("could not start fs");
    line.read(null);
    line.read(null);
    expect(text(line.element)).toBe("could not start fs");
    line.action(null);
    expect(text(line.element)).toBeNull();
  });

  it("shows a failed read until a read works", () => {
    const line = errorLine();
    line.read("config unreadable");
    expect(text(line.element)).toBe("config unreadable");
    line.read(null);
    expect(text(line.element)).toBeNull();
  });

  it("lets a failed read replace an action's failure, and a newer action replace both", () => {
    const line = errorLine();
    line.action("toggle refused");
    line.read("catalog unreadable");
    expect(text(line.element)).toBe("catalog unreadable");
    line.action("start refused");
    line.read(null);
    expect(text(line.element)).toBe("start refused");
  });
});
