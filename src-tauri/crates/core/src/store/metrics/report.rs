//! The metrics report's types and how samples and rollups add up into them (see
//! `store::metrics` for the tiers and the percentile rule). Plain data, serializable, so the
//! CLI prints it as JSON and the app can plot it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{MetricKind, MetricSample, Outcome, Rollup, BUCKETS_MS, HISTOGRAM_LEN};
use crate::ids::ServerId;

/// What to report on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsQuery {
    /// One server, or all.
    pub server: Option<ServerId>,
    /// The window's start, in milliseconds since the Unix epoch (inclusive).
    pub since_ms: i64,
    /// Its end (exclusive).
    pub until_ms: i64,
    /// Points of the time series (at least 1).
    pub points: u32,
}

/// Errors by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// Results marked `isError` by the tool.
    pub tool_error: u64,
    /// JSON-RPC errors from the server.
    pub rpc_error: u64,
    /// Protocol violations and answers the host refused.
    pub protocol: u64,
    /// Connection ended or server not running.
    pub transport: u64,
    /// No answer in time.
    pub timeout: u64,
    /// Stopped by the person or the run.
    pub cancelled: u64,
    /// Refused by the policy or the person.
    pub denied: u64,
    /// Anything else.
    pub other: u64,
}

impl ErrorCounts {
    fn add(&mut self, o: Outcome, n: u64) {
        let slot = match o {
            Outcome::Ok => return,
            Outcome::ToolError => &mut self.tool_error,
            Outcome::RpcError => &mut self.rpc_error,
            Outcome::Protocol => &mut self.protocol,
            Outcome::Transport => &mut self.transport,
            Outcome::Timeout => &mut self.timeout,
            Outcome::Cancelled => &mut self.cancelled,
            Outcome::Denied => &mut self.denied,
            Outcome::Other => &mut self.other,
        };
        *slot += n;
    }

    /// Every error together.
    pub fn total(&self) -> u64 {
        self.tool_error
            + self.rpc_error
            + self.protocol
            + self.transport
            + self.timeout
            + self.cancelled
            + self.denied
            + self.other
    }
}

/// Latency of the requests that were sent, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Mean.
    pub mean_ms: f64,
    /// Largest.
    pub max_ms: f64,
    /// Exact (raw samples only) or from the histogram's buckets.
    pub exact: bool,
}

/// One group's numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Requests, refused ones included.
    pub calls: u64,
    /// Errors by kind.
    pub errors: ErrorCounts,
    /// `None` when none was sent.
    pub latency: Option<Latency>,
    /// Bytes of arguments.
    pub bytes_in: u64,
    /// Bytes of results.
    pub bytes_out: u64,
    /// Estimated tokens of results.
    pub tokens: u64,
    /// Sent requests per latency bucket (`bucket_bounds_ms`, then overflow).
    pub histogram: Vec<u64>,
}

/// One tool's (or prompt's, or a server's resource reads') numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolMetrics {
    /// Tool, resource or prompt.
    pub kind: MetricKind,
    /// Its name.
    pub name: String,
    /// The numbers.
    pub stats: Stats,
}

/// One server's numbers, and its tools'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerMetrics {
    /// The server.
    pub server: ServerId,
    /// Everything of this server.
    pub stats: Stats,
    /// Per tool, by name.
    pub tools: Vec<ToolMetrics>,
    /// This server's calls over time, on the report's buckets (what a card's sparkline draws:
    /// every server's in one query).
    pub series: Vec<SeriesPoint>,
}

/// One point of the time series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// The bucket's start, in milliseconds since the Unix epoch.
    pub start_ms: i64,
    /// Requests that ended in it.
    pub calls: u64,
    /// Of them, errors.
    pub errors: u64,
    /// Mean latency of the sent ones, in milliseconds (0 when none).
    pub mean_ms: f64,
    /// Largest latency, in milliseconds.
    pub max_ms: f64,
    /// 95th percentile latency of the sent ones, in milliseconds (0 when none; from the
    /// histogram when rollups are part of the bucket, as [`Latency::exact`] says for a group).
    pub p95_ms: f64,
}

