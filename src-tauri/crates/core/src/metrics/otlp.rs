//! OpenTelemetry export of the metrics (issue 16, point 3): off unless the person names a
//! collector ([`crate::settings::MetricsExport`]); then every interval the samples recorded
//! since the last export are posted to it as one OTLP/HTTP request, JSON-encoded.
//!
//! # Why hand-written OTLP/JSON and not the `opentelemetry-otlp` crate
//! The SDK aggregates instruments in process memory; our numbers live in SQLite, shared by the
//! app and every CLI, and must be exported once whichever process runs. The export is
//! therefore a query (a claim of the samples since a watermark, `store::metrics`) turned into
//! one `ExportMetricsServiceRequest`, written with serde after the published protobuf-JSON
//! mapping (lowerCamelCase fields, 64-bit integers as strings, enums as numbers). That needs no
//! new dependency (the SDK's HTTP exporter also pins another major of reqwest than ours).
//!
//! # What is sent
//! Delta temporality (each export covers only its own samples), metrics named
//! `switchboard.mcp.*`: `calls` (count per server, kind, tool and outcome), `call.duration`
//! (an explicit-bucket histogram in seconds per server, kind and tool, refused calls left out),
//! `call.request.size` and `call.response.size` (bytes) and `call.tokens`. Labels are server,
//! tool and prompt names, the request kind and the outcome: never arguments, results, URIs or
//! any secret. A failed post gives its claim back, so the next one sends those samples again.

use std::collections::BTreeMap;
use std::sync::Weak;
use std::time::Duration;

use serde_json::{json, Value};

use super::Metrics;
use crate::error::HostError;
use crate::settings::{self, MetricsExport};
use crate::store::{bucket_of, MetricSample, BUCKETS_MS, HISTOGRAM_LEN};

/// How often the exporter looks at the setting while export is off.
const OFF_POLL: Duration = Duration::from_secs(10);
/// How long one post may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// The instrumentation scope's name.
const SCOPE: &str = "switchboard";

/// What one export did.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ExportOutcome {
    /// No collector is set: nothing was sent.
    Off,
    /// Nothing new since the last export: nothing was sent.
    Nothing,
    /// Posted.
    Sent {
        /// The URL posted to.
        url: String,
        /// Samples covered.
        samples: usize,
    },
}

/// Starts the periodic exporter. It holds the metrics weakly: it ends once they are dropped.
pub(super) fn spawn(metrics: Weak<Metrics>) {
    tokio::spawn(async move {
        let mut wait = OFF_POLL;
        loop {
            tokio::time::sleep(wait).await;
            let Some(metrics) = metrics.upgrade() else {
                return;
            };
            let export = metrics.export_setting();
            wait = export
                .as_ref()
                .map_or(OFF_POLL, |e| Duration::from_secs(e.interval_secs));
            if let Some(e) = export {
                if let Err(err) = export_to(&metrics, &e).await {
                    tracing::warn!(error = %err, "metrics export failed; it is retried next time");
                }
            }
        }
    });
}

/// Turns the OTLP export on (the endpoint is validated) or off; returns it as saved.
pub(super) fn save(
    metrics: &Metrics,
    export: Option<MetricsExport>,
) -> Result<Option<MetricsExport>, HostError> {
    let saved = settings::save_metrics_export(&metrics.data_dir, export).map_err(|e| match e {
        settings::SettingsError::Invalid { .. } => HostError::Invalid(e.to_string()),
        settings::SettingsError::Io { path, source } => HostError::Io {
            context: format!("saving the settings to {}", path.display()),
            source,
        },
    })?;
    tracing::info!(on = saved.is_some(), "metrics export changed");
    Ok(saved)
}

/// Posts what was recorded since the last export to `e`'s collector; a failed post gives its
/// claim back.
pub(super) async fn export_to(
    metrics: &Metrics,
    e: &MetricsExport,
) -> Result<ExportOutcome, HostError> {
    metrics.flush().await;
    let Some(claim) = metrics.store.claim_metrics_export().await? else {
        return Ok(ExportOutcome::Nothing);
    };
    let url = e.metrics_url();
    let body = encode(&claim.samples);
    let sent = metrics
        .http
        .post(&url)
        .timeout(POST_TIMEOUT)
        .json(&body)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status);
    if let Err(err) = sent {
        metrics.store.unclaim_metrics_export(&claim).await?;
        return Err(HostError::Io {
            context: format!("sending metrics to {url}"),
            source: std::io::Error::other(err.without_url()),
        });
    }
    Ok(ExportOutcome::Sent {
        url,
        samples: claim.samples.len(),
    })
}

fn attr(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// Per label set: count, sums and the duration histogram.
#[derive(Default)]
struct Point {
    calls: u64,
    bytes_in: u64,
    bytes_out: u64,
    tokens: u64,
    timed: u64,
    sum_us: u64,
    min_us: Option<u64>,
    max_us: u64,
    histogram: [u64; HISTOGRAM_LEN],
}

/// A label set: server, request kind and tool (or prompt) name.
type Labels<'a> = (&'a str, &'a str, &'a str);

