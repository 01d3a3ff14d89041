//! The agent figures of issue 15 (`sb-bench --only agents`, or `agents-delegate`,
//! `agents-fanout`): what the host adds to a delegation, and to a fan-out of 10 sub-agents
//! making 10 tool calls each, with the models' own time taken out.
//!
//! # Method
//!
//! One real [`Host`](switchboard_core::host::Host) (see [`setup`]) runs every figure: the fake
//! MCP server as `bench` with a user rule allowing its `echo`, so each call is decided by the
//! policy and written to the audit log like any model's call; supervisors on an OpenAI-wire
//! provider, sub-agents on an Anthropic-wire one, both served by one scripted model on loopback
//! ([`model`]) that answers at once and notes, per request, when it had read the request and
//! when it had written the last byte of the answer. *Model time* is the time between those two
//! instants; *host overhead* is wall time minus model time, so it holds everything the host
//! does (HTTP client, SSE decoding, the turn loop, the run tree and audit in SQLite, the tool
//! seam) plus the MCP server's answers (which take microseconds; see the `raw-pipe` row).
//!
//! - `agents-delegate`: `lead-delegate` delegates `--delegations` times, one after the other (one
//!   delegate call per model step), to `helper`, whose model answers at once. For delegation
//!   *i*, the span from the end of the supervisor's answer *i* to the arrival of its request
//!   *i*+1 is the delegation's wall time; minus the helper's model time it is the overhead.
//!   The same run with `lead-tool`, which calls `echo` instead of delegating, gives the
//!   overhead of a plain tool-call step in the same loop, for comparison.
//! - `agents-fanout`: `lead-fanout` delegates to `worker-0` .. `worker-9` in one step (ten
//!   delegate calls in one answer; the turn loop runs the calls of one answer concurrently),
//!   each worker's model asks for ten `echo` calls in one answer, then answers. Model time is
//!   the union of the model's busy intervals (what overlaps counts once); overhead is wall
//!   minus that, and per tool call that divided by the calls. No peer host in this bench
//!   delegates, so the comparison is the same hundred calls made by one plain chat turn
//!   (`Host::send_message`, one answer asking for all of them; every message and call stored).
//!
//! Run 0 is the cold one (first use of the host, providers and agents); figures are median and
//! p95 (nearest rank) of the `--agent-runs` warm runs. Every run is checked: the answers, the
//! number of model requests, that every tool result holds the echoed text, and that nothing
//! waited for a person.

mod fanout;
mod model;
mod setup;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use switchboard_core::agent_data::AgentName;
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::Lineage;
use switchboard_core::ids::ConversationId;
use tokio_util::sync::CancellationToken;

use model::Served;
use setup::{Bench, Watchdog};

/// The `--only` keys of the agent figures (`agents` selects both).
pub const KEYS: [&str; 2] = ["agents-delegate", "agents-fanout"];

/// The longest one scripted run may take before the figure fails.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// What to measure.
#[derive(Clone, Debug)]
pub struct AgentPlan {
    /// Warm runs per figure, after the cold one.
    pub runs: usize,
    /// Sequential delegations per supervisor run.
    pub delegations: usize,
    /// Sub-agents in the fan-out.
    pub fanout: usize,
    /// Tool calls per sub-agent.
    pub calls: usize,
    /// The fake MCP server.
    pub server: PathBuf,
    /// Which of [`KEYS`].
    pub keys: Vec<&'static str>,
}

/// One figure over the warm runs.
#[derive(Clone, Debug, Serialize)]
pub struct AgentFigure {
    /// The key it belongs to.
    pub key: &'static str,
    /// What the row is called.
    pub label: String,
    /// `us` or `ms`.
    pub unit: &'static str,
    /// Samples (warm).
    pub n: usize,
    /// Median of the warm samples.
    pub median: f64,
    /// 95th percentile (nearest rank).
    pub p95: f64,
    /// The cold run's value (its median where a run gives several samples).
    pub cold: f64,
}

/// Everything the agent figures produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AgentReport {
    /// Warm runs per figure.
    pub runs: usize,
    /// Sequential delegations per run.
    pub delegations: usize,
    /// Sub-agents x tool calls of the fan-out.
    pub fanout: usize,
    /// Tool calls per sub-agent.
    pub calls: usize,
    /// The most model requests in flight at once in any fan-out run (1: the sub-agents' model
    /// calls never overlapped).
    pub fanout_peak: usize,
    /// The most sub-agents at work at once (from a worker's first request to the end of its
    /// last answer) in any fan-out run.
    pub fanout_workers_peak: usize,
    /// The fan-out's model time summed over requests, median over warm runs, ms (the union is
    /// smaller when requests overlap).
    pub fanout_model_sum_ms: f64,
    /// The figures, in table order.
    pub figures: Vec<AgentFigure>,
    /// What failed.
    pub failures: Vec<String>,
}