/// The report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsReport {
    /// The window's start.
    pub since_ms: i64,
    /// Its end.
    pub until_ms: i64,
    /// Width of one series point.
    pub bucket_ms: i64,
    /// Upper bounds of the histogram buckets, in milliseconds (then overflow).
    pub bucket_bounds_ms: Vec<u64>,
    /// Everything in the window.
    pub total: Stats,
    /// Per server, by name.
    pub servers: Vec<ServerMetrics>,
    /// Calls over time, oldest first.
    pub series: Vec<SeriesPoint>,
}

/// A group's running totals.
#[derive(Default)]
struct Acc {
    sum: Rollup,
    errors: ErrorCounts,
    /// Durations of raw sent samples, in microseconds.
    raw_us: Vec<u64>,
    /// Whether a rollup contributed (percentiles then come from the histogram).
    approx: bool,
}

impl Acc {
    fn sample(&mut self, s: &MetricSample) {
        let mut one = Rollup::default();
        one.add(s);
        self.sum.merge(&one);
        self.errors.add(s.outcome, 1);
        if s.outcome.timed() {
            self.raw_us.push(s.duration_us);
        }
    }

    fn rollup(&mut self, outcome: Outcome, r: &Rollup) {
        self.sum.merge(r);
        self.errors.add(outcome, r.calls);
        self.approx = true;
    }

    fn finish(mut self) -> Stats {
        self.raw_us.sort_unstable();
        let timed: u64 = self.sum.histogram.iter().sum();
        let latency = (timed > 0).then(|| {
            let ms = |us: u64| us as f64 / 1000.0;
            let max = ms(self.sum.max_us);
            let at = |p: f64| -> f64 {
                if self.approx {
                    from_histogram(&self.sum.histogram, p).map_or(max, |b| b.min(max))
                } else {
                    ms(self.raw_us[nearest_rank(self.raw_us.len(), p)])
                }
            };
            Latency {
                p50_ms: at(0.50),
                p95_ms: at(0.95),
                p99_ms: at(0.99),
                mean_ms: ms(self.sum.duration_us) / timed as f64,
                max_ms: max,
                exact: !self.approx,
            }
        });
        Stats {
            calls: self.sum.calls,
            errors: self.errors,
            latency,
            bytes_in: self.sum.bytes_in,
            bytes_out: self.sum.bytes_out,
            tokens: self.sum.tokens,
            histogram: self.sum.histogram.to_vec(),
        }
    }
}

/// The index of the nearest-rank `p` percentile in a sorted list of `n`.
fn nearest_rank(n: usize, p: f64) -> usize {
    let rank = (p * n as f64).ceil() as usize;
    rank.clamp(1, n.max(1)) - 1
}

/// The upper bound (ms) of the bucket holding the `p` percentile; `None` in the overflow.
fn from_histogram(h: &[u64; HISTOGRAM_LEN], p: f64) -> Option<f64> {
    let n: u64 = h.iter().sum();
    let rank = ((p * n as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, c) in h.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return BUCKETS_MS.get(i).map(|&b| b as f64);
        }
    }
    None
}

/// A series' buckets, each a group of its own.
fn buckets(n: usize) -> Vec<Acc> {
    (0..n).map(|_| Acc::default()).collect()
}

/// A series' buckets as points.
fn points(accs: Vec<Acc>, since_ms: i64, width: i64) -> Vec<SeriesPoint> {
    accs.into_iter()
        .zip(0_i64..)
        .map(|(acc, i)| {
            let s = acc.finish();
            let lat = s.latency.as_ref();
            SeriesPoint {
                start_ms: since_ms + i * width,
                calls: s.calls,
                errors: s.errors.total(),
                mean_ms: lat.map_or(0.0, |l| l.mean_ms),
                max_ms: lat.map_or(0.0, |l| l.max_ms),
                p95_ms: lat.map_or(0.0, |l| l.p95_ms),
            }
        })
        .collect()
}

