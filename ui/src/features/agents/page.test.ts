import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  listAgents: vi.fn(), saveAgent: vi.fn(), removeAgent: vi.fn(), exportAgents: vi.fn(), importAgents: vi.fn(), listProviders: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { mountAgents } from "./page";
import { budgetSummary, limit, scopeSummary, splitList, toAgent, toForm } from "./form";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const fail = (message: string) => Promise.resolve({ status: "error" as const, error: { code: "invalid", message } });
const flush = async () => { for (let i = 0; i < 40; i++) await Promise.resolve(); };

const agent = (name: string, extra: Record<string, unknown> = {}) => ({
  name, description: "", provider: "claude", model: null, system: null, servers: [], tools: [], ask: [], deny: [],
  delegates: null, max_tokens: null, max_cost_usd: null, max_tool_calls: null, max_wall_secs: null, ...extra,
});

describe("the form", () => {
  it("reads lists and limits and refuses what Rust would", () => {
    expect(splitList(" a, b\n\nc ,")).toEqual(["a", "b", "c"]);
    expect(limit("x", "")).toEqual({ ok: true, value: null });
    expect(limit("x", "12")).toEqual({ ok: true, value: 12 });
    expect(limit("x", "1.5").ok).toBe(false);
    expect(limit("x", "1.5", true)).toEqual({ ok: true, value: 1.5 });
    expect(limit("x", "-1", true).ok).toBe(false);
    const f = { ...toForm(null), name: "coder", provider: "local", servers: "memory\nfiles", tools: "memory/read_*", deny: "files/delete_*",
      delegation: "none" as const, maxCalls: "5", maxCost: "0.5" };
    const r = toAgent(f);
    expect(r.ok && r.agent).toMatchObject({ name: "coder", servers: ["memory", "files"], tools: ["memory/read_*"], deny: ["files/delete_*"],
      delegates: [], max_tool_calls: 5, max_cost_usd: 0.5, max_tokens: null, model: null, system: null });
    expect(toAgent({ ...f, name: "Coder" }).ok).toBe(false);
    expect(toAgent({ ...f, provider: "" }).ok).toBe(false);
    expect(toAgent({ ...f, delegation: "some", delegates: "" }).ok).toBe(false);
    expect(toAgent({ ...f, maxTokens: "lots" }).ok).toBe(false);
    const back = toForm(r.ok ? { ...r.agent, delegates: ["a", "b"] } : null);
    expect(back.delegation).toBe("some");
    expect(back.servers).toBe("memory\nfiles");
    // Progressive discovery: off unless ticked, and kept through the round trip.
    expect(r.ok && r.agent.discovery).toBe(false);
    const found = toAgent({ ...f, discovery: true });
    expect(found.ok && found.agent.discovery).toBe(true);
    expect(toForm(found.ok ? found.agent : null).discovery).toBe(true);
    expect(scopeSummary({ servers: [], tools: ["x/y"] })).toBe("no tools");
    expect(scopeSummary({ servers: ["*"], tools: [] })).toBe("all tools of every server");
    expect(budgetSummary({ max_tokens: null, max_cost_usd: null, max_tool_calls: null, max_wall_secs: null })).toBe("no limits");
    expect(budgetSummary({ max_tokens: 100, max_cost_usd: 1.5, max_tool_calls: 0, max_wall_secs: 60 })).toBe("100 tokens, $1.50, 0 calls, 60 s");
  });
});

