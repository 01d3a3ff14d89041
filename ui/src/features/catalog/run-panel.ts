// "Run this tool": the schema-generated form, the Run button, live progress and the result.
// A run is only a request: Rust parks it as a pending approval and the approval dialog shows the
// exact arguments before anything reaches the server (AP-01, AP-03). Cancel withdraws a run that
// is still waiting, or cancels it at the server once it runs.
import { Channel } from "@tauri-apps/api/core";
import { generated, ipc, IpcFailure, outcome } from "../../ipc/client";
import type { ProgressDto, ToolDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { buildSchemaForm } from "./schema-form";
import { renderContent, renderProgress, renderToolResult } from "./result-view";
import { mountApp, toMcpResult, viewOf } from "../apps";
import type { ContentDto } from "./result-view";

/** What the panel needs from the outside, so tests can stand in for the IPC. */
export interface RunDeps {
  /** A run id minted by Rust (cancel_run stops it). */
  openRun: () => Promise<string>;
  run: (runId: string, server: string, tool: string, args: string, onProgress: (p: ProgressDto) => void) =>
    Promise<{ status: "ok"; data: Parameters<typeof renderToolResult>[0] } | { status: "error"; error: { code: string; message: string } }>;
  cancel: (runId: string) => Promise<unknown>;
  /** Reads a resource a result links to (only when the user clicks Open; RN-03). */
  read: (server: string, uri: string) => Promise<{ status: "ok"; data: ContentDto[] } | { status: "error"; error: { message: string } }>;
  /** Whether results with a ui:// view show the app (tests without a window turn it off). */
  apps?: boolean;
}

export const ipcRunDeps: RunDeps = {
  openRun: () => ipc.openRun(),
  run: (runId, server, tool, args, onProgress) => {
    const channel = new Channel<ProgressDto>();
    channel.onmessage = onProgress;
    return generated.runTool(runId, server, tool, args, channel);
  },
  cancel: (runId) => ipc.cancelRun(runId),
  read: (server, uri) => generated.readResource(server, uri, null),
};

/** Arguments last sent per tool, so reopening a tool offers them again. */
const lastArgs = new Map<string, Record<string, unknown>>();

export function runPanel(server: string, tool: ToolDto, deps: RunDeps = ipcRunDeps): HTMLElement {
  let schema: unknown = null;
  try {
    schema = JSON.parse(tool.input_schema);
  } catch {
    schema = null;
  }
  const key = `${server}\u0000${tool.name}`;
  const form = buildSchemaForm(schema, { idPrefix: "run" });
  const previous = lastArgs.get(key);
  if (previous) form.setValue(previous);
  const runButton = h("button", { class: "primary run", disabled: !tool.enabled }, "Run…");
  const cancelButton = h("button", { class: "cancel-run", hidden: true }, "Cancel");
  const problems = h("ul", { class: "problems", "aria-live": "polite" });
  const status = h("p", { class: "run-status", role: "status" });
  const progress = h("div", { class: "run-progress" });
  const output = h("div", { class: "run-output" });
  let current: string | null = null;

  const run = async () => {
    const v = form.value();
    if (!v.ok) {
      problems.replaceChildren(...v.errors.map((e) => h("li", {}, e)));
      return;
    }
    problems.replaceChildren();
    lastArgs.set(key, v.value);
    const id = await deps.openRun();
    current = id;
    runButton.disabled = true;
    cancelButton.hidden = false;
    // Approval, then the tool (which may itself ask you something): the call is out of our hands.
    status.textContent = "Waiting for approval, then for the tool…";
    progress.replaceChildren();
    output.replaceChildren();
    const r = outcome(await deps.run(id, server, tool.name, JSON.stringify(v.value), (p) => {
      if (current !== id) return;
      status.textContent = "Running…";
      progress.replaceChildren(renderProgress({ progress: p.progress ?? 0, total: p.total ?? null, message: p.message ?? null }));
    }));

    if (current !== id) return;
    current = null;
    runButton.disabled = !tool.enabled;
    cancelButton.hidden = true;
    progress.replaceChildren();
    if (!(r instanceof IpcFailure)) {
      status.textContent = r.is_error ? "The tool ran and reported an error." : "Done.";
      output.replaceChildren(renderToolResult(r, { onOpenResource: (uri) => void open(uri) }));
      // A result that points to a ui:// view is an MCP App: shown in its jail (features/apps).
      // The view a result links, else the one the tool declares (`_meta.ui.resourceUri`).
      const declared = tool.ui_view ?? null;
      const view = viewOf(r) ?? (declared !== null && /^ui:\/\/./i.test(declared) ? declared : null);
      if (view !== null && deps.apps !== false) {
        const result = toMcpResult(r as Parameters<typeof toMcpResult>[0]);
        output.append(mountApp({ server, uri: view, toolName: tool.name, arguments: v.value, result }));
      }
    } else {
      const why: Record<string, string> = { denied: "Not run: the call was not approved.", cancelled: "Cancelled." };
      status.textContent = why[r.code] ?? "The call failed.";
      output.replaceChildren(h("p", { class: "error", role: "alert" }, r.message));
    }
  };

  const linked = h("div", { class: "run-linked", "aria-live": "polite" });
  const open = async (uri: string) => {
    linked.replaceChildren(h("p", { class: "hint" }, `Reading ${uri}…`));
    const r = outcome(await deps.read(server, uri));

    linked.replaceChildren(
      h("h4", {}, uri),
      ...(!(r instanceof IpcFailure) ? r.map((c) => renderContent(c)) : [h("p", { class: "error", role: "alert" }, r.message)]),
    );
  };

  runButton.addEventListener("click", () => void run());
  cancelButton.addEventListener("click", () => {
    if (current) void deps.cancel(current);
  });
  return h("section", { class: "run-panel", "aria-label": `Run ${tool.name}` },
    h("h3", {}, "Run this tool"),
    tool.enabled ? null : h("p", { class: "hint" }, "This tool is switched off; enable it to run it."),
    form.element,
    problems,
    h("div", { class: "actions" }, runButton, cancelButton),
    status,
    progress,
    output,
    linked,
  );
}
