import { describe, expect, it } from "vitest";
import { h } from "./dom";

describe("h", () => {
  it("never turns text into markup", () => {
    const el = h("div", {}, "<img src=x onerror=alert(1)>");
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toBe("<img src=x onerror=alert(1)>");
  });
  it("wires events and boolean attributes", () => {
    let clicked = 0;
    const b = h("button", { onclick: () => clicked++, disabled: false, autofocus: true }, "go");
    b.click();
    expect(clicked).toBe(1);
    expect(b.hasAttribute("disabled")).toBe(false);
    expect(b.hasAttribute("autofocus")).toBe(true);
  });
});
