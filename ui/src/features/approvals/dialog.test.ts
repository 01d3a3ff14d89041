import { afterEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  pendingApprovals: vi.fn(),
  answerApproval: vi.fn(),
  listen: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({
  commands: { pendingApprovals: m.pendingApprovals, answerApproval: m.answerApproval },
  events: { hostChanged: { listen: m.listen } },
}));

import { approvalDialog, mountApprovals, parseArguments } from "./dialog";
import type { ApprovalDto } from "../../ipc/bindings";

const req = (over: Partial<ApprovalDto> = {}): ApprovalDto => ({
  nonce: "n1",
  kind: "tool",
  server: "fs",
  tool: "write_file",
  arguments: JSON.stringify({ path: "/tmp/x", content: "y".repeat(100_000) }, null, 2),
  origin: "manual",
  conversation: null,
  hints: ["destructive"],
  reason: "no rule matches fs › write_file",
  warning: null,
  requested_at_ms: 0,
  suggested_constraints: [],
  ...over,
});
const small = () => req({ arguments: JSON.stringify({ path: "/tmp/x" }, null, 2) });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const click = (d: HTMLElement, sel: string) => (d.querySelector(sel) as HTMLButtonElement).click();
const edit = (d: HTMLElement, text: string) => {
  click(d, ".approval-edit");
  const t = d.querySelector(".approval-args-edit") as HTMLTextAreaElement;
  t.value = text;
  return t;
};

afterEach(() => document.body.replaceChildren());

describe("approvalDialog", () => {
  it("shows the whole 100 KB argument as text, with the server's claims", () => {
    const d = approvalDialog(req({ tool: "<img src=x onerror=alert(1)>" }), () => {});
    expect(d.querySelector(".approval-args")?.textContent).toContain("y".repeat(100_000));
    expect(d.querySelector("img")).toBeNull();
    expect(d.textContent).toContain("<img src=x onerror=alert(1)>");
    expect(d.textContent).toContain("destructive");
  });

  it("focuses Don't run, and answers once", async () => {
    const answer = vi.fn();
    const d = approvalDialog(req(), answer);
    document.body.append(d);
    await Promise.resolve();
    expect(document.activeElement?.classList.contains("deny")).toBe(true);
    click(d, ".allow");
    click(d, ".deny");
    expect(answer.mock.calls).toEqual([[{ kind: "allow", arguments: null, scope: "once", constraints: [] }]]);
    expect(d.isConnected).toBe(false);
  });

  it("Escape means no, without a reason even when one was typed", () => {
    const answer = vi.fn();
    const d = approvalDialog(req(), answer);
    document.body.append(d);
    (d.querySelector(".approval-reason") as HTMLInputElement).value = "half typed";
    d.dispatchEvent(new Event("cancel", { cancelable: true }));
    expect(answer.mock.calls).toEqual([[{ kind: "deny", reason: null }]]);
  });

  it("says who asks", () => {
    const d = approvalDialog(req({ origin: "model", conversation: "c-7" }), () => {});
    expect(d.textContent).toContain("The model asks to run this in conversation c-7");
  });

  it("names the agent that asks and whom it works for", () => {
    const sub = approvalDialog(req({ origin: "model", conversation: "c-7", agent: "researcher", for_agent: "planner" }), () => {});
    expect(sub.querySelector(".approval-who")?.textContent).toBe("Agent researcher asks, for agent planner, to run this in conversation c-7.");
    const top = approvalDialog(req({ origin: "model", conversation: "c-7", agent: "planner", for_agent: null }), () => {});
    expect(top.querySelector(".approval-who")?.textContent).toBe("Agent planner asks, for you, to run this in conversation c-7.");
    const plain = approvalDialog(req({ origin: "model", conversation: null, agent: null, for_agent: null }), () => {});
    expect(plain.querySelector(".approval-who")?.textContent).toBe("The model asks to run this.");
    // A person's own run never reads as an agent's, whatever the request carries.
    const manual = approvalDialog(req({ origin: "manual", agent: "planner" }), () => {});
    expect(manual.querySelector(".approval-who")?.textContent).toContain("You asked to run this tool");
  });

  it("says a grant answered to an agent is that agent's only", () => {
    const sub = approvalDialog(req({ origin: "model", conversation: "c-7", agent: "researcher", for_agent: "planner" }), () => {});
    expect(sub.querySelector(".allow-always")?.textContent).toBe("Always allow for agent researcher");
    expect(sub.querySelector(".allow-conversation")?.textContent).toBe("Allow for agent researcher in this conversation");
    const plain = approvalDialog(req({ origin: "model", conversation: "c-7", agent: null, for_agent: null }), () => {});
    expect(plain.querySelector(".allow-always")?.textContent).toBe("Always allow this tool");
  });

  it("Don't run sends the reason, trimmed; Enter in the reason field does too", () => {
    const answer = vi.fn();
    const d = approvalDialog(small(), answer);
    document.body.append(d);
    const reason = d.querySelector(".approval-reason") as HTMLInputElement;
    expect(reason.placeholder).toContain("sent to the model");
    reason.value = "  wrong folder <b>x</b> ";
    click(d, ".deny");
    expect(answer.mock.calls).toEqual([[{ kind: "deny", reason: "wrong folder <b>x</b>" }]]);
    const answer2 = vi.fn();
    const d2 = approvalDialog(small(), answer2);
    document.body.append(d2);
    const r2 = d2.querySelector(".approval-reason") as HTMLInputElement;
    r2.value = "no";
    r2.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    expect(answer2.mock.calls).toEqual([[{ kind: "deny", reason: "no" }]]);
  });

  it("an empty reason is sent as null", () => {
    const answer = vi.fn();
    const d = approvalDialog(small(), answer);
    click(d, ".deny");
    expect(answer.mock.calls).toEqual([[{ kind: "deny", reason: null }]]);
  });

  it("edits the arguments and runs with them", async () => {
    const answer = vi.fn();
    const d = approvalDialog(small(), answer);
    document.body.append(d);
    await Promise.resolve();
    click(d, ".approval-edit");
    const t = d.querySelector(".approval-args-edit") as HTMLTextAreaElement;
    expect(d.querySelector(".approval-args")).toBeNull();
    expect(t.value).toBe('{\n  "path": "/tmp/x"\n}');
    expect(document.activeElement).toBe(t);
    t.value = '{ "path": "/tmp/y" }';
    click(d, ".allow");
    expect(answer.mock.calls).toEqual([[{ kind: "allow", arguments: '{ "path": "/tmp/y" }', scope: "once", constraints: [] }]]);
    expect(d.isConnected).toBe(false);
  });

  it("unchanged arguments (whitespace aside) are sent as null", () => {
    const answer = vi.fn();
    const d = approvalDialog(small(), answer);
    edit(d, '{"path":"/tmp/x"}');
    click(d, ".allow");
    expect(answer.mock.calls).toEqual([[{ kind: "allow", arguments: null, scope: "once", constraints: [] }]]);
  });

  it("blocks arguments that are not a JSON object, locally", () => {
    const answer = vi.fn();
    const d = approvalDialog(small(), answer);
    document.body.append(d);
    for (const bad of ['{"path": ', "[1, 2]", "42", "null"]) {
      edit(d, bad);
      click(d, ".allow");
      expect(answer).not.toHaveBeenCalled();
      const err = d.querySelector(".approval-error") as HTMLElement;
      expect(err.hidden).toBe(false);
      expect(err.textContent).toMatch(/JSON/);
    }
    expect(d.isConnected).toBe(true);
    edit(d, '{"path": "/ok"}');
    click(d, ".allow");
    expect(answer).toHaveBeenCalledTimes(1);
  });

  it("a refused answer keeps the dialog open with Rust's message, and can be retried", async () => {
    const answer = vi.fn()
      .mockResolvedValueOnce("arguments do not match the schema: <i>path</i> must be a string")
      .mockResolvedValueOnce(null);
    const d = approvalDialog(small(), answer);
    document.body.append(d);
    edit(d, '{"path": 5}');
    click(d, ".allow");
    expect((d.querySelector(".allow") as HTMLButtonElement).disabled).toBe(true);
    click(d, ".allow"); // ignored while the first answer is on its way
    await flush();
    expect(answer).toHaveBeenCalledTimes(1);
    const err = d.querySelector(".approval-error") as HTMLElement;
    expect(err.hidden).toBe(false);
    expect(err.textContent).toBe("arguments do not match the schema: <i>path</i> must be a string");
    expect(err.querySelector("i")).toBeNull();
    expect(d.isConnected).toBe(true);
    expect((d.querySelector(".allow") as HTMLButtonElement).disabled).toBe(false);
    (d.querySelector(".approval-args-edit") as HTMLTextAreaElement).value = '{"path": "5"}';
    click(d, ".allow");
    await flush();
    expect(answer.mock.calls[1]).toEqual([{ kind: "allow", arguments: '{"path": "5"}', scope: "once", constraints: [] }]);
    expect(d.isConnected).toBe(false);
  });
});

