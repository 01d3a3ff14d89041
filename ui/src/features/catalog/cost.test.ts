import { describe, expect, it } from "vitest";
import { cardCost, enableCostNote, heldCost, REGISTRY_COST_NOTE, serverCost, toolCost, turnCost } from "./cost";
import type { CatalogCostsDto } from "../../ipc/bindings";

const costs: CatalogCostsDto = {
  models: [
    { provider: "oa", model: "gpt-4o", method: "o200k_base", estimate: false, context_window: 128000 },
    { provider: "an", model: "claude-sonnet-4-5", method: "estimate: cl100k_base x 1.2", estimate: true, context_window: 200000 },
  ],
  servers: [{
    server: "fs", enabled: true, running: true, last_known_ms: null, known: true,
    tools: [{ tool: "read", offered: true, tokens: [98, 108] }, { tool: "<img src=x>", offered: false, tokens: [1200, 1400] }],
    tokens: [1298, 1508], offered_tokens: [98, 108],
  }, {
    server: "off", enabled: false, running: false, last_known_ms: 1_700_000_000_000, known: true,
    tools: [{ tool: "a", offered: false, tokens: [6400, 9000] }],
    tokens: [6400, 9000], offered_tokens: [0, 0],
  }, {
    server: "new", enabled: true, running: false, last_known_ms: null, known: false,
    tools: [], tokens: [0, 0], offered_tokens: [0, 0],
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

describe("the server card's cost line", () => {
  it("prices what the next turn offers of an enabled server, per model, with its share of the context", () => {
    expect(cardCost(costs, "fs")?.text).toBe(
      "Tools: 98 tokens for oa:gpt-4o (0.1% of its context) · ≈108 tokens for an:claude-sonnet-4-5 (0.1% of its context)");
  });

  it("prices all tools of a disabled server, as enabling would add them", () => {
    expect(cardCost(costs, "off")?.text).toBe(
      "Tools: 6,400 tokens for oa:gpt-4o (5.0% of its context) · ≈9,000 tokens for an:claude-sonnet-4-5 (4.5% of its context) once enabled");
    expect(cardCost(costs, "off")?.title).toContain("Priced from the tools it listed");
  });

  it("says a server that never ran has no known cost, instead of a zero", () => {
    expect(cardCost(costs, "new")?.text).toBe("Tools: cost known after its first start");
    expect(cardCost(costs, "new")?.text).not.toContain("0 tokens");
  });

  it("shows nothing when the costs are unknown or the server is not listed", () => {
    expect(cardCost(null, "fs")).toBeNull();
    expect(cardCost(costs, "other")).toBeNull();
  });
});

describe("the cost before a server is approved or enabled", () => {
  it("says what all its tools add to every turn", () => {
    expect(enableCostNote(costs, "off")).toBe(
      "Its 1 tool adds 6,400 tokens for oa:gpt-4o (5.0% of its context) · ≈9,000 tokens for an:claude-sonnet-4-5 (4.5% of its context) to every turn while it is enabled.");
  });

  it("is honest about a server that never ran, or one not priced at all", () => {
    for (const s of ["new", "other"]) {
      const note = enableCostNote(costs, s) ?? "";
      expect(note).toContain("unknown until it starts");
      expect(note).toContain("adds its tools' definitions to every turn");
    }
    expect(enableCostNote(null, "fs")).toBeNull();
  });

  it("sums the held tools a review would approve", () => {
    expect(heldCost(costs, "fs", ["read", "<img src=x>"])).toBe(
      "Approving these 2 tools adds 1,298 tokens for oa:gpt-4o (1.0% of its context) · ≈1,508 tokens for an:claude-sonnet-4-5 (0.8% of its context) to every turn.");
    expect(heldCost(costs, "fs", ["read"])).toContain("Approving this tool adds 98 tokens");
    expect(heldCost(costs, "fs", ["gone"])).toBeNull();
  });

  it("says a registry entry's cost is unknown before it runs", () => {
    expect(REGISTRY_COST_NOTE).toContain("unknown until it first runs");
  });
});
