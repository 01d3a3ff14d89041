// The Metrics page's numbers as a person reads them, and as the plots draw them: pure functions
// over the host's report (issue 16, point 3), tested without a window. The table is the source
// of truth; the plots and their text summaries come from the same shapes.
import type {
  ErrorCountsDto,
  LatencyDto,
  MetricStatsDto_Serialize as MetricStatsDto,
  MetricsReportDto_Serialize as MetricsReportDto,
  MetricsWindowDto,
  SeriesPointDto,
} from "../../ipc/bindings";

// The bindings type every f64 as `number | null` (JSON has no NaN); the host never sends
// null there, and the page works on plain numbers from here on.
const n = (v: number | null | undefined): number => v ?? 0;

/** Errors by kind, and all of them. */
export type ErrorCounts = { [K in keyof ErrorCountsDto]: number };
/** Latency percentiles in milliseconds; `exact` unless read from hourly histograms. */
export type Latency = { p50_ms: number; p95_ms: number; p99_ms: number; mean_ms: number; max_ms: number; exact: boolean };
/** One group's numbers. */
export interface Stats {
  calls: number;
  errors: ErrorCounts;
  latency: Latency | null;
  bytes_in: number;
  bytes_out: number;
  tokens: number;
  histogram: number[];
}
/** One point of a time series. */
export type Point = { [K in keyof SeriesPointDto]: number };
/** A tool's (prompt's, resource reads') numbers. */
export interface ToolMetrics { kind: string; name: string; stats: Stats }
/** A server's numbers, its tools' and its series. */
export interface ServerMetrics { server: string; stats: Stats; tools: ToolMetrics[]; series: Point[] }
/** The report for a window, as the page uses it. */
export interface Report {
  since_ms: number;
  until_ms: number;
  bucket_ms: number;
  bucket_bounds_ms: number[];
  total: Stats;
  servers: ServerMetrics[];
  series: Point[];
}

function errorsOf(e: ErrorCountsDto): ErrorCounts {
  return {
    tool_error: n(e.tool_error), rpc_error: n(e.rpc_error), protocol: n(e.protocol), transport: n(e.transport),
    timeout: n(e.timeout), cancelled: n(e.cancelled), denied: n(e.denied), other: n(e.other), total: n(e.total),
  };
}

function latencyOf(l: LatencyDto | null): Latency | null {
  return l && {
    p50_ms: n(l.p50_ms), p95_ms: n(l.p95_ms), p99_ms: n(l.p99_ms), mean_ms: n(l.mean_ms), max_ms: n(l.max_ms), exact: l.exact,
  };
}

function statsOf(s: MetricStatsDto): Stats {
  return {
    calls: n(s.calls), errors: errorsOf(s.errors), latency: latencyOf(s.latency), bytes_in: n(s.bytes_in),
    bytes_out: n(s.bytes_out), tokens: n(s.tokens), histogram: s.histogram.map(n),
  };
}

function pointOf(p: SeriesPointDto): Point {
  return { start_ms: n(p.start_ms), calls: n(p.calls), errors: n(p.errors), mean_ms: n(p.mean_ms), p95_ms: n(p.p95_ms), max_ms: n(p.max_ms) };
}

/** The host's report with plain numbers. */
export function normalize(r: MetricsReportDto): Report {
  return {
    since_ms: n(r.since_ms),
    until_ms: n(r.until_ms),
    bucket_ms: n(r.bucket_ms),
    bucket_bounds_ms: r.bucket_bounds_ms.map(n),
    total: statsOf(r.total),
    servers: r.servers.map((s) => ({
      server: s.server,
      stats: statsOf(s.stats),
      tools: s.tools.map((t) => ({ kind: t.kind, name: t.name, stats: statsOf(t.stats) })),
      series: s.series.map(pointOf),
    })),
    series: r.series.map(pointOf),
  };
}

/** The windows the page offers, in order, with their labels. */
export const WINDOWS: { value: MetricsWindowDto; label: string; phrase: string }[] = [
  { value: "hour", label: "Last hour", phrase: "in the last hour" },
  { value: "day", label: "Last 24 hours", phrase: "in the last 24 hours" },
  { value: "week", label: "Last 7 days", phrase: "in the last 7 days" },
  { value: "month", label: "Last 30 days", phrase: "in the last 30 days" },
];

/** The error kinds in report order, with the words the table uses. */
const ERROR_KINDS: [Exclude<keyof ErrorCounts, "total">, string][] = [
  ["tool_error", "tool error"],
  ["rpc_error", "JSON-RPC error"],
  ["protocol", "protocol"],
  ["transport", "transport"],
  ["timeout", "timeout"],
  ["cancelled", "cancelled"],
  ["denied", "denied"],
  ["other", "other"],
];

/** A latency in milliseconds: `0.42 ms`, `12 ms`, `1.25 s`; a dash when there is none. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** A byte count: `512 B`, `1.5 KB`, `2.0 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

/** The non-zero error kinds: `tool error 2, timeout 1`; empty when there were none. */
export function errorKinds(e: ErrorCounts): string {
  return ERROR_KINDS.filter(([k]) => e[k] > 0)
    .map(([k, label]) => `${label} ${e[k]}`)
    .join(", ");
}

