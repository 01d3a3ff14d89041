// The protocol inspector: a server's JSON-RPC trace with filters (method, direction, errors,
// slow), search, request/response timings and an export as JSON lines.
// Pairing and filtering happen in Rust (switchboard_core::host::inspector, shared with
// `switchboard server trace`); this file only turns the controls into a filter, renders
// what comes back as text (RN-04: server output never becomes markup) and shows the export
// for copying, as the app's other exports do (the web view writes no files).
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { InspectedDto_Serialize as InspectedDto, TraceFilterDto_Deserialize as TraceFilterDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import "./inspector.css";

/** What the controls say, as typed. */
export interface Controls {
  method: string;
  direction: "" | "out" | "in";
  errorsOnly: boolean;
  slowMs: string;
  search: string;
}

/** The filter the controls ask for; blank or invalid fields set no condition. */
export function toFilter(c: Controls): TraceFilterDto {
  const slow = Number.parseFloat(c.slowMs);
  return {
    method: c.method.trim() === "" ? null : c.method.trim(),
    direction: c.direction === "" ? null : c.direction,
    errors_only: c.errorsOnly,
    slow_ms: Number.isFinite(slow) && slow >= 0 ? slow : null,
    search: c.search.trim() === "" ? null : c.search.trim(),
  };
}

/** One entry as a line: time, arrow, method and id, timing, then the body as text. */
export function inspectedLine(e: InspectedDto): HTMLElement {
  const arrow = e.direction === "out" ? "→" : e.direction === "in" ? "←" : "•";
  const time = new Date(e.at_ms ?? 0).toISOString().slice(11, 23);
  const failed = e.is_error || e.tool_error;
  const what = e.method != null ? (e.kind === "response" ? `${e.method} answer` : e.method) : null;
  return h("div", {
    class: `trace-line ${e.direction} ${e.kind}${failed ? " error" : ""}`,
    "data-index": String(e.index),
  },
    h("span", { class: "time" }, time), " ", h("span", { class: "dir" }, arrow), " ",
    what != null ? h("span", { class: "method" }, what) : null,
    e.id != null ? h("span", { class: "rpc-id" }, ` #${e.id}`) : null, " ",
    e.duration_ms != null ? h("span", { class: "rtt" }, `${e.duration_ms.toFixed(1)} ms `) : null,
    failed ? h("span", { class: "err-tag" }, e.is_error ? "error " : "tool error ") : null,
    h("code", {}, e.body),
  );
}

/** The inspector for server `name`: controls, the matching messages, and the export. */
export function inspectorPanel(name: string): HTMLElement {
  const method = h("input", { type: "text", class: "insp-method", placeholder: "Method (tools/call)", "aria-label": "Method" });
  const direction = h("select", { class: "insp-direction", "aria-label": "Direction" },
    h("option", { value: "" }, "Both ways"),
    h("option", { value: "out" }, "Sent"),
    h("option", { value: "in" }, "Received"));
  const errors = h("input", { type: "checkbox", class: "insp-errors" });
  const slow = h("input", { type: "number", min: "0", step: "10", class: "insp-slow", placeholder: "ms", "aria-label": "Slower than (ms)" });
  const search = h("input", { type: "search", class: "insp-search", placeholder: "Search messages", "aria-label": "Search messages" });
  const refresh = h("button", { type: "button", class: "insp-refresh" }, "Refresh");
  const exportBtn = h("button", { type: "button", class: "insp-export" }, "Export JSON lines");
  const count = h("p", { class: "hint insp-count", "aria-live": "polite" });
  const failure = h("p", { class: "error insp-error", role: "alert", hidden: true });
  const list = h("div", { class: "trace insp-list" });
  const out = h("textarea", { class: "insp-export-text", rows: "8", readonly: true, spellcheck: "false", hidden: true, "aria-label": "Trace as JSON lines" });
  const copy = h("button", { type: "button", class: "insp-copy", hidden: true }, "Copy");

  const controls = (): Controls => ({
    method: method.value,
    direction: direction.value as Controls["direction"],
    errorsOnly: errors.checked,
    slowMs: slow.value,
    search: search.value,
  });
  const fail = (m: string | null) => {
    failure.hidden = m === null;
    failure.textContent = m ?? "";
  };

  // Answers can come back out of order while typing; only the newest request's is shown.
  let seq = 0;
  const load = async () => {
    const mine = ++seq;
    const r = await attempt(ipc.inspectTrace(name, toFilter(controls())));
    if (mine !== seq) return;
    if (r instanceof IpcFailure) return fail(r.message);
    fail(null);
    const n = r.length;
    count.textContent = `${n} ${n === 1 ? "message" : "messages"}${n > 500 ? " (newest 500 shown; the export has all)" : ""}`;
    list.replaceChildren(...r.slice(-500).map(inspectedLine));
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void load(), 150);
  };
  for (const el of [method, slow, search]) el.addEventListener("input", soon);
  for (const el of [direction, errors]) el.addEventListener("change", () => void load());
  refresh.addEventListener("click", () => void load());
  exportBtn.addEventListener("click", async () => {
    const r = await attempt(ipc.exportTrace(name, toFilter(controls())));
    if (r instanceof IpcFailure) return fail(r.message);
    fail(null);
    out.value = r;
    out.hidden = false;
    copy.hidden = false;
    copy.textContent = "Copy";
  });
  copy.addEventListener("click", async () => {
    out.select();
    try {
      await navigator.clipboard.writeText(out.value);
      copy.textContent = "Copied";
    } catch {
      copy.textContent = "Selected: press Ctrl+C";
    }
  });

  void load();
  return h("section", { class: "inspector", "aria-label": "Protocol trace" },
    h("div", { class: "insp-controls" },
      method, direction,
      h("label", {}, errors, " Errors only"),
      h("label", {}, "Slower than ", slow, " ms"),
      search, refresh),
    count, failure, list,
    h("div", { class: "insp-actions" }, exportBtn, copy),
    out,
  );
}
