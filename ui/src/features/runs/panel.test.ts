import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ runs: vi.fn(), listen: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({
  commands: { conversationAgentRuns: m.runs },
  events: { hostChanged: { listen: m.listen } },
}));

import { runPanel } from "./panel";
import type { AgentRunDto, AgentRunNodeDto } from "../../ipc/bindings";

const node = (id: string, parent: string | null, status: string): AgentRunNodeDto => ({
  node: id, parent, agent: `agent-${id}`, task: `task ${id}`, provider: "p", model: "m", status, reason: null,
  usage_input: 1, usage_output: 1, cost_usd: 0, tool_calls: 0, started_ms: 0, ended_ms: status === "running" ? null : 1,
});
const run = (id: string, nodes: AgentRunNodeDto[]): AgentRunDto => ({
  run: id, nodes, per_agent: [],
  total: { nodes: nodes.length, usage_input: 2, usage_output: 2, cost_usd: 0, cost_partial: false, tool_calls: 0 },
});
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
let changed: (ev: { payload: { kind: string; server: string | null; conversation: string | null } }) => void;
const change = (conversation: string | null, kind = "agent_runs") => changed({ payload: { kind, server: null, conversation } });

beforeEach(() => {
  vi.useFakeTimers();
  m.runs.mockReset();
  m.listen.mockImplementation((cb) => { changed = cb; return Promise.resolve(() => {}); });
});
afterEach(() => vi.useRealTimers());

describe("runPanel", () => {
  it("is hidden without runs and shows the open conversation's runs, newest first", async () => {
    m.runs.mockResolvedValue({ status: "ok", data: [] });
    const p = runPanel(10);
    p.show("c-1");
    await flush();
    expect(m.runs).toHaveBeenCalledWith("c-1");
    expect(p.el.hidden).toBe(true);
    m.runs.mockResolvedValue({ status: "ok", data: [run("r1", [node("a", null, "done")]), run("r2", [node("b", null, "done")])] });
    p.show("c-2");
    await flush();
    expect(p.el.hidden).toBe(false);
    expect([...p.el.querySelectorAll<HTMLElement>(".run-tree")].map((e) => e.dataset.run)).toEqual(["r2", "r1"]);
    p.stop();
  });

  it("re-reads on a change of its conversation only, and follows a node from running to done", async () => {
    m.runs.mockResolvedValue({ status: "ok", data: [run("r1", [node("a", null, "running")])] });
    const p = runPanel(10);
    p.show("c-1");
    await flush();
    expect(p.el.querySelector('[data-node="a"]')?.classList.contains("run-running")).toBe(true);
    expect(m.runs).toHaveBeenCalledTimes(1);
    change("c-other");
    change("c-1", "approvals");
    await vi.advanceTimersByTimeAsync(20);
    expect(m.runs).toHaveBeenCalledTimes(1);
    m.runs.mockResolvedValue({ status: "ok", data: [run("r1", [node("a", null, "done"), node("b", "a", "done")])] });
    change("c-1");
    change("c-1");
    await vi.advanceTimersByTimeAsync(20);
    await flush();
    expect(m.runs).toHaveBeenCalledTimes(2);
    expect(p.el.querySelector('[data-node="a"]')?.getAttribute("data-status")).toBe("done");
    expect(p.el.querySelector('[data-node="a"] .run-children [data-node="b"]')).not.toBeNull();
    p.stop();
  });

  it("follows the first conversation a run reports while a new chat's first turn runs", async () => {
    m.runs.mockResolvedValue({ status: "ok", data: [run("r1", [node("a", null, "running")])] });
    const p = runPanel(10);
    p.show(null);
    change("c-new");
    await vi.advanceTimersByTimeAsync(20);
    expect(m.runs).not.toHaveBeenCalled();
    p.expectNew();
    change("c-new");
    await vi.advanceTimersByTimeAsync(20);
    await flush();
    expect(m.runs).toHaveBeenCalledWith("c-new");
    expect(p.el.hidden).toBe(false);
    change("c-later");
    await vi.advanceTimersByTimeAsync(20);
    expect(m.runs).toHaveBeenCalledTimes(1);
    p.stop();
  });

  it("says when the runs cannot be read", async () => {
    m.runs.mockResolvedValue({ status: "error", error: { code: "internal", message: "disk gone" } });
    const p = runPanel(10);
    p.show("c-1");
    await flush();
    expect(p.el.hidden).toBe(false);
    expect(p.el.querySelector(".run-error")?.textContent).toContain("disk gone");
    p.stop();
  });
});
