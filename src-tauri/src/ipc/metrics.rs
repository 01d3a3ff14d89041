//! Metrics per server and per tool (issue 16, point 3) for the Metrics page and the server
//! cards' sparklines: one report for a window, every server in it (a page of 50 cards asks
//! once, not once per card). Logic in `switchboard_core::host::metrics`; the counts become
//! `f64` here because the generated TypeScript has no 64-bit integers.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::host::Host;
use switchboard_core::store::{
    ErrorCounts, Latency, MetricsReport, SeriesPoint, ServerMetrics, Stats, ToolMetrics,
};
use tauri::State;

use super::IpcError;

/// How far back the report looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum MetricsWindowDto {
    /// The last hour.
    Hour,
    /// The last 24 hours.
    Day,
    /// The last 7 days.
    Week,
    /// The last 30 days (as long as rollups are kept).
    Month,
}

impl MetricsWindowDto {
    fn duration(self) -> Duration {
        let hours = match self {
            Self::Hour => 1,
            Self::Day => 24,
            Self::Week => 7 * 24,
            Self::Month => 30 * 24,
        };
        Duration::from_secs(hours * 3600)
    }
}

/// Errors by kind.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ErrorCountsDto {
    /// Results the tool marked `isError`.
    pub tool_error: f64,
    /// JSON-RPC errors from the server.
    pub rpc_error: f64,
    /// Protocol violations and answers the host refused.
    pub protocol: f64,
    /// Connection ended or server not running.
    pub transport: f64,
    /// No answer in time.
    pub timeout: f64,
    /// Stopped by the person or the run.
    pub cancelled: f64,
    /// Refused by the policy or the person.
    pub denied: f64,
    /// Anything else.
    pub other: f64,
    /// All of them.
    pub total: f64,
}

/// Latency of the requests that were sent, in milliseconds.
#[derive(Clone, Debug, Serialize, Type)]
pub struct LatencyDto {
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
    /// Exact (raw samples) or bucket bounds (hourly rollups were part of the window).
    pub exact: bool,
}

/// One group's numbers.
#[derive(Clone, Debug, Serialize, Type)]
pub struct MetricStatsDto {
    /// Requests, refused ones included.
    pub calls: f64,
    /// Errors by kind.
    pub errors: ErrorCountsDto,
    /// `null` when none was sent.
    pub latency: Option<LatencyDto>,
    /// Bytes of arguments.
    pub bytes_in: f64,
    /// Bytes of results.
    pub bytes_out: f64,
    /// Estimated tokens of results.
    pub tokens: f64,
    /// Sent requests per latency bucket (`bucket_bounds_ms`, then overflow).
    pub histogram: Vec<f64>,
}

/// One tool's, prompt's or a server's resource reads' numbers.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ToolMetricsDto {
    /// `tool`, `resource` or `prompt`.
    pub kind: String,
    /// Its name (`resources/read` for reads).
    pub name: String,
    /// The numbers.
    pub stats: MetricStatsDto,
}

/// One point of a time series.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SeriesPointDto {
    /// The bucket's start, in milliseconds since the Unix epoch.
    pub start_ms: f64,
    /// Requests that ended in it.
    pub calls: f64,
    /// Of them, errors.
    pub errors: f64,
    /// Mean latency, in milliseconds (0 when none was sent).
    pub mean_ms: f64,
    /// 95th percentile latency, in milliseconds (0 when none was sent).
    pub p95_ms: f64,
    /// Largest latency, in milliseconds.
    pub max_ms: f64,
}

/// One server's numbers, its tools' and its series.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerMetricsDto {
    /// The server.
    pub server: String,
    /// Everything of this server.
    pub stats: MetricStatsDto,
    /// Per tool, by name.
    pub tools: Vec<ToolMetricsDto>,
    /// Its calls over time, on the report's buckets.
    pub series: Vec<SeriesPointDto>,
}

/// The report for a window.
#[derive(Clone, Debug, Serialize, Type)]
pub struct MetricsReportDto {
    /// The window's start, in milliseconds since the Unix epoch.
    pub since_ms: f64,
    /// Its end.
    pub until_ms: f64,
    /// Width of one series point, in milliseconds.
    pub bucket_ms: f64,
    /// Upper bounds of the histogram buckets, in milliseconds (then overflow).
    pub bucket_bounds_ms: Vec<f64>,
    /// Everything in the window.
    pub total: MetricStatsDto,
    /// Per server, by name (servers with no request in the window are absent).
    pub servers: Vec<ServerMetricsDto>,
    /// Every server's calls over time, oldest first.
    pub series: Vec<SeriesPointDto>,
}

