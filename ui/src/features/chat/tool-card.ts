// A tool call in a conversation: which tool, its arguments (collapsed), where it stands
// (waiting for approval, running with progress, done, error), how long it took and what it
// returned. Everything in it comes from a model or a server and goes in as text (RN-01).
import { h } from "../../app/dom";
import { renderProgress, renderContent, type Progress } from "../catalog";
import { mountApp, type MountOptions } from "../apps";

export type ToolStatus = "proposed" | "running" | "done" | "error";

const LABELS: Record<ToolStatus, string> = {
  proposed: "Waiting for approval",
  running: "Running",
  done: "Done",
  error: "Error",
};

export interface ToolCard {
  el: HTMLElement;
  setStatus(s: ToolStatus): void;
  setProgress(p: Progress): void;
  setResult(isError: boolean, text: string, durationMs: number | null): void;
  /** The person changed the arguments before approving: show what actually ran. */
  setEdited(args: string): void;
  /** The result points to an MCP App (`ui://`): show it under the result, in its jail. */
  setApp(app: MountOptions): void;
}

/** A card for the call `name` (the model's name for it; `server`/`tool` when it resolves). */
export function toolCard(name: string, args: string, server?: string | null, tool?: string | null): ToolCard {
  const status = h("span", { class: "tc-status badge" });
  const duration = h("span", { class: "tc-duration hint" });
  const progress = h("div", { class: "tc-progress" });
  const result = h("div", { class: "tc-result" });
  const app = h("div", { class: "tc-app" });
  const edited = h("div", { class: "tool-edited", hidden: true });
  const title = server && tool ? `${server} › ${tool}` : name;
  const el = h("div", { class: "tool-card" },
    h("div", { class: "tc-head" }, h("span", { class: "tc-icon", "aria-hidden": "true" }, "⚙"), h("strong", { class: "tc-name" }, title), status, duration),
    h("details", { class: "tc-args" }, h("summary", {}, "Arguments"), h("pre", {}, args)),
    edited,
    progress,
    result,
    app,
  );
  const setStatus = (s: ToolStatus) => {
    el.dataset.status = s;
    status.textContent = LABELS[s];
    status.className = `tc-status badge ${s === "done" ? "ok" : s === "error" ? "bad" : s === "running" ? "busy" : "warn"}`;
    if (s !== "running") progress.replaceChildren();
  };
  setStatus("proposed");
  return {
    el,
    setStatus,
    setProgress: (p) => progress.replaceChildren(renderProgress(p)),
    setEdited: (a) => {
      el.dataset.edited = "true";
      edited.hidden = false;
      edited.replaceChildren(h("p", { class: "tool-edited-note" }, "Run with your edited arguments"), h("pre", {}, a));
    },
    setApp: (o) => app.replaceChildren(mountApp(o)),
    setResult: (isError, text, durationMs) => {
      setStatus(isError ? "error" : "done");
      if (durationMs !== null) duration.textContent = durationMs < 1000 ? `${Math.round(durationMs)} ms` : `${(durationMs / 1000).toFixed(1)} s`;
      result.replaceChildren(text === "" ? h("p", { class: "hint" }, "No output.") : renderContent({ type: "text", text }));
    },
  };
}
