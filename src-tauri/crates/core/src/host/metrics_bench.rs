//! Benchmark doors into the metrics recorder (feature `harness`, reached through
//! [`crate::harness`]; `sb-bench --only metrics`, issue 16).
//!
//! The benchmark needs two things the host does not otherwise offer: the same tool-call loop
//! with recording off, to see what recording adds per call, and the recorder's own cost without
//! a call around it, which a loop of real calls (each hundreds of microseconds) would drown.
//! Neither is a setting: shells never enable the feature (`tests/tests/seam.rs`), so a person's
//! metrics cannot be switched off through here.

use std::time::{Duration, Instant};

use super::{Host, HostError};
use crate::catalog::{Arguments, ToolResult};
use crate::ids::ToolRef;
use crate::store::MetricKind;

impl Host {
    /// Switches metrics recording on or off for this host's calls from now on.
    pub(crate) fn set_metrics_recording(&self, on: bool) {
        self.inner.features.metrics.set_recording(on);
    }

    /// Records `n` samples of `tool` called with `arguments` and ending with `result`, the way
    /// the seam records a call (`meter` before, `metered_tool` after), in chunks of `chunk`
    /// with the queue flushed after each, so that the bounded queue never drops one. Returns,
    /// per chunk, the time spent recording (what a call pays) and the time the chunk's flush
    /// waited for the writer; every sample is in SQLite when this returns.
    pub(crate) async fn record_samples_for_bench(
        &self,
        tool: &ToolRef,
        arguments: &Arguments,
        result: &ToolResult,
        n: usize,
        chunk: usize,
    ) -> Vec<(Duration, Duration)> {
        let ended: Result<ToolResult, HostError> = Ok(result.clone());
        let mut out = Vec::new();
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.max(1));
            let t = Instant::now();
            for _ in 0..k {
                let m = self.meter(&tool.server, MetricKind::Tool, &tool.tool, arguments);
                self.metered_tool(m, &ended);
            }
            let recording = t.elapsed();
            let t = Instant::now();
            self.inner.features.metrics.flush().await;
            out.push((recording, t.elapsed()));
            left -= k;
        }
        out
    }
}
