//! Hostile and broken Streamable HTTP servers: remote answers meet the stdio caps (size, SSE
//! event size, nesting depth) with the same fast failure, reconnects keep a floor whatever a
//! server's `retry:` says, auth failures are typed, and what rmcp 3.11 changed that touches
//! us (bounded buffered responses, tool results without content, servers that refuse methods
//! of capabilities they did not advertise).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_core::mcp::connection::{ConnectOptions, Connection, Endpoint};
use switchboard_core::mcp::McpError;
use switchboard_core::server_logs::ServerLogs;
use switchboard_core::status::Reason;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::fake_http::{FakeHttp, HttpMode};
use switchboard_tests::scenario::{call_on, tool_text};
use switchboard_tests::*;

/// The cap these tests run with: small, so "too large" is quick to send.
const CAP: usize = 256 * 1024;

async fn connect(fake: &FakeHttp) -> Result<Connection, McpError> {
    // Notifications are not looked at here; the connection drops them once this is gone.
    let (signals, _) = tokio::sync::mpsc::channel(64);
    Connection::connect(
        Endpoint::Http {
            url: fake.url.clone(),
            headers: vec![],
            max_message: CAP,
            auth: None,
        },
        ServerLogs::new(None),
        ConnectOptions {
            init_timeout: Duration::from_secs(10),
            // A call that waited for its timeout would take a minute: every failure below
            // must come long before.
            request_timeout: Duration::from_secs(60),
            signals,
            requests: None,
            lifecycle: Default::default(),
        },
    )
    .await
}

/// Calls `tool`, expects a refusal within a few seconds, with a call beside it and one after
/// it still answered; returns the refusal's reason.
async fn refused_at_once(conn: &Arc<Connection>, tool: &str, args: serde_json::Value) -> Reason {
    let beside = {
        let conn = conn.clone();
        tokio::spawn(async move { call_on(&conn, "sleep", json!({"ms": 300})).await })
    };
    let started = Instant::now();
    let err = call_on(conn, tool, args.clone()).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{tool} {args}: took {:?}",
        started.elapsed()
    );
    let shown = err.to_string();
    assert!(shown.len() < 1_000, "the message is bounded: {shown}");
    let McpError::Refused { reason } = err else {
        panic!("{tool} {args}: not a refusal: {shown}");
    };
    assert!(shown.contains("refused the server's answer"), "{shown}");
    assert!(beside.await.unwrap().is_ok(), "the call beside it failed");
    let r = call_on(conn, "echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(tool_text(&r), "still here");
    reason
}

#[tokio::test]
async fn a_too_deep_answer_fails_its_call_at_once_as_a_body_or_an_event() {
    let fake = FakeHttp::start(HttpMode::Plain).await;
    let conn = Arc::new(connect(&fake).await.unwrap());
    for sse in [false, true] {
        for id_last in [false, true] {
            let reason = refused_at_once(
                &conn,
                "deep",
                // 200 KB of brackets: under the cap, so depth is what is refused.
                json!({"depth": 100_000, "id_last": id_last, "sse": sse}),
            )
            .await;
            assert!(
                matches!(reason, Reason::TooDeep { limit: 128 }),
                "sse={sse} id_last={id_last}: {reason:?}"
            );
        }
    }
    assert!(!conn.is_closed());
}

#[tokio::test]
async fn an_answer_over_the_cap_fails_its_call_at_once_and_names_the_cap() {
    let fake = FakeHttp::start(HttpMode::Plain).await;
    let conn = Arc::new(connect(&fake).await.unwrap());
    // Just under the cap passes: the cap is on the message, not a guess.
    let ok = call_on(&conn, "big", json!({"bytes": CAP / 2}))
        .await
        .unwrap();
    assert_eq!(tool_text(&ok).len(), CAP / 2);
    for sse in [false, true] {
        let reason = refused_at_once(&conn, "big", json!({"bytes": CAP * 4, "sse": sse})).await;
        assert_eq!(
            reason,
            Reason::MessageTooLarge { cap: CAP as u64 },
            "sse={sse}"
        );
        assert!(reason.to_string().contains("256 KiB"), "{reason}");
    }
}

#[tokio::test]
async fn a_tool_result_without_content_is_a_result() {
    let fake = FakeHttp::start(HttpMode::Plain).await;
    let conn = connect(&fake).await.unwrap();
    let r = call_on(&conn, "bare", json!({})).await.unwrap();
    assert!(r.content.is_empty());
    assert_eq!(r.structured_content, Some(json!({"n": 3})));
    assert!(!r.is_error);
}

