//! The `metrics` figures (method in [`super`]): the governed tool-call loop with recording on
//! and off, the recorder alone, and the writer's throughput into SQLite.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context, Result};
use serde_json::{Map, Value};
use switchboard_core::approval::{AllowedBy, Effect, On, Origin, Rule, Source};
use switchboard_core::config::{ServerSpec, StdioSpec, Timeouts, TransportSpec};
use switchboard_core::harness;
use switchboard_core::host::{CallOptions, Host, HostBuilder};
use switchboard_core::ids::{ServerId, ToolRef};
use switchboard_core::mcp::catalog::{Content, ToolResult};
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::supervisor::ServerStatus;

use super::{figure, us, CostPlan, CostReport};
use crate::bench::TEXT;

const KEY: &str = "metrics";
/// The policy rule that lets the loop's calls through without a person.
const RULE: &str = "sb-bench-metrics-allow-echo";
/// Blocks per mode in the c=1 loop (the modes alternate block by block).
const BLOCKS: usize = 8;
/// Samples per chunk of the recorder-alone figure (a flush after each; the queue holds 65,536).
const CHUNK: usize = 5_000;

fn arguments() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), Value::String(TEXT.into()));
    m
}

fn echo_result() -> ToolResult {
    ToolResult {
        content: vec![Content::Text { text: TEXT.into() }],
        structured_content: None,
        is_error: false,
    }
}

/// One governed `echo` call; an answer other than the echo fails the figure.
async fn call(host: &Host, echo: &ToolRef) -> Result<()> {
    let r = host
        .run_tool(echo, arguments(), Origin::Manual, CallOptions::default())
        .await
        .map_err(|e| anyhow!("echo through run_tool failed: {e}"))?;
    match r.content.first() {
        Some(Content::Text { text }) if text == TEXT && !r.is_error => Ok(()),
        _ => bail!("unexpected echo result: {r:?}"),
    }
}

/// A host with the fake server started as `bench` and [`RULE`] allowing its `echo`, checked
/// with one call (recording on, so it is one sample).
async fn start(host: &Host, server: &Path) -> Result<ToolRef> {
    let id = ServerId::new("bench").map_err(|e| anyhow!("server id: {e}"))?;
    host.add_server(ServerSpec {
        id: id.clone(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: server.to_string_lossy().into_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            sandbox: Default::default(),
        }),
        enabled: true,
        timeouts: Timeouts {
            request_secs: 60,
            init_secs: 30,
            max_message_mib: switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB,
        },
    })
    .await?;
    let view = host.trust_view(&id).await?;
    host.trust_server(&id, &view.fingerprint).await?;
    let handle = host.start_server(&id).await?;
    let status = handle.wait_settled(Duration::from_secs(30)).await;
    if !matches!(status, ServerStatus::Running { .. }) {
        bail!("the fake server did not start: {status}");
    }
    let echo = ToolRef {
        server: id,
        tool: "echo".into(),
    };
    host.put_policy_rule(Rule {
        id: RULE.into(),
        effect: Effect::Allow,
        server: echo.server.to_string(),
        on: On::Tool,
        tool: echo.tool.to_string(),
        origin: None,
        when: Vec::new(),
        limit: None,
        note: Some("sb-bench: echo runs without asking".into()),
        source: Source::User,
    })
    .await
    .map_err(|e| anyhow!("could not add the policy rule {RULE:?}: {e}"))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let run = host.run_tool(
        &echo,
        arguments(),
        Origin::Manual,
        CallOptions::default().started(tx),
    );
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .map_err(|_| anyhow!("the first call waits for a person: {RULE:?} does not allow it"))?
        .map_err(|e| anyhow!("the first call failed: {e}"))?;
    let started = rx
        .await
        .context("run_tool never reported the call started")?;
    ensure!(
        started.allowed_by == Some(AllowedBy::Rule(RULE.into())),
        "the call was not allowed by {RULE:?} but by {started:?}"
    );
    Ok(echo)
}

/// Calls recorded for `bench` so far (the queue flushed first).
async fn recorded(host: &Host, echo: &ToolRef) -> Result<u64> {
    let r = host
        .metrics()
        .report(Some(&echo.server), Duration::from_secs(24 * 3600))
        .await
        .map_err(|e| anyhow!("the metrics report failed: {e}"))?;
    Ok(r.total.calls)
}

