import { describe, expect, it } from "vitest";
import { histogramDrawing, histogramPlot, seriesDrawing, timeSeriesPlot } from "./charts";
import { BOUNDS, series } from "./test-fixture";

const attr = (el: Element | null | undefined, a: string) => Number(el?.getAttribute(a));

describe("seriesDrawing", () => {
  it("draws one bar per bucket with calls, error bars over them, and p95 broken at gaps", () => {
    const el = seriesDrawing(series([3, 0, 6, 2], [1, 0, 0, 2], [12, 0, 40, 30]));
    const calls = el.querySelectorAll("rect.bar-calls");
    expect(calls.length).toBe(3);
    expect(el.querySelectorAll("rect.bar-errors").length).toBe(2);
    // The tallest bucket reaches the top of the plot area, a third of it a third as high.
    const [b0, b2] = [calls[0]!, calls[1]!];
    expect(attr(b2, "height")).toBeCloseTo(attr(b0, "height") * 2, 1);
    expect(attr(b0, "x")).toBeLessThan(attr(b2, "x"));
    const lines = Array.from(el.querySelectorAll("polyline.line-p95"));
    expect(lines.map((l) => l.getAttribute("points")!.split(" ").length)).toEqual([1, 2]);
    expect(el.querySelectorAll("circle.dot-p95").length).toBe(1);
    expect(el.getAttribute("aria-hidden")).toBe("true");
    expect(el.textContent).toContain("p95 40 ms");
  });

  it("draws an empty frame for a quiet window", () => {
    const el = seriesDrawing(series([0, 0, 0]));
    expect(el.querySelectorAll("rect").length).toBe(0);
    expect(el.querySelectorAll("polyline").length).toBe(0);
  });
});

describe("histogramDrawing", () => {
  it("draws a bar per non-empty bucket, heights proportional, every bucket labelled", () => {
    const el = histogramDrawing(["≤ 5 ms", "≤ 10 ms", "≤ 25 ms"], [8, 0, 4]);
    const bars = el.querySelectorAll("rect.bar-hist");
    expect(bars.length).toBe(2);
    expect(attr(bars[0], "height")).toBeCloseTo(attr(bars[1], "height") * 2, 1);
    expect(Array.from(el.querySelectorAll(".bar-count")).map((t) => t.textContent)).toEqual(["8", "0", "4"]);
    expect(el.textContent).toContain("≤ 10 ms");
  });
});

describe("plots", () => {
  it("are captioned figures that remove themselves", () => {
    const host = document.createElement("div");
    const t = timeSeriesPlot(host, series([1, 2], [0, 1], [5, 7]), "in the last hour", "Calls");
    const counts = Array.from({ length: 16 }, (_, i) => (i === 3 ? 2 : 0));
    const hg = histogramPlot(host, BOUNDS, counts, "Latency");
    expect(host.querySelectorAll("figure").length).toBe(2);
    expect(t.figure.getAttribute("aria-label")).toBe("Calls");
    expect(t.figure.querySelector(".plot-summary")?.textContent).toMatch(/^3 calls, 1 error in the last hour/);
    expect(hg.figure.querySelector(".plot-summary")?.textContent).toBe("Calls per latency bucket: ≤ 10 ms: 2.");
    t.destroy();
    hg.destroy();
    expect(host.children.length).toBe(0);
  });
});
