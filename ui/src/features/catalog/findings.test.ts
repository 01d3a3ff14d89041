import { describe, expect, it } from "vitest";
import { findingsList, flagBadges, toolWarnings } from "./findings";

const finding = { field: "description", kind: "hidden" as const, message: "description hides bidirectional-text controls", excerpt: "safe⟨U+202E⟩<img src=x>" };

describe("catalog flags", () => {
  it("renders nothing for a clean tool", () => {
    expect(flagBadges({ findings: [], held: null })).toEqual([]);
    expect(toolWarnings({ findings: [], held: null })).toBeNull();
    expect(findingsList([])).toBeNull();
  });

  it("badges a held and flagged tool", () => {
    const b = flagBadges({ findings: [finding], held: "changed since you approved it; review it" });
    expect(b.map((e) => e.textContent)).toEqual(["held for review", "⚠ 1"]);
    expect(b[1].title).toContain("bidirectional");
  });

  it("lists findings as text, never markup", () => {
    const w = toolWarnings({ findings: [finding], held: "new since you approved this server; review it" })!;
    expect(w.querySelector("img")).toBeNull();
    expect(w.querySelector(".finding-excerpt")?.textContent).toBe("safe⟨U+202E⟩<img src=x>");
    expect(w.querySelector(".held-notice")?.textContent).toContain("not offered to models");
  });
});
