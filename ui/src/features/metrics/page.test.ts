import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  metricsReport: vi.fn(),
  timeSeriesPlot: vi.fn(),
  histogramPlot: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: { metricsReport: m.metricsReport } }));
// The plots are stubbed to see what each is given; their drawing is tested in charts.test.ts.
vi.mock("./charts", () => ({ timeSeriesPlot: m.timeSeriesPlot, histogramPlot: m.histogramPlot }));

import { mountMetrics } from "./page";
import { emptyReport, report } from "./test-fixture";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };

let root: HTMLElement;
let unmount: () => void;

beforeEach(() => {
  root = document.createElement("main");
  document.body.append(root);
  for (const f of [m.timeSeriesPlot, m.histogramPlot]) {
    f.mockReset();
    f.mockImplementation(() => ({ figure: document.createElement("figure"), destroy: vi.fn() }));
  }
  m.metricsReport.mockReset();
});
afterEach(() => {
  unmount?.();
  root.remove();
});

const cells = (tr: Element) => Array.from(tr.children).map((c) => c.textContent);

describe("mountMetrics", () => {
  it("asks for the last 24 hours first and shows the table, totals and both plots", async () => {
    m.metricsReport.mockImplementation(() => ok(report()));
    unmount = mountMetrics(root);
    await flush();
    expect(m.metricsReport).toHaveBeenCalledWith("day");
    const total = root.querySelector<HTMLElement>(".metrics-total")!;
    expect(total.textContent).toBe("13 calls, 3 errors in the last 24 hours.");
    expect([total.dataset.calls, total.dataset.errors]).toEqual(["13", "3"]);
    const rows = Array.from(root.querySelectorAll("tbody tr"));
    expect(rows.map((r) => r.className)).toEqual(["metric-server", "metric-tool", "metric-tool", "metric-server", "metric-tool"]);
    expect(cells(rows[0]!)).toEqual(["fs", "10", "3", "tool error 2, timeout 1", "3.25 ms", "40 ms", "1.50 s", "2.0 KB", "300 B", "75"]);
    expect(cells(rows[1]!)[0]).toBe("greet prompt");
    // Percentiles from hourly histograms are marked, and the caption says what the mark means.
    expect(cells(rows[3]!)[5]).toBe("≈ 12 ms");
    expect(root.querySelector("caption")?.textContent).toContain("≈ marks");
    expect(m.timeSeriesPlot).toHaveBeenCalledTimes(1);
    expect(m.timeSeriesPlot.mock.calls[0]![1]).toEqual(report().series);
    expect(m.timeSeriesPlot.mock.calls[0]![3]).toBe("Calls, errors and p95 latency: all servers");
    expect(m.histogramPlot.mock.calls[0]![2]).toEqual(report().total.histogram);
  });

  it("plots the server or tool whose name is clicked, and back to all", async () => {
    m.metricsReport.mockImplementation(() => ok(report()));
    unmount = mountMetrics(root);
    await flush();
    const read = root.querySelector<HTMLButtonElement>('tr[data-tool="read"] button')!;
    read.click();
    const lastHist = () => m.histogramPlot.mock.calls.at(-1)!;
    expect(lastHist()[3]).toBe("Latency histogram: fs › read");
    expect(lastHist()[2]).toEqual(report().servers[0]!.tools[1]!.stats.histogram);
    expect(m.timeSeriesPlot.mock.calls.at(-1)![1]).toEqual(report().servers[0]!.series);
    expect(root.querySelector('tr[data-tool="read"] button')?.getAttribute("aria-pressed")).toBe("true");
    root.querySelector<HTMLButtonElement>(".show-all")!.click();
    expect(lastHist()[3]).toBe("Latency histogram: all servers");
    // Every redraw frees the canvases it replaces.
    for (const f of [m.timeSeriesPlot, m.histogramPlot]) {
      const live = f.mock.results.filter((r) => r.value.destroy.mock.calls.length === 0);
      expect(f.mock.results.length).toBe(3);
      expect(live).toEqual([f.mock.results.at(-1)]);
    }
  });

  it("holds the poll's redraw while a row's button is pressed, so the click is not lost", async () => {
    vi.useFakeTimers();
    try {
      m.metricsReport.mockImplementation(() => ok(report()));
      unmount = mountMetrics(root);
      await flush();
      const read = root.querySelector<HTMLButtonElement>('tr[data-tool="read"] button')!;
      read.dispatchEvent(new MouseEvent("mousedown", { bubbles: true, button: 0 }));
      // The poll answers while the button is down.
      vi.advanceTimersByTime(10_000);
      await flush();
      expect(m.metricsReport).toHaveBeenCalledTimes(2);
      expect(read.isConnected).toBe(true);
      read.dispatchEvent(new MouseEvent("mouseup", { bubbles: true, button: 0 }));
      read.click();
      vi.advanceTimersByTime(0);
      expect(read.isConnected).toBe(false);
      expect(root.querySelector('tr[data-tool="read"] button')?.getAttribute("aria-pressed")).toBe("true");
    } finally {
      vi.useRealTimers();
    }
  });

  it("re-reads for another window", async () => {
    m.metricsReport.mockImplementation(() => ok(report()));
    unmount = mountMetrics(root);
    await flush();
    const pick = root.querySelector<HTMLSelectElement>("select.window")!;
    pick.value = "week";
    pick.dispatchEvent(new Event("change"));
    await flush();
    expect(m.metricsReport).toHaveBeenLastCalledWith("week");
    expect(root.querySelector(".metrics-total")?.textContent).toContain("in the last 7 days");
  });

  it("shows an empty state, no table and no plot, when nothing was recorded", async () => {
    m.metricsReport.mockImplementation(() => ok(emptyReport()));
    unmount = mountMetrics(root);
    await flush();
    expect(root.querySelector(".empty h2")?.textContent).toBe("Nothing recorded yet");
    expect(root.querySelector("table")).toBeNull();
    expect(m.timeSeriesPlot).not.toHaveBeenCalled();
  });

  it("shows the host's error", async () => {
    m.metricsReport.mockImplementation(() => Promise.resolve({ status: "error", error: { code: "internal", message: "database is locked" } }));
    unmount = mountMetrics(root);
    await flush();
    const err = root.querySelector<HTMLElement>(".error")!;
    expect(err.hidden).toBe(false);
    expect(err.textContent).toBe("database is locked");
  });

  it("polls while mounted and stops when left", async () => {
    vi.useFakeTimers();
    try {
      m.metricsReport.mockImplementation(() => ok(report()));
      unmount = mountMetrics(root);
      expect(m.metricsReport).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(10_000);
      expect(m.metricsReport).toHaveBeenCalledTimes(2);
      unmount();
      vi.advanceTimersByTime(30_000);
      expect(m.metricsReport).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
