import { describe, expect, it } from "vitest";
import { formatCost, showUsage, summaryBlock, usageLine } from "./info";

const info = (over: Record<string, unknown> = {}) => ({ summaries: [], input_tokens: 1000, output_tokens: 20, cost_usd: 0.5, cost_complete: true, by_model: [], ...over });

describe("usage line", () => {
  it("formats costs so small ones do not read as zero", () => {
    expect(formatCost(0)).toBe("$0.00");
    expect(formatCost(0.004)).toBe("$0.004");
    expect(formatCost(0.0312)).toBe("$0.03");
    expect(formatCost(12.345)).toBe("$12.35");
  });

  it("is hidden before anything was used", () => {
    const el = document.createElement("span");
    showUsage(el, info({ input_tokens: null, output_tokens: null, cost_usd: null }));
    expect(el.hidden).toBe(true);
    showUsage(el, info());
    expect(el.hidden).toBe(false);
    expect(el.textContent).toBe("1,000 in · 20 out · ≈ $0.50");
    showUsage(el, null);
    expect(el.hidden).toBe(true);
    expect(el.hasAttribute("title")).toBe(false);
  });

  it("says what is unknown", () => {
    expect(usageLine(info({ cost_complete: false }))?.text).toBe("1,000 in · 20 out · ≈ $0.50 + unknown");
    expect(usageLine(info({ cost_complete: false, cost_usd: null }))?.text).toBe("1,000 in · 20 out · cost unknown");
    expect(usageLine(info({ cost_complete: false }))?.title).toContain("no known price");
  });
});

describe("summaryBlock", () => {
  it("is a closed details element with the count and safe Markdown", () => {
    const d = summaryBlock(1, "<img src=x onerror=alert(1)> **b**", "gpt");
    expect(d.tagName).toBe("DETAILS");
    expect(d.className).toBe("chat-summary");
    expect(d.querySelector("summary")?.textContent).toBe("Summary of 1 earlier message (sent to the model instead of them)");
    expect(d.querySelector("img")).toBeNull();
    expect(d.querySelector("strong")?.textContent).toBe("b");
    expect(d.textContent).toContain("Written by gpt.");
  });
});