describe("the Agents page", () => {
  let agents: ReturnType<typeof agent>[];
  let root: HTMLElement;
  let unmount: () => void;
  const q = <T extends HTMLElement = HTMLElement>(sel: string) => root.querySelector(sel) as T;
  const names = () => Array.from(root.querySelectorAll<HTMLElement>(".agent-row")).map((r) => r.dataset.name);

  beforeEach(async () => {
    vi.clearAllMocks();
    agents = [agent("coder", { description: "<b>Writes</b> code", servers: ["memory"], deny: ["memory/delete_*"], max_tool_calls: 3 }), agent("planner", { delegates: ["coder"] })];
    m.listAgents.mockImplementation(() => ok([...agents]));
    m.listProviders.mockImplementation(() => ok([{ name: "claude" }, { name: "local" }]));
    m.saveAgent.mockImplementation((a: ReturnType<typeof agent>, isNew: boolean) => {
      if (isNew && agents.some((x) => x.name === a.name)) return fail(`an agent named ${a.name} already exists`);
      agents = [...agents.filter((x) => x.name !== a.name), a].sort((x, y) => x.name.localeCompare(y.name));
      return ok(null);
    });
    m.removeAgent.mockImplementation((n: string) => (n === "coder" ? fail("agent coder cannot be removed: planner may delegate to it") : ((agents = agents.filter((x) => x.name !== n)), ok(null))));
    m.exportAgents.mockImplementation(() => ok('[[agent]]\nname = "coder"\n'));
    m.importAgents.mockImplementation((t: string) => (t.includes("allow") ? fail("agent x, field policy[0]: overrides only tighten") : ok({ added: ["x"], replaced: [] })));
    root = document.createElement("main");
    document.body.replaceChildren(root);
    unmount = mountAgents(root);
    await flush();
  });
  afterEach(() => unmount());

  it("lists the agents with their scope, overrides, limits and delegation, as text", () => {
    expect(names()).toEqual(["coder", "planner"]);
    const coder = q(".agent-row[data-name=coder]");
    expect(coder.querySelector("b")).toBeNull();
    expect(coder.textContent).toContain("<b>Writes</b> code");
    expect(coder.querySelector(".agent-scope")?.textContent).toContain("all tools of memory");
    expect(coder.querySelector(".agent-override")?.textContent).toBe("deny memory/delete_*");
    expect(coder.querySelector(".agent-budget")?.textContent).toBe("3 calls");
    expect(coder.querySelector(".agent-delegates")?.textContent).toBe("every agent");
    expect(q(".agent-row[data-name=planner] .agent-delegates").textContent).toBe("coder");
  });

  it("adds an agent through the form, and shows Rust's refusal as it is", async () => {
    q<HTMLButtonElement>(".agents-new").click();
    await flush();
    expect(q(".agents-form").hidden).toBe(false);
    q<HTMLInputElement>(".agents-name").value = "summariser";
    q<HTMLSelectElement>(".agents-provider").value = "local";
    q<HTMLTextAreaElement>(".agents-servers").value = "*";
    q<HTMLSelectElement>(".agents-delegation").value = "none";
    q<HTMLInputElement>(".agents-max-tokens").value = "1000";
    q<HTMLButtonElement>(".agents-save").click();
    await flush();
    expect(m.saveAgent).toHaveBeenCalledWith(expect.objectContaining({ name: "summariser", provider: "local", servers: ["*"], delegates: [], max_tokens: 1000 }), true);
    expect(names()).toEqual(["coder", "planner", "summariser"]);
    expect(q(".agents-form").hidden).toBe(true);

    q<HTMLButtonElement>(".agents-new").click();
    await flush();
    q<HTMLInputElement>(".agents-name").value = "coder";
    q<HTMLSelectElement>(".agents-provider").value = "claude";
    q<HTMLButtonElement>(".agents-save").click();
    await flush();
    expect(q(".agents-form-error").textContent).toBe("an agent named coder already exists");
    expect(q(".agents-form").hidden).toBe(false);
  });

  it("edits an agent in place and keeps its name", async () => {
    q<HTMLButtonElement>(".agent-row[data-name=coder] .agent-edit").click();
    await flush();
    expect(q<HTMLInputElement>(".agents-name").readOnly).toBe(true);
    expect(q<HTMLTextAreaElement>(".agents-deny").value).toBe("memory/delete_*");
    expect(q<HTMLSelectElement>(".agents-provider").value).toBe("claude");
    q<HTMLInputElement>(".agents-max-calls").value = "";
    expect(q<HTMLInputElement>(".agents-discovery").checked).toBe(false);
    q<HTMLInputElement>(".agents-discovery").checked = true;
    q<HTMLButtonElement>(".agents-save").click();
    await flush();
    expect(m.saveAgent).toHaveBeenCalledWith(expect.objectContaining({ name: "coder", max_tool_calls: null, deny: ["memory/delete_*"], discovery: true }), false);
  });

  it("removes after confirming, and says why a removal is refused", async () => {
    q<HTMLButtonElement>(".agent-row[data-name=coder] .agent-remove").click();
    (document.querySelector(".agents-confirm .agents-confirm-yes") as HTMLButtonElement).click();
    await flush();
    expect(q(".agents-error").textContent).toContain("planner may delegate to it");
    expect(names()).toEqual(["coder", "planner"]);
    q<HTMLButtonElement>(".agent-row[data-name=planner] .agent-remove").click();
    (document.querySelector(".agents-confirm .agents-confirm-yes") as HTMLButtonElement).click();
    await flush();
    expect(names()).toEqual(["coder"]);
  });

  it("shows the profiles as TOML and imports a file, or says why not", async () => {
    q<HTMLButtonElement>(".agents-export").click();
    await flush();
    expect(q<HTMLTextAreaElement>(".agents-toml").value).toContain("[[agent]]");
    q<HTMLTextAreaElement>(".agents-toml").value = 'action = "allow"';
    q<HTMLButtonElement>(".agents-import").click();
    await flush();
    expect(q(".agents-file-error").textContent).toContain("only tighten");
    q<HTMLTextAreaElement>(".agents-toml").value = "[[agent]]";
    q<HTMLInputElement>(".agents-replace").checked = true;
    q<HTMLButtonElement>(".agents-import").click();
    await flush();
    expect(m.importAgents).toHaveBeenLastCalledWith("[[agent]]", true);
    expect(q(".agents-status").textContent).toBe("1 agent imported.");
    expect(q(".agents-file-error").hidden).toBe(true);
  });
});