#[tokio::test]
async fn retry_zero_does_not_become_a_storm_of_reconnects() {
    let fake = FakeHttp::start(HttpMode::RetryZero).await;
    let conn = connect(&fake).await.unwrap();
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let gets = fake.gets.load(Ordering::SeqCst);
    // 0 s, then at least 1 s, then 2 s more: three or four GETs, never thousands.
    assert!((1..=5).contains(&gets), "{gets} GETs in 3.5 s");
    // The session itself is fine.
    assert!(call_on(&conn, "echo", json!({"text": "x"})).await.is_ok());
    conn.shutdown().await;
}

#[tokio::test]
async fn an_event_over_the_cap_on_the_standalone_stream_ends_the_session_with_the_cap() {
    let fake = FakeHttp::start(HttpMode::BigGet(CAP * 2)).await;
    let conn = connect(&fake).await.unwrap();
    let why = tokio::time::timeout(Duration::from_secs(10), conn.closed())
        .await
        .expect("the session went on after the stream broke the cap");
    assert_eq!(why, Reason::MessageTooLarge { cap: CAP as u64 });
    // Calls fail at once with the same reason.
    let err = call_on(&conn, "echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, McpError::Disconnected(Reason::MessageTooLarge { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn auth_failures_are_typed_with_the_resource_metadata() {
    let fake = FakeHttp::start(HttpMode::Unauthorized).await;
    let err = connect(&fake).await.unwrap_err();
    let McpError::AuthRequired(c) = &err else {
        panic!("not typed as auth: {err}");
    };
    assert_eq!(c.status, Some(401));
    let base = fake.url.trim_end_matches("/mcp");
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some(format!("{base}/.well-known/oauth-protected-resource").as_str())
    );
    // A bare 403, without a challenge, is still an auth failure and not "the server broke".
    let fake = FakeHttp::start(HttpMode::Forbidden).await;
    let err = connect(&fake).await.unwrap_err();
    assert!(
        matches!(&err, McpError::AuthRequired(c) if c.status == Some(403)),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_wants_sign_in_waits_for_the_person_instead_of_retrying() {
    let fake = FakeHttp::start(HttpMode::Unauthorized).await;
    let (host, _dir) = test_host().await;
    let id = add_trusted(&host, http_spec("remote", &fake.url)).await;
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(20)).await;
    let ServerStatus::Failed { reason, .. } = &status else {
        panic!("not parked: {status}");
    };
    assert!(matches!(reason, Reason::AuthRequired(_)), "{reason:?}");
    let posts = fake.posts.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        fake.posts.load(Ordering::SeqCst),
        posts,
        "it kept retrying a server that needs credentials"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn methods_of_unadvertised_capabilities_are_not_asked_for() {
    // The fake, like an rmcp 3.11 server, answers -32601 to methods of capabilities it did not
    // advertise (it advertises only tools): the host must come up without asking them.
    let fake = FakeHttp::start(HttpMode::Plain).await;
    let (host, _dir) = test_host().await;
    let h = start_trusted(&host, http_spec("tools-only", &fake.url)).await;
    assert_eq!(h.catalog().tools.len(), 6);
    let asked = fake.methods();
    for m in ["resources/list", "resources/templates/list", "prompts/list"] {
        assert!(!asked.iter().any(|a| a == m), "asked {m}: {asked:?}");
    }
    assert!(asked.iter().any(|a| a == "tools/list"), "{asked:?}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_says_sign_in_and_scripts_get_a_code_of_their_own() {
    let fake = FakeHttp::start(HttpMode::Unauthorized).await;
    let dir = tempfile::tempdir().unwrap();
    let (data, url) = (dir.path().to_owned(), fake.url.clone());
    // The CLI blocks; the fake serves on this runtime meanwhile.
    let (restart, call) = tokio::task::spawn_blocking(move || {
        cli_ok(&data, &["server", "add", "remote", "--url", &url]);
        cli_ok(&data, &["server", "trust", "remote", "--yes"]);
        let restart = run_cli(&data, &["server", "restart", "remote"], "", &[]);
        let call = run_cli(
            &data,
            &["--json", "call", "remote", "echo", "--args", "{}"],
            "",
            &[],
        );
        (restart, call)
    })
    .await
    .unwrap();
    let err = String::from_utf8_lossy(&restart.stderr);
    assert!(!restart.status.success(), "{err}");
    assert!(err.contains("sign in"), "{err}");
    assert!(err.contains("secret set --server remote"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&call.stdout).unwrap();
    assert_eq!(v["error"]["code"], "auth_required", "{v}");
}

#[tokio::test]
async fn completions_are_not_asked_of_a_server_that_does_not_offer_them() {
    let fake = FakeHttp::start(HttpMode::Plain).await;
    let conn = connect(&fake).await.unwrap();
    let values = conn.complete_prompt_argument("p", "a", "x").await.unwrap();
    assert!(values.is_empty());
    assert!(
        !fake.methods().iter().any(|m| m == "completion/complete"),
        "{:?}",
        fake.methods()
    );
}
