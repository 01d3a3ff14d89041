//! `sb-bench --only stderr` (RL-13): how fast the stderr drain takes in what a server writes.
//!
//! The drain's work per chunk read from the pipe, on one core: `ServerLogs::push_stderr_bytes`
//! over 64 KiB chunks of 80-byte lines (what `tr | fold` makes), 256 MiB per sample, with a
//! registered secret (which the hot path must not pay for). Next to it, the per-line work the
//! drain used to do (redact each line, then cut it), which is where its CPU went: the figure
//! that made a server writing 200 MiB before `initialize` time out its handshake.

use std::time::Instant;

use anyhow::{ensure, Result};
use switchboard_core::redact::{Redactor, Secret};
use switchboard_core::server_logs::{ServerLogs, STDERR_BUDGET};

use super::{figure, CostPlan, CostReport};

/// MiB taken in per sample.
const SAMPLE_MIB: usize = 256;

/// Adds the drain's rows to `r`.
pub fn run(_plan: &CostPlan, r: &mut CostReport) -> Result<()> {
    let mut chunk = Vec::with_capacity(64 * 1024 + 80);
    let mut n = 0u64;
    while chunk.len() + 80 <= 64 * 1024 {
        chunk.extend_from_slice(format!("chatty {n:012} {}\n", "c".repeat(59)).as_bytes());
        n += 1;
    }
    let secret = Secret::new("bench-stderr-canary-0123456789");
    let mut rates = Vec::new();
    for _ in 0..5 {
        let logs = ServerLogs::new(None);
        logs.set_redactor(Redactor::new(std::slice::from_ref(&secret)));
        let chunks = SAMPLE_MIB * 1024 * 1024 / chunk.len();
        let t = Instant::now();
        for _ in 0..chunks {
            logs.push_stderr_bytes(&chunk);
        }
        let secs = t.elapsed().as_secs_f64();
        ensure!(
            logs.stderr_bytes() <= STDERR_BUDGET,
            "the ring outgrew its budget"
        );
        rates.push((chunks * chunk.len()) as f64 / 1e6 / secs);
    }
    r.figures.push(figure(
        "stderr",
        "stderr drain: push_stderr_bytes, 80-byte lines in 64 KiB chunks",
        "MB/s",
        &rates,
        format!("{SAMPLE_MIB} MiB per sample, one core, a secret registered"),
    ));
    // The old per-line path, on fewer bytes (it is slow): redact and cut every line.
    let redactor = Redactor::new(&[secret]);
    let mut old = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let mut bytes = 0usize;
        for _ in 0..64 {
            for line in chunk.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let text = String::from_utf8_lossy(line);
                std::hint::black_box(redactor.redact_then_cut(&text, 8 * 1024));
                bytes += line.len() + 1;
            }
        }
        old.push(bytes as f64 / 1e6 / t.elapsed().as_secs_f64());
    }
    r.figures.push(figure(
        "stderr",
        "stderr, per line as before: redact_then_cut every line",
        "MB/s",
        &old,
        "4 MiB per sample: where the old drain's CPU went".to_owned(),
    ));
    Ok(())
}
