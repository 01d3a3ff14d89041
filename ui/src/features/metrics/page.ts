// The Metrics page (issue 16, point 3): per server and per tool, over a chosen window, the
// calls, errors by kind, p50/p95/p99 latency, bytes and tokens the host recorded, with a time
// series and a latency histogram of everything, one server, or one tool. The table is the
// source of truth (a screen reader reads it); each plot has a caption saying what it draws.
//
// Tool calls from any process sharing the database (a CLI, a chat session) land in the same
// tables without a host event, so the page re-reads on a timer while it is visible; the query
// is one indexed scan of a bounded table.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { MetricsWindowDto } from "../../ipc/bindings";
import { emptyState, h } from "../../app/dom";
import { pressGuard } from "../../app/press-guard";
import { histogramPlot, timeSeriesPlot } from "./charts";
import type { Plot } from "./charts";
import { isEmpty, normalize, seriesFor, statsFor, tableRows, WINDOWS } from "./shape";
import type { Report, Row, Selection } from "./shape";
import "./metrics.css";

/** How often the visible page re-reads the report. */
export const POLL_MS = 10_000;

const COLUMNS = ["Server / tool", "Calls", "Errors", "Error kinds", "p50", "p95", "p99", "Bytes in", "Bytes out", "Tokens"];

function sameSelection(a: Selection, b: Selection): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function selectionOf(r: Row): Selection {
  return { server: r.server, tool: r.level === "tool" ? { kind: r.kind, name: r.name } : null };
}

function selectionLabel(sel: Selection): string {
  if (!sel) return "all servers";
  return sel.tool ? `${sel.server} › ${sel.tool.name}` : sel.server;
}

