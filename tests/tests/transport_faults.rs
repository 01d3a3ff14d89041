//! Hostile and broken stdio servers (RL-01..RL-08, SP-05, SP-06).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_core::config::ValueSource;
use switchboard_core::host::{CallOptions, HostError};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::Content;
use switchboard_core::mcp::McpError;
use switchboard_core::redact::Secret;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::*;

fn tool(server: &str, name: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: name.into(),
    }
}

fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap()
}

fn text_of(r: &switchboard_core::mcp::catalog::ToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn crash_mid_call_fails_fast_and_the_server_comes_back() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, fake_spec("crashy", &[])).await;
    let started = Instant::now();
    let err = host
        .call_allowed(
            &tool("crashy", "crash"),
            args(json!({})),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        matches!(err, HostError::Mcp(McpError::Disconnected(_))),
        "{err}"
    );
    // The tools are still listed while it restarts, and it comes back: the supervisor may not
    // have seen the exit yet when we look, so retry the call until the new connection answers.
    assert!(!h.catalog().tools.is_empty());
    let deadline = Instant::now() + Duration::from_secs(10);
    let r = loop {
        match host
            .call_allowed(
                &tool("crashy", "echo"),
                args(json!({"text": "back"})),
                CallOptions::default(),
            )
            .await
        {
            Ok(r) => break r,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the server did not come back: {e}"),
        }
    };
    assert_eq!(text_of(&r), "back");
    assert!(matches!(h.status(), ServerStatus::Running { .. }));
    host.shutdown().await;
}

