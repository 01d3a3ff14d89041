// Sparklines on the server cards (issue 16, point 3): each server's calls over the last 24 hours,
// buckets with errors marked, the numbers in a title. Small hand-written SVG rather than a chart
// per card: a page of 50 cards draws 50 paths, and every card's data comes from ONE report (the
// host's metrics for all servers), asked once per refresh, not once per card.
import { generated, IpcFailure, outcome } from "../../ipc/client";
import { normalize } from "./shape";
import type { Point, Report } from "./shape";
import { svg } from "./svg";
import "./metrics.css";

export const SPARK_W = 120;
export const SPARK_H = 24;
/** How often the cards' sparklines are re-read while the page shows them. */
const REFRESH_MS = 60_000;

/** The points of a line through `values`, scaled to `w` × `h` (top is the largest value, a
 * flat line at the bottom when all are 0), with 1 px of margin so the stroke is not cut. */
export function sparkPoints(values: number[], w = SPARK_W, h = SPARK_H): [number, number][] {
  const max = Math.max(0, ...values);
  const n = values.length;
  const step = n > 1 ? (w - 2) / (n - 1) : 0;
  return values.map((v, i) => [
    +(1 + i * step).toFixed(2),
    +(h - 1 - (max > 0 ? (v / max) * (h - 2) : 0)).toFixed(2),
  ]);
}

/** What a sparkline says: totals over the window and the busiest bucket. */
export function sparkTitle(server: string, points: Point[], bucketMs: number): string {
  const calls = points.reduce((n, p) => n + p.calls, 0);
  const errors = points.reduce((n, p) => n + p.errors, 0);
  if (calls === 0) return `${server}: no calls in the last 24 hours`;
  const peak = Math.max(...points.map((p) => p.calls));
  const minutes = Math.round(bucketMs / 60_000);
  return `${server}: ${calls} ${calls === 1 ? "call" : "calls"}, ${errors} ${errors === 1 ? "error" : "errors"} in the last 24 hours ` +
    `(at most ${peak} in ${minutes} minutes)`;
}

/** The sparkline of one server's series. */
export function sparkline(server: string, points: Point[], bucketMs: number): SVGSVGElement {
  const title = sparkTitle(server, points, bucketMs);
  const el = svg("svg", {
    class: "sparkline",
    width: SPARK_W,
    height: SPARK_H,
    viewBox: `0 0 ${SPARK_W} ${SPARK_H}`,
    role: "img",
    "aria-label": title,
  });
  el.dataset.calls = String(points.reduce((n, p) => n + p.calls, 0));
  el.dataset.errors = String(points.reduce((n, p) => n + p.errors, 0));
  const t = svg("title", {});
  t.textContent = title;
  el.append(t);
  const xy = sparkPoints(points.map((p) => p.calls));
  if (xy.length > 0) {
    el.append(svg("polyline", { class: "spark-calls", points: xy.map(([x, y]) => `${x},${y}`).join(" ") }));
  }
  points.forEach((p, i) => {
    const at = xy[i];
    if (p.errors > 0 && at) el.append(svg("circle", { class: "spark-error", cx: at[0], cy: at[1], r: 2 }));
  });
  return el;
}

/** The cards' sparklines: a slot per server that outlives its card (a card is rebuilt when its
 * row changes), all filled from one report. */
export function sparklines(read = () => generated.metricsReport("day")) {
  const slots = new Map<string, HTMLElement>();
  let report: Report | null = null;
  let inflight: Promise<void> | null = null;
  let timer: number | undefined;

  const fill = (name: string, slot: HTMLElement) => {
    if (!report) return;
    const s = report.servers.find((x) => x.server === name);
    const points = s?.series ?? report.series.map((p) => ({ ...p, calls: 0, errors: 0, mean_ms: 0, p95_ms: 0, max_ms: 0 }));
    slot.replaceChildren(sparkline(name, points, report.bucket_ms));
  };

  const refresh = (): Promise<void> => {
    inflight ??= (async () => {
      // Without metrics the cards keep what they showed: the sparkline is a hint, not the page.
      const r = await Promise.resolve().then(read).then((x) => outcome(x)).catch(() => null);
      if (r !== null && !(r instanceof IpcFailure)) {

        report = normalize(r);
        for (const [name, slot] of slots) fill(name, slot);
      }
    })().finally(() => { inflight = null; });
    if (timer === undefined) {
      timer = window.setInterval(() => {
        // The page was left: stop asking.
        if (![...slots.values()].some((s) => s.isConnected)) {
          window.clearInterval(timer);
          timer = undefined;
          return;
        }
        if (document.visibilityState !== "hidden") void refresh();
      }, REFRESH_MS);
    }
    return inflight;
  };

  return {
    /** The sparkline slot of `name`'s card (the same element every time). */
    slot(name: string): HTMLElement {
      let slot = slots.get(name);
      if (!slot) {
        slot = document.createElement("span");
        slot.className = "spark-slot";
        slots.set(name, slot);
        fill(name, slot);
      }
      return slot;
    },
    refresh,
    /** Forgets the servers that are gone. */
    keep(names: string[]): void {
      for (const n of [...slots.keys()]) if (!names.includes(n)) slots.delete(n);
    },
  };
}
