import { describe, expect, it } from "vitest";
import {
  errorKinds, formatBytes, formatMs, histogramBars, histogramSummary, isEmpty, normalize, seriesColumns,
  seriesFor, seriesSummary, statsFor, tableRows,
} from "./shape";
import { BOUNDS, emptyReport, report, SINCE, series } from "./test-fixture";

describe("formatting", () => {
  it("shows latencies with sensible precision and a dash when none was sent", () => {
    expect(formatMs(0.4213)).toBe("0.42 ms");
    expect(formatMs(3.25)).toBe("3.25 ms");
    expect(formatMs(40.4)).toBe("40 ms");
    expect(formatMs(1500)).toBe("1.50 s");
    expect(formatMs(null)).toBe("—");
    expect(formatMs(undefined)).toBe("—");
  });

  it("shows bytes in binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(2048)).toBe("2.0 KB");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MB");
  });

  it("names only the error kinds that happened", () => {
    const r = report();
    expect(errorKinds(r.servers[0]!.stats.errors)).toBe("tool error 2, timeout 1");
    expect(errorKinds(r.servers[1]!.stats.errors)).toBe("");
  });
});

describe("tableRows", () => {
  it("puts each server's row before its tools' rows, with the percentiles as displayed", () => {
    const rows = tableRows(report());
    expect(rows.map((r) => `${r.level}:${r.server}/${r.name}`)).toEqual([
      "server:fs/fs", "tool:fs/greet", "tool:fs/read", "server:web/web", "tool:web/get",
    ]);
    const fs = rows[0]!;
    expect([fs.calls, fs.errors, fs.errorKinds]).toEqual([10, 3, "tool error 2, timeout 1"]);
    expect([fs.p50, fs.p95, fs.p99]).toEqual(["3.25 ms", "40 ms", "1.50 s"]);
    expect([fs.bytesIn, fs.bytesOut, fs.tokens]).toEqual(["2.0 KB", "300 B", 75]);
    expect(fs.exact).toBe(true);
    expect(rows[1]!.kind).toBe("prompt");
    expect(rows[3]!.exact).toBe(false);
  });

  it("has a dash for percentiles when nothing was sent (only refusals)", () => {
    const r = report();
    r.servers[1]!.stats.latency = null;
    const web = tableRows(r)[3]!;
    expect([web.p50, web.p95, web.p99]).toEqual(["—", "—", "—"]);
  });
});

describe("empty state", () => {
  it("is empty only without any call", () => {
    expect(isEmpty(emptyReport())).toBe(true);
    expect(isEmpty(report())).toBe(false);
    expect(tableRows(emptyReport())).toEqual([]);
  });
});

describe("selection", () => {
  it("plots everything, a server, or a tool (with its server's series)", () => {
    const r = report();
    expect(seriesFor(r, null)).toBe(r.series);
    expect(seriesFor(r, { server: "web", tool: null })).toBe(r.servers[1]!.series);
    expect(seriesFor(r, { server: "fs", tool: { kind: "tool", name: "read" } })).toBe(r.servers[0]!.series);
    expect(seriesFor(r, { server: "gone", tool: null })).toEqual([]);
    expect(statsFor(r, null)).toBe(r.total);
    expect(statsFor(r, { server: "fs", tool: { kind: "tool", name: "read" } })?.calls).toBe(9);
    expect(statsFor(r, { server: "fs", tool: { kind: "tool", name: "greet" } })).toBeNull();
    expect(statsFor(r, { server: "fs", tool: { kind: "prompt", name: "greet" } })?.calls).toBe(1);
  });
});

describe("plot data", () => {
  it("turns a series into plot columns: seconds, calls, errors, p95 or a gap", () => {
    const [x, calls, errors, p95] = seriesColumns(series([3, 0, 5], [1, 0, 0], [12, 0, 7.5]));
    expect(x).toEqual([SINCE / 1000, SINCE / 1000 + 3600, SINCE / 1000 + 7200]);
    expect(calls).toEqual([3, 0, 5]);
    expect(errors).toEqual([1, 0, 0]);
    expect(p95).toEqual([12, null, 7.5]);
  });

  it("keeps the histogram's used range with readable bucket labels", () => {
    const counts = Array.from({ length: 16 }, () => 0);
    counts[2] = 8;
    counts[5] = 4;
    const bars = histogramBars(BOUNDS, counts);
    expect(bars.labels).toEqual(["≤ 5 ms", "≤ 10 ms", "≤ 25 ms", "≤ 50 ms"]);
    expect(bars.counts).toEqual([8, 0, 0, 4]);
    counts[15] = 1;
    expect(histogramBars(BOUNDS, counts).labels.at(-1)).toBe("> 60 s");
    expect(histogramBars(BOUNDS, Array.from({ length: 16 }, () => 0))).toEqual({ labels: [], counts: [] });
    expect(histogramSummary(bars.labels, bars.counts)).toBe("Calls per latency bucket: ≤ 5 ms: 8, ≤ 10 ms: 0, ≤ 25 ms: 0, ≤ 50 ms: 4.");
  });

  it("summarises a series in words", () => {
    const s = seriesSummary(series([3, 4, 6, 0], [0, 1, 2, 0], [12, 12, 40, 0]), "in the last 24 hours");
    expect(s).toMatch(/^13 calls, 3 errors in the last 24 hours; busiest: 6 from .*; highest p95 latency 40 ms\.$/);
    expect(seriesSummary(series([0, 0]), "in the last hour")).toBe("No calls in the last hour.");
  });
});

describe("normalize", () => {
  it("keeps the host's numbers and reads a null (JSON's NaN) as 0", () => {
    const dto = report();
    const withNull = { ...dto, total: { ...dto.total, bytes_in: null, histogram: [null, 3] } };
    const r = normalize(withNull);
    expect(r.total.bytes_in).toBe(0);
    expect(r.total.histogram).toEqual([0, 3]);
    expect(r.servers[0]!.stats.errors.total).toBe(3);
    expect(r.servers[0]!.series.map((p) => p.calls)).toEqual([0, 4, 6, 0]);
    expect(r.servers[1]!.stats.latency?.exact).toBe(false);
  });
});
