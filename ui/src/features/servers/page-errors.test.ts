// The servers page's error line: an action that failed says why, and the re-read of the list
// that every action triggers does not wipe it; a list that could not be read says so until it
// can be read again.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  listServers: vi.fn(), credentials: vi.fn(), catalogCosts: vi.fn(), startServer: vi.fn(), stopServer: vi.fn(),
}));
const host = vi.hoisted(() => ({ change: () => {} }));
vi.mock("../../ipc/bindings", () => ({
  commands: m,
  events: {
    hostChanged: {
      listen: vi.fn((cb: () => void) => {
        host.change = cb;
        return Promise.resolve(() => {});
      }),
    },
  },
}));

import { mountServers } from "./page";

const flush = async () => { for (let i = 0; i < 30; i++) await Promise.resolve(); };
const status = { kind: "stopped", detail: "", tools: null, retry_at_ms: null, stderr_tail: [], reason: null, cap_bytes: null, protocol: null };
const row = { name: "fs", transport: "stdio", summary: "/bin/true", enabled: true, trust: "trusted", status, missing_secrets: [], review: 0,
  sandboxed: false, allow_insecure: false, always_on: false };
const shown = () => {
  const e = root.querySelector(".error") as HTMLElement;
  return e.hidden ? null : e.textContent;
};

let root: HTMLElement;
let unmount: () => void;
beforeEach(() => {
  root = document.createElement("main");
  document.body.append(root);
  m.listServers.mockResolvedValue({ status: "ok", data: [row] });
  m.credentials.mockResolvedValue({ status: "ok", data: { store: "memory", providers: [], servers: [] } });
  m.catalogCosts.mockResolvedValue({ status: "error", error: { code: "x", message: "no prices" } });
});
afterEach(() => {
  unmount?.();
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("the servers page's error line", () => {
  it("keeps a failed action's reason after the list is read again, until an action succeeds", async () => {
    unmount = mountServers(root);
    await flush();
    m.startServer.mockResolvedValueOnce({ status: "error", error: { code: "spawn", message: "could not start fs: no such file" } });
    (root.querySelector('.server[data-name="fs"] button.start') as HTMLButtonElement).click();
    await flush();
    expect(m.listServers).toHaveBeenCalledTimes(2);
    expect(shown()).toBe("could not start fs: no such file");
    m.startServer.mockResolvedValueOnce({ status: "ok", data: null });
    (root.querySelector('.server[data-name="fs"] button.start') as HTMLButtonElement).click();
    await flush();
    expect(shown()).toBeNull();
  });

  it("says the list could not be read, and clears it once it can", async () => {
    m.listServers.mockResolvedValueOnce({ status: "error", error: { code: "io", message: "config unreadable" } });
    unmount = mountServers(root);
    await flush();
    expect(shown()).toBe("config unreadable");
    // The host says something changed: the list is read again, and now it can be.
    vi.useFakeTimers();
    host.change();
    vi.advanceTimersByTime(150);
    vi.useRealTimers();
    await flush();
    expect(m.listServers).toHaveBeenCalledTimes(2);
    expect(shown()).toBeNull();
    expect(root.querySelector('.server[data-name="fs"]')).not.toBeNull();
  });
});
