import { describe, expect, it } from "vitest";
import { bytesLabel, insecureBadge, reasonAction, rowBadge, sortRows, statusBadge, trustLabel } from "./format";
import type { ServerRow_Serialize as ServerRow, StatusDto_Serialize as StatusDto } from "../../ipc/bindings";

const status = (kind: StatusDto["kind"], extra: Partial<StatusDto> = {}): StatusDto => ({
  kind,
  detail: "",
  tools: null,
  retry_at_ms: null,
  stderr_tail: [],
  reason: null,
  cap_bytes: null,
  protocol: null,
  ...extra,
});

describe("statusBadge", () => {
  it("counts tools when running", () => {
    expect(statusBadge(status("running", { tools: 14 }), 0)).toEqual({ label: "running · 14 tools", tone: "ok" });
  });
  it("counts down a backoff and never goes negative", () => {
    expect(statusBadge(status("backoff", { retry_at_ms: 5_500 }), 1_000).label).toBe("restarting in 5s");
    expect(statusBadge(status("backoff", { retry_at_ms: 0 }), 9_000).label).toBe("restarting in 0s");
  });
  it("flags approval and failure", () => {
    expect(statusBadge(status("needs_trust"), 0).tone).toBe("warn");
    expect(statusBadge(status("failed"), 0).tone).toBe("bad");
  });
});

describe("trustLabel", () => {
  it("explains what to do", () => {
    expect(trustLabel("changed")).toMatch(/changed/);
    expect(trustLabel("trusted")).toBeNull();
  });
});

describe("sortRows", () => {
  const row = (name: string, kind: StatusDto["kind"]): ServerRow => ({
    name,
    transport: "stdio",
    summary: name,
    enabled: true,
    trust: "trusted",
    status: status(kind),
    missing_secrets: [],
    review: 0,
    sandboxed: false,
    allow_insecure: false,
    always_on: false,
  });
  it("keeps name order whatever the status, so cards do not jump", () => {
    const sorted = sortRows([row("b", "running"), row("a", "running"), row("z", "failed")]);
    expect(sorted.map((r) => r.name)).toEqual(["a", "b", "z"]);
    const later = sortRows([row("b", "backoff"), row("a", "failed"), row("z", "running")]);
    expect(later.map((r) => r.name)).toEqual(["a", "b", "z"]);
  });
});

describe("rowBadge", () => {
  it("says an unapproved, never-started server needs approval", () => {
    const row = { name: "n", transport: "stdio" as const, summary: "", enabled: true, trust: "not_approved" as const, status: status("stopped"), missing_secrets: [], review: 0, sandboxed: false, allow_insecure: false, always_on: true };
    expect(rowBadge(row, 0).label).toBe("needs approval");
    expect(rowBadge({ ...row, trust: "trusted" }, 0).label).toBe("stopped");
  });
  it("says a stopped server that is not always on starts when needed", () => {
    const row = { name: "n", transport: "stdio" as const, summary: "", enabled: true, trust: "trusted" as const, status: status("stopped"), missing_secrets: [], review: 0, sandboxed: false, allow_insecure: false, always_on: false };
    expect(rowBadge(row, 0)).toEqual({ label: "starts when needed", tone: "idle" });
    expect(rowBadge({ ...row, enabled: false }, 0).label).toBe("stopped");
    expect(rowBadge({ ...row, status: status("running") }, 0).label).not.toBe("starts when needed");
  });
});

describe("reasonAction", () => {
  it("offers sign-in for credentials and names the cap for an oversized message", () => {
    expect(reasonAction(status("failed", { reason: "auth_required" }))?.signIn).toBe(true);
    const big = reasonAction(status("backoff", { reason: "message_too_large", cap_bytes: 16 * 1024 * 1024 }));
    expect(big?.signIn).toBe(false);
    expect(big?.note).toMatch(/16 MiB cap/);
    const named = reasonAction(status("failed", { reason: "message_too_large", cap_bytes: 1024 }), "weather");
    expect(named?.note).toMatch(/switchboard server limits weather --max-message-mb N/);
    expect(reasonAction(status("failed", { reason: "other" }))).toBeNull();
    expect(reasonAction(status("failed"))).toBeNull();
  });
  it("reads byte counts", () => {
    expect(bytesLabel(256 * 1024)).toBe("256 KiB");
    expect(bytesLabel(1500)).toBe("1500 bytes");
  });
});

describe("insecureBadge", () => {
  it("shows \"insecure (dev)\" only while allow insecure (development) is on", () => {
    const on = insecureBadge({ allow_insecure: true });
    expect(on?.label).toBe("insecure (dev)");
    expect(on?.tone).toBe("bad");
    expect(on?.title).toContain("clear text");
    expect(insecureBadge({ allow_insecure: false })).toBeNull();
  });
});
