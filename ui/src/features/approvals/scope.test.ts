import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("../../ipc/bindings", () => ({ commands: {}, events: { hostChanged: { listen: vi.fn() } } }));

import { approvalDialog, showQueue } from "./dialog";
import type { ApprovalDto } from "../../ipc/bindings";

const req = (over: Partial<ApprovalDto> = {}): ApprovalDto => ({
  nonce: "n1", kind: "tool", server: "fs", tool: "write_file", arguments: '{\n  "path": "/tmp/x"\n}',
  origin: "model", conversation: "c-1", hints: [], reason: "rule r3 asks", warning: null, requested_at_ms: 0, suggested_constraints: [], ...over,
});
const click = (d: HTMLElement, sel: string) => (d.querySelector(sel) as HTMLButtonElement).click();

afterEach(() => document.body.replaceChildren());

describe("approval scopes, reason and warning", () => {
  it("says why it asks, small, as text", () => {
    const d = approvalDialog(req({ reason: "<b>no rule</b> matches" }), () => {});
    const r = d.querySelector(".approval-reason-text") as HTMLElement;
    expect(r.textContent).toBe("Asked because: <b>no rule</b> matches");
    expect(r.querySelector("b")).toBeNull();
  });

  it("shows the guard's warning as an alert above the arguments, only when set", () => {
    expect(approvalDialog(req(), () => {}).querySelector(".approval-warning")).toBeNull();
    const d = approvalDialog(req({ warning: "This call completes the lethal trifecta <script>" }), () => {});
    const w = d.querySelector(".approval-warning") as HTMLElement;
    expect(w.getAttribute("role")).toBe("alert");
    expect(w.textContent).toContain("lethal trifecta <script>");
    expect(d.querySelector("script")).toBeNull();
    const args = d.querySelector(".approval-args") as HTMLElement;
    expect(w.compareDocumentPosition(args) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("offers the conversation scope to model calls only", () => {
    expect(approvalDialog(req(), () => {}).querySelector(".allow-conversation")).not.toBeNull();
    const manual = approvalDialog(req({ origin: "manual", conversation: null }), () => {});
    expect(manual.querySelector(".allow-conversation")).toBeNull();
    expect(manual.querySelector(".allow-always")).not.toBeNull();
    expect(manual.querySelector("button.allow")?.textContent).toBe("Run once");
  });

  it("explains what Always binds to and where to revoke it", () => {
    const t = approvalDialog(req(), () => {}).querySelector(".allow-always")?.getAttribute("title") ?? "";
    expect(t).toMatch(/current definition/);
    expect(t).toMatch(/Policy/);
  });

  it("sends the chosen scope, with edited arguments when changed", () => {
    for (const [sel, scope] of [[".allow-conversation", "conversation"], [".allow-always", "always"]] as const) {
      const answer = vi.fn();
      const d = approvalDialog(req(), answer);
      document.body.append(d);
      click(d, sel);
      expect(answer.mock.calls).toEqual([[{ kind: "allow", arguments: null, scope, constraints: [] }]]);
      expect(d.isConnected).toBe(false);
    }
    const answer = vi.fn();
    const d = approvalDialog(req(), answer);
    click(d, ".approval-edit");
    (d.querySelector(".approval-args-edit") as HTMLTextAreaElement).value = '{"path": "/tmp/z"}';
    click(d, ".allow-always");
    expect(answer.mock.calls).toEqual([[{ kind: "allow", arguments: '{"path": "/tmp/z"}', scope: "always", constraints: [] }]]);
  });

  it("every answer button is disabled while an answer is on its way", () => {
    const d = approvalDialog(req(), () => new Promise(() => {}));
    click(d, ".allow-conversation");
    for (const sel of [".deny", ".allow", ".allow-conversation", ".allow-always"]) {
      expect((d.querySelector(sel) as HTMLButtonElement).disabled).toBe(true);
    }
  });

  it("shows the queue only when more than one request waits", () => {
    const onReview = vi.fn();
    const d = approvalDialog(req(), () => {}, onReview);
    const q = d.querySelector(".approval-queue") as HTMLElement;
    showQueue(d, 1);
    expect(q.hidden).toBe(true);
    showQueue(d, 4);
    expect(q.hidden).toBe(false);
    expect(q.querySelector(".approval-waiting")?.textContent).toBe("3 more waiting");
    expect(q.querySelector(".approval-review-all")?.textContent).toBe("Review all 4");
    click(d, ".approval-review-all");
    expect(onReview).toHaveBeenCalledTimes(1);
  });

  it("offers the suggested conditions, all ticked, and sends the ticked ones with scope always", () => {
    const suggested = [
      { description: '"url" is on example.com (or a subdomain)', condition_json: '{"kind":"domain_in","arg":"url","domains":["example.com"]}' },
      { description: '"mode" is exactly "<b>fast</b>"', condition_json: '{"kind":"matches","arg":"mode","pattern":"fast"}' },
    ];
    expect(approvalDialog(req(), () => {}).querySelector(".approval-constraints")).toBeNull();
    const answer = vi.fn();
    const d = approvalDialog(req({ suggested_constraints: suggested }), answer);
    document.body.append(d);
    const details = d.querySelector("details.approval-constraints") as HTMLDetailsElement;
    expect(details.querySelector("summary")?.textContent).toBe("Always, with these arguments…");
    expect(details.open).toBe(false);
    const boxes = Array.from(d.querySelectorAll<HTMLInputElement>("input.constraint-choice"));
    expect(boxes.map((b) => b.checked)).toEqual([true, true]);
    expect(details.textContent).toContain('"mode" is exactly "<b>fast</b>"');
    expect(details.querySelector("b")).toBeNull();
    boxes[1]!.checked = false;
    boxes[1]!.dispatchEvent(new Event("change"));
    click(d, ".allow-always-constrained");
    expect(answer.mock.calls).toEqual([[{ kind: "allow", arguments: null, scope: "always", constraints: [suggested[0]!.condition_json] }]]);
  });

  it("cannot grant with no condition ticked from the expander", () => {
    const answer = vi.fn();
    const d = approvalDialog(req({ suggested_constraints: [{ description: "d", condition_json: '{"kind":"writes"}' }] }), answer);
    const box = d.querySelector("input.constraint-choice") as HTMLInputElement;
    box.checked = false;
    box.dispatchEvent(new Event("change"));
    const go = d.querySelector(".allow-always-constrained") as HTMLButtonElement;
    expect(go.disabled).toBe(true);
    go.click();
    expect(answer).not.toHaveBeenCalled();
  });
});
