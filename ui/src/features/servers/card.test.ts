// The server card as mountServers renders it: the "insecure (dev)" badge (AU-10) appears on a
// remote server with allow insecure (development) on, and on no other card.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ listServers: vi.fn(), credentials: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({
  commands: m,
  events: { hostChanged: { listen: vi.fn(() => Promise.resolve(() => {})) } },
}));

import { mountServers } from "./page";

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const status = { kind: "stopped", detail: "", tools: null, retry_at_ms: null, stderr_tail: [], reason: null, cap_bytes: null, protocol: null };
const row = (name: string, transport: "stdio" | "http", allow_insecure: boolean) => ({
  name, transport, summary: transport === "http" ? `http://dev.example.test/${name}` : "/bin/true",
  enabled: true, trust: "trusted", status, missing_secrets: [], review: 0,
  sandboxed: transport === "stdio" ? false : null, allow_insecure, always_on: false,
});

let root: HTMLElement;
let unmount: () => void;
beforeEach(() => {
  root = document.createElement("main");
  document.body.append(root);
  m.listServers.mockResolvedValue({
    status: "ok",
    data: [row("local", "stdio", false), row("devbox", "http", true), row("prod", "http", false)],
  });
  m.credentials.mockResolvedValue({ status: "ok", data: { store: "memory", providers: [], servers: [] } });
});
afterEach(() => {
  unmount?.();
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("the server card", () => {
  it("names the negotiated protocol revision of a running server, and none when it is down", async () => {
    const running = { ...status, kind: "running", tools: 3, protocol: "2026-07-28" };
    m.listServers.mockResolvedValue({
      status: "ok",
      data: [{ ...row("modern", "http", false), status: running }, row("local", "stdio", false)],
    });
    unmount = mountServers(root);
    await flush();
    expect(root.querySelector('.server[data-name="modern"] .head .protocol')?.textContent).toBe("protocol 2026-07-28");
    expect(root.querySelector('.server[data-name="local"] .protocol')).toBeNull();
  });

  it("shows an \"insecure (dev)\" badge only where allow insecure (development) is on", async () => {
    unmount = mountServers(root);
    await flush();
    const badge = root.querySelector('.server[data-name="devbox"] .head .insecure-badge');
    expect(badge?.textContent).toBe("insecure (dev)");
    expect(badge?.classList.contains("bad")).toBe(true);
    expect(badge?.getAttribute("title")).toContain("clear text");
    expect(root.querySelector('.server[data-name="prod"] .insecure-badge')).toBeNull();
    expect(root.querySelector('.server[data-name="local"] .insecure-badge')).toBeNull();
  });

  it("drops the badge when the setting is turned off", async () => {
    unmount = mountServers(root);
    await flush();
    m.listServers.mockResolvedValue({ status: "ok", data: [row("devbox", "http", false)] });
    const listen = (await import("../../ipc/bindings")).events.hostChanged.listen as unknown as ReturnType<typeof vi.fn>;
    const onChange = listen.mock.calls[0][0] as () => void;
    vi.useFakeTimers();
    onChange();
    vi.advanceTimersByTime(150);
    vi.useRealTimers();
    await flush();
    expect(root.querySelector('.server[data-name="devbox"]')).not.toBeNull();
    expect(root.querySelector('.server[data-name="devbox"] .insecure-badge')).toBeNull();
  });
});
