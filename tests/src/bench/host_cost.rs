//! The host-cost figures of issue 16 (`sb-bench --only redaction,metrics`): what outbound
//! redaction costs per KB of a request, and what metrics recording costs per tool call, each
//! next to one tool call's own cost measured in the same run.
//!
//! # `redaction` ([`redaction`])
//! The turn's own code path: [`Redacting`](switchboard_core::outbound::Redacting), the provider
//! wrapper every cloud turn goes through, around a provider that only keeps the request it is
//! given (so the figure is the wrapper's work: scanning the system prompt, every text, tool call
//! and tool result, building the placeholders, announcing the counts, and the request copy it
//! makes). Requests of about 1, 10 and 100 KB of text ([`corpus`]: a conversation with tool
//! calls and results, JSON, prose and code), once with no secrets and once with about two
//! findings per KB. The figure is microseconds per KB of the request's text (median and p95
//! over the requests redacted), next to the same request handed to the bare provider. Then the
//! restore of a tool call's arguments ([`Session::restore`](switchboard_core::outbound::Session),
//! what `Restoring` runs before every call of a redacted turn), with and without placeholders.
//! Every request is checked: no planted value reaches the provider, and a clean request is
//! passed on unchanged.
//!
//! # `metrics` ([`metrics`])
//! One real host with the fake MCP server and an allow rule: `Host::run_tool` (the only path
//! that records metrics) called in blocks with recording on and off (switched through the
//! `harness` feature, never a setting), the blocks interleaved; then the recorder alone (the
//! seam's `meter` + `metered_tool`, no call), and the writer's throughput into SQLite. The
//! samples in SQLite must match the calls made with recording on, exactly.
//!
//! # `stderr` ([`stderr`])
//! The stderr drain's throughput on one core (RL-13), next to the per-line redaction it used to
//! do.
//!
//! # The yardstick
//! One `echo` call through `Host::call_tool` to the fake MCP server over stdio, sequential, in
//! the same run (the `switchboard` row's path, see `bench/switchboard.rs`).

pub mod corpus;
pub mod metrics;
pub mod redaction;
pub mod stderr;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::switchboard::Entry;
use super::{median, percentile, Plan};

/// The `--only` keys of these figures.
pub const KEYS: [&str; 3] = ["redaction", "metrics", "stderr"];

/// What to measure.
#[derive(Clone, Debug)]
pub struct CostPlan {
    /// Requests of 1 KB redacted per figure (fewer for the larger sizes, see [`redaction`]).
    pub redactions: usize,
    /// `run_tool` calls per mode (recording on, off) in the metrics loop, and `call_tool`
    /// calls of the yardstick.
    pub calls: usize,
    /// Samples through the recorder alone and the writer.
    pub samples: usize,
    /// The fake MCP server.
    pub server: PathBuf,
    /// Which of [`KEYS`].
    pub keys: Vec<&'static str>,
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct CostFigure {
    /// The key it belongs to.
    pub key: &'static str,
    /// What the row is called.
    pub label: String,
    /// `us/KB`, `us`, `ns`, `calls/s`, `samples/s`.
    pub unit: &'static str,
    /// Samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// 95th percentile (nearest rank); for rates, the 5th (the slow end).
    pub p95: f64,
    /// What else a reader needs (the size of a request, a whole request's time).
    pub note: String,
}

/// Everything these figures produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CostReport {
    /// The rows, in table order.
    pub figures: Vec<CostFigure>,
    /// Sentences comparing them with a tool call's own cost.
    pub comparisons: Vec<String>,
    /// What failed.
    pub failures: Vec<String>,
}

impl CostReport {
    /// The median of the row labelled `label` (first match by prefix).
    fn median_of(&self, label: &str) -> Option<f64> {
        self.figures
            .iter()
            .find(|f| f.label.starts_with(label))
            .map(|f| f.median)
    }
}

/// Summarises samples in `unit`.
pub fn figure(
    key: &'static str,
    label: impl Into<String>,
    unit: &'static str,
    samples: &[f64],
    note: impl Into<String>,
) -> CostFigure {
    // Percentiles over thousandths, so the nearest-rank helper of the other figures applies.
    let mut milli: Vec<u64> = samples.iter().map(|v| (v * 1e3).max(0.0) as u64).collect();
    milli.sort_unstable();
    let rate = unit.ends_with("/s");
    CostFigure {
        key,
        label: label.into(),
        unit,
        n: samples.len(),
        median: median(samples),
        p95: percentile(&milli, if rate { 0.05 } else { 0.95 }) as f64 / 1e3,
        note: note.into(),
    }
}

