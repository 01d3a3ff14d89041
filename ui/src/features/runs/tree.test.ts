import { describe, expect, it } from "vitest";
import type { AgentRunDto, AgentRunNodeDto } from "../../ipc/bindings";
import { formatDuration, nest, renderRun, statusText, totalText } from "./tree";

const node = (id: string, parent: string | null, over: Partial<AgentRunNodeDto> = {}): AgentRunNodeDto => ({
  node: id, parent, agent: `agent-${id}`, task: `task ${id}`, provider: "oa", model: "gpt-x", status: "done", reason: null,
  usage_input: 100, usage_output: 10, cost_usd: 0.02, tool_calls: 1, started_ms: 1_000, ended_ms: 3_500, ...over,
});

const run = (nodes: AgentRunNodeDto[], over: Partial<AgentRunDto> = {}): AgentRunDto => ({
  run: "run-1", nodes,
  total: { nodes: nodes.length, usage_input: 300, usage_output: 30, cost_usd: 0.06, cost_partial: false, tool_calls: 3 },
  per_agent: [], ...over,
});

describe("nest", () => {
  it("puts each node under the one that delegated to it, in order", () => {
    const roots = nest([node("a", null), node("b", "a"), node("c", "b"), node("d", "a")]);
    expect(roots.map((t) => t.node.node)).toEqual(["a"]);
    expect(roots[0].children.map((t) => t.node.node)).toEqual(["b", "d"]);
    expect(roots[0].children[0].children.map((t) => t.node.node)).toEqual(["c"]);
  });

  it("keeps a node whose parent is missing (or itself) as a root instead of losing it", () => {
    const roots = nest([node("a", null), node("x", "gone"), node("s", "s")]);
    expect(roots.map((t) => t.node.node)).toEqual(["a", "x", "s"]);
  });
});

describe("renderRun", () => {
  it("draws the nesting with agent, task, model, calls, cost, duration and status", () => {
    const el = renderRun(run([node("a", null, { agent: "planner", tool_calls: 2 }), node("b", "a", { agent: "worker", provider: "an", model: "claude-x", cost_usd: null })]));
    const planner = el.querySelector<HTMLElement>('.run-roots > .run-node[data-agent="planner"]')!;
    expect(planner).not.toBeNull();
    expect(planner.querySelector(".run-model")?.textContent).toBe("oa / gpt-x");
    expect(planner.querySelector(".run-calls")?.textContent).toBe("2 calls");
    expect(planner.querySelector(".run-cost")?.textContent).toBe("≈ $0.02");
    expect(planner.querySelector(".run-duration")?.textContent).toBe("2.5 s");
    expect(planner.querySelector(".run-status")?.textContent).toBe("done");
    const worker = planner.querySelector<HTMLElement>(':scope > .run-children > .run-node[data-agent="worker"]')!;
    expect(worker).not.toBeNull();
    expect(worker.querySelector(".run-task")?.textContent).toBe("task b");
    expect(worker.querySelector(".run-model")?.textContent).toBe("an / claude-x");
    expect(worker.querySelector(".run-cost")?.textContent).toBe("cost unknown");
    expect(worker.querySelector(".run-calls")?.textContent).toBe("1 call");
  });

  it("shows running nodes as running, with their time so far, and stopped ones with the reason", () => {
    const el = renderRun(run([
      node("a", null, { status: "running", ended_ms: null, started_ms: 10_000 }),
      node("b", "a", { status: "over_budget", reason: "the token budget of 50 was spent" }),
    ]), 12_000);
    expect(el.classList.contains("run-tree-running")).toBe(true);
    const a = el.querySelector<HTMLElement>('[data-node="a"]')!;
    expect(a.classList.contains("run-running")).toBe(true);
    expect(a.getAttribute("aria-busy")).toBe("true");
    expect(a.querySelector(".run-status")?.textContent).toBe("running…");
    expect(a.querySelector(".run-duration")?.textContent).toBe("2.0 s so far");
    // What it has spent so far, written while it runs.
    expect(a.querySelector(".run-calls")?.textContent).toBe("1 call");
    expect(a.querySelector(".run-cost")?.textContent).toBe("≈ $0.02 so far");
    expect(a.querySelector(".run-cost")?.getAttribute("title")).toBe("100 in · 10 out");
    const b = el.querySelector<HTMLElement>('[data-node="b"]')!;
    expect(b.dataset.status).toBe("over_budget");
    expect(b.querySelector(".run-status")?.textContent).toBe("over budget");
    expect(b.querySelector(".run-reason")?.textContent).toBe("Stopped: the token budget of 50 was spent");
    expect(renderRun(run([node("a", null)]), 0).classList.contains("run-tree-running")).toBe(false);
  });

  it("puts the run's total under the tree and the per-agent totals in its tooltip", () => {
    const el = renderRun(run([node("a", null)], {
      per_agent: [{ agent: "planner", total: { nodes: 1, usage_input: 5, usage_output: 1, cost_usd: 0, cost_partial: false, tool_calls: 1 } }],
    }));
    const total = el.querySelector(".run-total")!;
    expect(total.textContent).toBe("Total: 300 in · 30 out · ≈ $0.06 · 3 calls · 1 agent run");
    expect(total.getAttribute("title")).toBe("planner: 5 in · 1 out · 1 call");
    expect(el.lastElementChild).toBe(total);
  });

  it("keeps hostile text as text", () => {
    const el = renderRun(run([node("a", null, { task: "<img src=x onerror=alert(1)>", agent: "<b>x</b>" })]));
    expect(el.querySelector("img, b")).toBeNull();
    expect(el.querySelector(".run-task")?.textContent).toBe("<img src=x onerror=alert(1)>");
  });
});

describe("formatting", () => {
  it("says what an unknown price means in the total", () => {
    const t = { nodes: 2, usage_input: 1234, usage_output: 5, cost_usd: 0.5, cost_partial: true, tool_calls: 0 };
    expect(totalText(t)).toBe("Total: 1,234 in · 5 out · ≈ $0.50 + unknown · 0 calls · 2 agent runs");
    expect(totalText({ ...t, cost_usd: 0 })).toContain("cost unknown");
  });

  it("formats durations and statuses", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(12_340)).toBe("12.3 s");
    expect(formatDuration(245_000)).toBe("4 min 05 s");
    expect(formatDuration(-5)).toBe("0 ms");
    expect(statusText("step_limit")).toBe("step limit");
    expect(statusText("something_new")).toBe("something_new");
  });
});
