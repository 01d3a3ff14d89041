//! Metrics per server and per tool (issue 16, point 3): what the seam records about each
//! request, the queue that writes it, and the report shells read.
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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use super::{Host, HostError};
use crate::catalog::{Content, ToolResult};
use crate::ids::{ServerId, ToolRef};
use crate::mcp::McpError;
use crate::store::{now_ms, MetricKind, MetricSample, MetricsQuery, MetricsReport, Outcome, Store};

/// Samples waiting for the writer before new ones are dropped.
const QUEUE: usize = 65_536;
/// Most samples in one transaction.
const BATCH_MAX: usize = 1024;
/// How often the writer folds and expires old rows.
const COMPACT_EVERY: Duration = Duration::from_secs(3600);
/// Points of a report's time series.
pub const SERIES_POINTS: u32 = 60;
/// The name resource reads are recorded under (one per server; URIs are not kept).
pub const RESOURCE_READS: &str = "resources/read";

enum Job {
    Sample(MetricSample),
    Flush(oneshot::Sender<()>),
}

/// The queue in front of the metrics tables. Cheap to clone; the task ends with the last clone.
#[derive(Clone, Debug)]
pub(super) struct MetricsWriter {
    jobs: mpsc::Sender<Job>,
    dropped: Arc<AtomicU64>,
    /// Set only by benchmarks (`harness::set_metrics_recording`, feature `harness`): nothing is
    /// measured or queued. No setting or shell can reach it.
    off: Arc<AtomicBool>,
}

impl MetricsWriter {
    /// Starts the writer task (on the current tokio runtime).
    pub(super) fn spawn(store: Store) -> Self {
        let (jobs, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_loop(store, rx));
        Self {
            jobs,
            dropped: Arc::default(),
            off: Arc::default(),
        }
    }

    /// Whether recording is off (benchmarks only, see `off`).
    pub(super) fn is_off(&self) -> bool {
        self.off.load(Ordering::Relaxed)
    }

    /// Switches recording off or back on (benchmarks only, see `off`).
    #[cfg(feature = "harness")]
    pub(super) fn set_off(&self, off: bool) {
        self.off.store(off, Ordering::Relaxed);
    }

    fn record(&self, s: MetricSample) {
        if self.is_off() {
            return;
        }
        if self.jobs.try_send(Job::Sample(s)).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed);
            if n.is_power_of_two() {
                tracing::warn!(dropped = n + 1, "metrics queue full; samples dropped");
            }
        }
    }

    /// Waits until everything queued before is written.
    pub(super) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.jobs.send(Job::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}

/// How long the writer gathers samples before committing them, unless a reader flushes or the
/// batch is full. Committing each call's sample at once held the store's one writer connection
/// (durable commits) that the next call's audit entry waits for: +380 µs per governed call in
/// `sb-bench --only metrics` (issue 16). The cost: a crash loses at most this much of samples.
const LINGER: Duration = Duration::from_millis(200);

