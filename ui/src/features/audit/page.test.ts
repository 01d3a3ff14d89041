import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ auditEntries: vi.fn(), verifyAudit: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({
  commands: { auditEntries: m.auditEntries, verifyAudit: m.verifyAudit },
}));

import { formatTime, mountAudit, PAGE, target, verifyMessage } from "./page";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const fail = (message: string) => Promise.resolve({ status: "error" as const, error: { code: "internal", message } });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };

const entry = (id: number, extra: Record<string, unknown> = {}) => ({
  id: String(id),
  at_ms: 1_700_000_000_000 + id * 1000,
  kind: "decided",
  server: "fs",
  tool: "write_file",
  conversation: null,
  call_ref: "c0ffee",
  actor: "policy:r1",
  summary: `allow #${id}`,
  detail: `{\n  "decision": "allow",\n  "n": ${id}\n}`,
  hash: "ab".repeat(32),
  ...extra,
});
const page = (ids: number[], next_before: string | null = null, extra: Record<string, unknown> = {}) =>
  ({ entries: ids.map((i) => entry(i, extra)), next_before });

let root: HTMLElement;
let unmount: () => void;

async function mount() {
  unmount = mountAudit(root);
  await flush();
}

const ids = () => Array.from(root.querySelectorAll<HTMLElement>(".audit-entry")).map((e) => e.dataset.id);
const button = (cls: string) => root.querySelector<HTMLButtonElement>(`.${cls}`)!;

beforeEach(() => {
  vi.clearAllMocks();
  root = document.createElement("main");
  document.body.replaceChildren(root);
});
afterEach(() => {
  unmount?.();
  vi.useRealTimers();
});

describe("helpers", () => {
  it("names the target and formats times", () => {
    expect(target({ server: "fs", tool: "read" })).toBe("fs › read");
    expect(target({ server: "fs", tool: null })).toBe("fs");
    expect(target({ server: null, tool: null })).toBe("—");
    expect(formatTime(new Date(2024, 1, 29, 7, 5, 9).getTime())).toBe("2024-02-29 07:05:09");
  });

  it("reads verification results as sentences", () => {
    expect(verifyMessage({ ok: true, rows: 0, first_bad: null, problem: null, head: null })).toBe("Chain intact: 0 entries.");
    expect(verifyMessage({ ok: true, rows: 1, first_bad: null, problem: null, head: "0123456789abcdef0123" }))
      .toBe("Chain intact: 1 entry, head 0123456789abcdef…");
    expect(verifyMessage({ ok: false, rows: 5, first_bad: "3", problem: "it was edited", head: null }))
      .toBe("Chain broken at entry #3: it was edited.");
  });
});

