//! Both protocol generations, chosen per server: the host probes with `server/discover`
//! (2026-07-28) and falls back to `initialize` for an older server, whether it refuses the probe
//! (-32601) or answers it with `{}` (a lax server: the next start of a local one uses
//! `initialize` alone). The negotiated revision is shown by `switchboard server show`. The
//! 2026-07-28 side, against the Python SDK, is in `mrtr.rs` and `interop.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use switchboard_core::status::ServerStatus;
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
