// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import { AppBridge, toMcpResult } from "./bridge";
import type { BridgeDeps } from "./bridge";
import { MESSAGE_MAX_BYTES, RateLimiter, STRIKES_MAX, clampHeight, HEIGHT_MAX, HEIGHT_MIN } from "./limits";
import { appUrl, viewOf } from "./frame";

function setup(opts: { limiter?: RateLimiter; call?: BridgeDeps["callTool"] } = {}) {
  const sent: Record<string, unknown>[] = [];
  const frame = { postMessage: (m: Record<string, unknown>) => sent.push(m) } as unknown as Window;
  const deps = {
    callTool: opts.call ?? vi.fn(async () => ({ ok: true as const, result: { content: [{ type: "text", text: "ok" }] } })),
    showLink: vi.fn(),
    log: vi.fn(),
    resize: vi.fn(),
    closed: vi.fn(),
  };
  const bridge = new AppBridge(() => frame, { toolName: "show", arguments: { a: 1 }, result: { content: [] } }, deps, opts.limiter);
  const send = (data: unknown, source: unknown = frame) => bridge.handle({ data, source } as MessageEvent);
  const init = () => send({ jsonrpc: "2.0", id: 0, method: "ui/initialize", params: { protocolVersion: "2026-01-26" } });
  return { sent, deps, bridge, send, init, frame };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("the app bridge", () => {
  it("initializes once, then sends the tool input and result", () => {
    const { sent, send, init } = setup();
    init();
    expect(sent[0]).toMatchObject({ id: 0, result: { hostInfo: { name: "Switchboard" }, protocolVersion: "2026-01-26" } });
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(sent.map((m) => m.method)).toEqual([undefined, "ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect(sent[1].params).toEqual({ arguments: { a: 1 } });
    init();
    expect(sent[3]).toMatchObject({ id: 0, error: { code: -32600 } });
  });

  it("ignores messages from any window but its frame", () => {
    const { sent, send } = setup();
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize" }, window);
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize" }, null);
    expect(sent).toEqual([]);
  });

  it("runs tool calls through the host one at a time", async () => {
    let finish: (v: { ok: true; result: { content: unknown[] } }) => void = () => {};
    const call = vi.fn(() => new Promise<{ ok: true; result: { content: unknown[] } }>((r) => (finish = r)));
    const { sent, send, init } = setup({ call });
    init();
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bump", arguments: { by: 5 } } });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bump", arguments: {} } });
    expect(call).toHaveBeenCalledTimes(1);
    expect(call).toHaveBeenCalledWith("bump", { by: 5 });
    expect(sent.find((m) => m.id === 2)).toMatchObject({ error: { code: -32000 } });
    finish({ ok: true, result: { content: [{ type: "text", text: "bumped" }] } });
    await tick();
    expect(sent.find((m) => m.id === 1)).toMatchObject({ result: { content: [{ text: "bumped" }] } });
  });

  it("refuses calls before initialize and with bad params, and unknown methods", async () => {
    const { sent, send, init, deps } = setup();
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bump" } });
    init();
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 3 } });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x", arguments: [1] } });
    send({ jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "file:///etc/passwd" } });
    await tick();
    expect(deps.callTool).not.toHaveBeenCalled();
    expect(sent.find((m) => m.id === 1)).toMatchObject({ error: { code: -32600 } });
    expect(sent.find((m) => m.id === 2)).toMatchObject({ error: { code: -32602 } });
    expect(sent.find((m) => m.id === 3)).toMatchObject({ error: { code: -32602 } });
    expect(sent.find((m) => m.id === 4)).toMatchObject({ error: { code: -32601 } });
  });

  it("shows links without following them, and only web links", () => {
    const { sent, send, init, deps } = setup();
    init();
    send({ jsonrpc: "2.0", id: 1, method: "ui/open-link", params: { url: "https://example.com/a" } });
    send({ jsonrpc: "2.0", id: 2, method: "ui/open-link", params: { url: "javascript:alert(1)" } });
    expect(deps.showLink).toHaveBeenCalledTimes(1);
    expect(deps.showLink).toHaveBeenCalledWith("https://example.com/a");
    expect(sent.find((m) => m.id === 2)).toMatchObject({ error: { code: -32602 } });
  });

  it("refuses oversized messages and cuts off a frame that keeps breaking the limits", () => {
    const { sent, send, init, deps, bridge } = setup({ limiter: new RateLimiter(1e9, 1e9) });
    init();
    send({ jsonrpc: "2.0", id: 9, method: "ping", params: { pad: "x".repeat(MESSAGE_MAX_BYTES) } });
    expect(sent.find((m) => m.id === 9)).toMatchObject({ error: { code: -32600 } });
    for (let i = 0; i < STRIKES_MAX; i++) send("not json-rpc");
    expect(deps.closed).toHaveBeenCalledTimes(1);
    expect(bridge.closed).not.toBeNull();
    const before = sent.length;
    send({ jsonrpc: "2.0", id: 10, method: "ping" });
    expect(sent.length).toBe(before);
  });

  it("rate-limits a flood", () => {
    let now = 0;
    const { sent, send, init } = setup({ limiter: new RateLimiter(5, 1, () => now) });
    init();
    for (let i = 1; i <= 10; i++) send({ jsonrpc: "2.0", id: i, method: "ping" });
    expect(sent.length).toBe(5);
    now = 2000;
    send({ jsonrpc: "2.0", id: 11, method: "ping" });
    expect(sent.length).toBe(6);
  });

  it("logs and resizes within bounds", () => {
    const { send, init, deps } = setup();
    init();
    send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hello" } });
    send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 1e9 } });
    expect(deps.log).toHaveBeenCalledWith("hello");
    expect(deps.resize).toHaveBeenCalledWith(HEIGHT_MAX);
    expect(clampHeight(-5)).toBe(HEIGHT_MIN);
    expect(clampHeight("10")).toBeNull();
  });
});

describe("app helpers", () => {
  it("finds the view in a result and addresses the jail", () => {
    expect(viewOf({ content: [{ type: "text" }, { type: "resource_link", uri: "ui://a/app" }] })).toBe("ui://a/app");
    expect(viewOf({ content: [{ type: "resource_link", uri: "https://a" }] })).toBeNull();
    // The address names the frame Rust opened and nothing else (AP-10).
    expect(appUrl("0f1e", "tauri:")).toBe("switchboard-app://localhost/?frame=0f1e");
    expect(appUrl("0f1e", "https:")).toBe("http://switchboard-app.localhost/?frame=0f1e");
  });

  it("gives results MCP's shape", () => {
    expect(
      toMcpResult({
        content: [
          { type: "resource_link", uri: "ui://a", name: "a", mime_type: "text/html;profile=mcp-app" },
          { type: "resource", uri: "ui://b", mime_type: null, text: "t", blob: null },
        ],
        structured_content: '{"n":1}',
        is_error: false,
      }),
    ).toEqual({
      content: [
        { type: "resource_link", uri: "ui://a", name: "a", mimeType: "text/html;profile=mcp-app" },
        { type: "resource", resource: { uri: "ui://b", text: "t", blob: null } },
      ],
      structuredContent: { n: 1 },
      isError: false,
    });
  });
});
