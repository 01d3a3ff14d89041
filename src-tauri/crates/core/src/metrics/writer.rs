//! The queue in front of the metrics tables and the task that writes it in batches (see the
//! parent module's "Off the call's path").

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::store::{now_ms, MetricSample, Store};

/// Samples waiting for the writer before new ones are dropped.
const QUEUE: usize = 65_536;
/// Most samples in one transaction.
const BATCH_MAX: usize = 1024;
/// How often the writer folds and expires old rows.
const COMPACT_EVERY: Duration = Duration::from_secs(3600);

enum Job {
    Sample(MetricSample),
    Flush(oneshot::Sender<()>),
}

/// The queue in front of the metrics tables. Cheap to clone; the task ends with the last clone.
#[derive(Clone, Debug)]
pub(crate) struct MetricsWriter {
    jobs: mpsc::Sender<Job>,
    dropped: Arc<AtomicU64>,
    /// Set only by benchmarks (`harness::set_metrics_recording`, feature `harness`): nothing is
    /// measured or queued. No setting or shell can reach it.
    off: Arc<AtomicBool>,
}

impl MetricsWriter {
    /// Starts the writer task (on the current tokio runtime).
    pub(crate) fn spawn(store: Store) -> Self {
        let (jobs, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_loop(store, rx));
        Self {
            jobs,
            dropped: Arc::default(),
            off: Arc::default(),
        }
    }

    /// Whether recording is off (benchmarks only, see `off`).
    pub(crate) fn is_off(&self) -> bool {
        self.off.load(Ordering::Relaxed)
    }

    /// Switches recording off or back on (benchmarks only, see `off`).
    #[cfg(feature = "harness")]
    pub(crate) fn set_off(&self, off: bool) {
        self.off.store(off, Ordering::Relaxed);
    }

    pub(crate) fn record(&self, s: MetricSample) {
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
    pub(crate) async fn flush(&self) {
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