describe("parseArguments", () => {
  it("accepts objects only", () => {
    expect(parseArguments('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArguments("[]").ok).toBe(false);
    expect(parseArguments("").ok).toBe(false);
  });
});

describe("mountApprovals", () => {
  it("sends the answer by nonce; a refusal keeps the dialog, an acceptance closes it", async () => {
    let pending = [small()];
    m.pendingApprovals.mockImplementation(() => Promise.resolve(pending));
    m.listen.mockResolvedValue(() => {});
    m.answerApproval
      .mockResolvedValueOnce({ status: "error", error: { code: "invalid", message: "does not match the schema" } })
      .mockImplementationOnce(() => {
        pending = [];
        return Promise.resolve({ status: "ok", data: null });
      });
    const root = document.createElement("div");
    document.body.append(root);
    const stop = mountApprovals(root);
    await flush();
    const d = root.querySelector(".approval-dialog") as HTMLElement;
    expect(d).not.toBeNull();
    edit(d, '{"path": 1}');
    click(d, ".allow");
    await flush();
    expect(m.answerApproval).toHaveBeenLastCalledWith("n1", { kind: "allow", arguments: '{"path": 1}', scope: "once", constraints: [] });
    expect(root.querySelector(".approval-dialog")).toBe(d);
    expect(d.querySelector(".approval-error")?.textContent).toBe("does not match the schema");
    (d.querySelector(".approval-reason") as HTMLInputElement).value = "fine, no";
    click(d, ".deny");
    await flush();
    expect(m.answerApproval).toHaveBeenLastCalledWith("n1", { kind: "deny", reason: "fine, no" });
    expect(root.querySelector(".approval-dialog")).toBeNull();
    stop();
  });
});
