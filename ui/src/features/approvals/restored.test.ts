import { describe, expect, it } from "vitest";
import { reasonLine } from "./args";
import { splitReason, valueAt } from "./restored";

// As Rust words it (outbound::runner::with_restored_note).
const REASON = "no rule allows this tool\nThe model wrote [REDACTED_EMAIL_1] (in `to`, `cc[0]`); Switchboard put back the real value before running.\nThe model wrote [REDACTED_API_KEY_1] (in `auth.header`); Switchboard put back the real value before running.";
const ARGS = JSON.stringify({ to: "ana@example.org", cc: ["ana@example.org"], auth: { header: "Bearer sk-real" } }, null, 2);

describe("the placeholders put back in a call", () => {
  it("are split from the policy's reason", () => {
    const { reason, restored } = splitReason(REASON);
    expect(reason).toBe("no rule allows this tool");
    expect(restored).toEqual([
      { placeholder: "[REDACTED_EMAIL_1]", at: ["to", "cc[0]"] },
      { placeholder: "[REDACTED_API_KEY_1]", at: ["auth.header"] },
    ]);
    expect(splitReason("just a reason")).toEqual({ reason: "just a reason", restored: [] });
  });

  it("find the value in nested arguments", () => {
    const args = JSON.parse(ARGS);
    expect(valueAt(args, "cc[0]")).toBe("ana@example.org");
    expect(valueAt(args, "auth.header")).toBe("Bearer sk-real");
    expect(valueAt(args, "nope.deeper")).toBeUndefined();
  });

  it("show the placeholder the model wrote next to the real value", () => {
    const el = reasonLine({ reason: REASON, arguments: ARGS })!;
    expect(el.querySelector(".approval-reason-text")?.textContent).toBe("Asked because: no rule allows this tool");
    const items = Array.from(el.querySelectorAll(".approval-restored-item"));
    expect(items).toHaveLength(2);
    expect(items[0]?.querySelector(".approval-placeholder")?.textContent).toBe("[REDACTED_EMAIL_1]");
    expect(items[0]?.textContent).toContain("Switchboard put back the real value before running");
    expect(Array.from(items[0]!.querySelectorAll(".approval-restored-value")).map((v) => v.textContent)).toEqual(["ana@example.org", "ana@example.org"]);
    expect(items[1]?.querySelector(".approval-restored-value")?.textContent).toBe("Bearer sk-real");
  });

  it("leave a plain reason as it was", () => {
    const el = reasonLine({ reason: "no rule allows this tool" })!;
    expect(el.tagName).toBe("P");
    expect(el.textContent).toBe("Asked because: no rule allows this tool");
  });
});