fn floats(v: &[u64]) -> Vec<f64> {
    v.iter().map(|n| *n as f64).collect()
}

impl From<ErrorCounts> for ErrorCountsDto {
    fn from(e: ErrorCounts) -> Self {
        Self {
            total: e.total() as f64,
            tool_error: e.tool_error as f64,
            rpc_error: e.rpc_error as f64,
            protocol: e.protocol as f64,
            transport: e.transport as f64,
            timeout: e.timeout as f64,
            cancelled: e.cancelled as f64,
            denied: e.denied as f64,
            other: e.other as f64,
        }
    }
}

impl From<Latency> for LatencyDto {
    fn from(l: Latency) -> Self {
        Self {
            p50_ms: l.p50_ms,
            p95_ms: l.p95_ms,
            p99_ms: l.p99_ms,
            mean_ms: l.mean_ms,
            max_ms: l.max_ms,
            exact: l.exact,
        }
    }
}

impl From<Stats> for MetricStatsDto {
    fn from(s: Stats) -> Self {
        Self {
            calls: s.calls as f64,
            errors: s.errors.into(),
            latency: s.latency.map(Into::into),
            bytes_in: s.bytes_in as f64,
            bytes_out: s.bytes_out as f64,
            tokens: s.tokens as f64,
            histogram: floats(&s.histogram),
        }
    }
}

impl From<ToolMetrics> for ToolMetricsDto {
    fn from(t: ToolMetrics) -> Self {
        Self {
            kind: t.kind.as_str().to_owned(),
            name: t.name,
            stats: t.stats.into(),
        }
    }
}

impl From<SeriesPoint> for SeriesPointDto {
    fn from(p: SeriesPoint) -> Self {
        Self {
            start_ms: p.start_ms as f64,
            calls: p.calls as f64,
            errors: p.errors as f64,
            mean_ms: p.mean_ms,
            p95_ms: p.p95_ms,
            max_ms: p.max_ms,
        }
    }
}

impl From<ServerMetrics> for ServerMetricsDto {
    fn from(s: ServerMetrics) -> Self {
        Self {
            server: s.server.to_string(),
            stats: s.stats.into(),
            tools: s.tools.into_iter().map(Into::into).collect(),
            series: s.series.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<MetricsReport> for MetricsReportDto {
    fn from(r: MetricsReport) -> Self {
        Self {
            since_ms: r.since_ms as f64,
            until_ms: r.until_ms as f64,
            bucket_ms: r.bucket_ms as f64,
            bucket_bounds_ms: floats(&r.bucket_bounds_ms),
            total: r.total.into(),
            servers: r.servers.into_iter().map(Into::into).collect(),
            series: r.series.into_iter().map(Into::into).collect(),
        }
    }
}

/// Calls, errors by kind, latency percentiles and histogram, bytes and tokens per server and
/// per tool over `window`, with the time series of all and of each server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn metrics_report(
    host: State<'_, Host>,
    window: MetricsWindowDto,
) -> Result<MetricsReportDto, IpcError> {
    Ok(host.metrics().report(None, window.duration()).await?.into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use serde_json::{json, Value};

    use super::super::tests::audit::{app, call};

    #[test]
    fn answers_through_the_real_invoke_path_and_refuses_unknown_windows() {
        let app = app();
        for w in ["hour", "day", "week", "month"] {
            let out = call(&app, "metrics_report", json!({"window": w})).unwrap();
            let r: Value = serde_json::from_str(&out).unwrap();
            // Nothing recorded yet: an empty report with a full series and the bucket bounds.
            assert_eq!(r["total"]["calls"], 0.0, "{w}");
            assert_eq!(r["servers"], json!([]), "{w}");
            assert_eq!(r["series"].as_array().unwrap().len(), 60, "{w}");
            assert_eq!(r["bucket_bounds_ms"].as_array().unwrap().len(), 15, "{w}");
        }
        let day = call(&app, "metrics_report", json!({"window": "day"})).unwrap();
        let r: Value = serde_json::from_str(&day).unwrap();
        let span = r["until_ms"].as_f64().unwrap() - r["since_ms"].as_f64().unwrap();
        assert_eq!(span, 24.0 * 3600.0 * 1000.0);
        for bad in [
            json!({"window": "year"}),
            json!({"window": 3600}),
            json!({}),
        ] {
            assert!(call(&app, "metrics_report", bad.clone()).is_err(), "{bad}");
        }
    }
}