#[tokio::test]
async fn sigkill_mid_call_fails_pending_calls_within_a_second() {
    let (host, _dir) = test_host().await;
    start_trusted(&host, fake_spec("killed", &[])).await;
    // One call is parked in the server when it dies.
    let parked = {
        let host = host.clone();
        tokio::spawn(async move {
            host.call_allowed(
                &tool("killed", "sleep"),
                args(json!({"ms": 30000})),
                CallOptions::default(),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let _ = host
        .call_allowed(
            &tool("killed", "kill_self"),
            args(json!({})),
            CallOptions::default(),
        )
        .await;
    let parked = tokio::time::timeout(Duration::from_secs(2), parked)
        .await
        .expect("pending call did not fail")
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert!(parked.is_err());
    host.shutdown().await;
}

/// A response the host refuses (nested past the JSON reader's limit) fails its own call at
/// once, wherever the id stands in the line; calls in flight beside it and after it work.
#[tokio::test]
async fn a_refused_answer_fails_its_call_at_once_and_the_session_stays_usable() {
    let (host, _dir) = test_host().await;
    // A minute per request: a call that waited for its timeout would take that long, and
    // would fail with a timeout, not the refusal.
    let mut spec = fake_spec("deep", &["--mode", "deep-answer"]);
    spec.timeouts.request_secs = 60;
    start_trusted(&host, spec).await;
    for id_last in [false, true] {
        // A slow call in flight beside the refused one keeps its own answer.
        let beside = {
            let host = host.clone();
            tokio::spawn(async move {
                host.call_allowed(
                    &tool("deep", "sleep"),
                    args(json!({"ms": 300})),
                    CallOptions::default(),
                )
                .await
            })
        };
        let err = host
            .call_allowed(
                &tool("deep", "deep"),
                args(json!({"depth": 200_000, "id_last": id_last})),
                CallOptions::default(),
            )
            .await
            .unwrap_err();
        let shown = err.to_string();
        assert!(
            !matches!(err, HostError::Mcp(McpError::Timeout(_))),
            "waited for the timeout: {shown}"
        );
        assert!(shown.contains("refused the server's answer"), "{shown}");
        assert!(shown.contains("recursion limit"), "{shown}");
        assert!(
            shown.len() < 1_000,
            "the message is bounded: {} bytes",
            shown.len()
        );
        assert!(beside.await.unwrap().is_ok(), "the call beside it failed");
        let r = host
            .call_allowed(
                &tool("deep", "echo"),
                args(json!({"text": "still here"})),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&r), "still here");
    }
    host.shutdown().await;
}

#[tokio::test]
async fn timeout_sends_cancellation_and_the_session_stays_usable() {
    let (host, dir) = test_host().await;
    let record = dir.path().join("record.jsonl");
    let mut spec = fake_spec("slowpoke", &["--record", record.to_str().unwrap()]);
    spec.timeouts.request_secs = 1;
    start_trusted(&host, spec).await;
    let started = Instant::now();
    let err = host
        .call_allowed(
            &tool("slowpoke", "sleep"),
            args(json!({"ms": 10000})),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Mcp(McpError::Timeout(_))), "{err}");
    assert!(started.elapsed() < Duration::from_secs(4));
    let r = host
        .call_allowed(
            &tool("slowpoke", "echo"),
            args(json!({"text": "still here"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "still here");
    assert!(
        eventually(Duration::from_secs(2), || std::fs::read_to_string(&record)
            .unwrap_or_default()
            .contains("notifications/cancelled"))
        .await,
        "no notifications/cancelled reached the server"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn user_cancel_reaches_the_server_and_progress_is_forwarded() {
    let (host, dir) = test_host().await;
    let record = dir.path().join("record.jsonl");
    start_trusted(
        &host,
        fake_spec("prog", &["--record", record.to_str().unwrap()]),
    )
    .await;
    let mut events = host.subscribe();

    // Progress arrives at the caller and as host events.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = host
        .call_allowed(
            &tool("prog", "slow"),
            args(json!({"steps": 3, "ms": 50})),
            CallOptions::default().progress(tx),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "done");
    let mut seen = Vec::new();
    while let Ok(p) = rx.try_recv() {
        seen.push(p.progress);
    }
    assert!(seen.len() >= 2, "progress seen: {seen:?}");
    let mut progress_events = 0;
    while let Ok(e) = events.try_recv() {
        if matches!(e, switchboard_core::events::HostEvent::Progress { .. }) {
            progress_events += 1;
        }
    }
    assert!(progress_events >= 2);

    // Cancel a long call, through its run as a shell does.
    let run = host.open_run();
    let (h2, r2) = (host.clone(), run.clone());
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(h2.cancel_run(&r2));
    });
    let err = host
        .call_allowed(
            &tool("prog", "slow"),
            args(json!({"steps": 100, "ms": 100})),
            CallOptions::default().run(run),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Mcp(McpError::Cancelled)), "{err}");
    assert!(
        eventually(Duration::from_secs(2), || std::fs::read_to_string(&record)
            .unwrap_or_default()
            .contains("notifications/cancelled"))
        .await
    );
    // The session is still usable.
    host.call_allowed(
        &tool("prog", "echo"),
        args(json!({"text": "x"})),
        CallOptions::default(),
    )
    .await
    .unwrap();
    host.shutdown().await;
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped_and_counted() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(
        &host,
        fake_spec("noisy", &["--mode", "garbage-stdout,banner"]),
    )
    .await;
    let r = host
        .call_allowed(
            &tool("noisy", "echo"),
            args(json!({"text": "ok"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "ok");
    assert!(
        h.logs().skipped_lines() >= 3,
        "skipped {}",
        h.logs().skipped_lines()
    );
    host.shutdown().await;
}

#[tokio::test]
async fn an_endless_line_closes_the_connection_with_a_clear_error() {
    let (host, _dir) = test_host().await;
    let id = add_trusted(&host, fake_spec("endless", &["--mode", "huge-line"])).await;
    let h = host.start_server(&id).await.unwrap();
    // tools/list is answered with an endless line: every start fails, and the breaker trips.
    let mut last = String::new();
    let ok = eventually(Duration::from_secs(30), || {
        last = h.status().to_string();
        matches!(h.status(), ServerStatus::Failed { .. })
    })
    .await;
    assert!(ok, "last status: {last}");
    assert!(
        h.logs()
            .trace()
            .iter()
            .any(|e| e.body.contains("larger than 16777216 bytes")),
        "the trace does not explain the cap"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn a_stderr_flood_is_drained_and_bounded() {
    let (host, _dir) = test_host().await;
    let h = start_trusted(
        &host,
        fake_spec("flood", &["--mode", "stderr-flood", "--flood-mb", "200"]),
    )
    .await;
    for i in 0..20 {
        let r = host
            .call_allowed(
                &tool("flood", "echo"),
                args(json!({"text": format!("n{i}")})),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&r), format!("n{i}"));
    }
    assert!(h.logs().stderr_bytes() <= switchboard_core::server_logs::STDERR_BUDGET);
    assert!(h.logs().stderr_total_lines() > 10);
    host.shutdown().await;
}

/// The host's resident memory in KiB (Linux `/proc/self/status`).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// RL-13: a server that writes 200 MiB of short stderr lines before it answers `initialize`,
/// and 200 MiB more while it answers, completes its handshake and every call (the drain keeps
/// up and never holds up the protocol), and the host's memory stays bounded: the kept stderr
/// within its budget, the process far below what was written.
#[tokio::test]
async fn a_chatty_server_answers_and_its_stderr_stays_bounded() {
    let before = rss_kib();
    let (host, _dir) = test_host().await;
    let h = start_trusted(
        &host,
        fake_spec("chatty", &["--mode", "stderr-chatty", "--flood-mb", "200"]),
    )
    .await;
    let seen_at_start = h.logs().stderr_total_lines();
    assert!(
        seen_at_start >= 200 * 1024 * 1024 / 80,
        "the handshake came after the flood: {seen_at_start} lines"
    );
    for i in 0..20 {
        let r = host
            .call_allowed(
                &tool("chatty", "echo"),
                args(json!({"text": format!("c{i}")})),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&r), format!("c{i}"));
    }
    let logs = h.logs();
    assert!(logs.stderr_bytes() <= switchboard_core::server_logs::STDERR_BUDGET);
    let tail = logs.stderr_tail(3);
    assert_eq!(tail.len(), 3);
    assert!(tail.iter().all(|l| l.starts_with("chatty ")), "{tail:?}");
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 256 * 1024, "the host grew by {grown} KiB");
    host.shutdown().await;
}

#[tokio::test]
async fn stop_kills_the_whole_tree_even_when_it_ignores_sigterm() {
    let (host, dir) = test_host().await;
    let pids = dir.path().join("pids");
    let h = start_trusted(
        &host,
        fake_spec(
            "tree",
            &[
                "--mode",
                "fork-grandchild,ignore-sigterm",
                "--pid-file",
                pids.to_str().unwrap(),
            ],
        ),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(5), || read_pids(&pids).len() >= 3).await,
        "{:?}",
        read_pids(&pids)
    );
    let all = read_pids(&pids);
    assert!(all.iter().all(|p| pid_alive(*p)));
    let started = Instant::now();
    h.stop().await;
    assert!(
        started.elapsed() <= Duration::from_secs(7),
        "stop took {:?}",
        started.elapsed()
    );
    assert!(
        eventually(Duration::from_secs(2), || all
            .iter()
            .all(|p| !pid_alive(*p)))
        .await,
        "survivors: {:?}",
        all.iter().filter(|p| pid_alive(**p)).collect::<Vec<_>>()
    );
    host.shutdown().await;
}

#[tokio::test]
async fn host_secrets_never_reach_the_child_environment() {
    let host_env = vec![
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".to_owned(), "/tmp".to_owned()),
        (
            "OPENAI_API_KEY".to_owned(),
            "sk-canary-host-1234567890".to_owned(),
        ),
        (
            "ANTHROPIC_API_KEY".to_owned(),
            "canary-anthropic".to_owned(),
        ),
    ];
    let (host, _dir) = test_host_with(|b| b.host_env(host_env)).await;
    let spec = with_env(
        with_env(
            fake_spec("envy", &[]),
            "MY_TOKEN",
            ValueSource::Secret("my.token".parse().unwrap()),
        ),
        "PLAIN",
        ValueSource::Plain("p".into()),
    );
    let id = add_trusted(&host, spec).await;
    // The server's own secret, set once the server exists.
    host.set_server_secret(
        &id,
        &"my.token".parse().unwrap(),
        Secret::new("configured-secret-value"),
        false,
    )
    .await
    .unwrap();
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(matches!(status, ServerStatus::Running { .. }), "{status}");
    let r = host
        .call_allowed(
            &tool("envy", "env"),
            args(json!({})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    let env: serde_json::Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(env["MY_TOKEN"], "configured-secret-value");
    assert_eq!(env["PLAIN"], "p");
    assert_eq!(env["HOME"], "/tmp");
    assert!(
        env.get("OPENAI_API_KEY").is_none() && env.get("ANTHROPIC_API_KEY").is_none(),
        "{env}"
    );
    // The secret is redacted from the protocol trace (the env tool echoed it back).
    assert!(!h
        .logs()
        .trace()
        .iter()
        .any(|e| e.body.contains("configured-secret-value")));
    host.shutdown().await;
}

#[tokio::test]
async fn a_crash_loop_trips_the_breaker_with_the_stderr_tail() {
    let (host, _dir) = test_host().await;
    let id = add_trusted(
        &host,
        fake_spec(
            "loop",
            &[
                "--mode",
                "crash-on-init",
                "--stderr-banner",
                "boom: missing config",
            ],
        ),
    )
    .await;
    // Count starts from the event stream: a `watch` keeps only the latest status and would
    // miss quick transitions on a loaded machine.
    let mut events = host.subscribe();
    let h = host.start_server(&id).await.unwrap();
    let mut starts = 0;
    let failed = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let e = events.recv().await.unwrap();
            let switchboard_core::events::HostEvent::ServerStatus { server, status } = e else {
                continue;
            };
            if server != id {
                continue;
            }
            match status {
                ServerStatus::Starting { .. } => starts += 1,
                ServerStatus::Failed { .. } => return status,
                _ => {}
            }
        }
    })
    .await
    .expect("the breaker never tripped");
    let ServerStatus::Failed {
        reason,
        stderr_tail,
    } = failed
    else {
        unreachable!()
    };
    assert!(
        matches!(reason, switchboard_core::status::Reason::CrashLoop { .. }),
        "{reason:?}"
    );
    assert!(reason.to_string().contains("crash loop"), "{reason}");
    assert!(
        stderr_tail
            .iter()
            .any(|l| l.contains("boom: missing config")),
        "{stderr_tail:?}"
    );
    assert!((5..=6).contains(&starts), "{starts} starts");
    // Bounded: no further starts once failed.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(matches!(h.status(), ServerStatus::Failed { .. }));
    host.shutdown().await;
}

#[tokio::test]
async fn the_message_cap_is_the_servers_own_and_raising_it_lets_a_large_answer_through() {
    let (host, _dir) = test_host().await;
    let mut spec = fake_spec("big", &[]);
    spec.timeouts.max_message_mib = 1;
    let id = add_trusted(&host, spec).await;
    let h = host.start_server(&id).await.unwrap();
    assert!(matches!(
        h.wait_settled(Duration::from_secs(20)).await,
        ServerStatus::Running { .. }
    ));
    // The echo of 1.5 MiB is one line over the server's 1 MiB cap.
    let big = "x".repeat(1536 * 1024);
    let err = host
        .call_allowed(
            &tool("big", "echo"),
            args(json!({ "text": big })),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    let shown = err.to_string();
    assert!(
        !matches!(err, HostError::Mcp(McpError::Timeout(_))),
        "waited for the timeout: {shown}"
    );
    assert!(
        shown.contains("1 MiB") || shown.contains("1048576"),
        "the cap is not named: {shown}"
    );

    let mut limits = host.server(&id).await.unwrap().timeouts;
    limits.max_message_mib = 4;
    host.set_server_limits(&id, limits).await.unwrap();
    let h = host.handle(&id).unwrap();
    assert!(matches!(
        h.wait_settled(Duration::from_secs(20)).await,
        ServerStatus::Running { .. }
    ));
    let r = host
        .call_allowed(
            &tool("big", "echo"),
            args(json!({ "text": big })),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r).len(), big.len());
    // Nonsense caps are refused, not clamped silently.
    limits.max_message_mib = 0;
    assert!(matches!(
        host.set_server_limits(&id, limits).await,
        Err(HostError::Spec(_))
    ));
    host.shutdown().await;
}
