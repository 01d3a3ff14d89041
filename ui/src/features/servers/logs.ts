// The per-server logs view: stderr and the JSON-RPC trace (with round-trip times), searchable.
// Everything is shown as text (RN-04): server output can never become markup.
import type { LogsDto_Serialize as LogsDto, TraceDto_Serialize as TraceDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** Lines that match a case-insensitive search; an empty search keeps everything. */
export function filterLogs(logs: LogsDto, query: string): LogsDto {
  const q = query.trim().toLowerCase();
  if (q === "") return logs;
  return {
    stderr: logs.stderr.filter((l) => l.toLowerCase().includes(q)),
    trace: logs.trace.filter((t) => t.body.toLowerCase().includes(q) || (t.method ?? "").toLowerCase().includes(q)),
  };
}

function traceLine(t: TraceDto): HTMLElement {
  const arrow = t.direction === "out" ? "→" : t.direction === "in" ? "←" : "•";
  const time = new Date(t.at_ms ?? 0).toISOString().slice(11, 23);
  return h("div", { class: `trace-line ${t.direction}${t.is_error ? " error" : ""}` },
    h("span", { class: "time" }, time), " ", h("span", { class: "dir" }, arrow), " ",
    t.duration_ms != null ? h("span", { class: "rtt" }, `${t.duration_ms.toFixed(1)} ms `) : null,
    h("code", {}, t.body),
  );
}

export function logsDialog(name: string, logs: LogsDto): HTMLDialogElement {
  const search = h("input", { type: "search", placeholder: "Search logs", class: "log-search" });
  const stderr = h("pre", { class: "stderr log-stderr" });
  const trace = h("div", { class: "trace" });
  const render = () => {
    const shown = filterLogs(logs, search.value);
    stderr.textContent = shown.stderr.length > 0 ? shown.stderr.join("\n") : "(nothing on stderr)";
    trace.replaceChildren(...shown.trace.slice(-500).map(traceLine));
  };
  search.addEventListener("input", render);
  const close = h("button", { autofocus: true }, "Close");
  const dialog = h("dialog", { class: "logs-dialog", "aria-label": `Logs of ${name}` },
    h("h2", {}, `Logs of ${name}`), search,
    h("h3", {}, "stderr"), stderr,
    h("h3", {}, "Protocol trace"), trace,
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
