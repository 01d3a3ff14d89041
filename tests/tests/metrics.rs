//! Metrics per server and per tool (issue 16, point 3), through the real host and the real fake
//! server: a scripted load with every kind of ending is counted exactly (calls, errors by kind,
//! bytes, tokens), latency percentiles are ordered and inside what the test measured around
//! each call, `switchboard stats` prints the same numbers, and the OTLP export reaches a fake
//! collector on 127.0.0.1 with the right metric names and counts, and sends nothing while off.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use switchboard_core::approval::Effect;
use switchboard_core::host::{estimate_tokens, CallOptions, ExportOutcome, Host, HostError};
use switchboard_core::ids::ToolRef;
use switchboard_core::settings::MetricsExport;
use switchboard_core::store::{MetricsReport, ToolMetrics};
use switchboard_tests::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn tref(tool: &str) -> ToolRef {
    ToolRef {
        server: sid("fake"),
        tool: tool.into(),
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn tool<'a>(r: &'a MetricsReport, name: &str) -> &'a ToolMetrics {
    r.servers
        .iter()
        .find(|s| s.server.as_str() == "fake")
        .and_then(|s| s.tools.iter().find(|t| t.name == name))
        .unwrap_or_else(|| panic!("no metrics for {name}: {r:#?}"))
}

/// What the test saw of each tool: calls, bytes, tokens, and the longest wall time around a call.
#[derive(Default, Debug)]
struct Seen {
    calls: u64,
    bytes_in: u64,
    bytes_out: u64,
    tokens: u64,
    longest: Duration,
}

struct Load {
    host: Host,
    seen: BTreeMap<String, Seen>,
}

impl Load {
    async fn call(&mut self, name: &str, a: Value) -> Result<(), HostError> {
        let a = args(a);
        let bytes_in = serde_json::to_vec(&a).unwrap().len() as u64;
        let t = Instant::now();
        let r = self
            .host
            .call_allowed(&tref(name), a, CallOptions::default())
            .await;
        let took = t.elapsed();
        let s = self.seen.entry(name.to_owned()).or_default();
        s.calls += 1;
        s.longest = s.longest.max(took);
        match r {
            Ok(r) => {
                s.bytes_in += bytes_in;
                s.bytes_out += serde_json::to_vec(&r).unwrap().len() as u64;
                s.tokens += estimate_tokens(&r);
                Ok(())
            }
            Err(e @ HostError::Denied { .. }) => Err(e),
            Err(e) => {
                s.bytes_in += bytes_in;
                Err(e)
            }
        }
    }
}

async fn loaded_host() -> (Load, tempfile::TempDir) {
    let (host, dir) = test_host().await;
    let mut spec = fake_spec("fake", &[]);
    spec.timeouts.request_secs = 1;
    start_trusted(&host, spec).await;
    host.put_policy_rule(user_rule("no-env", Effect::Deny, "fake", "env"))
        .await
        .unwrap();
    (
        Load {
            host,
            seen: BTreeMap::new(),
        },
        dir,
    )
}

