//! The per-delta figures: the flood through the fake LLM server (CPU and wall time per delta
//! of each variant), the paced answer (latency per delta), and the chat loop fed from memory.

use std::time::Duration;

use crate::fake_llm::Vendor;
use anyhow::{Context, Result};

use super::paced::{self, Paced};
use super::stream::{self, Sample, Wire};
use super::{median, ChatFigure, ChatPlan, ChatReport};

fn vendor_name(v: Vendor) -> &'static str {
    match v {
        Vendor::OpenAi => "OpenAI",
        Vendor::Anthropic => "Anthropic",
    }
}

/// Per-delta microseconds of one quantity over rounds (round 0 is the cold one).
fn per_delta(rounds: &[[Sample; 3]], n: usize, f: impl Fn(&[Sample; 3]) -> f64) -> (f64, Vec<f64>) {
    let us = |s: &[Sample; 3]| f(s) * 1e6 / n.max(1) as f64;
    let cold = rounds.first().map_or(0.0, us);
    (cold, rounds.iter().skip(1).map(us).collect())
}

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Measures `chat-delta`.
#[allow(clippy::too_many_lines)] // a benchmark run, measured step by step
pub(super) async fn figures(plan: &ChatPlan, r: &mut ChatReport) -> Result<()> {
    let n = plan.deltas.max(1);
    let cpu = |s: &Sample| s.cpu.as_secs_f64();
    let wall = |s: &Sample| s.wall.as_secs_f64();
    for vendor in [Vendor::OpenAi, Vendor::Anthropic] {
        let name = vendor_name(vendor);
        let key = name.to_lowercase();
        let w = Wire::new(vendor, n, 0).await?;
        let mut rounds = Vec::with_capacity(plan.runs + 1);
        for _ in 0..=plan.runs {
            let raw = w.raw().await.context("raw HTTP read")?;
            let provider = w.provider().await.context("provider stream")?;
            let turn = w.turn().await.context("run_turn")?;
            rounds.push([raw, provider, turn]);
        }
        let abs = |i: usize| {
            let (_, c) = per_delta(&rounds, n, |s| cpu(&s[i]));
            let (_, w) = per_delta(&rounds, n, |s| wall(&s[i]));
            format!("{:.2}/{:.2}", median(&w), median(&c))
        };
        let note = format!(
            "per delta, wall/CPU us: raw HTTP {}, provider {}, run_turn {}",
            abs(0),
            abs(1),
            abs(2)
        );
        let (cold, warm) = per_delta(&rounds, n, |s| cpu(&s[2]) - cpu(&s[1]));
        r.figures.push(
            ChatFigure::new(
                &format!("chat-delta-{key}-loop"),
                format!("{name}, {n} deltas back to back: run_turn - provider, CPU/delta"),
                "us",
                cold,
                warm,
            )
            .target(50.0)
            .note(note),
        );
        let (cold, warm) = per_delta(&rounds, n, |s| cpu(&s[2]) - cpu(&s[0]));
        let (_, wall_diff) = per_delta(&rounds, n, |s| wall(&s[2]) - wall(&s[0]));
        r.figures.push(
            ChatFigure::new(
                &format!("chat-delta-{key}-host"),
                format!("{name}, {n} deltas back to back: run_turn - raw HTTP, CPU/delta"),
                "us",
                cold,
                warm,
            )
            .target(50.0)
            .note(format!(
                "the same difference in wall time: {:.2} us/delta",
                median(&wall_diff)
            )),
        );
    }

    let paced_n = (n / 40).max(10);
    let gap = Duration::from_millis(1);
    for vendor in [Vendor::OpenAi, Vendor::Anthropic] {
        let name = vendor_name(vendor);
        let key = name.to_lowercase();
        let p = Paced::new(vendor, paced_n, gap)?;
        let mut rounds: Vec<[paced::Run; 3]> = Vec::with_capacity(plan.runs + 1);
        for _ in 0..=plan.runs {
            let raw = p.raw().await.context("paced raw HTTP read")?;
            let provider = p.provider().await.context("paced provider stream")?;
            let turn = p.turn().await.context("paced run_turn")?;
            rounds.push([raw, provider, turn]);
        }
        let warm = |f: &dyn Fn(&[paced::Run; 3]) -> f64| -> (f64, Vec<f64>) {
            let cold = rounds.first().map_or(0.0, f);
            (cold, rounds.iter().skip(1).map(f).collect())
        };
        let p50 = |run: &paced::Run| pct(&run.latency_us, 0.5);
        let abs = |i: usize| median(&warm(&|s| p50(&s[i])).1);
        let p99 = median(&warm(&|s| pct(&s[2].latency_us, 0.99)).1);
        let (cold, runs) = warm(&|s| p50(&s[2]) - p50(&s[0]));
        r.figures.push(
            ChatFigure::new(
                &format!("chat-delta-{key}-latency-paced"),
                format!("{name}, {paced_n} deltas 1 ms apart: run_turn - raw HTTP, p50 latency"),
                "us",
                cold,
                runs,
            )
            .target(50.0)
            .note(format!(
                "chunk written -> delta out, p50: raw HTTP {:.1}, provider {:.1}, run_turn {:.1} us (p99 {p99:.1})",
                abs(0),
                abs(1),
                abs(2)
            )),
        );
        let per = |s: &Sample| s.cpu.as_secs_f64() * 1e6 / paced_n as f64;
        let cpu_of = |i: usize| median(&warm(&|s| per(&s[i].sample)).1);
        let cpu_diff =
            |a: usize, b: usize| median(&warm(&|s| per(&s[a].sample) - per(&s[b].sample)).1);
        let last = r.figures.len() - 1;
        r.figures[last].note.push_str(&format!(
            "\nCPU per delta: raw HTTP {:.1}, provider {:.1}, run_turn {:.1} us; run_turn - raw \
             {:.1}, run_turn - provider {:.1} us",
            cpu_of(0),
            cpu_of(1),
            cpu_of(2),
            cpu_diff(2, 0),
            cpu_diff(2, 1),
        ));
    }

    let mut samples = Vec::with_capacity(plan.runs + 1);
    for _ in 0..=plan.runs {
        samples.push(stream::memory(n).await?);
    }
    let us = |s: &Sample, f: &dyn Fn(&Sample) -> f64| f(s) * 1e6 / n as f64;
    let warm_wall: Vec<f64> = samples.iter().skip(1).map(|s| us(s, &wall)).collect();
    r.figures.push(
        ChatFigure::new(
            "chat-delta-memory",
            format!("run_turn fed {n} deltas from memory, CPU/delta"),
            "us",
            us(&samples[0], &cpu),
            samples.iter().skip(1).map(|s| us(s, &cpu)).collect(),
        )
        .note(format!(
            "wall per delta {:.2} us (the loop, the channel and its consumer; no I/O)",
            median(&warm_wall)
        )),
    );
    Ok(())
}
