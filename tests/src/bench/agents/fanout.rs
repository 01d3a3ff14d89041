//! The fan-out figure: one supervisor delegating to many sub-agents in one step, each making
//! its tool calls in one step, against the same calls made by one plain chat turn; and the
//! interval arithmetic both use (busy time as a union, the peak of overlapping spans). The
//! method is in [`super`].

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::{Host, SendRequest, TurnInput};
use switchboard_core::ids::ProviderName;

use super::model::Served;
use super::setup::{self, Bench};
use super::{
    check_results, of, secs, task, AgentFigure, AgentPlan, AgentReport, Series, RUN_LIMIT,
};

/// The most of `spans` that overlap at one instant.
fn peak(spans: impl IntoIterator<Item = (Instant, Instant)>) -> usize {
    let mut edges: Vec<(Instant, i32)> = spans
        .into_iter()
        .flat_map(|(a, b)| [(a, 1), (b, -1)])
        .collect();
    // At a tie an end comes first: touching intervals do not overlap.
    edges.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    usize::try_from(most).unwrap_or(0)
}

/// The total length of the union of `served`'s busy intervals.
pub(super) fn busy(served: &[Served]) -> f64 {
    let mut spans: Vec<(Instant, Instant)> = served.iter().map(|s| (s.recv, s.done)).collect();
    spans.sort();
    let mut total = Duration::ZERO;
    let mut cur: Option<(Instant, Instant)> = None;
    for (a, b) in spans {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        total += e - s;
    }
    secs(total)
}

pub(super) async fn fanout(
    bench: &Bench,
    plan: &AgentPlan,
    r: &mut AgentReport,
) -> Result<Vec<AgentFigure>> {
    let (k, m) = (plan.fanout, plan.calls);
    let total = (k * m) as f64;
    let mut s: [Series; 8] = Default::default();
    let mut sums = Vec::new();
    for i in 0..=plan.runs {
        let cold = i == 0;
        let (wall, served) = task(bench, "lead-fanout").await?;
        let sup = of(&served, "fanout-");
        if sup.len() != 2 || served.len() != 2 + 2 * k {
            bail!(
                "expected 2 supervisor and {} worker requests, got {}",
                2 * k,
                served.len()
            );
        }
        check_results("lead-fanout", &sup, k)?;
        for w in 0..k {
            check_results(
                &format!("worker-{w}"),
                &of(&served, &format!("calls-{m}@w{w}@")),
                m,
            )?;
        }
        let busy_f = busy(&served);
        r.fanout_peak = r
            .fanout_peak
            .max(peak(served.iter().map(|s| (s.recv, s.done))));
        // A worker is at work from its first request to the end of its last answer.
        let at_work = (0..k).filter_map(|w| {
            let reqs = of(&served, &format!("calls-{m}@w{w}@"));
            Some((reqs.first()?.recv, reqs.last()?.done))
        });
        r.fanout_workers_peak = r.fanout_workers_peak.max(peak(at_work));
        if !cold {
            sums.push(served.iter().map(|s| secs(s.done - s.recv)).sum::<f64>() * 1e3);
        }
        s[0].push(cold, [secs(wall)]);
        s[1].push(cold, [busy_f]);
        s[2].push(cold, [secs(wall) - busy_f]);
        s[3].push(cold, [(secs(wall) - busy_f) / total]);

        let (wall, served) = plain(bench, k * m).await?;
        let reqs = of(&served, "calls-");
        if reqs.len() != 2 {
            bail!("expected 2 requests of the plain turn, got {}", reqs.len());
        }
        check_results("the plain turn", &reqs, k * m)?;
        let busy_p = busy(&served);
        s[4].push(cold, [secs(wall)]);
        s[5].push(cold, [busy_p]);
        s[6].push(cold, [secs(wall) - busy_p]);
        s[7].push(cold, [(secs(wall) - busy_p) / total]);
    }
    r.fanout_model_sum_ms = crate::bench::median(&sums);
    let key = "agents-fanout";
    let f = format!("fan-out {k} agents x {m} calls");
    let p = format!("plain turn, {} calls", k * m);
    Ok(vec![
        s[0].figure(key, &format!("{f}: wall"), "ms"),
        s[1].figure(key, &format!("{f}: model time (union)"), "ms"),
        s[2].figure(key, &format!("{f}: host overhead"), "ms"),
        s[3].figure(key, &format!("{f}: host overhead per tool call"), "us"),
        s[4].figure(key, &format!("{p}: wall"), "ms"),
        s[5].figure(key, &format!("{p}: model time"), "ms"),
        s[6].figure(key, &format!("{p}: host overhead"), "ms"),
        s[7].figure(key, &format!("{p}: host overhead per tool call"), "us"),
    ])
}

/// One plain chat turn (no agent) whose model asks for `calls` echo calls in one answer.
async fn plain(bench: &Bench, calls: usize) -> Result<(Duration, Vec<Served>)> {
    bench.model.take();
    let host: &Host = &bench.host;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let t0 = Instant::now();
    let send = host.send_message(
        SendRequest {
            conversation: None,
            provider: ProviderName::new(setup::ANTHROPIC)?,
            model: Some(format!("calls-{calls}@plain")),
            input: TurnInput::text("Work through the scripted task."),
            max_steps: None,
            attached: Vec::new(),
            run: None,
            agent: None,
            discovery: None,
        },
        tx,
    );
    let out = tokio::time::timeout(RUN_LIMIT, send)
        .await
        .context("the plain turn did not end in time")??;
    let wall = t0.elapsed();
    let _ = drain.await;
    if !matches!(out.end, TurnEnd::Done(_)) {
        bail!("the plain turn ended {:?}", out.end);
    }
    Ok((wall, bench.model.take()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(t0: Instant, from_ms: u64, to_ms: u64) -> Served {
        let at = |ms| t0 + Duration::from_millis(ms);
        Served {
            model: "answer".into(),
            recv: at(from_ms),
            done: at(to_ms),
            results: 0,
            ok_results: 0,
        }
    }

    #[test]
    fn overlapping_model_time_counts_once() {
        let t0 = Instant::now();
        let s = [served(t0, 0, 10), served(t0, 5, 15), served(t0, 20, 30)];
        assert!((busy(&s) - 0.025).abs() < 1e-9, "{}", busy(&s));
        assert_eq!(peak(s.iter().map(|s| (s.recv, s.done))), 2);
        let touching = [served(t0, 0, 10), served(t0, 10, 20)];
        assert_eq!(peak(touching.iter().map(|s| (s.recv, s.done))), 1);
        assert_eq!(busy(&[]), 0.0);
    }
}