/// Every kind of ending the fake server can produce, in known numbers.
async fn scripted_load(load: &mut Load) {
    for i in 0..20 {
        // 40 characters of text: 10 tokens each.
        let text = format!("{i:0>40}");
        load.call("echo", json!({ "text": text })).await.unwrap();
    }
    for i in 0..3 {
        load.call("add", json!({"a": i, "b": 2})).await.unwrap();
    }
    for _ in 0..2 {
        load.call("fail", json!({})).await.unwrap();
    }
    for _ in 0..2 {
        let e = load.call("rpc_error", json!({})).await.unwrap_err();
        assert!(matches!(e, HostError::Mcp(_)), "{e}");
    }
    for _ in 0..3 {
        load.call("sleep", json!({"ms": 50})).await.unwrap();
    }
    let e = load.call("env", json!({})).await.unwrap_err();
    assert!(matches!(e, HostError::Denied { .. }), "{e}");
    // Over the 1 s request timeout.
    let e = load.call("sleep", json!({"ms": 3000})).await.unwrap_err();
    assert!(e.to_string().contains("did not answer"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_load_is_counted_exactly_and_stats_prints_it() {
    let (mut load, dir) = loaded_host().await;
    scripted_load(&mut load).await;
    let r = load
        .host
        .metrics()
        .report(Some(&sid("fake")), Duration::from_secs(3600))
        .await
        .unwrap();
    let fake = &r.servers[0];
    assert_eq!(r.servers.len(), 1);
    assert_eq!(fake.stats.calls, 32, "{r:#?}");
    let e = &fake.stats.errors;
    assert_eq!(
        (e.tool_error, e.rpc_error, e.denied, e.timeout, e.total()),
        (2, 2, 1, 1, 6),
        "{e:?}"
    );
    for (name, seen) in &load.seen {
        let m = tool(&r, name);
        assert_eq!(m.stats.calls, seen.calls, "{name}");
        assert_eq!(m.stats.bytes_in, seen.bytes_in, "{name}: argument bytes");
        assert_eq!(m.stats.bytes_out, seen.bytes_out, "{name}: result bytes");
        assert_eq!(m.stats.tokens, seen.tokens, "{name}: tokens");
        if let Some(l) = &m.stats.latency {
            assert!(l.exact, "{name}: recent calls have exact percentiles");
            assert!(
                0.0 <= l.p50_ms && l.p50_ms <= l.p95_ms && l.p95_ms <= l.p99_ms,
                "{name}: {l:?}"
            );
            assert!(l.p99_ms <= l.max_ms, "{name}: {l:?}");
            let longest = seen.longest.as_secs_f64() * 1000.0;
            assert!(
                l.max_ms <= longest,
                "{name}: the host measured {} ms, longer than the {longest} ms around the call",
                l.max_ms
            );
        }
    }
    assert_eq!(tool(&r, "echo").stats.tokens, 20 * 10);
    assert!(
        tool(&r, "env").stats.latency.is_none(),
        "a refusal has no latency"
    );
    // The fast sleeps took at least their 50 ms on the server; the slow one ran 1 s.
    let sleep = tool(&r, "sleep").stats.latency.clone().unwrap();
    assert!(sleep.p50_ms >= 50.0, "{sleep:?}");
    assert!(sleep.max_ms >= 1000.0, "{sleep:?}");
    assert_eq!(r.series.iter().map(|p| p.calls).sum::<u64>(), 32);

    // The CLI reads the same numbers from the same database.
    let data = dir.path();
    let json: Value = serde_json::from_str(&cli_ok(data, &["stats", "fake", "--json"])).unwrap();
    let servers = json["servers"].as_array().unwrap();
    assert_eq!(servers[0]["stats"]["calls"], 32);
    assert_eq!(servers[0]["stats"]["errors"]["timeout"], 1);
    let table = cli_ok(data, &["stats", "--since", "1h"]);
    let echo = table
        .lines()
        .find(|l| l.trim_start().starts_with("echo "))
        .unwrap_or_else(|| panic!("no echo row:\n{table}"));
    let cols: Vec<&str> = echo.split_whitespace().collect();
    assert_eq!(cols[1], "20", "calls: {echo}");
    assert_eq!(cols[2], "0", "errors: {echo}");
    let fail = table
        .lines()
        .find(|l| l.trim_start().starts_with("fail "))
        .unwrap();
    assert!(fail.contains("tool_error=2"), "{fail}");
    let fake = table.lines().find(|l| l.starts_with("fake ")).unwrap();
    for kind in ["tool_error=2", "rpc_error=2", "timeout=1", "denied=1"] {
        assert!(fake.contains(kind), "{kind} in {fake}");
    }
    load.host.shutdown().await;
}

/// A collector on 127.0.0.1: answers every POST 200 and keeps (path, JSON body).
async fn collector() -> (String, Arc<Mutex<Vec<(String, Value)>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let keep = got.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let keep = keep.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let (head_end, length) = loop {
                    let n = sock.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "the exporter hung up mid-request");
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                        break (i + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let n = sock.read(&mut chunk).await.unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                }
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let path = head
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let body = serde_json::from_slice(&buf[head_end..head_end + length]).unwrap();
                keep.lock().unwrap().push((path, body));
                let _ = sock
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
                    .await;
            });
        }
    });
    (url, got)
}