describe("mountAudit", () => {
  it("lists entries newest first with their facts, details as text", async () => {
    m.auditEntries.mockImplementation(() => ok(page([3, 2, 1], null, { detail: '<img src=x onerror="alert(1)">' })));
    await mount();
    expect(m.auditEntries).toHaveBeenCalledWith(null, null, PAGE);
    expect(root.querySelector("h1")?.textContent).toBe("Audit");
    expect(ids()).toEqual(["3", "2", "1"]);
    const first = root.querySelector(".audit-entry")!;
    expect(first.classList.contains("kind-decided")).toBe(true);
    expect(first.querySelector(".audit-kind")?.textContent).toBe("decided");
    expect(first.querySelector(".audit-target")?.textContent).toBe("fs › write_file");
    expect(first.querySelector(".audit-actor")?.textContent).toBe("policy:r1");
    expect(first.querySelector(".audit-summary")?.textContent).toBe("allow #3");
    expect(first.querySelector("time")?.getAttribute("datetime")).toBe(new Date(1_700_000_003_000).toISOString());
    const details = first.querySelector("details")!;
    expect(details.open).toBe(false);
    expect(details.querySelector(".audit-detail")?.textContent).toBe('<img src=x onerror="alert(1)">');
    expect(root.querySelector("img")).toBeNull();
    expect(Array.from(details.querySelectorAll("dt")).map((d) => d.textContent)).toEqual(["Call", "Hash"]);
    expect(button("audit-more-button").hidden).toBe(true);
    expect(root.querySelector<HTMLElement>(".audit-empty")!.hidden).toBe(true);
  });

  it("does not trust the kind as a class name", async () => {
    m.auditEntries.mockImplementation(() => ok(page([1], null, { kind: "x onclick" })));
    await mount();
    expect(root.querySelector(".audit-entry")?.className).toBe("audit-entry kind-other");
  });

  it("loads more from where the last page ended", async () => {
    m.auditEntries.mockImplementationOnce(() => ok(page([5, 4], "4"))).mockImplementationOnce(() => ok(page([3, 2, 1])));
    await mount();
    const more = button("audit-more-button");
    expect(more.hidden).toBe(false);
    more.click();
    await flush();
    expect(m.auditEntries).toHaveBeenLastCalledWith(null, "4", PAGE);
    expect(ids()).toEqual(["5", "4", "3", "2", "1"]);
    expect(more.hidden).toBe(true);
  });

  it("searches after typing stops, starting over", async () => {
    vi.useFakeTimers();
    m.auditEntries.mockImplementationOnce(() => ok(page([5, 4], "4"))).mockImplementation(() => ok(page([2])));
    await mount();
    const search = root.querySelector<HTMLInputElement>(".audit-search")!;
    search.value = "wri";
    search.dispatchEvent(new Event("input"));
    search.value = " write_file ";
    search.dispatchEvent(new Event("input"));
    expect(m.auditEntries).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(300);
    await flush();
    expect(m.auditEntries).toHaveBeenCalledTimes(2);
    expect(m.auditEntries).toHaveBeenLastCalledWith("write_file", null, PAGE);
    expect(ids()).toEqual(["2"]);
  });

  it("drops the answer to a search that was overtaken", async () => {
    let slow: (v: unknown) => void = () => {};
    m.auditEntries
      .mockImplementationOnce(() => new Promise((r) => { slow = r; }))
      .mockImplementationOnce(() => ok(page([9])));
    unmount = mountAudit(root);
    button("audit-refresh").click();
    await flush();
    slow({ status: "ok", data: page([1]) });
    await flush();
    expect(ids()).toEqual(["9"]);
  });

  it("says when there is nothing, and when nothing matches", async () => {
    m.auditEntries.mockImplementation(() => ok(page([])));
    await mount();
    expect(root.querySelector(".audit-empty h2")?.textContent).toBe("Nothing audited yet");
    vi.useFakeTimers();
    const search = root.querySelector<HTMLInputElement>(".audit-search")!;
    search.value = "nope";
    search.dispatchEvent(new Event("input"));
    await vi.advanceTimersByTimeAsync(300);
    await flush();
    expect(root.querySelector(".audit-empty h2")?.textContent).toBe("No matching entries");
  });

  it("shows errors as an alert", async () => {
    m.auditEntries.mockImplementation(() => fail("database error: <b>locked</b>"));
    await mount();
    const alert = root.querySelector<HTMLElement>("[role=alert]")!;
    expect(alert.hidden).toBe(false);
    expect(alert.textContent).toBe("database error: <b>locked</b>");
    expect(alert.querySelector("b")).toBeNull();
  });

  it("verifies the chain and shows the verdict", async () => {
    m.auditEntries.mockImplementation(() => ok(page([1])));
    m.verifyAudit.mockImplementationOnce(() => ok({ ok: true, rows: 1, first_bad: null, problem: null, head: "f".repeat(64) }));
    await mount();
    const status = root.querySelector<HTMLElement>(".audit-status")!;
    expect(status.hidden).toBe(true);
    button("audit-verify").click();
    expect(status.textContent).toBe("Verifying…");
    expect(button("audit-verify").disabled).toBe(true);
    await flush();
    expect(status.textContent).toBe(`Chain intact: 1 entry, head ${"f".repeat(16)}…`);
    expect(status.classList.contains("ok")).toBe(true);
    expect(button("audit-verify").disabled).toBe(false);

    m.verifyAudit.mockImplementationOnce(() => ok({ ok: false, rows: 4, first_bad: "2", problem: "its contents do not match its hash: it was edited", head: null }));
    button("audit-verify").click();
    await flush();
    expect(status.textContent).toBe("Chain broken at entry #2: its contents do not match its hash: it was edited.");
    expect(status.classList.contains("bad")).toBe(true);
    expect(status.classList.contains("ok")).toBe(false);

    m.verifyAudit.mockImplementationOnce(() => fail("database error"));
    button("audit-verify").click();
    await flush();
    expect(status.textContent).toBe("database error");
    expect(status.classList.contains("bad")).toBe(true);
  });
});
