import { describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ inspectTrace: vi.fn(), exportTrace: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { filterLogs, logsDialog } from "./logs";

const flush = async () => { for (let i = 0; i < 40; i++) await Promise.resolve(); };

const logs = {
  stderr: ["starting", "\u001b[31merror: <b>boom</b>", "ready"],
  trace: [
    { at_ms: 0, direction: "out", method: "tools/list", duration_ms: null, is_error: false, body: '{"method":"tools/list"}' },
    { at_ms: 1, direction: "in", method: null, duration_ms: 1.5, is_error: false, body: '{"result":{}}' },
  ],
};

describe("filterLogs", () => {
  it("filters both panes case-insensitively", () => {
    const f = filterLogs(logs, "BOOM");
    expect(f.stderr).toHaveLength(1);
    expect(f.trace).toHaveLength(0);
    expect(filterLogs(logs, "tools/LIST").trace).toHaveLength(1);
    expect(filterLogs(logs, "  ")).toBe(logs);
  });
});

describe("logsDialog", () => {
  it("shows server output as inert text, and the trace in the inspector with round-trip times", async () => {
    m.inspectTrace.mockImplementation(() => Promise.resolve({ status: "ok", data: logs.trace.map((t, index) => ({
      ...t, index, kind: t.method ? "request" : "response", id: "1", pair: null, tool_error: false,
    })) }));
    const d = logsDialog("x", logs);
    await flush();
    expect(m.inspectTrace).toHaveBeenCalledWith("x", expect.objectContaining({ errors_only: false }));
    expect(d.querySelector(".log-stderr b")).toBeNull();
    expect(d.querySelector(".log-stderr")?.textContent).toContain("<b>boom</b>");
    expect(d.querySelectorAll(".trace-line")).toHaveLength(2);
    expect(d.querySelector(".rtt")?.textContent).toContain("1.5 ms");
  });
});
