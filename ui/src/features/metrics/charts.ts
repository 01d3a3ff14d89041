// The Metrics page's plots, as small SVG of our own: a time series (calls and errors per bucket
// as bars, p95 latency as a line on its own axis) and a latency histogram. Each sits in a
// <figure> whose caption says in words what it draws; the drawing is hidden from screen readers
// (the table above is the source of truth).
//
// Why not a chart library: uPlot, the small canvas one, builds `new Intl.NumberFormat(
// navigator.language)` when its module loads, which throws a RangeError when the system locale is
// C/POSIX (navigator.language "c"): the whole app stayed blank in the test window. Two plots of
// bars and one line do not need a library; SVG also scales with the window and works in jsdom.
import { h } from "../../app/dom";
import { formatMs, histogramBars, histogramSummary, seriesColumns, seriesSummary } from "./shape";
import type { Point } from "./shape";
import { scale, svg } from "./svg";

const W = 720;
const H = 200;
/** Plot area inside the drawing: room for the axes' labels. */
const PAD = { left: 44, right: 96, top: 12, bottom: 28 };

/** A plot in a figure, captioned. */
export interface Plot {
  figure: HTMLElement;
  destroy(): void;
}

function figure(cls: string, title: string, summary: string, drawing: SVGSVGElement): HTMLElement {
  return h("figure", { class: `plot ${cls}`, "aria-label": title },
    h("figcaption", {}, h("strong", {}, title), " ", h("span", { class: "plot-summary" }, summary)),
    drawing);
}

function frame(cls: string): SVGSVGElement {
  return svg("svg", { class: `plot-svg ${cls}`, viewBox: `0 0 ${W} ${H}`, "aria-hidden": "true" });
}

function label(x: number, y: number, text: string, anchor: "start" | "middle" | "end", cls = "axis-label"): SVGTextElement {
  return svg("text", { x, y, "text-anchor": anchor, class: cls }, text);
}

function time(ms: number, spanMs: number): string {
  const d = new Date(ms);
  const hm = `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  return spanMs > 36 * 3_600_000 ? `${d.getMonth() + 1}/${d.getDate()} ${hm}` : hm;
}

/** The time series drawing (exported for tests). */
export function seriesDrawing(points: Point[]): SVGSVGElement {
  const el = frame("series-svg");
  const [, calls, errors, p95] = seriesColumns(points);
  const n = points.length;
  const bottom = H - PAD.bottom;
  const plotW = W - PAD.left - PAD.right;
  const slot = n > 0 ? plotW / n : plotW;
  const maxCalls = Math.max(1, ...calls);
  const maxMs = Math.max(0, ...p95.map((v) => v ?? 0));
  el.append(svg("line", { class: "axis", x1: PAD.left, y1: bottom, x2: W - PAD.right, y2: bottom }));
  el.append(label(PAD.left - 4, PAD.top + 8, String(maxCalls), "end"), label(PAD.left - 4, bottom, "0", "end"));
  if (maxMs > 0) el.append(label(W - PAD.right + 4, PAD.top + 8, `p95 ${formatMs(maxMs)}`, "start"));
  const first = points[0];
  const last = points[n - 1];
  if (first && last) {
    const span = last.start_ms - first.start_ms;
    el.append(label(PAD.left, H - 8, time(first.start_ms, span), "start"), label(W - PAD.right, H - 8, time(last.start_ms, span), "end"));
  }
  const bar = (i: number, v: number, cls: string) => {
    const y = scale(v, maxCalls, bottom, PAD.top);
    return svg("rect", { class: cls, x: +(PAD.left + i * slot + slot * 0.1).toFixed(2), y, width: +(slot * 0.8).toFixed(2), height: +(bottom - y).toFixed(2) });
  };
  calls.forEach((c, i) => { if (c > 0) el.append(bar(i, c, "bar-calls")); });
  errors.forEach((e, i) => { if (e > 0) el.append(bar(i, e, "bar-errors")); });
  // The p95 line, broken where a bucket sent nothing.
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) el.append(svg("polyline", { class: "line-p95", points: run.join(" ") }));
    if (run.length === 1) el.append(svg("circle", { class: "dot-p95", cx: run[0]!.split(",")[0]!, cy: run[0]!.split(",")[1]!, r: 2.5 }));
    run = [];
  };
  p95.forEach((v, i) => {
    if (v === null) return flush();
    run.push(`${+(PAD.left + (i + 0.5) * slot).toFixed(2)},${scale(v, maxMs, bottom, PAD.top)}`);
  });
  flush();
  return el;
}

/** The histogram drawing (exported for tests). */
export function histogramDrawing(labels: string[], counts: number[]): SVGSVGElement {
  const el = frame("histogram-svg");
  const bottom = H - PAD.bottom;
  const left = 12;
  const plotW = W - left * 2;
  const slot = counts.length > 0 ? plotW / counts.length : plotW;
  const max = Math.max(1, ...counts);
  el.append(svg("line", { class: "axis", x1: left, y1: bottom, x2: W - left, y2: bottom }));
  counts.forEach((c, i) => {
    const x = left + i * slot;
    const y = scale(c, max, bottom, PAD.top + 12);
    if (c > 0) el.append(svg("rect", { class: "bar-hist", x: +(x + slot * 0.15).toFixed(2), y, width: +(slot * 0.7).toFixed(2), height: +(bottom - y).toFixed(2) }));
    el.append(label(+(x + slot / 2).toFixed(2), y - 3, String(c), "middle", "bar-count"));
    el.append(label(+(x + slot / 2).toFixed(2), H - 10, labels[i] ?? "", "middle"));
  });
  return el;
}

/** Calls and errors per bucket and p95 latency, captioned. */
export function timeSeriesPlot(parent: HTMLElement, points: Point[], phrase: string, title: string): Plot {
  const fig = figure("series-plot", title, seriesSummary(points, phrase), seriesDrawing(points));
  fig.append(h("p", { class: "plot-legend", "aria-hidden": "true" },
    h("span", {}, h("span", { class: "key calls" }), "calls"),
    h("span", {}, h("span", { class: "key errors" }), "errors"),
    h("span", {}, h("span", { class: "key p95" }), "p95 latency (right axis)")));
  parent.append(fig);
  return { figure: fig, destroy: () => fig.remove() };
}

/** Sent calls per latency bucket, from the first bucket used to the last, captioned. */
export function histogramPlot(parent: HTMLElement, bounds: number[], counts: number[], title: string): Plot {
  const bars = histogramBars(bounds, counts);
  const fig = figure("histogram-plot", title, histogramSummary(bars.labels, bars.counts), histogramDrawing(bars.labels, bars.counts));
  parent.append(fig);
  return { figure: fig, destroy: () => fig.remove() };
}
