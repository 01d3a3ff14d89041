//! The `metric_samples`, `metric_rollups` and `metric_export` tables: how each server and each
//! tool behaved over time (issue 16, point 3).
//!
//! # Two tiers, disjoint
//! Every request that went through the seam is one raw sample (server, kind, name, outcome,
//! duration, bytes, tokens). Raw samples are kept for [`RAW_KEEP_MS`] (a day), at most
//! [`RAW_MAX`] of them; [`Store::compact_metrics`] folds older ones (and the oldest beyond the
//! cap) into one rollup row per hour, server, kind, name and outcome, with a latency histogram
//! of fixed buckets ([`BUCKETS_MS`]), and deletes them. Rollups are kept for
//! [`ROLLUP_KEEP_MS`] (30 days). A sample lives in exactly one tier, so a report adds both
//! without counting anything twice.
//!
//! # Percentiles
//! Over raw samples alone, p50/p95/p99 are exact (nearest rank over the window's durations,
//! [`Latency::exact`] true). As soon as a rollup is part of the window they come from the merged
//! histogram instead: the upper bound of the bucket the rank falls in, never above the largest
//! duration seen ([`Latency::exact`] false). A rollup covers its whole hour: a window starting
//! mid-hour includes all of that hour's folded calls.
//!
//! Refused requests (outcome [`Outcome::Denied`]) count as calls and errors but have no latency:
//! nothing was sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::ids::ServerId;

mod report;

pub use report::{
    ErrorCounts, Latency, MetricsQuery, MetricsReport, SeriesPoint, ServerMetrics, Stats,
    ToolMetrics,
};

/// Upper bounds of the latency histogram's buckets, in milliseconds; one overflow bucket
/// follows. Roughly 1-2.5-5 steps: enough resolution for p95 of a call between a local echo
/// and a minute-long remote job.
pub const BUCKETS_MS: [u64; 15] = [
    1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000,
];
/// Buckets of a histogram: [`BUCKETS_MS`] plus the overflow.
pub const HISTOGRAM_LEN: usize = BUCKETS_MS.len() + 1;
/// How long raw samples are kept: a day.
pub const RAW_KEEP_MS: i64 = 24 * HOUR_MS;
/// The most raw samples kept (about 20 MB); beyond it the oldest are folded early.
pub const RAW_MAX: i64 = 200_000;
/// How long hourly rollups are kept: 30 days.
pub const ROLLUP_KEEP_MS: i64 = 30 * 24 * HOUR_MS;
/// The most samples one OTLP export claims.
pub const EXPORT_BATCH_MAX: i64 = 50_000;
const HOUR_MS: i64 = 3_600_000;

/// What kind of request a sample is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// A tool call.
    Tool,
    /// A resource read (one name per server: `resources/read`).
    Resource,
    /// A prompt get.
    Prompt,
}

impl MetricKind {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::Tool, Self::Resource, Self::Prompt]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A result, not marked as an error.
    Ok,
    /// A result the tool marked `isError`.
    ToolError,
    /// The server answered with a JSON-RPC error.
    RpcError,
    /// The server broke the protocol, or the host refused its answer (too large, too deep).
    Protocol,
    /// The connection ended or the server was not running.
    Transport,
    /// No answer within the server's request timeout.
    Timeout,
    /// The run was stopped.
    Cancelled,
    /// The policy or the person refused it; nothing was sent.
    Denied,
    /// Anything else that failed.
    Other,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Self; 9] = [
        Self::Ok,
        Self::ToolError,
        Self::RpcError,
        Self::Protocol,
        Self::Transport,
        Self::Timeout,
        Self::Cancelled,
        Self::Denied,
        Self::Other,
    ];

    /// As stored (and as exported).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::RpcError => "rpc_error",
            Self::Protocol => "protocol",
            Self::Transport => "transport",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Denied => "denied",
            Self::Other => "other",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// Whether the request was sent and so has a latency.
    pub fn timed(self) -> bool {
        self != Self::Denied
    }
}