/** One table row: a server, or one of its tools (prompts and resource reads too). */
export interface Row {
  level: "server" | "tool";
  server: string;
  /** The tool's name; the server's for a server row. */
  name: string;
  /** `tool`, `prompt`, `resource`; `server` for a server row. */
  kind: string;
  calls: number;
  errors: number;
  errorKinds: string;
  p50: string;
  p95: string;
  p99: string;
  /** Percentiles are exact (raw samples) rather than histogram bucket bounds. */
  exact: boolean;
  bytesIn: string;
  bytesOut: string;
  tokens: number;
  stats: Stats;
}

function row(level: Row["level"], server: string, name: string, kind: string, s: Stats): Row {
  return {
    level,
    server,
    name,
    kind,
    calls: s.calls,
    errors: s.errors.total,
    errorKinds: errorKinds(s.errors),
    p50: formatMs(s.latency?.p50_ms),
    p95: formatMs(s.latency?.p95_ms),
    p99: formatMs(s.latency?.p99_ms),
    exact: s.latency?.exact ?? true,
    bytesIn: formatBytes(s.bytes_in),
    bytesOut: formatBytes(s.bytes_out),
    tokens: s.tokens,
    stats: s,
  };
}

/** Every server's row followed by its tools' rows, servers by name, tools by name. */
export function tableRows(r: Report): Row[] {
  return r.servers.flatMap((s) => [
    row("server", s.server, s.server, "server", s.stats),
    ...s.tools.map((t) => row("tool", s.server, t.name, t.kind, t.stats)),
  ]);
}

/** Nothing was recorded in the window. */
export function isEmpty(r: Report): boolean {
  return r.total.calls === 0;
}

/** What the plots show: everything, one server, or one of its tools (`kind` and `name`). */
export type Selection = { server: string; tool: { kind: string; name: string } | null } | null;

/** The time series for the selection (a tool has none of its own: its server's is shown). */
export function seriesFor(r: Report, sel: Selection): Point[] {
  if (!sel) return r.series;
  return r.servers.find((s) => s.server === sel.server)?.series ?? [];
}

/** The stats whose histogram the selection shows. */
export function statsFor(r: Report, sel: Selection): Stats | null {
  if (!sel) return r.total;
  const s = r.servers.find((x) => x.server === sel.server);
  if (!s) return null;
  if (sel.tool === null) return s.stats;
  const tool = sel.tool;
  return s.tools.find((t) => t.name === tool.name && t.kind === tool.kind)?.stats ?? null;
}

/** A series as plot columns: x in seconds, calls, errors, p95 (null where nothing was sent). */
export function seriesColumns(points: Point[]): [number[], number[], number[], (number | null)[]] {
  return [
    points.map((p) => p.start_ms / 1000),
    points.map((p) => p.calls),
    points.map((p) => p.errors),
    points.map((p) => (p.p95_ms > 0 ? p.p95_ms : null)),
  ];
}

/** A histogram's bucket labels (`≤ 1 ms` … `> 60 s`) and counts, without empty tails. */
export function histogramBars(bounds: number[], counts: number[]): { labels: string[]; counts: number[] } {
  const labels = bounds.map((b) => `≤ ${formatMs(b).replace(/\.00 /, " ")}`);
  const last = bounds[bounds.length - 1];
  labels.push(`> ${formatMs(last ?? 0).replace(/\.00 /, " ")}`);
  const used = counts.map((c, i) => (c > 0 ? i : -1)).filter((i) => i >= 0);
  if (used.length === 0) return { labels: [], counts: [] };
  const from = used[0]!;
  const to = used[used.length - 1]!;
  return { labels: labels.slice(from, to + 1), counts: counts.slice(from, to + 1) };
}

/** A sentence for a time-series plot's readers: totals and the busiest bucket. */
export function seriesSummary(points: Point[], phrase: string): string {
  const calls = points.reduce((n, p) => n + p.calls, 0);
  const errors = points.reduce((n, p) => n + p.errors, 0);
  if (calls === 0) return `No calls ${phrase}.`;
  const busiest = points.reduce((a, p) => (p.calls > a.calls ? p : a));
  const worst = Math.max(...points.map((p) => p.p95_ms));
  const at = new Date(busiest.start_ms).toLocaleString();
  return `${calls} ${calls === 1 ? "call" : "calls"}, ${errors} ${errors === 1 ? "error" : "errors"} ${phrase}; ` +
    `busiest: ${busiest.calls} from ${at}; highest p95 latency ${formatMs(worst)}.`;
}

/** A sentence for a histogram's readers. */
export function histogramSummary(labels: string[], counts: number[]): string {
  if (counts.length === 0) return "No latencies: nothing was sent.";
  return "Calls per latency bucket: " + labels.map((l, i) => `${l}: ${counts[i]}`).join(", ") + ".";
}