/// Microseconds of a duration.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Measures the selected groups; a failure is recorded and the other group still runs.
pub async fn run(plan: &CostPlan) -> CostReport {
    let mut r = CostReport::default();
    // The yardstick first: one plain tool call through the host, sequential.
    let call = yardstick(plan).await;
    match &call {
        Ok(f) => r.figures.push(f.clone()),
        Err(e) => r.failures.push(format!("the echo yardstick: {e:#}")),
    }
    if plan.keys.contains(&"redaction") {
        if let Err(e) = redaction::run(plan, &mut r).await {
            r.failures.push(format!("redaction: {e:#}"));
        }
    }
    if plan.keys.contains(&"metrics") {
        if let Err(e) = metrics::run(plan, &mut r).await {
            r.failures.push(format!("metrics: {e:#}"));
        }
    }
    if plan.keys.contains(&"stderr") {
        if let Err(e) = stderr::run(plan, &mut r) {
            r.failures.push(format!("stderr: {e:#}"));
        }
    }
    if let Ok(call) = &call {
        compare(&mut r, call.median);
    }
    r
}

/// `Host::call_tool` `echo` at c=1: the cost of one tool call, for comparison.
async fn yardstick(plan: &CostPlan) -> Result<CostFigure> {
    let p = Plan {
        calls: plan.calls,
        warmup: 200,
        conc: vec![1],
    };
    let f = super::switchboard::run(&plan.server, &p, Entry::Host).await?;
    let f = f
        .first()
        .ok_or_else(|| anyhow::anyhow!("no figure for c=1"))?;
    Ok(CostFigure {
        key: "call",
        label: "yardstick: one echo call, Host::call_tool over stdio (c=1)".into(),
        unit: "us",
        n: f.calls,
        median: f.p50_us,
        p95: f.p99_us,
        note: "p95 column: p99".into(),
    })
}

/// The sentences putting the medians next to one call's.
fn compare(r: &mut CostReport, call_us: f64) {
    let mut out = Vec::new();
    let share = |v: f64| 100.0 * v / call_us;
    for (label, what) in [
        (
            "redact 10 KB, ~2 findings/KB",
            "redacting a 10 KB request with findings",
        ),
        (
            "redact 100 KB, ~2 findings/KB",
            "redacting a 100 KB request",
        ),
    ] {
        if let Some(f) = r.figures.iter().find(|f| f.label.starts_with(label)) {
            let whole = f.median * kb_of(&f.note);
            out.push(format!(
                "{what} takes {whole:.0} us, {:.0}% of one echo call ({call_us:.0} us); \
                 {:.2} us per KB",
                share(whole),
                f.median
            ));
        }
    }
    if let Some(v) = r.median_of("restore: a call with 3 placeholders") {
        out.push(format!(
            "restoring a call's arguments takes {v:.2} us, {:.2}% of one echo call",
            share(v)
        ));
    }
    let governed = r.median_of("metrics: run_tool, recording on");
    if let Some(v) = r.median_of("metrics: recorder alone") {
        let v = v / 1e3;
        let of_run = governed
            .map(|g| format!(", {:.3}% of one governed call ({g:.0} us)", 100.0 * v / g))
            .unwrap_or_default();
        out.push(format!(
            "building and queueing one call's metrics sample costs the call {v:.2} us, {:.3}% \
             of one echo call{of_run}",
            share(v)
        ));
    }
    if let (Some(on), Some(off)) = (governed, r.median_of("metrics: run_tool, recording off")) {
        out.push(format!(
            "Host::run_tool with recording on vs off (median per call, c=1): {on:.1} vs \
             {off:.1} us, {:+.1} us ({:+.1}%): what the call pays, the writer's commits on the \
             store's one writer connection included",
            on - off,
            100.0 * (on - off) / off
        ));
    }
    if let (Some(on), Some(off)) = (
        r.median_of("metrics: run_tool c=16, recording on"),
        r.median_of("metrics: run_tool c=16, recording off"),
    ) {
        out.push(format!(
            "Host::run_tool at c=16 with recording on vs off: {on:.0} vs {off:.0} calls/s \
             ({:+.1}%)",
            100.0 * (on - off) / off
        ));
    }
    r.comparisons = out;
}

/// The KB of a redaction row (its note starts with the size in KB).
fn kb_of(note: &str) -> f64 {
    note.split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0)
}

/// The human-readable section.
pub fn table(r: &CostReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "host cost (issue 16): redaction per KB of outbound text and metrics per call; median \
         and p95 (nearest rank; for rates the 5th percentile) of the samples"
    );
    let w = r
        .figures
        .iter()
        .map(|f| f.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let _ = writeln!(
        s,
        "{:w$} | {:>6} {:>12} {:>12} {:<9} note",
        "figure", "n", "median", "p95", "unit"
    );
    s.push_str(&"-".repeat(w + 60));
    s.push('\n');
    for f in &r.figures {
        let _ = writeln!(
            s,
            "{:w$} | {:>6} {:>12.2} {:>12.2} {:<9} {}",
            f.label, f.n, f.median, f.p95, f.unit, f.note
        );
    }
    for c in &r.comparisons {
        let _ = writeln!(s, "- {c}");
    }
    for e in &r.failures {
        let _ = writeln!(s, "FAILED: {e}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_take_the_slow_end_of_rates() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let lat = figure("metrics", "x", "us", &v, "");
        assert_eq!(lat.p95, 95.0);
        let rate = figure("metrics", "x", "samples/s", &v, "");
        assert_eq!(rate.p95, 5.0);
        assert_eq!(rate.median, 50.5);
        assert_eq!(kb_of("10.2 KB per request"), 10.2);
    }
}
