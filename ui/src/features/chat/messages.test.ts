// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import type { ChatEventDto, MessageDto } from "../../ipc/bindings";
import type { MountOptions } from "../apps/frame";
import { LiveTurn, renderMessages } from "./messages";

// The real frame, with a record of what each app was given.
const mounted = vi.hoisted(() => [] as MountOptions[]);
vi.mock("../apps/frame", async (original) => {
  const real = await original<typeof import("../apps/frame")>();
  return { ...real, mountApp: (o: MountOptions) => (mounted.push(o), real.mountApp(o)) };
});

// Rust opens each app's frame (AP-10): here it answers with frame ids in turn.
const opened = vi.hoisted(() => [] as unknown[][]);
vi.mock("../../ipc/bindings", () => ({
  commands: {
    openAppFrame: async (...a: unknown[]) => (opened.push(a), { status: "ok" as const, data: `f${opened.length}` }),
    appNavigated: async () => ({ status: "ok" as const, data: true }),
  },
}));
const flush = async () => { for (let i = 0; i < 10; i++) await Promise.resolve(); };

/** A turn with one call of `demo › show`, answered with `app_view`. */
function turn(appView: string | null, server: string | null = "demo", edited: string | null = null, log = document.createElement("div")): HTMLElement {
  const live = new LiveTurn(log, 0);
  const events: ChatEventDto[] = [
    { event: "tool_call_proposed", call_id: "c1", name: "demo__show", server, tool: server ? "show" : null, arguments: JSON.stringify({ n: 1 }) },
    { event: "tool_running", call_id: "c1", edited_arguments: edited },
    { event: "tool_result", call_id: "c1", is_error: false, text: "shown", duration_ms: 5, app_view: appView },
  ];
  for (const e of events) live.handle(e);
  return log;
}

describe("a chat tool card", () => {
  it("shows the call's MCP App in its jail when the result has a view", async () => {
    opened.length = 0;
    const log = turn("ui://demo/view.html");
    await flush();
    const frame = log.querySelector(".tool-card .tc-app iframe");
    expect(frame).not.toBeNull();
    expect(frame!.getAttribute("sandbox")).toBe("allow-scripts");
    // The frame Rust opened for this app, shown in the turn's conversation (none yet: new chat).
    expect(opened).toEqual([["demo", "ui://demo/view.html", null, null]]);
    expect(frame!.getAttribute("src")).toBe("http://switchboard-app.localhost/?frame=f1");
    expect(log.querySelector(".tc-result")!.textContent).toContain("shown");
  });

  it("shows no app without a view, or when the call names no server", () => {
    expect(turn(null).querySelector(".app-view")).toBeNull();
    expect(turn("ui://demo/view.html", null).querySelector(".app-view")).toBeNull();
  });

  it("gives the app its server, tool and the arguments that ran, the person's edit included", () => {
    mounted.length = 0;
    turn("ui://demo/view.html");
    expect(mounted).toHaveLength(1);
    expect(mounted[0]).toMatchObject({ server: "demo", uri: "ui://demo/view.html", toolName: "show", arguments: { n: 1 } });
    mounted.length = 0;
    const log = turn("ui://demo/view.html", "demo", JSON.stringify({ n: 2 }));
    expect(log.querySelector(".tc-app .app-view")).not.toBeNull();
    expect(mounted[0]!.arguments).toEqual({ n: 2 });
  });
});

describe("the conversation rendered after a turn", () => {
  const stored: MessageDto[] = [
    { id: "1", role: "user", status: "complete", error: null, model: null, parts: [{ type: "text", text: "show me" }] },
    { id: "2", role: "assistant", status: "complete", error: null, model: "m", parts: [{ type: "tool_call", id: "c1", name: "demo__show", arguments: "{}" }] },
    { id: "3", role: "user", status: "complete", error: null, model: null, parts: [{ type: "tool_result", call_id: "c1", is_error: false, text: "shown" }] },
  ];

  it("keeps the app the turn showed, once", () => {
    const log = document.createElement("div");
    turn("ui://demo/view.html", "demo", null, log);
    mounted.length = 0;
    renderMessages(log, stored);
    expect(log.querySelectorAll(".tool-card .tc-app .app-view")).toHaveLength(1);
    expect(mounted[0]).toMatchObject({ server: "demo", uri: "ui://demo/view.html", toolName: "show" });
    // A later render (another conversation opened and this one again) has no live turn's app.
    renderMessages(log, stored);
    expect(log.querySelectorAll(".app-view")).toHaveLength(0);
  });

  it("shows a live turn's app again in the conversation the store names", () => {
    const log = document.createElement("div");
    turn("ui://demo/view.html", "demo", null, log);
    mounted.length = 0;
    renderMessages(log, stored, { conversation: "c-9" });
    expect(mounted[0]).toMatchObject({ server: "demo", conversation: "c-9" });
  });

  it("shows no app for a call the turn showed none for", () => {
    const log = document.createElement("div");
    turn(null, "demo", null, log);
    renderMessages(log, stored);
    expect(log.querySelectorAll(".app-view")).toHaveLength(0);
  });
});

describe("a hand-over", () => {
  it("says which agent took over, keeps the note as text, and starts a new bubble", () => {
    const log = document.createElement("div");
    const live = new LiveTurn(log, 0);
    live.handle({ event: "text_delta", text: "Over to the coder." });
    live.handle({ event: "handed_over", from: "planner", to: "coder", note: "<b>fix</b> the build" });
    live.handle({ event: "text_delta", text: "Coder here." });
    live.render();
    expect(log.querySelector(".chat-handover")?.textContent).toBe("Agent planner handed the conversation over to agent coder. Its note: <b>fix</b> the build");
    expect(log.querySelector(".chat-handover b")).toBeNull();
    const bubbles = log.querySelectorAll(".msg-assistant");
    expect(Array.from(bubbles).map((b) => b.textContent)).toEqual(["Over to the coder.", "Coder here."]);
  });
});

describe("notices of a turn", () => {
  it("show the tools' cost, the redaction and the over-budget warning once each, updated in place", () => {
    const log = document.createElement("div");
    const live = new LiveTurn(log, 0);
    live.handle({ event: "tools_cost", tools: 3, tokens: 1200, estimate: false, context_window: 128000, share_percent: 0.9375 });
    live.handle({ event: "tools_cost", tools: 3, tokens: 1250, estimate: true, context_window: 128000, share_percent: 0.98 });
    live.handle({ event: "redacted", counts: [{ kind: "email", count: 2, label: "2 e-mail addresses" }] });
    live.handle({ event: "redacted", counts: [{ kind: "email", count: 2, label: "2 e-mail addresses" }, { kind: "api_key", count: 1, label: "1 API key" }] });
    live.handle({ event: "tools_over_budget", tokens: 40000, context_window: 128000, share_percent: 31.25, limit_percent: 25 });
    expect(log.querySelectorAll(".chat-tools-cost")).toHaveLength(1);
    expect(log.querySelector(".chat-tools-cost")?.textContent).toBe("Tools: ≈1250 tokens for 3 definitions (1.0% of the context)");
    expect(log.querySelectorAll(".chat-redacted")).toHaveLength(1);
    expect(log.querySelector(".chat-redacted")?.textContent).toContain("Redacted before sending: 2 e-mail addresses, 1 API key.");
    expect(log.querySelector(".chat-tools-over")?.getAttribute("role")).toBe("alert");
    expect(log.querySelector(".chat-tools-over")?.textContent).toContain("31% of the model's context (more than 25%)");
  });
});
