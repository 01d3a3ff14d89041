// The window's side of an MCP App's postMessage bridge (ext-apps, SEP-1865): JSON-RPC 2.0 with
// one frame. Everything the frame sends is untrusted. It is accepted only from that frame's
// window, measured and rate-limited first (limits.ts), and then the frame can do only what a
// person could do by hand in the same panel:
// - `tools/call` runs a tool of the app's own server as the app's own call (`run_app_tool`,
//   AP-10): Rust refuses tools its server does not show to apps and parks the rest for the
//   approval dialog, which names the app (AP-01, AP-03); one call at a time;
// - `ui/open-link` is shown to the person, who may open it with the app's one URL opener in
//   Rust (`open_app_link`, which checks it again, RN-02); the window never follows it itself;
// - `notifications/message` lines go into the panel's log as text;
// - `ui/notifications/size-changed` resizes the frame within bounds.
// Anything else is answered "method not found". The official `@modelcontextprotocol/ext-apps`
// AppBridge speaks the same messages but expects an MCP client object in the window with
// direct access to the server; here every call must go through Rust, so the few messages are
// handled by hand.
import { CALLS_IN_FLIGHT, LOG_LINE_MAX, MESSAGE_MAX_BYTES, RateLimiter, STRIKES_MAX, clampHeight, messageSize } from "./limits";

