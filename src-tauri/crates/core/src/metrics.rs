//! Metrics per server and per tool (issue 16, point 3): what the seam records about each
//! request, the queue that writes it, the report shells read, and the OpenTelemetry export.
//!
//! A feature of its own (issue 26): [`Metrics`] owns the writer queue, the metrics tables of
//! the store and the export; the host holds one, hands the seam's requests to it
//! ([`Metrics::meter`], [`Metrics::record`]) and gives the shells `host.metrics()`.
//!
//! # What is recorded
//! One sample per request that reached the seam's **call** phase (`host::run`, step 5): tool
//! calls, resource reads and prompt gets, with the time from sending to the answer, how it ended
//! ([`Outcome`]: a result, a result the tool marked `isError`, a JSON-RPC error, a protocol or
//! transport failure, a timeout, a cancellation), the bytes of the arguments and of the result as
//! JSON, and the result's tokens. Tool calls the policy or the person **refused** are recorded
//! too, as [`Outcome::Denied`] without latency or bytes: a person wants to see a tool a model
//! keeps calling and the policy keeps stopping. Requests refused before they are decided
//! (unknown or held tools, arguments the schema refuses) are not: they are a caller's mistakes,
//! not a server's behaviour, and the audit log has them.
//!
//! # Tokens
//! An estimate: the characters of the result as the chat gives it to a model (text parts,
//! resource text, link and audio placeholders, structured content when there is no content;
//! images count 0) divided by 4, rounded up, before the chat's own per-output cap. A real
//! tokenizer is vendor-specific and a call has no model; chars/4 is the usual rule of thumb for
//! English text and JSON.
//!
//! # Off the call's path
//! Measuring costs the call one pass of JSON serialization into a byte counter (no allocation);
//! the sample goes to a bounded queue and a background task writes batches in one transaction
//! each. When the queue is full (the disk stalls) samples are dropped, never the call slowed.
//! Readers flush the queue first, so a report includes every call that returned before it.
//! The same task compacts the tables (`store::metrics`) at most once an hour.

mod meter;
pub mod otlp;
mod writer;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

pub use meter::{estimate_tokens, Meter};
pub use otlp::ExportOutcome;

use crate::catalog::ToolResult;
use crate::error::HostError;
use crate::ids::{ServerId, ToolRef};
use crate::settings::{self, MetricsExport};
use crate::store::{now_ms, MetricKind, MetricSample, MetricsQuery, MetricsReport, Outcome, Store};
use writer::MetricsWriter;

/// Points of a report's time series.
pub const SERIES_POINTS: u32 = 60;
/// The name resource reads are recorded under (one per server; URIs are not kept).
pub const RESOURCE_READS: &str = "resources/read";

/// The metrics feature: what the seam measured, kept and reported, and sent to a collector.
#[derive(Debug)]
pub struct Metrics {
    writer: MetricsWriter,
    store: Store,
    /// The client the export posts with (the host's, which follows no redirect).
    http: reqwest::Client,
    /// Where the settings file with the export setting lives.
    data_dir: PathBuf,
}

/// How a measured request ended, as the seam saw it.
pub enum Ended<'a, T> {
    /// An answer.
    Answer(&'a T),
    /// A failure, already classified by the caller (see the seam's `outcome_of`).
    Failed(Outcome),
}

impl Metrics {
    /// Starts the writer and the periodic exporter (on the current tokio runtime).
    pub(crate) fn start(store: Store, http: reqwest::Client, data_dir: PathBuf) -> Arc<Self> {
        let metrics = Arc::new(Self {
            writer: MetricsWriter::spawn(store.clone()),
            store,
            http,
            data_dir,
        });
        otlp::spawn(Arc::downgrade(&metrics));
        metrics
    }

    /// Starts measuring a request about to be sent.
    pub fn meter(
        &self,
        server: &ServerId,
        kind: MetricKind,
        name: &str,
        arguments: &impl Serialize,
    ) -> Meter {
        let bytes_in = if self.writer.is_off() {
            0
        } else {
            meter::json_bytes(arguments)
        };
        Meter::start(server, kind, name, bytes_in)
    }

    /// Records a tool call's end.
    pub fn record_tool(&self, m: Meter, ended: Ended<'_, ToolResult>) {
        if self.writer.is_off() {
            return;
        }
        let sample = match ended {
            Ended::Answer(r) => {
                let outcome = if r.is_error {
                    Outcome::ToolError
                } else {
                    Outcome::Ok
                };
                m.sample(outcome, meter::json_bytes(r), estimate_tokens(r))
            }
            Ended::Failed(outcome) => m.sample(outcome, 0, 0),
        };
        self.writer.record(sample);
    }

    /// Records the end of a resource read or prompt get (tokens: the result's JSON bytes / 4).
    pub fn record<T: Serialize>(&self, m: Meter, ended: Ended<'_, T>) {
        if self.writer.is_off() {
            return;
        }
        let sample = match ended {
            Ended::Answer(r) => {
                let bytes = meter::json_bytes(r);
                m.sample(Outcome::Ok, bytes, bytes.div_ceil(4))
            }
            Ended::Failed(outcome) => m.sample(outcome, 0, 0),
        };
        self.writer.record(sample);
    }

    /// Records a tool call the policy or the person refused.
    pub fn record_refusal(&self, tool: &ToolRef) {
        self.writer.record(MetricSample {
            at_ms: now_ms(),
            server: tool.server.clone(),
            kind: MetricKind::Tool,
            name: tool.tool.to_string(),
            outcome: Outcome::Denied,
            duration_us: 0,
            bytes_in: 0,
            bytes_out: 0,
            tokens: 0,
        });
    }

    /// Waits until every request that ended before is recorded.
    pub async fn flush(&self) {
        self.writer.flush().await;
    }

    /// Switches recording off or back on (benchmarks only: `harness::set_metrics_recording`).
    #[cfg(feature = "harness")]
    pub(crate) fn set_recording(&self, on: bool) {
        self.writer.set_off(!on);
    }

    /// Calls, errors by kind, latency percentiles, bytes and tokens per server and per tool
    /// over the last `window` (one server, or all), with a time series of [`SERIES_POINTS`].
    pub async fn report(
        &self,
        server: Option<&ServerId>,
        window: Duration,
    ) -> Result<MetricsReport, HostError> {
        self.flush().await;
        let until_ms = now_ms() + 1;
        let span = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
        let q = MetricsQuery {
            server: server.cloned(),
            since_ms: until_ms.saturating_sub(span),
            until_ms,
            points: SERIES_POINTS,
        };
        Ok(self.store.metrics_report(&q).await?)
    }

    /// The metrics export setting: the collector and the interval, or `None` when off.
    pub fn export_setting(&self) -> Option<MetricsExport> {
        settings::load_metrics_export(&self.data_dir)
    }

    /// Turns the OTLP export on (the endpoint is validated) or off; returns it as saved.
    pub fn set_export(
        &self,
        export: Option<MetricsExport>,
    ) -> Result<Option<MetricsExport>, HostError> {
        otlp::save(self, export)
    }

    /// Exports now what was recorded since the last export, when a collector is set.
    pub async fn export_now(&self) -> Result<ExportOutcome, HostError> {
        match self.export_setting() {
            Some(e) => otlp::export_to(self, &e).await,
            None => Ok(ExportOutcome::Off),
        }
    }
}

#[cfg(test)]
mod tests;