/// The samples folded per label set, and counted per label set and outcome.
#[derive(Default)]
struct Folded<'a> {
    per_tool: BTreeMap<Labels<'a>, Point>,
    per_outcome: BTreeMap<(Labels<'a>, &'a str), u64>,
}

impl<'a> Folded<'a> {
    fn of(samples: &'a [MetricSample]) -> Self {
        let mut f = Folded::default();
        for s in samples {
            let key = (s.server.as_str(), s.kind.as_str(), s.name.as_str());
            *f.per_outcome.entry((key, s.outcome.as_str())).or_default() += 1;
            let p = f.per_tool.entry(key).or_default();
            p.calls += 1;
            p.bytes_in += s.bytes_in;
            p.bytes_out += s.bytes_out;
            p.tokens += s.tokens;
            if s.outcome.timed() {
                p.timed += 1;
                p.sum_us += s.duration_us;
                p.min_us = Some(p.min_us.map_or(s.duration_us, |m| m.min(s.duration_us)));
                p.max_us = p.max_us.max(s.duration_us);
                p.histogram[bucket_of(s.duration_us)] += 1;
            }
        }
        f
    }
}

/// The time window every data point of one export covers, as OTLP's nanosecond strings.
struct Span {
    start_ns: String,
    end_ns: String,
}

impl Span {
    fn of(samples: &[MetricSample]) -> Self {
        let start = samples.iter().map(|s| s.at_ms).min().unwrap_or(0);
        let end = samples.iter().map(|s| s.at_ms).max().unwrap_or(0) + 1;
        let nanos = |ms: i64| (i128::from(ms) * 1_000_000).to_string();
        Self {
            start_ns: nanos(start),
            end_ns: nanos(end),
        }
    }

    fn number(&self, attributes: Vec<Value>, n: u64) -> Value {
        json!({"attributes": attributes, "startTimeUnixNano": self.start_ns,
               "timeUnixNano": self.end_ns, "asInt": n.to_string()})
    }

    fn histogram(&self, k: Labels<'_>, p: &Point) -> Value {
        let secs = |us: u64| us as f64 / 1e6;
        json!({
            "attributes": labels(k),
            "startTimeUnixNano": self.start_ns,
            "timeUnixNano": self.end_ns,
            "count": p.timed.to_string(),
            "sum": secs(p.sum_us),
            "min": secs(p.min_us.unwrap_or(0)),
            "max": secs(p.max_us),
            "bucketCounts": p.histogram.iter().map(u64::to_string).collect::<Vec<_>>(),
            "explicitBounds": BUCKETS_MS.iter().map(|&b| b as f64 / 1000.0).collect::<Vec<_>>(),
        })
    }
}

fn labels((server, kind, name): Labels<'_>) -> Vec<Value> {
    vec![
        attr("server", server),
        attr("kind", kind),
        attr("tool", name),
    ]
}

fn sum(name: &str, unit: &str, description: &str, points: Vec<Value>) -> Value {
    json!({"name": name, "unit": unit, "description": description,
           "sum": {"aggregationTemporality": 1, "isMonotonic": true, "dataPoints": points}})
}

/// The `ExportMetricsServiceRequest` for `samples` (see the module docs).
pub fn encode(samples: &[MetricSample]) -> Value {
    let span = Span::of(samples);
    let folded = Folded::of(samples);
    let calls = folded
        .per_outcome
        .iter()
        .map(|(&(k, outcome), &n)| {
            let mut a = labels(k);
            a.push(attr("outcome", outcome));
            span.number(a, n)
        })
        .collect();
    let field = |f: fn(&Point) -> u64| -> Vec<Value> {
        folded
            .per_tool
            .iter()
            .map(|(&k, p)| span.number(labels(k), f(p)))
            .collect()
    };
    let histogram: Vec<Value> = folded
        .per_tool
        .iter()
        .filter(|(_, p)| p.timed > 0)
        .map(|(&k, p)| span.histogram(k, p))
        .collect();
    let metrics = vec![
        sum(
            "switchboard.mcp.calls",
            "{call}",
            "Requests to MCP servers through the seam, by outcome",
            calls,
        ),
        json!({"name": "switchboard.mcp.call.duration", "unit": "s",
               "description": "Time from sending a request to its answer",
               "histogram": {"aggregationTemporality": 1, "dataPoints": histogram}}),
        sum(
            "switchboard.mcp.call.request.size",
            "By",
            "Bytes of the arguments as JSON",
            field(|p| p.bytes_in),
        ),
        sum(
            "switchboard.mcp.call.response.size",
            "By",
            "Bytes of the results as JSON",
            field(|p| p.bytes_out),
        ),
        sum(
            "switchboard.mcp.call.tokens",
            "{token}",
            "Estimated tokens of the results (characters / 4)",
            field(|p| p.tokens),
        ),
    ];
    json!({"resourceMetrics": [{
        "resource": {"attributes": [
            attr("service.name", "switchboard"),
            attr("service.version", env!("CARGO_PKG_VERSION")),
        ]},
        "scopeMetrics": [{
            "scope": {"name": SCOPE, "version": env!("CARGO_PKG_VERSION")},
            "metrics": metrics,
        }],
    }]})
}

#[cfg(test)]
mod tests;
