import { describe, expect, it } from "vitest";
import { serverCost, toolCost, turnCost } from "./cost";
import type { CatalogCostsDto } from "../../ipc/bindings";

const costs: CatalogCostsDto = {
  models: [
    { provider: "oa", model: "gpt-4o", method: "o200k_base", estimate: false, context_window: 128000 },
    { provider: "an", model: "claude-sonnet-4-5", method: "estimate: cl100k_base x 1.2", estimate: true, context_window: 200000 },
  ],
  servers: [{
    server: "fs", enabled: true, running: true, last_known_ms: null,
    tools: [{ tool: "read", offered: true, tokens: [98, 108] }, { tool: "<img src=x>", offered: false, tokens: [1200, 1400] }],
    tokens: [1298, 1508], offered_tokens: [98, 108],
  }],
  offered_tokens: [32000, 454],
};

describe("catalog token cost", () => {
  it("shows a tool's cost per model, estimates marked", () => {
    expect(toolCost(costs, "fs", "read")?.textContent).toBe("Definition: 98 tokens for oa:gpt-4o · ≈108 tokens for an:claude-sonnet-4-5");
    expect(toolCost(costs, "fs", "nope")).toBeNull();
    expect(toolCost({ ...costs, models: [] }, "fs", "read")).toBeNull();
  });

  it("keeps names as text", () => {
    expect(toolCost(costs, "fs", "<img src=x>")?.querySelector("img")).toBeNull();
  });

  it("totals a server and the next turn", () => {
    expect(serverCost(costs, "fs")).toBe("1,298 tokens for oa:gpt-4o");
    expect(serverCost(costs, "other")).toBe("");
    expect(turnCost(costs)).toBe("32,000 tokens for oa:gpt-4o per turn (25.0% of its context)");
  });
});