/// Samples of one figure: the cold run's, then the warm runs'.
#[derive(Default)]
struct Series {
    cold: Vec<f64>,
    warm: Vec<f64>,
}

impl Series {
    fn push(&mut self, cold: bool, v: impl IntoIterator<Item = f64>) {
        if cold {
            self.cold.extend(v);
        } else {
            self.warm.extend(v);
        }
    }

    fn figure(&self, key: &'static str, label: &str, unit: &'static str) -> AgentFigure {
        let scale = if unit == "ms" { 1e3 } else { 1e6 };
        let nanos = |v: &[f64]| {
            let mut n: Vec<u64> = v.iter().map(|s| (s * 1e9) as u64).collect();
            n.sort_unstable();
            n
        };
        let q = |v: &[u64], q: f64| super::percentile(v, q) as f64 / 1e9 * scale;
        let (warm, cold) = (nanos(&self.warm), nanos(&self.cold));
        AgentFigure {
            key,
            label: label.to_owned(),
            unit,
            n: warm.len(),
            median: super::median(&self.warm) * scale,
            p95: q(&warm, 0.95),
            cold: q(&cold, 0.5),
        }
    }
}

/// Measures the selected figures; a failure is recorded and the other figure still runs.
pub async fn run(plan: &AgentPlan) -> AgentReport {
    let mut r = AgentReport {
        runs: plan.runs,
        delegations: plan.delegations,
        fanout: plan.fanout,
        calls: plan.calls,
        ..AgentReport::default()
    };
    let bench = match Bench::new(&plan.server, plan.delegations, plan.fanout, plan.calls).await {
        Ok(b) => b,
        Err(e) => {
            r.failures.push(format!("setting up the host: {e:#}"));
            return r;
        }
    };
    let watchdog = Watchdog::start(&bench.host);
    if plan.keys.contains(&"agents-delegate") {
        match delegate(&bench, plan).await {
            Ok(f) => r.figures.extend(f),
            Err(e) => r.failures.push(format!("agents-delegate: {e:#}")),
        }
    }
    if plan.keys.contains(&"agents-fanout") {
        match fanout::fanout(&bench, plan, &mut r).await {
            Ok(f) => r.figures.extend(f),
            Err(e) => r.failures.push(format!("agents-fanout: {e:#}")),
        }
    }
    if let Err(e) = watchdog.stop() {
        r.failures.push(format!("{e:#}"));
    }
    match bench.host.verify_audit().await {
        Ok(v) if v.ok => {}
        Ok(v) => r
            .failures
            .push(format!("the audit chain is broken: {:?}", v.first_bad)),
        Err(e) => r
            .failures
            .push(format!("could not verify the audit log: {e}")),
    }
    bench.host.shutdown().await;
    r
}

/// Runs `agent` on a task as the root of a new run; its wall time and what the model served.
async fn task(bench: &Bench, agent: &str) -> Result<(Duration, Vec<Served>)> {
    bench.model.take();
    let name = AgentName::new(agent).map_err(|e| anyhow::anyhow!("{e}"))?;
    let t0 = Instant::now();
    let run = bench.host.run_agent_task(
        Lineage::root(ConversationId::random()),
        name,
        "Work through the scripted task.".into(),
        CancellationToken::new(),
    );
    let out = tokio::time::timeout(RUN_LIMIT, run)
        .await
        .context("the run did not end in time")??;
    let wall = t0.elapsed();
    let model = bench.model.take();
    if !matches!(out.end, TurnEnd::Done(_)) || !out.answer.starts_with("Done: ") {
        bail!("{agent} ended {:?} with {:?}", out.end, out.answer);
    }
    Ok((wall, model))
}

/// The served requests of one model (by name prefix), in order.
fn of<'a>(served: &'a [Served], model: &str) -> Vec<&'a Served> {
    let mut v: Vec<&Served> = served
        .iter()
        .filter(|s| s.model.starts_with(model))
        .collect();
    v.sort_by_key(|s| s.recv);
    v
}

