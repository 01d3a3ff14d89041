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
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{Host, HostError, Inner};
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

/// Starts the periodic exporter. It holds the host weakly: it ends once the host is dropped.
pub(super) fn spawn(inner: &Arc<Inner>) {
    let weak = Arc::downgrade(inner);
    tokio::spawn(async move {
        let mut wait = OFF_POLL;
        loop {
            tokio::time::sleep(wait).await;
            let Some(inner) = weak.upgrade() else { return };
            let host = Host { inner };
            let export = settings::load_metrics_export(host.data_dir());
            wait = export
                .as_ref()
                .map_or(OFF_POLL, |e| Duration::from_secs(e.interval_secs));
            if let Some(e) = export {
                if let Err(err) = host.export_metrics_to(&e).await {
                    tracing::warn!(error = %err, "metrics export failed; it is retried next time");
                }
            }
        }
    });
}

impl Host {
    /// The metrics export setting: the collector and the interval, or `None` when off.
    pub fn metrics_export(&self) -> Option<MetricsExport> {
        settings::load_metrics_export(self.data_dir())
    }

    /// Turns the OTLP export on (the endpoint is validated) or off; returns it as saved.
    pub fn set_metrics_export(
        &self,
        export: Option<MetricsExport>,
    ) -> Result<Option<MetricsExport>, HostError> {
        let saved =
            settings::save_metrics_export(self.data_dir(), export).map_err(|e| match e {
                settings::SettingsError::Invalid { .. } => HostError::Invalid(e.to_string()),
                settings::SettingsError::Io { path, source } => HostError::Io {
                    context: format!("saving the settings to {}", path.display()),
                    source,
                },
            })?;
        tracing::info!(on = saved.is_some(), "metrics export changed");
        Ok(saved)
    }

    /// Exports now what was recorded since the last export, when a collector is set.
    pub async fn export_metrics_now(&self) -> Result<ExportOutcome, HostError> {
        match self.metrics_export() {
            Some(e) => self.export_metrics_to(&e).await,
            None => Ok(ExportOutcome::Off),
        }
    }

    async fn export_metrics_to(&self, e: &MetricsExport) -> Result<ExportOutcome, HostError> {
        self.flush_metrics().await;
        let Some(claim) = self.inner.store.claim_metrics_export().await? else {
            return Ok(ExportOutcome::Nothing);
        };
        let url = e.metrics_url();
        let body = encode(&claim.samples);
        let sent = self
            .inner
            .http
            .post(&url)
            .timeout(POST_TIMEOUT)
            .json(&body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status);
        if let Err(err) = sent {
            self.inner.store.unclaim_metrics_export(&claim).await?;
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

/// The `ExportMetricsServiceRequest` for `samples` (see the module docs).
pub fn encode(samples: &[MetricSample]) -> Value {
    let start = samples.iter().map(|s| s.at_ms).min().unwrap_or(0);
    let end = samples.iter().map(|s| s.at_ms).max().unwrap_or(0) + 1;
    let nanos = |ms: i64| (i128::from(ms) * 1_000_000).to_string();
    let (start_ns, end_ns) = (nanos(start), nanos(end));
    // By (server, kind, name) and by (server, kind, name, outcome).
    let mut per_tool: BTreeMap<(&str, &str, &str), Point> = BTreeMap::new();
    let mut per_outcome: BTreeMap<(&str, &str, &str, &str), u64> = BTreeMap::new();
    for s in samples {
        let key = (s.server.as_str(), s.kind.as_str(), s.name.as_str());
        *per_outcome
            .entry((key.0, key.1, key.2, s.outcome.as_str()))
            .or_default() += 1;
        let p = per_tool.entry(key).or_default();
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
    let labels = |(server, kind, name): (&str, &str, &str)| {
        vec![
            attr("server", server),
            attr("kind", kind),
            attr("tool", name),
        ]
    };
    let number = |attributes: Vec<Value>, n: u64| {
        json!({"attributes": attributes, "startTimeUnixNano": start_ns,
               "timeUnixNano": end_ns, "asInt": n.to_string()})
    };
    let sum = |name: &str, unit: &str, description: &str, points: Vec<Value>| {
        json!({"name": name, "unit": unit, "description": description,
               "sum": {"aggregationTemporality": 1, "isMonotonic": true, "dataPoints": points}})
    };
    let calls = per_outcome
        .iter()
        .map(|(&(server, kind, name, outcome), &n)| {
            let mut a = labels((server, kind, name));
            a.push(attr("outcome", outcome));
            number(a, n)
        })
        .collect();
    let field = |f: fn(&Point) -> u64| -> Vec<Value> {
        per_tool
            .iter()
            .map(|(&k, p)| number(labels(k), f(p)))
            .collect()
    };
    let secs = |us: u64| us as f64 / 1e6;
    let histogram: Vec<Value> = per_tool
        .iter()
        .filter(|(_, p)| p.timed > 0)
        .map(|(&k, p)| {
            json!({
                "attributes": labels(k),
                "startTimeUnixNano": start_ns,
                "timeUnixNano": end_ns,
                "count": p.timed.to_string(),
                "sum": secs(p.sum_us),
                "min": secs(p.min_us.unwrap_or(0)),
                "max": secs(p.max_us),
                "bucketCounts": p.histogram.iter().map(u64::to_string).collect::<Vec<_>>(),
                "explicitBounds": BUCKETS_MS.iter().map(|&b| b as f64 / 1000.0).collect::<Vec<_>>(),
            })
        })
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
mod tests {
    use super::*;
    use crate::ids::ServerId;
    use crate::store::{MetricKind, Outcome};

    fn sample(name: &str, outcome: Outcome, ms: u64) -> MetricSample {
        MetricSample {
            at_ms: 1_000,
            server: ServerId::new("fs").unwrap(),
            kind: MetricKind::Tool,
            name: name.into(),
            outcome,
            duration_us: ms * 1000,
            bytes_in: 3,
            bytes_out: 7,
            tokens: 2,
        }
    }

    #[test]
    fn samples_encode_as_otlp_json_with_names_only() {
        let body = encode(&[
            sample("read", Outcome::Ok, 4),
            sample("read", Outcome::Ok, 40),
            sample("read", Outcome::Timeout, 4000),
            sample("write", Outcome::Denied, 0),
        ]);
        let metrics = &body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"];
        let by_name = |n: &str| {
            metrics
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == n)
                .unwrap()
                .clone()
        };
        let calls = by_name("switchboard.mcp.calls");
        let points = calls["sum"]["dataPoints"].as_array().unwrap();
        assert_eq!(points.len(), 3, "read ok, read timeout, write denied");
        assert_eq!(points[0]["asInt"], "2", "64-bit integers are strings");
        assert_eq!(points[0]["timeUnixNano"], "1001000000");
        let duration = by_name("switchboard.mcp.call.duration");
        let h = duration["histogram"]["dataPoints"].as_array().unwrap();
        assert_eq!(h.len(), 1, "a refused call has no duration");
        assert_eq!(h[0]["count"], "3");
        let counts: u64 = h[0]["bucketCounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(counts, 3);
        assert_eq!(
            h[0]["explicitBounds"].as_array().unwrap().len() + 1,
            HISTOGRAM_LEN
        );
        let size = by_name("switchboard.mcp.call.response.size");
        assert_eq!(size["sum"]["dataPoints"][0]["asInt"], "21");
    }
}
