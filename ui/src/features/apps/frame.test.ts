// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";

// Rust opens each app's frame (AP-10); here it answers with a fixed id.
const m = vi.hoisted(() => ({
  opened: [] as unknown[][],
  navigated: [] as string[],
}));
vi.mock("../../ipc/bindings", () => ({
  commands: {
    openAppFrame: async (...a: unknown[]) => (m.opened.push(a), { status: "ok" as const, data: "f1" }),
    appNavigated: async (f: string) => (m.navigated.push(f), { status: "ok" as const, data: true }),
    openAppLink: async () => ({ status: "ok" as const, data: null }),
  },
}));
const flush = async () => { for (let i = 0; i < 10; i++) await Promise.resolve(); };

import { mountApp } from "./frame";

describe("the app frame", () => {
  it("is sandboxed to scripts only, loads from the jail and reaches the host only through the bridge", async () => {
    const call = vi.fn(async () => ({ ok: true as const, result: { content: [] } }));
    const panel = mountApp({ server: "demo", uri: "ui://a/app.html", toolName: "show", arguments: {}, result: null, callTool: call });
    document.body.append(panel);
    await flush();
    const frame = panel.querySelector("iframe")!;
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.getAttribute("sandbox")).not.toContain("allow-same-origin");
    expect(frame.getAttribute("allow")).toBe("");
    // The address names the frame Rust opened, nothing else (AP-10).
    expect(frame.getAttribute("src")).toBe("http://switchboard-app.localhost/?frame=f1");
    expect(frame.hasAttribute("srcdoc")).toBe(false);
    // A message from this window (not the frame) is not the app speaking.
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } }, source: window }));
    await new Promise((r) => setTimeout(r, 0));
    expect(call).not.toHaveBeenCalled();
    panel.remove();
  });
});

describe("an app's frame (AP-10)", () => {
  it("is opened in Rust for the app, its calls name the frame, and a second document stops it", async () => {
    m.opened.length = 0;
    m.navigated.length = 0;
    const call = vi.fn(async () => ({ ok: true as const, result: { content: [] } }));
    const panel = mountApp({ server: "demo", uri: "ui://a/app.html", toolName: "show", arguments: {}, result: null, callTool: call, conversation: "c1", agent: "researcher" });
    document.body.append(panel);
    await flush();
    expect(m.opened).toEqual([["demo", "ui://a/app.html", "c1", "researcher"]]);
    const frame = panel.querySelector("iframe")!;
    const send = (data: unknown) => window.dispatchEvent(new MessageEvent("message", { data, source: frame.contentWindow }));
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bump", arguments: { by: 1 } } });
    await flush();
    expect(call).toHaveBeenCalledWith("f1", "bump", { by: 1 });
    // Its own document loads once; a second load is the app navigating away.
    frame.dispatchEvent(new Event("load"));
    expect(m.navigated).toEqual([]);
    frame.dispatchEvent(new Event("load"));
    await flush();
    expect(m.navigated).toEqual(["f1"]);
    expect(panel.querySelector("iframe")).toBeNull();
    expect(panel.querySelector(".app-status")!.textContent).toContain("navigated away");
    panel.remove();
  });
});

describe("the run panel", () => {
  it("shows an app when the result links a ui:// view, and nothing otherwise", async () => {
    const { runPanel } = await import("../catalog/run-panel");
    const tool = {
      name: "show", title: null, description: null, output_schema: null, hints: [], enabled: true, icon: null, findings: [], held: null,
      input_schema: JSON.stringify({ type: "object", properties: {} }),
    };
    const result = (uri: string) => ({
      status: "ok" as const,
      data: { content: [{ type: "resource_link" as const, uri, name: "v", mime_type: "text/html;profile=mcp-app" }], structured_content: null, is_error: false },
    });
    for (const [uri, shown] of [["ui://a/app.html", true], ["https://a/app.html", false]] as const) {
      const deps = {
        openRun: vi.fn(async () => "run-1"),
        run: vi.fn(async () => result(uri)),
        cancel: vi.fn(async () => true),
        read: vi.fn(async () => ({ status: "ok" as const, data: [] })),
      };
      const panel = runPanel("demo", tool as never, deps as never);
      document.body.append(panel);
      (panel.querySelector("button.run") as HTMLButtonElement).click();
      await new Promise((r) => setTimeout(r, 0));
      await new Promise((r) => setTimeout(r, 0));
      await flush();
      expect(panel.querySelector(".run-output .app-view iframe") !== null).toBe(shown);
      expect(deps.read).not.toHaveBeenCalled();
      panel.remove();
    }
  });

  it("shows the view a tool declares when its result links none", async () => {
    const { runPanel } = await import("../catalog/run-panel");
    const tool = {
      name: "show", title: null, description: null, output_schema: null, hints: [], enabled: true, icon: null, findings: [], held: null,
      input_schema: JSON.stringify({ type: "object", properties: {} }), ui_view: "ui://a/declared.html",
    };
    const deps = {
      openRun: vi.fn(async () => "run-1"),
      run: vi.fn(async () => ({ status: "ok" as const, data: { content: [{ type: "text" as const, text: "t" }], structured_content: null, is_error: false } })),
      cancel: vi.fn(async () => true),
      read: vi.fn(async () => ({ status: "ok" as const, data: [] })),
    };
    const panel = runPanel("demo", tool as never, deps as never);
    document.body.append(panel);
    (panel.querySelector("button.run") as HTMLButtonElement).click();
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    await flush();
    expect(m.opened.at(-1)).toEqual(["demo", "ui://a/declared.html", null, null]);
    panel.remove();
  });
});

describe("links an app asks for", () => {
  it("open only when the person clicks, through the opener", async () => {
    const openLink = vi.fn(async () => ({ status: "ok" as const }));
    const panel = mountApp({ server: "demo", uri: "ui://a", toolName: "t", arguments: {}, result: null, openLink });
    document.body.append(panel);
    await flush();
    const frame = panel.querySelector("iframe")!;
    const send = (data: unknown) => window.dispatchEvent(new MessageEvent("message", { data, source: frame.contentWindow }));
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    send({ jsonrpc: "2.0", id: 2, method: "ui/open-link", params: { url: "https://example.com/x" } });
    await new Promise((r) => setTimeout(r, 0));
    expect(panel.querySelector(".app-link")?.textContent).toContain("https://example.com/x");
    expect(openLink).not.toHaveBeenCalled();
    (panel.querySelector(".app-open-link") as HTMLButtonElement).click();
    expect(openLink).toHaveBeenCalledWith("https://example.com/x");
    panel.remove();
  });
});