async fn write_loop(store: Store, mut rx: mpsc::Receiver<Job>) {
    let mut compacted: Option<Instant> = None;
    while let Some(first) = rx.recv().await {
        let mut batch = Vec::new();
        let mut flushes = Vec::new();
        let deadline = tokio::time::Instant::now() + LINGER;
        let mut next = Some(first);
        loop {
            while let Some(job) = next.take() {
                match job {
                    Job::Sample(s) => batch.push(s),
                    Job::Flush(done) => flushes.push(done),
                }
                if batch.len() < BATCH_MAX {
                    next = rx.try_recv().ok();
                }
            }
            // A reader waiting, a full batch or the linger over: commit what was gathered.
            if !flushes.is_empty() || batch.len() >= BATCH_MAX {
                break;
            }
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(job)) => next = Some(job),
                _ => break,
            }
        }
        if let Err(e) = store.record_metrics(&batch).await {
            tracing::warn!(error = %e, samples = batch.len(), "could not record metrics");
        }
        if !batch.is_empty() && compacted.is_none_or(|t| t.elapsed() >= COMPACT_EVERY) {
            compacted = Some(Instant::now());
            if let Err(e) = store.compact_metrics(now_ms()).await {
                tracing::debug!(error = %e, "could not compact metrics");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// A request being measured, from just before it is sent.
pub(super) struct Meter {
    server: ServerId,
    kind: MetricKind,
    name: String,
    began: Instant,
    bytes_in: u64,
}

/// Counts bytes written, keeps none.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes of `v` as compact JSON.
pub(super) fn json_bytes(v: &impl Serialize) -> u64 {
    let mut c = Counter(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Estimated tokens of a tool result as a model gets it (see the module docs).
pub fn estimate_tokens(r: &ToolResult) -> u64 {
    let mut chars = 0usize;
    for c in &r.content {
        chars += match c {
            Content::Text { text } => text.chars().count(),
            Content::Image { .. } => 0,
            Content::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} bytes base64]", data.len()).len()
            }
            Content::ResourceLink { uri, name, .. } => {
                "[resource link : ]".len() + name.chars().count() + uri.chars().count()
            }
            Content::Resource { resource } => match &resource.text {
                Some(t) => t.chars().count(),
                None => "[binary resource ]".len() + resource.uri.chars().count(),
            },
        };
    }
    if r.content.is_empty() {
        if let Some(s) = &r.structured_content {
            chars += s.to_string().chars().count();
        }
    }
    (chars as u64).div_ceil(4)
}

/// How a failed request ended.
fn outcome_of(e: &HostError) -> Outcome {
    match e {
        HostError::Mcp(m) => match m {
            McpError::Timeout(_) => Outcome::Timeout,
            McpError::Cancelled => Outcome::Cancelled,
            McpError::Server { .. } => Outcome::RpcError,
            McpError::Protocol(_) | McpError::Refused { .. } => Outcome::Protocol,
            McpError::Disconnected(_) | McpError::NotRunning { .. } => Outcome::Transport,
            _ => Outcome::Other,
        },
        HostError::Denied { .. } => Outcome::Denied,
        _ => Outcome::Other,
    }
}

impl Meter {
    fn sample(self, outcome: Outcome, bytes_out: u64, tokens: u64) -> MetricSample {
        MetricSample {
            at_ms: now_ms(),
            duration_us: u64::try_from(self.began.elapsed().as_micros()).unwrap_or(u64::MAX),
            server: self.server,
            kind: self.kind,
            name: self.name,
            outcome,
            bytes_in: self.bytes_in,
            bytes_out,
            tokens,
        }
    }
}

impl Host {
    /// Starts measuring a request about to be sent.
    pub(super) fn meter(
        &self,
        server: &ServerId,
        kind: MetricKind,
        name: &str,
        arguments: &impl Serialize,
    ) -> Meter {
        Meter {
            server: server.clone(),
            kind,
            name: name.to_owned(),
            bytes_in: if self.inner.metrics.is_off() {
                0
            } else {
                json_bytes(arguments)
            },
            began: Instant::now(),
        }
    }

    /// Records a tool call's end.
    pub(super) fn metered_tool(&self, m: Meter, result: &Result<ToolResult, HostError>) {
        if self.inner.metrics.is_off() {
            return;
        }
        let sample = match result {
            Ok(r) => {
                let outcome = if r.is_error {
                    Outcome::ToolError
                } else {
                    Outcome::Ok
                };
                m.sample(outcome, json_bytes(r), estimate_tokens(r))
            }
            Err(e) => m.sample(outcome_of(e), 0, 0),
        };
        self.inner.metrics.record(sample);
    }

    /// Records the end of a resource read or prompt get (tokens: the result's JSON bytes / 4).
    pub(super) fn metered<T: Serialize>(&self, m: Meter, result: &Result<T, HostError>) {
        if self.inner.metrics.is_off() {
            return;
        }
        let sample = match result {
            Ok(r) => {
                let bytes = json_bytes(r);
                m.sample(Outcome::Ok, bytes, bytes.div_ceil(4))
            }
            Err(e) => m.sample(outcome_of(e), 0, 0),
        };
        self.inner.metrics.record(sample);
    }

    /// Records a tool call the policy or the person refused.
    pub(super) fn record_refusal(&self, tool: &ToolRef) {
        self.inner.metrics.record(MetricSample {
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
    pub(super) async fn flush_metrics(&self) {
        self.inner.metrics.flush().await;
    }

    /// Calls, errors by kind, latency percentiles, bytes and tokens per server and per tool
    /// over the last `window` (one server, or all), with a time series of [`SERIES_POINTS`].
    pub async fn metrics(
        &self,
        server: Option<&ServerId>,
        window: Duration,
    ) -> Result<MetricsReport, HostError> {
        self.flush_metrics().await;
        let until_ms = now_ms() + 1;
        let span = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
        let q = MetricsQuery {
            server: server.cloned(),
            since_ms: until_ms.saturating_sub(span),
            until_ms,
            points: SERIES_POINTS,
        };
        Ok(self.inner.store.metrics_report(&q).await?)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tokens_are_characters_over_four_rounded_up() {
        let text = |t: &str| ToolResult {
            content: vec![Content::Text { text: t.into() }],
            structured_content: None,
            is_error: false,
        };
        assert_eq!(estimate_tokens(&text("")), 0);
        assert_eq!(estimate_tokens(&text("abcd")), 1);
        assert_eq!(estimate_tokens(&text("abcde")), 2);
        assert_eq!(estimate_tokens(&text("ééééé")), 2, "characters, not bytes");
        let structured = ToolResult {
            content: vec![],
            structured_content: Some(json!({"sum": 5})),
            is_error: false,
        };
        assert_eq!(estimate_tokens(&structured), 3); // {"sum":5} is 9 characters
    }

    #[test]
    fn json_bytes_counts_compact_json() {
        assert_eq!(json_bytes(&json!({"text": "hi"})), 13);
    }
}
