import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ pendingApprovals: vi.fn(), answerApproval: vi.fn(), listen: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({
  commands: { pendingApprovals: m.pendingApprovals, answerApproval: m.answerApproval },
  events: { hostChanged: { listen: m.listen } },
}));

import { mountApprovals } from "./dialog";
import type { ApprovalDto } from "../../ipc/bindings";

const req = (n: number, over: Partial<ApprovalDto> = {}): ApprovalDto => ({
  nonce: `n${n}`, kind: "tool", server: "fs", tool: `tool${n}`, arguments: JSON.stringify({ path: `/tmp/${n}`, deep: { k: [1, 2] } }),
  origin: "model", conversation: "c-1", hints: [], reason: `rule r${n}`, warning: null, requested_at_ms: n, suggested_constraints: [], ...over,
});
const flush = async () => { for (let i = 0; i < 40; i++) await Promise.resolve(); };

let pending: ApprovalDto[];
let fire: (kind: string) => void;
let root: HTMLElement;
let stop: () => void;
const q = <T extends Element = HTMLElement>(sel: string) => root.querySelector(sel) as unknown as T;
const nonces = () => Array.from(root.querySelectorAll<HTMLElement>(".batch-item")).map((e) => e.dataset.nonce);

beforeEach(async () => {
  vi.clearAllMocks();
  pending = [req(1), req(2, { warning: "completes the lethal trifecta" }), req(3, { origin: "manual", conversation: null })];
  m.pendingApprovals.mockImplementation(() => Promise.resolve([...pending]));
  m.listen.mockImplementation((cb: (e: { payload: { kind: string } }) => void) => {
    fire = (kind) => cb({ payload: { kind } });
    return Promise.resolve(() => {});
  });
  m.answerApproval.mockImplementation((nonce: string) => {
    pending = pending.filter((p) => p.nonce !== nonce);
    return Promise.resolve({ status: "ok", data: null });
  });
  root = document.createElement("div");
  document.body.replaceChildren(root);
  stop = mountApprovals(root);
  await flush();
});
afterEach(() => stop());

async function openBatch() {
  (q(".approval-review-all") as HTMLButtonElement).click();
  await flush();
  return q(".batch-dialog");
}

describe("batch review", () => {
  it("says how many more wait and offers to review them all", () => {
    expect(q(".approval-dialog").dataset.nonce).toBe("n1");
    expect(q(".approval-queue").hidden).toBe(false);
    expect(q(".approval-waiting").textContent).toBe("2 more waiting");
    expect(q(".approval-review-all").textContent).toBe("Review all 3");
  });

  it("lists every request with its full pretty arguments, origin, reason and warning", async () => {
    const d = await openBatch();
    expect(nonces()).toEqual(["n1", "n2", "n3"]);
    const first = d.querySelector(".batch-item") as HTMLElement;
    expect(first.querySelector(".batch-target")?.textContent).toBe("fs › tool1");
    expect(first.querySelector("details.batch-args pre")?.textContent).toBe(JSON.stringify(JSON.parse(req(1).arguments), null, 2));
    expect(first.textContent).toContain("asked by the model in conversation c-1");
    expect(first.textContent).toContain("Asked because: rule r1");
    expect(d.querySelectorAll(".batch-item")[1]?.querySelector(".approval-warning")?.textContent).toContain("lethal trifecta");
    expect(d.querySelectorAll(".batch-item")[2]?.textContent).toContain("asked by you");
  });

  it("names the agent that asks and whom it works for", async () => {
    pending = [...pending, req(4, { agent: "researcher", for_agent: "planner" }), req(5, { agent: "planner", for_agent: null })];
    fire("approvals");
    await new Promise((r) => setTimeout(r, 200));
    await flush();
    const d = await openBatch();
    const origins = Array.from(d.querySelectorAll(".batch-origin")).map((e) => e.textContent);
    expect(origins).toEqual([
      "asked by the model in conversation c-1",
      "asked by the model in conversation c-1",
      "asked by you (run by hand)",
      "asked by agent researcher for agent planner in conversation c-1",
      "asked by agent planner for you in conversation c-1",
    ]);
  });

  it("Run all needs the review box ticked, then answers each listed nonce with allow once", async () => {
    const d = await openBatch();
    const runAll = d.querySelector(".batch-run-all") as HTMLButtonElement;
    const box = d.querySelector(".batch-confirm") as HTMLInputElement;
    expect(runAll.disabled).toBe(true);
    expect(runAll.textContent).toBe("Run all 3 once");
    expect(box.parentElement?.textContent).toContain("I have reviewed all 3 calls");
    runAll.click();
    await flush();
    expect(m.answerApproval).not.toHaveBeenCalled();
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    expect(runAll.disabled).toBe(false);
    runAll.click();
    await flush();
    expect(m.answerApproval.mock.calls).toEqual(["n1", "n2", "n3"].map((n) => [n, { kind: "allow", arguments: null, scope: "once", constraints: [] }]));
    expect(root.querySelector(".batch-dialog")).toBeNull();
    expect(root.querySelector(".approval-dialog")).toBeNull();
  });

  it("a request that arrives later is listed, unticks the box, and is not run unseen", async () => {
    const d = await openBatch();
    const box = d.querySelector(".batch-confirm") as HTMLInputElement;
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    pending.push(req(4));
    fire("approvals");
    await flush();
    expect(nonces()).toEqual(["n1", "n2", "n3", "n4"]);
    expect(box.checked).toBe(false);
    expect((d.querySelector(".batch-run-all") as HTMLButtonElement).disabled).toBe(true);
    expect(d.querySelector(".batch-run-all")?.textContent).toBe("Run all 4 once");
  });

  it("answers one by one, drops withdrawn requests, and Deny all says no to the rest", async () => {
    const d = await openBatch();
    (d.querySelector('[data-nonce="n2"] .batch-allow') as HTMLButtonElement).click();
    await flush();
    expect(m.answerApproval).toHaveBeenLastCalledWith("n2", { kind: "allow", arguments: null, scope: "once", constraints: [] });
    expect(nonces()).toEqual(["n1", "n3"]);
    pending = pending.filter((p) => p.nonce !== "n3"); // withdrawn
    fire("approvals");
    await flush();
    expect(nonces()).toEqual(["n1"]);
    (d.querySelector(".batch-deny-all") as HTMLButtonElement).click();
    await flush();
    expect(m.answerApproval).toHaveBeenLastCalledWith("n1", { kind: "deny", reason: null });
    expect(root.querySelector(".batch-dialog")).toBeNull();
  });

  it("a refusal stays listed with Rust's message; closing answers nothing and brings back the dialog", async () => {
    m.answerApproval.mockResolvedValueOnce({ status: "error", error: { code: "invalid", message: "no longer <b>valid</b>" } });
    const d = await openBatch();
    (d.querySelector('[data-nonce="n1"] .batch-deny') as HTMLButtonElement).click();
    await flush();
    const err = d.querySelector('[data-nonce="n1"] .batch-item-error') as HTMLElement;
    expect(err.hidden).toBe(false);
    expect(err.textContent).toBe("no longer <b>valid</b>");
    expect(nonces()).toEqual(["n1", "n2", "n3"]);
    const calls = m.answerApproval.mock.calls.length;
    (d.querySelector(".batch-close") as HTMLButtonElement).click();
    await flush();
    expect(m.answerApproval.mock.calls.length).toBe(calls);
    expect(root.querySelector(".batch-dialog")).toBeNull();
    expect(q(".approval-dialog").dataset.nonce).toBe("n1");
  });
});
