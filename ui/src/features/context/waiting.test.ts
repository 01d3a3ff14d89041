import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ listServers: vi.fn(), openServer: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { waitingBar } from "./waiting";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const row = (name: string, kind: string, extra: Record<string, unknown> = {}) =>
  ({ name, enabled: true, trust: "trusted", status: { kind }, ...extra });

beforeEach(() => {
  m.listServers.mockReset();
  m.openServer.mockReset();
  m.openServer.mockImplementation(() => ok(null));
});
afterEach(() => document.body.replaceChildren());

describe("waitingBar", () => {
  it("names only approved, enabled servers that are not running, and starts them on click", async () => {
    m.listServers.mockImplementation(() => ok([
      row("fs", "stopped"),
      row("mem", "stopped"),
      row("up", "running"),
      row("off", "stopped", { enabled: false }),
      row("new", "stopped", { trust: "not_approved" }),
    ]));
    const bar = waitingBar("resources", () => {});
    document.body.append(bar.element);
    await bar.update();
    expect(bar.element.hidden).toBe(false);
    expect(bar.element.textContent).toContain("fs, mem");
    expect(bar.element.textContent).not.toMatch(/up|off|new/);
    expect(m.openServer).not.toHaveBeenCalled();
    bar.element.querySelector<HTMLButtonElement>(".start-waiting")?.click();
    await flush();
    expect(m.openServer.mock.calls.map((c) => c[0])).toEqual(["fs", "mem"]);
  });

  it("stays hidden when everything runs, and reports a start that fails", async () => {
    m.listServers.mockImplementation(() => ok([row("up", "running")]));
    const errors: string[] = [];
    const bar = waitingBar("prompts", (e) => errors.push(e));
    await bar.update();
    expect(bar.element.hidden).toBe(true);
    m.listServers.mockImplementation(() => ok([row("fs", "stopped")]));
    m.openServer.mockImplementation(() => Promise.resolve({ status: "error", error: { message: "fs is disabled" } }));
    await bar.update();
    bar.element.querySelector<HTMLButtonElement>(".start-waiting")?.click();
    await flush();
    expect(errors).toEqual(["fs is disabled"]);
  });
});
