//! The protocol inspector end to end (issue 16, point 4): a real fake server over stdio is
//! called through the host (a slow call answered after a quicker one, a JSON-RPC error, a tool
//! error), the host shuts down and saves the trace, and `switchboard server trace --jsonl`
//! reads it back. Every line must be JSON with a time, a direction and the message; requests
//! and their responses carry the same duration; each filter must pick exactly the lines the
//! unfiltered export says it should, and the known calls must be among them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::host::{CallOptions, HostBuilder};
use switchboard_core::ids::ToolRef;
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_tests::*;

const NEEDLE: &str = "inspector-needle-7f3a";
const SLEEP_MS: u64 = 1200;

fn tool(name: &str) -> ToolRef {
    ToolRef {
        server: sid("insp"),
        tool: name.into(),
    }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn export(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let mut a = vec!["server", "trace", "insp", "--jsonl"];
    a.extend_from_slice(extra);
    let out = cli_ok(dir, &a);
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn method(v: &Value) -> &str {
    v["method"].as_str().unwrap_or("")
}

fn tool_called(v: &Value) -> &str {
    v["message"]["params"]["name"].as_str().unwrap_or("")
}

/// The answer (the other way, same id) to the request at `i`.
fn answer(all: &[Value], i: usize) -> &Value {
    let req = &all[i];
    all[i + 1..]
        .iter()
        .find(|v| {
            v["kind"] == "response" && v["id"] == req["id"] && v["direction"] != req["direction"]
        })
        .unwrap_or_else(|| panic!("no answer to {req}"))
}

/// Calls on a host over `dir`, then shuts it down, which saves the trace there.
async fn make_traffic(dir: &Path) {
    let host = HostBuilder::new(dir)
        .secrets(Secrets::new(MemoryStore::default()))
        .supervisor_config(fast_supervisor())
        .build()
        .await
        .unwrap();
    let h = start_trusted(&host, fake_spec("insp", &[])).await;
    allow_every_call(&host).await;
    let opts = CallOptions::default;
    host.call_allowed(&tool("echo"), args(json!({"text": NEEDLE})), opts())
        .await
        .unwrap();
    // A slow call, and a quick one sent while it runs: the quick one is answered first.
    let slow = {
        let host = host.clone();
        tokio::spawn(async move {
            host.call_allowed(
                &tool("sleep"),
                args(json!({"ms": SLEEP_MS})),
                CallOptions::default(),
            )
            .await
        })
    };
    let sent = eventually(Duration::from_secs(20), || {
        h.logs()
            .trace()
            .iter()
            .any(|e| e.method.as_deref() == Some("tools/call") && e.body.contains("\"sleep\""))
    })
    .await;
    assert!(sent, "the sleep call never went out");
    host.call_allowed(&tool("echo"), args(json!({"text": "quick"})), opts())
        .await
        .unwrap();
    slow.await.unwrap().unwrap();
    let e = host
        .call_allowed(&tool("rpc_error"), args(json!({})), opts())
        .await;
    assert!(e.is_err(), "rpc_error succeeded: {e:?}");
    let r = host
        .call_allowed(&tool("fail"), args(json!({})), opts())
        .await
        .unwrap();
    assert!(r.is_error, "fail did not fail");
    host.shutdown().await;
}

#[tokio::test]
async fn the_cli_exports_timed_json_lines_and_filters_pick_exactly() {
    let dir = tempfile::tempdir().unwrap();
    make_traffic(dir.path()).await;
    let all = export(dir.path(), &[]);

    // Shape: every line has a time, a direction and the message.
    assert!(all.len() >= 12, "too few lines: {all:#?}");
    for v in &all {
        assert!(v["at_ms"].as_i64().unwrap() > 0, "{v}");
        assert!(
            ["out", "in", "note"].contains(&v["direction"].as_str().unwrap()),
            "{v}"
        );
        assert!(!v["message"].is_null(), "{v}");
    }

    // Timings: every tools/call request and its answer carry the same duration.
    let calls: Vec<usize> = (0..all.len())
        .filter(|&i| all[i]["kind"] == "request" && method(&all[i]) == "tools/call")
        .collect();
    let called: Vec<&str> = calls.iter().map(|&i| tool_called(&all[i])).collect();
    assert_eq!(called, ["echo", "sleep", "echo", "rpc_error", "fail"]);
    for &i in &calls {
        let d = all[i]["duration_ms"]
            .as_f64()
            .unwrap_or_else(|| panic!("untimed: {}", all[i]));
        let a = answer(&all, i);
        assert_eq!(a["duration_ms"].as_f64(), Some(d), "{a}");
        assert_eq!(
            method(a),
            "tools/call",
            "the answer names its request's method: {a}"
        );
    }
    let sleep_req = calls[1];
    assert!(all[sleep_req]["duration_ms"].as_f64().unwrap() >= SLEEP_MS as f64);
    // Out of order: the quick echo was answered before the sleep.
    let pos = |v: &Value| all.iter().position(|x| x == v).unwrap();
    assert!(pos(answer(&all, calls[2])) < pos(answer(&all, sleep_req)));

    // Each filter picks exactly what the unfiltered export says it should.
    let expect = |f: &dyn Fn(&Value) -> bool| -> Vec<Value> {
        all.iter().filter(|v| f(v)).cloned().collect()
    };
    let by_method = export(dir.path(), &["--method", "tools/call"]);
    assert_eq!(by_method, expect(&|v| method(v).contains("tools/call")));
    assert_eq!(by_method.len(), 10);

    let errors = export(dir.path(), &["--errors"]);
    assert_eq!(
        errors,
        expect(&|v| v["is_error"] == true || v["tool_error"] == true)
    );
    // Among them (the host's probes of optional methods fail too) the two failed calls: a
    // JSON-RPC error and a tool result marked isError.
    let call_errors: Vec<Value> = errors
        .iter()
        .filter(|v| method(v) == "tools/call")
        .cloned()
        .collect();
    assert_eq!(
        call_errors,
        [
            answer(&all, calls[3]).clone(),
            answer(&all, calls[4]).clone()
        ]
    );
    assert_eq!(call_errors[0]["is_error"], true);
    assert_eq!(call_errors[1]["tool_error"], true);

    let slow = export(dir.path(), &["--slow", "1000"]);
    assert_eq!(
        slow,
        expect(&|v| v["duration_ms"].as_f64().is_some_and(|d| d >= 1000.0))
    );
    assert!(slow.contains(&all[sleep_req]) && slow.contains(answer(&all, sleep_req)));

    let found = export(dir.path(), &["--search", &NEEDLE.to_uppercase()]);
    assert_eq!(
        found,
        vec![all[calls[0]].clone(), answer(&all, calls[0]).clone()]
    );

    let received = export(dir.path(), &["--direction", "received"]);
    assert_eq!(received, expect(&|v| v["direction"] == "in"));
    let sent = export(dir.path(), &["--direction", "sent"]);
    assert_eq!(sent, expect(&|v| v["direction"] == "out"));

    let both = export(
        dir.path(),
        &["--method", "tools/call", "--direction", "in", "--errors"],
    );
    assert_eq!(both, call_errors);

    let last = export(dir.path(), &["--lines", "3"]);
    assert_eq!(last, all[all.len() - 3..]);

    // The text view shows the same selection with its timing.
    let text = cli_ok(dir.path(), &["server", "trace", "insp", "--search", NEEDLE]);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains("tools/call") && text.contains(" ms)"),
        "{text}"
    );
}

#[test]
fn an_unknown_server_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_cli(
        dir.path(),
        &["server", "trace", "nobody", "--jsonl"],
        "",
        &[],
    );
    assert!(!o.status.success());
    assert!(o.stdout.is_empty());
}
