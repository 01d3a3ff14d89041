// A report as the host sends it, for the Metrics tests: two servers, one with errors of two
// kinds and a prompt, and an empty window.
import type { Point, Report, Stats } from "./shape";

export const BOUNDS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];
const HOUR = 3_600_000;
export const SINCE = 1_800_000_000_000;

export function stats(calls: number, errors: Partial<Stats["errors"]> = {}, latency: Stats["latency"] = null, histogram: number[] = []): Stats {
  const e = { tool_error: 0, rpc_error: 0, protocol: 0, transport: 0, timeout: 0, cancelled: 0, denied: 0, other: 0, ...errors };
  const total = Object.values(e).reduce((a, b) => a + b, 0);
  const h = Array.from({ length: 16 }, (_, i) => histogram[i] ?? 0);
  return { calls, errors: { ...e, total }, latency, bytes_in: 2048, bytes_out: 300, tokens: 75, histogram: h };
}

export function series(calls: number[], errors: number[] = [], p95: number[] = []): Point[] {
  return calls.map((c, i) => ({
    start_ms: SINCE + i * HOUR,
    calls: c,
    errors: errors[i] ?? 0,
    mean_ms: p95[i] ? p95[i]! / 2 : 0,
    p95_ms: p95[i] ?? 0,
    max_ms: p95[i] ?? 0,
  }));
}

const lat = (p50: number, p95: number, p99: number, exact = true) => ({ p50_ms: p50, p95_ms: p95, p99_ms: p99, mean_ms: p50, max_ms: p99, exact });

export function report(): Report {
  return {
    since_ms: SINCE,
    until_ms: SINCE + 4 * HOUR,
    bucket_ms: HOUR,
    bucket_bounds_ms: BOUNDS,
    total: stats(13, { tool_error: 2, timeout: 1 }, lat(3, 40, 1500), [0, 0, 8, 0, 0, 4]),
    servers: [
      {
        server: "fs",
        stats: stats(10, { tool_error: 2, timeout: 1 }, lat(3.25, 40, 1500), [0, 0, 7, 0, 0, 3]),
        tools: [
          { kind: "prompt", name: "greet", stats: stats(1, {}, lat(0.5, 0.5, 0.5), [1]) },
          { kind: "tool", name: "read", stats: stats(9, { tool_error: 2, timeout: 1 }, lat(3.25, 40, 1500), [0, 0, 6, 0, 0, 3]) },
        ],
        series: series([0, 4, 6, 0], [0, 1, 2, 0], [0, 12, 40, 0]),
      },
      {
        server: "web",
        stats: stats(3, {}, lat(12, 12, 12, false), [0, 0, 1, 0, 2]),
        tools: [{ kind: "tool", name: "get", stats: stats(3, {}, lat(12, 12, 12, false), [0, 0, 1, 0, 2]) }],
        series: series([3, 0, 0, 0]),
      },
    ],
    series: series([3, 4, 6, 0], [0, 1, 2, 0], [12, 12, 40, 0]),
  };
}

export function emptyReport(): Report {
  return { ...report(), total: stats(0), servers: [], series: series([0, 0, 0, 0]) };
}