/// Measures and appends the metrics rows.
pub async fn run(plan: &CostPlan, r: &mut CostReport) -> Result<()> {
    let dir = tempfile::tempdir().context("could not create a temp dir for the host")?;
    let host = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .build()
        .await
        .context("could not build the host")?;
    let result = measure(plan, &host, r).await;
    host.shutdown().await;
    result
}

async fn measure(plan: &CostPlan, host: &Host, r: &mut CostReport) -> Result<()> {
    let echo = start(host, &plan.server).await?;
    let mut on_calls: u64 = 1;
    // Warm-up, recording on.
    for _ in 0..200 {
        call(host, &echo).await?;
    }
    on_calls += 200;
    let per_block = (plan.calls / BLOCKS).max(1);
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for b in 0..BLOCKS {
        for recording in [b % 2 == 0, b % 2 == 1] {
            harness::set_metrics_recording(host, recording);
            let into = if recording { &mut on } else { &mut off };
            for _ in 0..per_block {
                let t = Instant::now();
                call(host, &echo).await?;
                into.push(us(t.elapsed()));
            }
            if recording {
                on_calls += per_block as u64;
            }
        }
    }
    // c=16: throughput with the writer competing for the two cores.
    let (mut on16, mut off16) = (Vec::new(), Vec::new());
    for recording in [true, false, false, true] {
        harness::set_metrics_recording(host, recording);
        let (h, e) = (host.clone(), echo.clone());
        let f = crate::bench::closed_loop(16, per_block * 2, move || {
            let (h, e) = (h.clone(), e.clone());
            async move { call(&h, &e).await }
        })
        .await?;
        if recording {
            on_calls += (per_block * 2) as u64;
            on16.push(f.throughput);
        } else {
            off16.push(f.throughput);
        }
    }
    harness::set_metrics_recording(host, true);
    let got = recorded(host, &echo).await?;
    ensure!(
        got == on_calls,
        "{got} calls recorded, {on_calls} made with recording on"
    );
    let note = format!("c=1, {BLOCKS} blocks of {per_block} per mode, interleaved");
    r.figures.push(figure(
        KEY,
        "metrics: run_tool, recording on",
        "us",
        &on,
        note.clone(),
    ));
    r.figures.push(figure(
        KEY,
        "metrics: run_tool, recording off",
        "us",
        &off,
        note,
    ));
    let note = format!("c=16, 2 levels of {} calls per mode", per_block * 2);
    r.figures.push(figure(
        KEY,
        "metrics: run_tool c=16, recording on",
        "calls/s",
        &on16,
        note.clone(),
    ));
    r.figures.push(figure(
        KEY,
        "metrics: run_tool c=16, recording off",
        "calls/s",
        &off16,
        note,
    ));
    alone(plan, host, &echo, got, r).await
}

/// The recorder without a call, and the writer behind it.
async fn alone(
    plan: &CostPlan,
    host: &Host,
    echo: &ToolRef,
    before: u64,
    r: &mut CostReport,
) -> Result<()> {
    let args = arguments();
    let result = echo_result();
    // A first chunk warms the queue and the writer, and is not counted.
    harness::record_metric_samples(host, echo, &args, &result, CHUNK, CHUNK).await;
    let chunks =
        harness::record_metric_samples(host, echo, &args, &result, plan.samples, CHUNK).await;
    let got = recorded(host, echo).await?;
    let want = before + (CHUNK + plan.samples) as u64;
    ensure!(
        got == want,
        "{got} samples in SQLite after recording {} more than {before}: some were dropped",
        CHUNK + plan.samples
    );
    let mut left = plan.samples;
    let (mut per_sample, mut rate) = (Vec::new(), Vec::new());
    for (recording, flush) in &chunks {
        let k = left.min(CHUNK);
        left -= k;
        per_sample.push(recording.as_secs_f64() * 1e9 / k as f64);
        rate.push(k as f64 / (*recording + *flush).as_secs_f64());
    }
    let note = format!("{} chunks of {CHUNK}", chunks.len());
    r.figures.push(figure(
        KEY,
        "metrics: recorder alone (meter + metered_tool, enqueue)",
        "ns",
        &per_sample,
        format!("per call; {note}"),
    ));
    r.figures.push(figure(
        KEY,
        "metrics: writer into SQLite (batches of <= 1024, one commit each)",
        "samples/s",
        &rate,
        note,
    ));
    Ok(())
}
