import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ listAgents: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: { listAgents: m.listAgents } }));

import { agentHint, agentPicker } from "./agent-picker";
import type { AgentDto } from "../../ipc/bindings";

const agent = (name: string, over: Partial<AgentDto> = {}): AgentDto => ({
  name, description: `the ${name}`, provider: "oa", model: "gpt-x", system: null, servers: [], tools: [], ask: [], deny: [],
  delegates: null, max_tokens: null, max_cost_usd: null, max_tool_calls: null, max_wall_secs: null, ...over,
});

beforeEach(() => m.listAgents.mockReset());

describe("agentPicker", () => {
  it("offers No agent and every profile, and says the provider pickers do not apply to an agent", async () => {
    m.listAgents.mockResolvedValue({ status: "ok", data: [agent("planner"), agent("worker", { provider: "an", model: null })] });
    const changed = vi.fn();
    const p = agentPicker(changed);
    await p.reload();
    const select = p.el.querySelector("select")!;
    expect(Array.from(select.options).map((o) => o.textContent)).toEqual(["No agent", "planner", "worker"]);
    expect(p.value()).toBeNull();
    const hint = p.el.querySelector<HTMLElement>(".chat-agent-hint")!;
    expect(hint.hidden).toBe(true);
    select.value = "worker";
    select.dispatchEvent(new Event("change"));
    expect(changed).toHaveBeenLastCalledWith("worker");
    expect(p.value()).toBe("worker");
    expect(hint.hidden).toBe(false);
    expect(hint.textContent).toBe("Agent worker answers on an (its default model); the provider and model pickers do not apply. It may delegate to other agents.");
    select.value = "";
    select.dispatchEvent(new Event("change"));
    expect(changed).toHaveBeenLastCalledWith(null);
    expect(hint.hidden).toBe(true);
  });

  it("keeps the choice across a reload while it exists, and falls back to No agent when removed", async () => {
    m.listAgents.mockResolvedValue({ status: "ok", data: [agent("planner")] });
    const changed = vi.fn();
    const p = agentPicker(changed);
    await p.reload();
    const select = p.el.querySelector("select")!;
    select.value = "planner";
    select.dispatchEvent(new Event("change"));
    m.listAgents.mockResolvedValue({ status: "ok", data: [agent("planner"), agent("other")] });
    await p.reload();
    expect(p.value()).toBe("planner");
    m.listAgents.mockResolvedValue({ status: "ok", data: [agent("other")] });
    await p.reload();
    expect(p.value()).toBeNull();
    expect(changed).toHaveBeenLastCalledWith(null);
  });

  it("names the model in the hint", () => {
    expect(agentHint(agent("planner"))).toContain("Agent planner answers on oa / gpt-x");
    expect(agentHint(undefined)).toBeNull();
  });
});
