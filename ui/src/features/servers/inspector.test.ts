import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ inspectTrace: vi.fn(), exportTrace: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { inspectedLine, inspectorPanel, toFilter } from "./inspector";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const fail = (message: string) => Promise.resolve({ status: "error" as const, error: { code: "invalid", message } });
const flush = async () => { for (let i = 0; i < 40; i++) await Promise.resolve(); };

const entry = (index: number, extra: Record<string, unknown> = {}) => ({
  index, at_ms: 1_700_000_000_000 + index, direction: "out", kind: "request", method: "tools/call", id: String(index),
  duration_ms: null, pair: null, is_error: false, tool_error: false, body: `{"id":${index}}`, ...extra,
});

const none = { method: null, direction: null, errors_only: false, slow_ms: null, search: null };
const lastFilter = (f: ReturnType<typeof vi.fn>) => f.mock.calls[f.mock.calls.length - 1];

describe("toFilter", () => {
  it("sets a condition only for what is filled in", () => {
    expect(toFilter({ method: " ", direction: "", errorsOnly: false, slowMs: "", search: "" })).toEqual(none);
    expect(toFilter({ method: " tools/ ", direction: "in", errorsOnly: true, slowMs: "250", search: " Boom " }))
      .toEqual({ method: "tools/", direction: "in", errors_only: true, slow_ms: 250, search: "Boom" });
    expect(toFilter({ method: "", direction: "out", errorsOnly: false, slowMs: "-3", search: "" }).slow_ms).toBeNull();
    expect(toFilter({ method: "", direction: "", errorsOnly: false, slowMs: "abc", search: "" }).slow_ms).toBeNull();
  });
});

describe("inspectedLine", () => {
  it("shows method, id, timing and errors, and the body as inert text", () => {
    const l = inspectedLine(entry(3, { direction: "in", kind: "response", duration_ms: 12.345, is_error: true,
      body: '{"error":{"message":"<img src=x onerror=alert(1)>"}}' }) as never);
    expect(l.querySelector("img")).toBeNull();
    expect(l.querySelector("code")?.textContent).toContain("<img src=x");
    expect(l.querySelector(".method")?.textContent).toBe("tools/call answer");
    expect(l.querySelector(".rpc-id")?.textContent).toBe(" #3");
    expect(l.querySelector(".rtt")?.textContent).toBe("12.3 ms ");
    expect(l.classList.contains("error")).toBe(true);
    expect(l.querySelector(".err-tag")?.textContent).toBe("error ");
    const n = inspectedLine(entry(4, { direction: "note", kind: "other", method: null, id: null, body: "skipped" }) as never);
    expect(n.querySelector(".method")).toBeNull();
    expect(n.querySelector(".rtt")).toBeNull();
  });
});

describe("inspectorPanel", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    m.inspectTrace.mockReset();
    m.exportTrace.mockReset();
    m.inspectTrace.mockImplementation(() => ok([entry(0), entry(1, { direction: "in", kind: "response", duration_ms: 4 })]));
  });
  afterEach(() => vi.useRealTimers());

  it("asks Rust with each control's filter and shows what comes back", async () => {
    const p = inspectorPanel("fs");
    await flush();
    expect(m.inspectTrace).toHaveBeenCalledWith("fs", none);
    expect(p.querySelectorAll(".trace-line")).toHaveLength(2);
    expect(p.querySelector(".insp-count")?.textContent).toBe("2 messages");

    m.inspectTrace.mockImplementation(() => ok([entry(1, { direction: "in", kind: "response", is_error: true })]));
    const errors = p.querySelector<HTMLInputElement>(".insp-errors")!;
    errors.checked = true;
    errors.dispatchEvent(new Event("change"));
    await flush();
    expect(lastFilter(m.inspectTrace)).toEqual(["fs", { ...none, errors_only: true }]);
    expect(p.querySelectorAll(".trace-line")).toHaveLength(1);
    expect(p.querySelector(".insp-count")?.textContent).toBe("1 message");

    const dir = p.querySelector<HTMLSelectElement>(".insp-direction")!;
    dir.value = "in";
    dir.dispatchEvent(new Event("change"));
    await flush();
    expect(lastFilter(m.inspectTrace)).toEqual(["fs", { ...none, errors_only: true, direction: "in" }]);

    // Typing waits for a pause, then sends all the fields at once.
    const calls = m.inspectTrace.mock.calls.length;
    const method = p.querySelector<HTMLInputElement>(".insp-method")!;
    const slow = p.querySelector<HTMLInputElement>(".insp-slow")!;
    const search = p.querySelector<HTMLInputElement>(".insp-search")!;
    method.value = "tools/call";
    method.dispatchEvent(new Event("input"));
    slow.value = "100";
    slow.dispatchEvent(new Event("input"));
    search.value = "needle";
    search.dispatchEvent(new Event("input"));
    expect(m.inspectTrace.mock.calls.length).toBe(calls);
    await vi.advanceTimersByTimeAsync(200);
    await flush();
    expect(m.inspectTrace.mock.calls.length).toBe(calls + 1);
    expect(lastFilter(m.inspectTrace)).toEqual(["fs", {
      method: "tools/call", direction: "in", errors_only: true, slow_ms: 100, search: "needle",
    }]);
  });

  it("keeps only the newest answer when they come back out of order", async () => {
    let release: (v: unknown) => void = () => {};
    m.inspectTrace.mockImplementationOnce(() => new Promise((r) => { release = r; }));
    const p = inspectorPanel("fs");
    m.inspectTrace.mockImplementation(() => ok([entry(9)]));
    p.querySelector<HTMLButtonElement>(".insp-refresh")!.click();
    await flush();
    release({ status: "ok", data: [entry(0), entry(1), entry(2)] });
    await flush();
    expect([...p.querySelectorAll(".trace-line")].map((l) => l.getAttribute("data-index"))).toEqual(["9"]);
  });

  it("exports the same filter as JSON lines to copy, and shows failures", async () => {
    const p = inspectorPanel("fs");
    await flush();
    const errors = p.querySelector<HTMLInputElement>(".insp-errors")!;
    errors.checked = true;
    errors.dispatchEvent(new Event("change"));
    await flush();
    m.exportTrace.mockImplementation(() => ok('{"direction":"in"}\n'));
    p.querySelector<HTMLButtonElement>(".insp-export")!.click();
    await flush();
    expect(m.exportTrace).toHaveBeenCalledWith("fs", { ...none, errors_only: true });
    const out = p.querySelector<HTMLTextAreaElement>(".insp-export-text")!;
    expect(out.hidden).toBe(false);
    expect(out.value).toBe('{"direction":"in"}\n');
    expect(p.querySelector<HTMLButtonElement>(".insp-copy")!.hidden).toBe(false);

    m.exportTrace.mockImplementation(() => fail("no such server"));
    p.querySelector<HTMLButtonElement>(".insp-export")!.click();
    await flush();
    const err = p.querySelector<HTMLElement>(".insp-error")!;
    expect(err.hidden).toBe(false);
    expect(err.textContent).toBe("no such server");
  });
});