/** The table: a server's row, then its tools' rows; a row's name selects it for the plots. */
export function metricsTable(rows: Row[], selected: Selection, select: (s: Selection) => void): HTMLTableElement {
  const approx = rows.some((r) => !r.exact);
  return h("table", { class: "metrics-table" },
    h("caption", {}, approx
      ? "Per server and tool. ≈ marks percentiles read from hourly histograms (bucket bounds)."
      : "Per server and tool. Percentiles are exact."),
    h("thead", {}, h("tr", {}, ...COLUMNS.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, ...rows.map((r) => {
      const sel = selectionOf(r);
      const mark = r.exact ? "" : "≈ ";
      return h("tr", {
        class: `metric-${r.level}`,
        "data-server": r.server,
        "data-tool": r.level === "tool" ? r.name : false,
        "data-kind": r.kind,
      },
      h("th", { scope: "row" },
        h("button", {
          class: "select",
          "aria-pressed": String(sameSelection(sel, selected)),
          title: `Plot ${selectionLabel(sel)}`,
          onclick: () => select(sel),
        }, r.name),
        r.level === "tool" && r.kind !== "tool" ? h("span", { class: "hint" }, ` ${r.kind}`) : null),
      h("td", { class: "calls" }, String(r.calls)),
      h("td", { class: `errors${r.errors > 0 ? " bad" : ""}` }, String(r.errors)),
      h("td", { class: "error-kinds" }, r.errorKinds),
      h("td", { class: "p50" }, mark + r.p50),
      h("td", { class: "p95" }, mark + r.p95),
      h("td", { class: "p99" }, mark + r.p99),
      h("td", { class: "bytes-in" }, r.bytesIn),
      h("td", { class: "bytes-out" }, r.bytesOut),
      h("td", { class: "tokens" }, String(r.tokens)));
    })));
}

export function mountMetrics(root: HTMLElement): () => void {
  const windowPick = h("select", { class: "window", "aria-label": "Window" },
    ...WINDOWS.map((w) => h("option", { value: w.value }, w.label)));
  windowPick.value = "day";
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const body = h("section", { class: "metrics-body" });
  root.replaceChildren(
    h("header", { class: "bar" },
      h("h1", {}, "Metrics"),
      h("label", { class: "window-label" }, "Window ", windowPick),
      h("button", { class: "refresh", onclick: () => void load() }, "Refresh")),
    h("p", { class: "hint" }, "Every tool call, resource read and prompt get through Switchboard, from the app and the command line. Raw samples are kept for a day, hourly summaries for 30 days."),
    error,
    body);
  // The poll redraws the table every few seconds: a row rebuilt between a press and its
  // release would lose the click (app/press-guard.ts).
  const guard = pressGuard(body);

  let report: Report | null = null;
  let selected: Selection = null;
  let plots: Plot[] = [];
  let stopped = false;

  const phrase = () => WINDOWS.find((w) => w.value === windowPick.value)?.phrase ?? "";

  const drawPlots = (host: HTMLElement) => {
    plots.forEach((p) => p.destroy());
    plots = [];
    host.replaceChildren();
    if (!report) return;
    const label = selectionLabel(selected);
    const series = seriesFor(report, selected);
    const where = selected?.tool ? `${selected.server} (the tool's server)` : label;
    plots.push(timeSeriesPlot(host, series, phrase(), `Calls, errors and p95 latency: ${where}`));
    const stats = statsFor(report, selected);
    if (stats) plots.push(histogramPlot(host, report.bucket_bounds_ms, stats.histogram, `Latency histogram: ${label}`));
  };

  const render = () => {
    if (!report) return;
    const r = report;
    if (isEmpty(r)) {
      plots.forEach((p) => p.destroy());
      plots = [];
      body.replaceChildren(emptyState("Nothing recorded yet",
        `No tool calls, resource reads or prompt gets ${phrase()}. Call a tool (Tools page, a chat, or \`switchboard call\`) and its numbers appear here.`));
      return;
    }
    const rows = tableRows(r);
    if (selected && !rows.some((x) => sameSelection(selectionOf(x), selected))) selected = null;
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.closest("tr") : null;
    const refocus = focused ? [focused.dataset.server, focused.dataset.tool, focused.dataset.kind] : null;
    const plotHost = h("div", { class: "plots" });
    const select = (s: Selection) => {
      selected = sameSelection(s, selected) ? null : s;
      render();
    };
    const table = metricsTable(rows, selected, select);
    body.replaceChildren(
      h("p", { class: "metrics-total", "data-calls": String(r.total.calls), "data-errors": String(r.total.errors.total) },
        `${r.total.calls} ${r.total.calls === 1 ? "call" : "calls"}, ${r.total.errors.total} ${r.total.errors.total === 1 ? "error" : "errors"} ${phrase()}.`),
      h("div", { class: "table-scroll" }, table),
      h("div", { class: "plot-bar" },
        h("span", { class: "plot-scope" }, `Plots: ${selectionLabel(selected)}`),
        selected ? h("button", { class: "show-all", onclick: () => select(null) }, "Show all servers") : null),
      plotHost);
    if (refocus) {
      const again = [...table.querySelectorAll("tr")].find((tr) =>
        tr.dataset.server === refocus[0] && tr.dataset.tool === refocus[1] && tr.dataset.kind === refocus[2]);
      again?.querySelector("button")?.focus();
    }
    drawPlots(plotHost);
  };

  const load = async () => {
    const r = await attempt(ipc.metricsReport(windowPick.value as MetricsWindowDto));
    if (stopped) return;
    if (r instanceof IpcFailure) {
      error.textContent = r.message;
      error.hidden = false;
      return;
    }
    error.hidden = true;
    report = normalize(r);
    guard.run(render);
  };

  windowPick.addEventListener("change", () => void load());
  void load();
  const poll = window.setInterval(() => {
    if (document.visibilityState !== "hidden") void load();
  }, POLL_MS);
  return () => {
    stopped = true;
    window.clearInterval(poll);
    guard.dispose();
    plots.forEach((p) => p.destroy());
  };
}