/// One request as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricSample {
    /// When it ended, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The server.
    pub server: ServerId,
    /// Tool call, resource read or prompt get.
    pub kind: MetricKind,
    /// The tool or prompt (`resources/read` for reads).
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// From sending to the answer, in microseconds (0 when refused).
    pub duration_us: u64,
    /// Bytes of the arguments as JSON.
    pub bytes_in: u64,
    /// Bytes of the result as JSON.
    pub bytes_out: u64,
    /// Estimated tokens of the result as a model would get it.
    pub tokens: u64,
}

/// Which bucket of the histogram a duration falls in.
pub fn bucket_of(duration_us: u64) -> usize {
    BUCKETS_MS
        .iter()
        .position(|&b| duration_us <= b * 1000)
        .unwrap_or(BUCKETS_MS.len())
}

/// What a compaction did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Raw samples folded into rollups.
    pub folded: u64,
    /// Rollup rows deleted for age.
    pub expired: u64,
}

/// Samples claimed for one OTLP export: ids `(from, to]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportClaim {
    /// The watermark before the claim.
    pub from: i64,
    /// The watermark after it.
    pub to: i64,
    /// The samples.
    pub samples: Vec<MetricSample>,
}

type SampleRow = (i64, i64, String, String, String, String, i64, i64, i64, i64);

/// A `SELECT` of whole sample rows followed by `$rest` (a literal: every query is a static
/// string, as sqlx wants).
macro_rules! select_samples {
    ($rest:literal) => {
        concat!(
            "SELECT id, at_ms, server, kind, name, outcome, duration_us, bytes_in, bytes_out, \
             est_units FROM metric_samples ",
            $rest
        )
    };
}

fn sample_of(r: SampleRow) -> Option<(i64, MetricSample)> {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Some((
        r.0,
        MetricSample {
            at_ms: r.1,
            server: ServerId::new(&r.2).ok()?,
            kind: MetricKind::parse(&r.3)?,
            name: r.4,
            outcome: Outcome::parse(&r.5)?,
            duration_us: n(r.6),
            bytes_in: n(r.7),
            bytes_out: n(r.8),
            tokens: n(r.9),
        },
    ))
}

fn db_int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// One rollup row's numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rollup {
    pub calls: u64,
    pub duration_us: u64,
    pub max_us: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub tokens: u64,
    pub histogram: [u64; HISTOGRAM_LEN],
}

impl Rollup {
    fn add(&mut self, s: &MetricSample) {
        self.calls += 1;
        self.bytes_in += s.bytes_in;
        self.bytes_out += s.bytes_out;
        self.tokens += s.tokens;
        if s.outcome.timed() {
            self.duration_us += s.duration_us;
            self.max_us = self.max_us.max(s.duration_us);
            self.histogram[bucket_of(s.duration_us)] += 1;
        }
    }

    fn merge(&mut self, o: &Self) {
        self.calls += o.calls;
        self.duration_us += o.duration_us;
        self.max_us = self.max_us.max(o.max_us);
        self.bytes_in += o.bytes_in;
        self.bytes_out += o.bytes_out;
        self.tokens += o.tokens;
        for (a, b) in self.histogram.iter_mut().zip(o.histogram) {
            *a += b;
        }
    }
}

type RollupKey = (i64, String, String, String, String);
type RollupRow = (
    i64,
    String,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    String,
);

fn parse_histogram(text: &str) -> [u64; HISTOGRAM_LEN] {
    let mut out = [0; HISTOGRAM_LEN];
    if let Ok(v) = serde_json::from_str::<Vec<u64>>(text) {
        for (o, n) in out.iter_mut().zip(v) {
            *o = n;
        }
    }
    out
}

fn rollup_of(r: &RollupRow) -> Rollup {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Rollup {
        calls: n(r.5),
        duration_us: n(r.6),
        max_us: n(r.7),
        bytes_in: n(r.8),
        bytes_out: n(r.9),
        tokens: n(r.10),
        histogram: parse_histogram(&r.11),
    }
}