/// The last request of `reqs` must carry `want` good tool results.
fn check_results(who: &str, reqs: &[&Served], want: usize) -> Result<()> {
    match reqs.last() {
        Some(s) if s.results == want && s.ok_results == want => Ok(()),
        Some(s) => bail!(
            "{who}'s last request held {} tool results, {} good; expected {want}",
            s.results,
            s.ok_results
        ),
        None => bail!("{who} never asked its model"),
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

async fn delegate(bench: &Bench, plan: &AgentPlan) -> Result<Vec<AgentFigure>> {
    let n = plan.delegations;
    let [mut over, mut wall, mut model, mut tool, mut alone]: [Series; 5] = Default::default();
    for i in 0..=plan.runs {
        let cold = i == 0;
        let (_, served) = task(bench, "lead-delegate").await?;
        let sup = of(&served, "seq-delegate-");
        let helper = of(&served, "answer");
        if sup.len() != n + 1 || helper.len() != n {
            bail!(
                "expected {} supervisor and {n} helper requests, got {} and {}",
                n + 1,
                sup.len(),
                helper.len()
            );
        }
        check_results("lead-delegate", &sup, n)?;
        for k in 0..n {
            let (asked, back, h) = (sup[k].done, sup[k + 1].recv, helper[k]);
            if !(asked <= h.recv && h.done <= back) {
                bail!("the helper's request {k} is not inside delegation {k}");
            }
            let span = secs(back - asked);
            let m = secs(h.done - h.recv);
            wall.push(cold, [span]);
            model.push(cold, [m]);
            over.push(cold, [span - m]);
        }
        let (_, served) = task(bench, "lead-tool").await?;
        let sup = of(&served, "seq-tool-");
        if sup.len() != n + 1 || served.len() != n + 1 {
            bail!(
                "expected {} requests of lead-tool, got {}",
                n + 1,
                served.len()
            );
        }
        check_results("lead-tool", &sup, n)?;
        tool.push(cold, sup.windows(2).map(|w| secs(w[1].recv - w[0].done)));
        // The sub-agent's task on its own, as the root of a run: what starting and ending an
        // agent task costs without a supervisor's step around it.
        let (took, served) = task(bench, "helper").await?;
        if served.len() != 1 {
            bail!("expected 1 request of helper alone, got {}", served.len());
        }
        alone.push(cold, [secs(took) - fanout::busy(&served)]);
    }
    let k = "agents-delegate";
    Ok(vec![
        over.figure(
            k,
            "delegation: host overhead (wall - sub-agent model time)",
            "us",
        ),
        wall.figure(
            k,
            "delegation: wall, supervisor answer to its next request",
            "us",
        ),
        model.figure(
            k,
            "delegation: the sub-agent's model time (fake, at once)",
            "us",
        ),
        tool.figure(k, "comparison: one echo call step in the same loop", "us"),
        alone.figure(
            k,
            "comparison: the sub-agent's task alone, host overhead",
            "us",
        ),
    ])
}

/// The human-readable agents section.
pub fn table(r: &AgentReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "agents (issue 15): median and p95 of {} warm runs ({} sequential delegations per \
         supervisor run; fan-out {} sub-agents x {} tool calls); cold = the first run; host \
         overhead = wall - the scripted model's busy time",
        r.runs, r.delegations, r.fanout, r.calls
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
        "{:w$} | {:>6} {:>10} {:>10} {:>10}",
        "figure", "n", "median", "p95", "cold"
    );
    s.push_str(&"-".repeat(w + 44));
    s.push('\n');
    for f in &r.figures {
        let _ = writeln!(
            s,
            "{:w$} | {:>6} {:>10.1} {:>10.1} {:>10.1} {}",
            f.label, f.n, f.median, f.p95, f.cold, f.unit
        );
    }
    if r.fanout_peak > 0 {
        let _ = writeln!(
            s,
            "fan-out: at most {} sub-agents at work and {} model requests in flight at once; \
             model time summed over requests {:.1} ms (median), against the union above",
            r.fanout_workers_peak, r.fanout_peak, r.fanout_model_sum_ms
        );
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
    fn a_series_splits_cold_from_warm() {
        let mut s = Series::default();
        s.push(true, [0.009]);
        s.push(false, (1..=100).map(|i| f64::from(i) / 1e6));
        let f = s.figure("agents-delegate", "x", "us");
        assert_eq!(f.n, 100);
        assert!((f.median - 50.5).abs() < 1e-6, "{}", f.median);
        assert!((f.p95 - 95.0).abs() < 1e-6, "{}", f.p95);
        assert!((f.cold - 9000.0).abs() < 1e-6, "{}", f.cold);
    }
}
