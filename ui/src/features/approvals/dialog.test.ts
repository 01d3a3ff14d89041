import { describe, expect, it, vi } from "vitest";
import { approvalDialog } from "./dialog";
import type { ApprovalDto } from "../../ipc/bindings";

const req = (over: Partial<ApprovalDto> = {}): ApprovalDto => ({
  nonce: "n1",
  server: "fs",
  tool: "write_file",
  arguments: JSON.stringify({ path: "/tmp/x", content: "y".repeat(100_000) }, null, 2),
  origin: "manual",
  conversation: null,
  hints: ["destructive"],
  requested_at_ms: 0,
  ...over,
});

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
    (d.querySelector(".allow") as HTMLButtonElement).click();
    (d.querySelector(".deny") as HTMLButtonElement).click();
    expect(answer.mock.calls).toEqual([[true]]);
    expect(d.isConnected).toBe(false);
  });

  it("Escape means no", () => {
    const answer = vi.fn();
    const d = approvalDialog(req(), answer);
    document.body.append(d);
    d.dispatchEvent(new Event("cancel", { cancelable: true }));
    expect(answer.mock.calls).toEqual([[false]]);
  });

  it("says who asks", () => {
    const d = approvalDialog(req({ origin: "model", conversation: "c-7" }), () => {});
    expect(d.textContent).toContain("The model asks to run this in conversation c-7");
  });
});
