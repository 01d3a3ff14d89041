// An MCP App in a panel: the frame that shows it, the bridge that answers it, the log of what
// it said and the links it asked to open. The frame is `sandbox="allow-scripts"` (an opaque
// origin: no storage, no cookies, no access to this window) and loads from the app jail, a URI
// scheme of its own that Rust serves with a CSP allowing no network at all
// (src-tauri/src/apps.rs). The window never writes the app's HTML itself.
//
// An app acts as itself (AP-10): Rust opens a frame for it (`open_app_frame`, bound to the
// server, the document and where it is shown) and the jail serves that frame's document only.
// The app's calls name the frame (`run_app_tool`), so Rust knows which app asks, lets it call
// only tools its server shows to apps, and asks about them as the app's own. A frame that
// loads a second document navigated away from its own: it is cut off and reported
// (`app_navigated`), and Rust refuses whatever other document it asked for.
import { Channel } from "@tauri-apps/api/core";
import { attempt, generated, ipc, IpcFailure, outcome } from "../../ipc/client";
import type { ProgressDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { AppBridge, toMcpResult } from "./bridge";
import type { AppInput, CallOutcome, McpToolResult } from "./bridge";
import { LOG_LINES } from "./limits";
import "./apps.css";

/** The jail's scheme (src-tauri/src/apps.rs `SCHEME`). */
export const APP_SCHEME = "switchboard-app";
export const APP_MIME = "text/html;profile=mcp-app";

/** The address of frame `frame` in the jail: `switchboard-app://localhost/` where the app
 * itself is `tauri://localhost`, `http://switchboard-app.localhost/` on Windows. */
export function appUrl(frame: string, protocol: string = location.protocol): string {
  const q = new URLSearchParams({ frame }).toString();
  return protocol === "tauri:" ? `${APP_SCHEME}://localhost/?${q}` : `http://${APP_SCHEME}.localhost/?${q}`;
}

/** The `ui://` view a result points to: a resource link or an embedded resource. */
export function viewOf(result: { content: { type: string; uri?: unknown }[] }): string | null {
  for (const c of result.content) {
    if ((c.type === "resource_link" || c.type === "resource") && typeof c.uri === "string" && /^ui:\/\/./i.test(c.uri)) {
      return c.uri;
    }
  }
  return null;
}

/** Runs a tool of the app's own server as the app's call: Rust checks that its server shows
 * the tool to apps, then asks for approval (naming the app) first. */
export async function ipcCallTool(frame: string, name: string, args: Record<string, unknown>): Promise<CallOutcome> {
  const channel = new Channel<ProgressDto>();
  const r = await attempt(ipc.runAppTool(frame, name, JSON.stringify(args), channel));
  if (!(r instanceof IpcFailure)) return { ok: true, result: toMcpResult(r as Parameters<typeof toMcpResult>[0]) };
  return { ok: false, message: r.message };
}

type Opened = { status: "ok"; data: string } | { status: "error"; error: { message: string } };

export interface MountOptions {
  server: string;
  uri: string;
  toolName: string;
  arguments: Record<string, unknown>;
  result: McpToolResult | null;
  /** The conversation that shows the app, and the agent answering in it (their scope and
   * tightenings apply to the app's calls); neither under the person's own run. */
  conversation?: string | null;
  agent?: string | null;
  /** Test seams: opening the frame in Rust, the app's calls, and reporting a navigation. */
  openFrame?: (server: string, uri: string, conversation: string | null, agent: string | null) => Promise<Opened>;
  callTool?: (frame: string, name: string, args: Record<string, unknown>) => Promise<CallOutcome>;
  navigated?: (frame: string) => Promise<unknown>;
  /** Opens a link the person agreed to, through Rust's one URL opener (`open_app_link`). */
  openLink?: ((url: string) => Promise<{ status: "ok" } | { status: "error"; error: { message: string } }>) | null;
  /** Test seam: the window whose messages are listened to. */
  win?: Window;
}

type OpenLink = NonNullable<MountOptions["openLink"]>;

/** A panel showing the app; it stops listening once it leaves the document. */
export function mountApp(o: MountOptions): HTMLElement {
  const win = o.win ?? window;
  // Made once Rust opened the frame: the frame is put in the document with its address set,
  // so its first load is its own document and any later one a navigation.
  let frame: HTMLIFrameElement | null = null;
  let frameId: string | null = null;
  const slot = h("div", { class: "app-slot" });
  const log = h("ol", { class: "app-log", "aria-label": "What the app reported" });
  const links = h("div", { class: "app-links", "aria-live": "polite" });
  const status = h("p", { class: "app-status hint" }, `App ${o.uri} from ${o.server}; its tool calls ask for approval.`);
  const input: AppInput = { toolName: o.toolName, arguments: o.arguments, result: o.result };
  const call = o.callTool ?? ipcCallTool;
  const openFrame = o.openFrame ?? generated.openAppFrame;
  const navigated = o.navigated ?? generated.appNavigated;
  // By default Rust's `open_app_link`, which checks the URL again and uses the one opener.
  const openLink: OpenLink | null = o.openLink === undefined ? generated.openAppLink : o.openLink;

  // The app asked to open a link: the person sees it and decides; nothing opens without a click.
  const showLink = (url: string) => {
    const note = h("p", { class: "app-link" }, "The app asks to open ", h("code", {}, url));
    if (openLink) {
      const button = h("button", { class: "app-open-link" }, "Open in browser");
      button.addEventListener("click", () => {
        button.disabled = true;
        void openLink(url).then((x) => {
          const r = outcome(x);
          note.append(r instanceof IpcFailure ? h("span", { class: "error" }, ` ${r.message}`) : h("span", { class: "hint" }, " Opened."));

        });
      });
      note.append(" ", button);
    } else {
      note.append(" (not opened)");
    }
    links.replaceChildren(note);
  };
  const bridge = new AppBridge(() => frame?.contentWindow ?? null, input, {
    callTool: (name, args) => (frameId === null ? Promise.resolve({ ok: false as const, message: "the app's frame is not open" }) : call(frameId, name, args)),
    showLink,
    log: (line) => {
      log.append(h("li", {}, line));
      while (log.childElementCount > LOG_LINES) log.firstElementChild?.remove();
    },
    resize: (height) => {
      if (frame) frame.style.height = `${height}px`;
    },
    closed: (why) => {
      status.textContent = `The app was stopped: ${why}.`;
      frame?.remove();
    },
  });
  const panel = h("section", { class: "app-view", "aria-label": "App" }, status, slot, links, log);
  void openFrame(o.server, o.uri, o.conversation ?? null, o.agent ?? null).then((x) => {
    const r = outcome(x);
    if (r instanceof IpcFailure) {
      status.textContent = `This app cannot be shown: ${r.message}`;
      return;
    }
    frameId = r;
    const f = h("iframe", {
      class: "app-frame",
      sandbox: "allow-scripts",
      referrerpolicy: "no-referrer",
      allow: "",
      title: `App of ${o.server}: ${o.uri}`,
      src: appUrl(r),
      "data-frame": r,
    });
    f.style.height = "160px";
    let loads = 0;
    f.addEventListener("load", () => {
      loads += 1;
      if (loads < 2) return;
      // A second document: the app navigated its frame away from its own. Rust refused the
      // other document; the frame is cut off here and closed there (its calls refused).
      bridge.close("it navigated away from its own document");
      void navigated(r);
    });
    frame = f;
    slot.append(f);
  });
  const onMessage = (ev: MessageEvent) => {
    if (!panel.isConnected) {
      win.removeEventListener("message", onMessage);
      return;
    }
    bridge.handle(ev);
  };
  win.addEventListener("message", onMessage);
  return panel;
}