/// Adds samples and rollups up into a report.
pub(super) struct Builder {
    q: MetricsQuery,
    bucket_ms: i64,
    total: Acc,
    servers: BTreeMap<ServerId, Acc>,
    tools: BTreeMap<(ServerId, MetricKind, String), Acc>,
    points: Vec<Acc>,
    server_points: BTreeMap<ServerId, Vec<Acc>>,
}

impl Builder {
    pub(super) fn new(q: &MetricsQuery) -> Self {
        let points = i64::from(q.points.max(1));
        let span = (q.until_ms - q.since_ms).max(1);
        let bucket_ms = (span + points - 1) / points;
        Self {
            q: q.clone(),
            bucket_ms,
            total: Acc::default(),
            servers: BTreeMap::new(),
            tools: BTreeMap::new(),
            points: buckets(q.points.max(1) as usize),
            server_points: BTreeMap::new(),
        }
    }

    /// The series buckets `at_ms` falls in (the window's and its server's), if any.
    fn point(&mut self, server: &ServerId, at_ms: i64) -> Option<[&mut Acc; 2]> {
        let i = (at_ms.max(self.q.since_ms) - self.q.since_ms) / self.bucket_ms;
        let i = usize::try_from(i).ok().filter(|i| *i < self.points.len())?;
        let n = self.points.len();
        let own = self
            .server_points
            .entry(server.clone())
            .or_insert_with(|| buckets(n));
        Some([&mut self.points[i], &mut own[i]])
    }

    fn groups(&mut self, server: &ServerId, kind: MetricKind, name: &str) -> [&mut Acc; 3] {
        let s = self.servers.entry(server.clone()).or_default();
        let t = self
            .tools
            .entry((server.clone(), kind, name.to_owned()))
            .or_default();
        [&mut self.total, s, t]
    }

    pub(super) fn sample(&mut self, s: &MetricSample) {
        for acc in self.groups(&s.server, s.kind, &s.name) {
            acc.sample(s);
        }
        for acc in self.point(&s.server, s.at_ms).into_iter().flatten() {
            acc.sample(s);
        }
    }

    pub(super) fn rollup(
        &mut self,
        hour_ms: i64,
        server: &ServerId,
        kind: MetricKind,
        name: &str,
        outcome: Outcome,
        r: &Rollup,
    ) {
        for acc in self.groups(server, kind, name) {
            acc.rollup(outcome, r);
        }
        for acc in self.point(server, hour_ms).into_iter().flatten() {
            acc.rollup(outcome, r);
        }
    }

    pub(super) fn finish(mut self) -> MetricsReport {
        let (since, width) = (self.q.since_ms, self.bucket_ms);
        let mut tools: BTreeMap<ServerId, Vec<ToolMetrics>> = BTreeMap::new();
        for ((server, kind, name), acc) in self.tools {
            tools.entry(server).or_default().push(ToolMetrics {
                kind,
                name,
                stats: acc.finish(),
            });
        }
        let n = self.points.len();
        let servers = self
            .servers
            .into_iter()
            .map(|(server, acc)| {
                let own = self.server_points.remove(&server);
                ServerMetrics {
                    tools: tools.remove(&server).unwrap_or_default(),
                    series: points(own.unwrap_or_else(|| buckets(n)), since, width),
                    server,
                    stats: acc.finish(),
                }
            })
            .collect();
        MetricsReport {
            since_ms: self.q.since_ms,
            until_ms: self.q.until_ms,
            bucket_ms: self.bucket_ms,
            bucket_bounds_ms: BUCKETS_MS.to_vec(),
            total: self.total.finish(),
            servers,
            series: points(self.points, since, width),
        }
    }
}

#[cfg(test)]
mod tests;