/** A tool result in MCP's shape, as the app expects it. */
export interface McpToolResult {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export type CallOutcome = { ok: true; result: McpToolResult } | { ok: false; message: string };

/** What the bridge may do in the window; the frame reaches nothing else. */
export interface BridgeDeps {
  callTool(name: string, args: Record<string, unknown>): Promise<CallOutcome>;
  /** The app asked to open a link: show it to the person (it is never followed here). */
  showLink(url: string): void;
  log(line: string): void;
  resize(height: number): void;
  /** The frame broke the limits and is cut off. */
  closed(why: string): void;
}

/** What the app is shown when it starts. */
export interface AppInput {
  toolName: string;
  arguments: Record<string, unknown>;
  result: McpToolResult | null;
}

export const HOST_INFO = { name: "Switchboard", version: "0.1.0" };
export const APPS_PROTOCOL = "2026-01-26";
const LINK_MAX = 2048;
const TOOL_NAME_MAX = 128;

type Id = string | number;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INVALID_REQUEST = -32600;
const REFUSED = -32000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class AppBridge {
  private initialized = false;
  private started = false;
  private inFlight = 0;
  private strikes = 0;
  private closedFor: string | null = null;

  constructor(
    private readonly frame: () => Window | null,
    private readonly input: AppInput,
    private readonly deps: BridgeDeps,
    private readonly limiter = new RateLimiter(),
  ) {}

  /** Whether the bridge was cut off, and why. */
  get closed(): string | null {
    return this.closedFor;
  }

  /** Handles one `message` event of the window; events from anywhere but the frame are ignored. */
  handle(ev: MessageEvent): void {
    const frame = this.frame();
    if (frame === null || ev.source !== frame || this.closedFor !== null) return;
    if (!this.limiter.take()) return this.strike("it sent messages too fast");
    const size = messageSize(ev.data);
    if (size === null) return this.strike("it sent a message that is not JSON");
    const m = ev.data as unknown;
    const id = isObject(m) && (typeof m.id === "string" || typeof m.id === "number") ? (m.id as Id) : null;
    if (size > MESSAGE_MAX_BYTES) {
      if (id !== null) this.error(id, INVALID_REQUEST, `messages are limited to ${MESSAGE_MAX_BYTES} bytes`);
      return this.strike("it sent a message over the size limit");
    }
    if (!isObject(m) || m.jsonrpc !== "2.0") return this.strike("it sent a message that is not JSON-RPC");
    if (typeof m.method !== "string") return; // a response to us; the host asks nothing yet
    const params = isObject(m.params) ? m.params : {};
    if (id === null) this.notification(m.method, params);
    else void this.request(id, m.method, params);
  }

  /** Cuts the frame off for `why` (the window saw it do what an app may not). */
  close(why: string): void {
    if (this.closedFor !== null) return;
    this.closedFor = why;
    this.deps.closed(why);
  }

  private strike(why: string): void {
    this.strikes += 1;
    if (this.strikes >= STRIKES_MAX && this.closedFor === null) {
      this.closedFor = why;
      this.deps.closed(why);
    }
  }

  private post(msg: Record<string, unknown>): void {
    if (this.closedFor !== null) return;
    // The frame's origin is opaque ("null"), so no target origin can name it; the message goes
    // to that one window object only.
    this.frame()?.postMessage({ jsonrpc: "2.0", ...msg }, "*");
  }

  private reply(id: Id, result: unknown): void {
    this.post({ id, result });
  }

  private error(id: Id, code: number, message: string): void {
    this.post({ id, error: { code, message } });
  }

  private notify(method: string, params: unknown): void {
    this.post({ method, params });
  }

  private notification(method: string, params: Record<string, unknown>): void {
    switch (method) {
      case "ui/notifications/initialized":
        if (!this.initialized || this.started) return;
        this.started = true;
        this.notify("ui/notifications/tool-input", { arguments: this.input.arguments });
        if (this.input.result) this.notify("ui/notifications/tool-result", this.input.result);
        return;
      case "ui/notifications/size-changed": {
        const height = clampHeight(params.height);
        if (height !== null) this.deps.resize(height);
        return;
      }
      case "notifications/message": {
        const data = typeof params.data === "string" ? params.data : messageText(params.data);
        this.deps.log(data.slice(0, LOG_LINE_MAX));
        return;
      }
      default:
        return;
    }
  }

  private async request(id: Id, method: string, params: Record<string, unknown>): Promise<void> {
    if (method === "ping") return this.reply(id, {});
    if (method === "ui/initialize") {
      if (this.initialized) return this.error(id, INVALID_REQUEST, "already initialized");
      this.initialized = true;
      return this.reply(id, {
        protocolVersion: typeof params.protocolVersion === "string" ? params.protocolVersion : APPS_PROTOCOL,
        hostInfo: HOST_INFO,
        hostCapabilities: { serverTools: {}, openLinks: {}, logging: {} },
        hostContext: {
          toolInfo: { tool: { name: this.input.toolName } },
          theme: globalThis.matchMedia?.("(prefers-color-scheme: dark)")?.matches ? "dark" : "light",
          displayMode: "inline",
          availableDisplayModes: ["inline"],
          platform: "desktop",
        },
      });
    }
    if (!this.initialized) return this.error(id, INVALID_REQUEST, "send ui/initialize first");
    switch (method) {
      case "tools/call":
        return this.callTool(id, params);
      case "ui/open-link": {
        const url = params.url;
        if (typeof url !== "string" || url.length > LINK_MAX || !/^https?:\/\//i.test(url)) {
          return this.error(id, INVALID_PARAMS, "only http and https links, up to 2048 characters");
        }
        // Shown to the person with an "Open in browser" button; the app is not told whether
        // they chose to open it.
        this.deps.showLink(url);
        return this.reply(id, {});
      }
      case "ui/request-display-mode":
        return this.reply(id, { mode: "inline" });
      default:
        return this.error(id, METHOD_NOT_FOUND, `${method.slice(0, 64)} is not available to apps here`);
    }
  }

  private async callTool(id: Id, params: Record<string, unknown>): Promise<void> {
    const name = params.name;
    const args = params.arguments ?? {};
    if (typeof name !== "string" || name === "" || name.length > TOOL_NAME_MAX || !isObject(args)) {
      return this.error(id, INVALID_PARAMS, "tools/call needs a tool name and an arguments object");
    }
    if (this.inFlight >= CALLS_IN_FLIGHT) {
      this.strike("it asked for calls while one was waiting");
      return this.error(id, REFUSED, "one call at a time: the last one is still waiting");
    }
    this.inFlight += 1;
    try {
      const r = await this.deps.callTool(name, args);
      if (r.ok) this.reply(id, r.result);
      else this.error(id, REFUSED, r.message);
    } finally {
      this.inFlight -= 1;
    }
  }
}

function messageText(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/** Our tool result DTO in MCP's shape. */
export function toMcpResult(r: {
  content: ({ type: string } & Record<string, unknown>)[];
  structured_content: string | null;
  is_error: boolean;
}): McpToolResult {
  const content = r.content.map((c) => {
    const { mime_type, ...rest } = c as Record<string, unknown>;
    const item = mime_type === undefined || mime_type === null ? rest : { ...rest, mimeType: mime_type };
    if (c.type !== "resource") return item;
    const { type, ...resource } = item;
    return { type, resource };
  });
  let structured: unknown;
  if (r.structured_content !== null) {
    try {
      structured = JSON.parse(r.structured_content);
    } catch {
      structured = undefined;
    }
  }
  return { content, ...(structured === undefined ? {} : { structuredContent: structured }), isError: r.is_error };
}
