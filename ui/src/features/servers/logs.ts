// The per-server logs view: stderr, searchable, and the JSON-RPC trace in the protocol
// inspector (filters, search, timings, export; see inspector.ts).
// Everything is shown as text (RN-04): server output can never become markup.
import type { LogsDto_Serialize as LogsDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { inspectorPanel } from "./inspector";

/** Lines that match a case-insensitive search; an empty search keeps everything. */
export function filterLogs(logs: LogsDto, query: string): LogsDto {
  const q = query.trim().toLowerCase();
  if (q === "") return logs;
  return {
    stderr: logs.stderr.filter((l) => l.toLowerCase().includes(q)),
    trace: logs.trace.filter((t) => t.body.toLowerCase().includes(q) || (t.method ?? "").toLowerCase().includes(q)),
  };
}

export function logsDialog(name: string, logs: LogsDto): HTMLDialogElement {
  const search = h("input", { type: "search", placeholder: "Search stderr", class: "log-search" });
  const stderr = h("pre", { class: "stderr log-stderr" });
  const render = () => {
    const shown = filterLogs(logs, search.value);
    stderr.textContent = shown.stderr.length > 0 ? shown.stderr.join("\n") : "(nothing on stderr)";
  };
  search.addEventListener("input", render);
  const close = h("button", { autofocus: true }, "Close");
  const dialog = h("dialog", { class: "logs-dialog", "aria-label": `Logs of ${name}` },
    h("h2", {}, `Logs of ${name}`),
    h("h3", {}, "stderr"), search, stderr,
    h("h3", {}, "Protocol trace"), inspectorPanel(name),
    h("div", { class: "actions" }, close),
  );
  const done = () => {
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    dialog.remove();
  };
  close.addEventListener("click", done);
  dialog.addEventListener("cancel", done);
  render();
  queueMicrotask(() => {
    if (typeof dialog.showModal === "function" && !dialog.open) dialog.showModal();
  });
  return dialog;
}