/// Calls per (tool, outcome) in every `switchboard.mcp.calls` point the collector got.
fn exported_calls(got: &[(String, Value)]) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for (_, body) in got {
        let metrics = &body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"];
        for m in metrics.as_array().unwrap() {
            if m["name"] != "switchboard.mcp.calls" {
                continue;
            }
            assert_eq!(m["sum"]["aggregationTemporality"], 1, "delta");
            for p in m["sum"]["dataPoints"].as_array().unwrap() {
                let label = |k: &str| {
                    p["attributes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|a| a["key"] == k)
                        .map(|a| a["value"]["stringValue"].as_str().unwrap().to_owned())
                        .unwrap()
                };
                assert_eq!(label("server"), "fake");
                let n: u64 = p["asInt"].as_str().unwrap().parse().unwrap();
                *out.entry((label("tool"), label("outcome"))).or_default() += n;
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otlp_export_reaches_a_collector_and_nothing_is_sent_while_off() {
    let (url, got) = collector().await;
    let (mut load, _dir) = loaded_host().await;
    let host = load.host.clone();
    for _ in 0..3 {
        load.call("echo", json!({"text": "hi"})).await.unwrap();
    }
    load.call("fail", json!({})).await.unwrap();
    // Off: nothing is sent.
    assert_eq!(
        host.metrics().export_now().await.unwrap(),
        ExportOutcome::Off
    );
    assert!(got.lock().unwrap().is_empty());
    // Only http(s) URLs without credentials are accepted.
    for bad in [
        "ftp://127.0.0.1/x",
        "http://user:secret@127.0.0.1:4318",
        "not a url",
    ] {
        let refused = host.metrics().set_export(Some(MetricsExport {
            otlp_endpoint: bad.into(),
            interval_secs: 1,
        }));
        assert!(refused.is_err(), "{bad} was accepted");
    }
    assert!(host.metrics().export_setting().is_none());
    host.metrics()
        .set_export(Some(MetricsExport {
            otlp_endpoint: url.clone(),
            interval_secs: 1,
        }))
        .unwrap();
    // Now (the periodic exporter may have sent them first: both count).
    let now = host.metrics().export_now().await.unwrap();
    assert!(
        matches!(
            now,
            ExportOutcome::Sent { samples: 4, .. } | ExportOutcome::Nothing
        ),
        "{now:?}"
    );
    let want = |echo: u64| {
        BTreeMap::from([
            (("echo".to_owned(), "ok".to_owned()), echo),
            (("fail".to_owned(), "tool_error".to_owned()), 1),
        ])
    };
    assert!(
        eventually(Duration::from_secs(60), || exported_calls(
            &got.lock().unwrap()
        ) == want(3))
        .await,
        "{:?}",
        exported_calls(&got.lock().unwrap())
    );
    {
        let got = got.lock().unwrap();
        assert!(got.iter().all(|(path, _)| path == "/v1/metrics"), "{got:?}");
        let names: Vec<&str> = got[0].1["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        for want in [
            "switchboard.mcp.calls",
            "switchboard.mcp.call.duration",
            "switchboard.mcp.call.request.size",
            "switchboard.mcp.call.response.size",
            "switchboard.mcp.call.tokens",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        // No argument or result text leaves: only names.
        let all = serde_json::to_string(&*got).unwrap();
        assert!(!all.contains("\"hi\""), "an argument was exported");
    }
    // Later calls go out on the periodic export, once: deltas, never a repeat.
    for _ in 0..2 {
        load.call("echo", json!({"text": "hi"})).await.unwrap();
    }
    assert!(
        eventually(Duration::from_secs(60), || exported_calls(
            &got.lock().unwrap()
        ) == want(5))
        .await,
        "{:?}",
        exported_calls(&got.lock().unwrap())
    );
    // Off again: what is recorded from now on stays here.
    host.metrics().set_export(None).unwrap();
    load.call("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(
        host.metrics().export_now().await.unwrap(),
        ExportOutcome::Off
    );
    host.shutdown().await;
}
