//! The pieces of `sb-bench` (see `src/bin/sb_bench.rs` for the method): the clients it measures
//! and how their figures are summarised and printed.

pub mod agents;
pub mod chat;
pub mod host_cost;
pub mod peers;
pub mod raw;
pub mod report;
pub mod switchboard;

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The text every client sends to `echo` and expects back.
pub const TEXT: &str = "hello from sb-bench";

/// What one measurement of one client is asked to do.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Calls per concurrency level.
    pub calls: usize,
    /// Sequential calls before the first measured level.
    pub warmup: usize,
    /// Calls in flight, one level after the other.
    pub conc: Vec<usize>,
}

/// One concurrency level of one client in one round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Figure {
    /// Calls in flight.
    pub c: usize,
    /// Calls measured.
    pub calls: usize,
    /// Median round trip, microseconds.
    pub p50_us: f64,
    /// 99th percentile round trip, microseconds.
    pub p99_us: f64,
    /// Calls per second over the whole level (calls / wall time).
    pub throughput: f64,
}

impl Figure {
    /// Summarises per-call latencies (nanoseconds, any order) measured over `wall`.
    pub fn from_latencies(c: usize, mut nanos: Vec<u64>, wall: Duration) -> Self {
        nanos.sort_unstable();
        let us = |q| percentile(&nanos, q) as f64 / 1000.0;
        let secs = wall.as_secs_f64();
        Self {
            c,
            calls: nanos.len(),
            p50_us: us(0.5),
            p99_us: us(0.99),
            throughput: if secs > 0.0 {
                nanos.len() as f64 / secs
            } else {
                0.0
            },
        }
    }
}

/// Nearest-rank percentile of sorted values (0 when empty). The peer scripts use the same
/// definition, so every row is computed alike.
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The median of some values (the mean of the middle two for an even count; 0 when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// How one measurement of one client ended.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Figures for every level of the plan.
    Measured(Vec<Figure>),
    /// The client cannot run here (a peer that is not installed); the reason says what to do.
    Unavailable(String),
    /// The client ran and failed.
    Failed(String),
}

/// `n` calls by `c` tasks sharing a counter ("take a number, call, record"); each call is
/// timed alone. Shared by every Rust client so they are measured the same way.
pub async fn closed_loop<F, Fut>(c: usize, n: usize, call: F) -> anyhow::Result<Figure>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send + 'static,
{
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use anyhow::Context;

    let counter = Arc::new(AtomicUsize::new(0));
    let t0 = std::time::Instant::now();
    let tasks: Vec<_> = (0..c.max(1))
        .map(|_| {
            let call = call.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut nanos = Vec::with_capacity(n / c.max(1) + 1);
                while counter.fetch_add(1, Ordering::Relaxed) < n {
                    let t = std::time::Instant::now();
                    call().await?;
                    nanos.push(t.elapsed().as_nanos() as u64);
                }
                anyhow::Ok(nanos)
            })
        })
        .collect();
    let mut nanos = Vec::with_capacity(n);
    for t in tasks {
        nanos.extend(t.await.context("a bench task panicked")??);
    }
    if nanos.len() != n {
        anyhow::bail!("{} of {n} calls measured", nanos.len());
    }
    Ok(Figure::from_latencies(c, nanos, t0.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), 50);
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&[7], 0.99), 7);
        assert_eq!(percentile(&[], 0.5), 0);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