impl Store {
    /// Appends samples, all in one transaction.
    pub async fn record_metrics(&self, samples: &[MetricSample]) -> Result<(), StoreError> {
        if samples.is_empty() {
            return Ok(());
        }
        let mut tx = self.write_tx().await?;
        for s in samples {
            sqlx::query(
                "INSERT INTO metric_samples (at_ms, server, kind, name, outcome, duration_us,
                     bytes_in, bytes_out, est_units) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(s.at_ms)
            .bind(s.server.as_str())
            .bind(s.kind.as_str())
            .bind(&s.name)
            .bind(s.outcome.as_str())
            .bind(db_int(s.duration_us))
            .bind(db_int(s.bytes_in))
            .bind(db_int(s.bytes_out))
            .bind(db_int(s.tokens))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Folds raw samples older than [`RAW_KEEP_MS`] before `now_ms` (and the oldest beyond
    /// [`RAW_MAX`]) into hourly rollups, and deletes rollups older than [`ROLLUP_KEEP_MS`].
    pub async fn compact_metrics(&self, now_ms: i64) -> Result<Compacted, StoreError> {
        let cutoff = now_ms.saturating_sub(RAW_KEEP_MS);
        let mut tx = self.write_tx().await?;
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM metric_samples")
            .fetch_one(&mut *tx)
            .await?;
        // Samples with an id below this fold too: the row cap.
        let below: i64 = if count > RAW_MAX {
            let (id,): (i64,) =
                sqlx::query_as("SELECT id FROM metric_samples ORDER BY id LIMIT 1 OFFSET ?")
                    .bind(count - RAW_MAX)
                    .fetch_one(&mut *tx)
                    .await?;
            id
        } else {
            i64::MIN
        };
        let rows: Vec<SampleRow> = sqlx::query_as(select_samples!("WHERE at_ms < ? OR id < ?"))
            .bind(cutoff)
            .bind(below)
            .fetch_all(&mut *tx)
            .await?;
        let folded = u64::try_from(rows.len()).unwrap_or(u64::MAX);
        let mut acc: BTreeMap<RollupKey, Rollup> = BTreeMap::new();
        for (_, s) in rows.into_iter().filter_map(sample_of) {
            let key = (
                s.at_ms.div_euclid(HOUR_MS) * HOUR_MS,
                s.server.as_str().to_owned(),
                s.kind.as_str().to_owned(),
                s.name.clone(),
                s.outcome.as_str().to_owned(),
            );
            acc.entry(key).or_default().add(&s);
        }
        for (key, mut r) in acc {
            let old: Option<RollupRow> = sqlx::query_as(
                "SELECT hour_ms, server, kind, name, outcome, calls, duration_us, max_us,
                        bytes_in, bytes_out, est_units, histogram FROM metric_rollups
                 WHERE hour_ms = ? AND server = ? AND kind = ? AND name = ? AND outcome = ?",
            )
            .bind(key.0)
            .bind(&key.1)
            .bind(&key.2)
            .bind(&key.3)
            .bind(&key.4)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(old) = old {
                r.merge(&rollup_of(&old));
            }
            let histogram = serde_json::to_string(&r.histogram.to_vec()).unwrap_or_default();
            sqlx::query(
                "INSERT OR REPLACE INTO metric_rollups (hour_ms, server, kind, name, outcome,
                     calls, duration_us, max_us, bytes_in, bytes_out, est_units, histogram)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(key.0)
            .bind(&key.1)
            .bind(&key.2)
            .bind(&key.3)
            .bind(&key.4)
            .bind(db_int(r.calls))
            .bind(db_int(r.duration_us))
            .bind(db_int(r.max_us))
            .bind(db_int(r.bytes_in))
            .bind(db_int(r.bytes_out))
            .bind(db_int(r.tokens))
            .bind(histogram)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("DELETE FROM metric_samples WHERE at_ms < ? OR id < ?")
            .bind(cutoff)
            .bind(below)
            .execute(&mut *tx)
            .await?;
        let expired = sqlx::query("DELETE FROM metric_rollups WHERE hour_ms < ?")
            .bind(now_ms.saturating_sub(ROLLUP_KEEP_MS))
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(Compacted { folded, expired })
    }

    /// Claims the samples recorded since the last export (at most [`EXPORT_BATCH_MAX`]) and
    /// moves the watermark past them; `None` when there are none. Two processes never claim the
    /// same sample: the watermark moves in a write transaction.
    pub async fn claim_metrics_export(&self) -> Result<Option<ExportClaim>, StoreError> {
        let mut tx = self.write_tx().await?;
        let from: i64 =
            sqlx::query_as::<_, (i64,)>("SELECT last_sample FROM metric_export WHERE id = 1")
                .fetch_optional(&mut *tx)
                .await?
                .map_or(0, |(v,)| v);
        let rows: Vec<SampleRow> =
            sqlx::query_as(select_samples!("WHERE id > ? ORDER BY id LIMIT ?"))
                .bind(from)
                .bind(EXPORT_BATCH_MAX)
                .fetch_all(&mut *tx)
                .await?;
        let Some(to) = rows.last().map(|r| r.0) else {
            return Ok(None);
        };
        sqlx::query(
            "INSERT INTO metric_export (id, last_sample) VALUES (1, ?)
             ON CONFLICT(id) DO UPDATE SET last_sample = excluded.last_sample",
        )
        .bind(to)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(ExportClaim {
            from,
            to,
            samples: rows
                .into_iter()
                .filter_map(sample_of)
                .map(|(_, s)| s)
                .collect(),
        }))
    }

    /// Gives a claim back after its export failed, so the next one sends its samples again;
    /// does nothing when another claim followed it.
    pub async fn unclaim_metrics_export(&self, claim: &ExportClaim) -> Result<(), StoreError> {
        sqlx::query("UPDATE metric_export SET last_sample = ? WHERE id = 1 AND last_sample = ?")
            .bind(claim.from)
            .bind(claim.to)
            .execute(self.writer())
            .await?;
        Ok(())
    }

    /// The report for `q`: per server and per tool, and a time series (see the module docs for
    /// how the tiers and percentiles combine).
    pub async fn metrics_report(&self, q: &MetricsQuery) -> Result<MetricsReport, StoreError> {
        let server = q.server.as_ref().map(ServerId::as_str);
        let raw: Vec<SampleRow> = sqlx::query_as(select_samples!(
            "WHERE at_ms >= ? AND at_ms < ? AND (? IS NULL OR server = ?)"
        ))
        .bind(q.since_ms)
        .bind(q.until_ms)
        .bind(server)
        .bind(server)
        .fetch_all(self.reader())
        .await?;
        let rollups: Vec<RollupRow> = sqlx::query_as(
            "SELECT hour_ms, server, kind, name, outcome, calls, duration_us, max_us,
                    bytes_in, bytes_out, est_units, histogram FROM metric_rollups
             WHERE hour_ms >= ? AND hour_ms < ? AND (? IS NULL OR server = ?)",
        )
        .bind(q.since_ms.div_euclid(HOUR_MS) * HOUR_MS)
        .bind(q.until_ms)
        .bind(server)
        .bind(server)
        .fetch_all(self.reader())
        .await?;
        let mut b = report::Builder::new(q);
        for (_, s) in raw.into_iter().filter_map(sample_of) {
            b.sample(&s);
        }
        for r in &rollups {
            let (Ok(server), Some(kind), Some(outcome)) = (
                ServerId::new(&r.1),
                MetricKind::parse(&r.2),
                Outcome::parse(&r.4),
            ) else {
                continue;
            };
            b.rollup(r.0, &server, kind, &r.3, outcome, &rollup_of(r));
        }
        Ok(b.finish())
    }
}

#[cfg(test)]
mod tests;
