//! Both protocol generations, chosen per server: the host probes with `server/discover`
//! (2026-07-28) and falls back to `initialize` for an older server, whether it refuses the probe
//! (-32601) or answers it with `{}` (a lax server: the next start of a local one uses
//! `initialize` alone). A stateless server that stops speaking the negotiated revision (-32022
//! mid-session) ends the session, and the next start negotiates again. The negotiated revision
//! is shown by `switchboard server show`. The 2026-07-28 side, against the Python SDK, is in
//! `mrtr.rs` and `interop.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::approval::Origin;
use switchboard_core::host::CallOptions;
use switchboard_core::ids::ToolRef;
use switchboard_core::status::ServerStatus;
use switchboard_tests::fake_http::{FakeHttp, HttpMode};
use switchboard_tests::*;

fn protocol(host: &switchboard_core::host::Host, name: &str) -> String {
    match host.handle(&sid(name)).unwrap().status() {
        ServerStatus::Running { peer, .. } => peer.protocol_version,
        other => panic!("{name} is not running: {other:?}"),
    }
}

#[tokio::test]
async fn an_older_server_is_reached_by_initialize_after_the_probe() {
    let (host, _dir) = test_host().await;
    // Refuses the probe with -32601, as the spec asks of older servers.
    start_trusted(&host, fake_spec("plain", &[])).await;
    assert_eq!(protocol(&host, "plain"), "2025-11-25");
    // Answers the probe with `{}`: the next start uses initialize alone.
    start_trusted(&host, fake_spec("lax", &["--mode", "answer-anything"])).await;
    assert_eq!(protocol(&host, "lax"), "2025-11-25");
    let handle = host.handle(&sid("lax")).unwrap();
    let notes: Vec<String> = handle
        .logs()
        .trace()
        .into_iter()
        .map(|e| e.body)
        .filter(|b| b.contains("starting it again with initialize"))
        .collect();
    assert_eq!(notes.len(), 1, "the fallback is noted once: {notes:?}");
    // Still reachable: the catalog came through the fallback session.
    assert!(!handle.catalog().tools.is_empty());
}

#[tokio::test]
async fn a_server_that_drops_the_revision_mid_session_is_negotiated_again() {
    let fake = FakeHttp::start(HttpMode::Modern).await;
    let (host, _dir) = test_host().await;
    start_trusted(&host, http_spec("moving", &fake.url)).await;
    assert_eq!(protocol(&host, "moving"), "2026-07-28");
    let run = |tool: &str, args: serde_json::Value| {
        let host = host.clone();
        let tool = ToolRef {
            server: sid("moving"),
            tool: tool.into(),
        };
        async move {
            host.run_tool(
                &tool,
                args.as_object().unwrap().clone(),
                Origin::Manual,
                CallOptions::default(),
            )
            .await
        }
    };
    allow_all(&host, "moving").await;
    run("downgrade", serde_json::json!({})).await.unwrap();
    // The next request names 2026-07-28 and gets -32022: that call fails, plainly.
    let e = run("echo", serde_json::json!({"text": "a"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("2026-07-28"), "{e}");
    // The supervisor starts again and settles on what the server now speaks.
    assert!(
        eventually(Duration::from_secs(10), || {
            matches!(host.handle(&sid("moving")).unwrap().status(),
                ServerStatus::Running { ref peer, .. } if peer.protocol_version == "2025-11-25")
        })
        .await,
        "not renegotiated: {:?}",
        host.handle(&sid("moving")).unwrap().status()
    );
    let r = run("echo", serde_json::json!({"text": "b"})).await.unwrap();
    assert!(!r.is_error, "{r:?}");
    let methods = fake.methods();
    assert!(
        methods.iter().filter(|m| *m == "server/discover").count() >= 2
            && methods.contains(&"initialize".to_owned()),
        "{methods:?}"
    );
}

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn server_show_names_the_negotiated_revision() {
    let dir = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| run_cli(dir.path(), args, "", &[]);
    let fake = fake_server();
    let o = cli(&["server", "add", "old", "--", fake.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let o = cli(&["server", "show", "old"]);
    assert!(out(&o).contains("protocol: not known yet"), "{}", out(&o));
    let o = cli(&["server", "trust", "old", "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    let o = cli(&["call", "old", "echo", "--yes", "--args", r#"{"text":"hi"}"#]);
    assert!(o.status.success(), "{}", err(&o));
    let o = cli(&["server", "show", "old"]);
    assert!(
        out(&o).contains("protocol: 2025-11-25 (negotiated at the last start"),
        "{}",
        out(&o)
    );
}
