//! The legacy HTTP+SSE transport (2024-11-05), reached by the spec's backwards-compatible
//! fallback from Streamable HTTP: a real Python `mcp` SSE server by its URL alone, and a
//! hostile hand-written one (an endpoint on another origin, an event that never ends, a
//! stream that drops, no endpoint at all, garbage between messages).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use switchboard_core::mcp::connection::{ConnectOptions, Connection, Endpoint, Lifecycle};
use switchboard_core::mcp::McpError;
use switchboard_core::redact::Secret;
use switchboard_core::server_logs::ServerLogs;
use switchboard_core::status::Reason;
use switchboard_tests::fake_sse::{FakeSse, SseMode};
use switchboard_tests::scenario::{call_on, tool_text};
use switchboard_tests::*;

/// Small, so "too large" is quick to send.
const CAP: usize = 256 * 1024;

async fn connect_with(
    url: &str,
    headers: Vec<(String, Secret)>,
    init: Duration,
    lifecycle: Lifecycle,
    logs: ServerLogs,
) -> Result<Connection, McpError> {
    let (signals, _) = tokio::sync::mpsc::channel(64);
    Connection::connect(
        Endpoint::Http {
            url: url.to_owned(),
            headers,
            max_message: CAP,
            auth: None,
        },
        logs,
        ConnectOptions {
            init_timeout: init,
            // A call that waited for its timeout would take a minute: every failure below
            // must come long before.
            request_timeout: Duration::from_secs(60),
            signals,
            requests: None,
            lifecycle,
        },
    )
    .await
}

async fn connect(url: &str) -> Result<Connection, McpError> {
    let logs = ServerLogs::new(None);
    connect_with(
        url,
        vec![],
        Duration::from_secs(20),
        Lifecycle::default(),
        logs,
    )
    .await
}

/// The venv python with the `mcp` package, or `None` (skip) when it is not installed.
fn python() -> Option<PathBuf> {
    python_with("mcp.server.mcpserver")
}

async fn python_sse_server() -> Option<(KillOnDrop, String)> {
    let python = python()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/sse_server.py");
    let port = free_port();
    let child = std::process::Command::new(python)
        .arg(script)
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the Python SSE server");
    let child = KillOnDrop(child);
    let up = eventually(Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    assert!(up, "the Python SSE server did not listen on {port}");
    Some((child, format!("http://127.0.0.1:{port}/sse")))
}

#[tokio::test]
async fn a_python_sse_server_is_reached_by_its_url_through_the_fallback() {
    let Some((_server, url)) = python_sse_server().await else {
        return;
    };
    // Both ways a session starts: the default probe (server/discover, then initialize) and
    // initialize alone; each gets a 405 from the SSE URL and falls back.
    for lifecycle in [Lifecycle::default(), Lifecycle::Initialize] {
        let logs = ServerLogs::new(None);
        let conn = connect_with(
            &url,
            vec![],
            Duration::from_secs(20),
            lifecycle,
            logs.clone(),
        )
        .await
        .unwrap_or_else(|e| panic!("{lifecycle:?}: {e}"));
        let tools: Vec<String> = conn
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert!(
            tools.contains(&"echo".to_owned()) && tools.contains(&"add".to_owned()),
            "{tools:?}"
        );
        let r = call_on(&conn, "echo", json!({"text": "hello over SSE"}))
            .await
            .unwrap();
        assert_eq!(tool_text(&r), "hello over SSE");
        let r = call_on(&conn, "add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(tool_text(&r), "42");
        assert!(
            logs.trace()
                .iter()
                .any(|t| t.method.as_deref() == Some("tools/call")),
            "the calls are in the protocol trace"
        );
        conn.shutdown().await;
    }
}

#[tokio::test]
async fn the_cli_lists_and_calls_the_tools_of_a_python_sse_server() {
    let Some((_server, url)) = python_sse_server().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let run = move |args: Vec<String>| {
        let data = data.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let o = run_cli(&data, &args, "", &[]);
                let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
                assert!(o.status.success(), "{args:?}: {stderr}");
                String::from_utf8_lossy(&o.stdout).into_owned()
            })
            .await
            .unwrap()
        }
    };
    let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    run(args(&["server", "add", "legacy", "--url", &url])).await;
    run(args(&["server", "trust", "legacy", "--yes"])).await;
    let tools: serde_json::Value =
        serde_json::from_str(&run(args(&["tools", "--json"])).await).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["tool"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"add"),
        "{names:?}"
    );
    let out = run(args(&[
        "call",
        "legacy",
        "echo",
        "--yes",
        "--args",
        r#"{"text":"from the CLI"}"#,
    ]))
    .await;
    assert!(out.contains("from the CLI"), "{out}");
}

#[tokio::test]
async fn headers_go_on_the_get_and_the_posts_and_stay_out_of_the_logs() {
    let fake = FakeSse::start(SseMode::Good).await;
    let logs = ServerLogs::new(None);
    let secret = "k-5ecret-value";
    let conn = connect_with(
        &fake.url,
        vec![("x-test-key".into(), Secret::new(secret))],
        Duration::from_secs(20),
        Lifecycle::Initialize,
        logs.clone(),
    )
    .await
    .unwrap();
    let r = call_on(&conn, "echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(tool_text(&r), "hi");
    let keys = fake.keys.lock().unwrap().clone();
    assert!(keys.contains(&format!("GET {secret}")), "{keys:?}");
    assert!(keys.contains(&format!("POST {secret}")), "{keys:?}");
    assert!(!format!("{:?}", logs.trace()).contains(secret));
    conn.shutdown().await;
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused() {
    let fake = FakeSse::start(SseMode::ForeignEndpoint).await;
    let err = connect(&fake.url).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("another origin"), "{text}");
    assert!(
        text.contains("http://localhost:"),
        "names the origin: {text}"
    );
    assert_eq!(
        fake.posts.load(Ordering::SeqCst),
        0,
        "nothing was posted there"
    );
}

#[tokio::test]
async fn an_event_that_never_ends_is_cut_at_the_cap() {
    let fake = FakeSse::start(SseMode::Oversized).await;
    let conn = connect(&fake.url).await.unwrap();
    let err = call_on(&conn, "big", json!({})).await.unwrap_err();
    assert!(
        !matches!(err, McpError::Timeout(_)),
        "failed at once: {err}"
    );
    let why = tokio::time::timeout(Duration::from_secs(20), conn.closed())
        .await
        .unwrap();
    assert_eq!(why, Reason::MessageTooLarge { cap: CAP as u64 }, "{why}");
    // The client hung up long before the 64 MiB were written.
    let written = fake.big_written.load(Ordering::SeqCst);
    assert!(written < 32 * 1024 * 1024, "{written} bytes were read");
}

#[tokio::test]
async fn a_dropped_stream_fails_the_waiting_call_and_the_session_comes_back() {
    let fake = FakeSse::start(SseMode::Good).await;
    let conn = connect(&fake.url).await.unwrap();
    let err = call_on(&conn, "drop", json!({})).await.unwrap_err();
    assert!(
        err.to_string().contains("stream dropped"),
        "failed cleanly: {err}"
    );
    // Reconnected: the next calls are answered on the new stream, after the handshake was
    // replayed on the new session.
    let mut answered = None;
    for _ in 0..100 {
        match call_on(&conn, "echo", json!({"text": "again"})).await {
            Ok(r) => {
                answered = Some(tool_text(&r));
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert_eq!(answered.as_deref(), Some("again"));
    assert_eq!(fake.gets.load(Ordering::SeqCst), 2);
    let inits = fake.methods().iter().filter(|m| *m == "initialize").count();
    assert_eq!(inits, 2, "{:?}", fake.methods());
    assert!(!conn.is_closed());
    conn.shutdown().await;
}

#[tokio::test]
async fn a_stream_that_keeps_dropping_is_reopened_with_backoff() {
    let fake = FakeSse::start(SseMode::Flapping).await;
    let conn = connect(&fake.url).await.unwrap();
    let _ = call_on(&conn, "drop", json!({})).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let gets = fake.gets.load(Ordering::SeqCst);
    // Without a floor and doubling this would be thousands; with them (0.25 s, 0.5 s, 1 s,
    // 2 s…) a handful. Only the upper bound matters: a slow machine makes fewer.
    assert!((2..=8).contains(&gets), "{gets} GETs in 4 s");
    conn.shutdown().await;
}

#[tokio::test]
async fn a_stream_without_an_endpoint_event_times_out() {
    let fake = FakeSse::start(SseMode::NoEndpoint).await;
    let logs = ServerLogs::new(None);
    let err = connect_with(
        &fake.url,
        vec![],
        Duration::from_secs(2),
        Lifecycle::Initialize,
        logs,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("no endpoint event"), "{err}");
}

#[tokio::test]
async fn garbage_events_are_skipped() {
    let fake = FakeSse::start(SseMode::Garbage).await;
    let logs = ServerLogs::new(None);
    let conn = connect_with(
        &fake.url,
        vec![],
        Duration::from_secs(20),
        Lifecycle::default(),
        logs.clone(),
    )
    .await
    .unwrap();
    let tools = conn.list_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    let r = call_on(&conn, "echo", json!({"text": "through the noise"}))
        .await
        .unwrap();
    assert_eq!(tool_text(&r), "through the noise");
    assert!(logs.skipped_lines() > 0, "the garbage was noted");
    conn.shutdown().await;
}

#[tokio::test]
async fn a_url_that_is_neither_keeps_the_first_error() {
    let fake = FakeSse::start(SseMode::Nothing).await;
    let init = Duration::from_secs(20);
    for (n, lifecycle) in [Lifecycle::Initialize, Lifecycle::default()]
        .into_iter()
        .enumerate()
    {
        let logs = ServerLogs::new(None);
        let err = connect_with(&fake.url, vec![], init, lifecycle, logs)
            .await
            .unwrap_err();
        // The fallback was tried (one GET) and, finding no event stream, left the Streamable
        // HTTP error as it was.
        assert_eq!(fake.gets.load(Ordering::SeqCst), n + 1);
        let text = err.to_string();
        assert!(
            text.contains("HTTP 405"),
            "{lifecycle:?}: the POST's answer: {text}"
        );
        assert!(!text.contains("endpoint"), "{text}");
    }
}

#[tokio::test]
async fn a_redirect_of_the_sse_url_is_not_followed() {
    let fake = FakeSse::start(SseMode::Redirect).await;
    let err = connect_with(
        &fake.url,
        vec![("x-test-key".into(), Secret::new("k-redirected"))],
        Duration::from_secs(20),
        Lifecycle::Initialize,
        ServerLogs::new(None),
    )
    .await
    .unwrap_err();
    // One GET, to the configured URL; the other origin got none, and no header went there.
    assert_eq!(fake.gets.load(Ordering::SeqCst), 1, "{err}");
    assert!(fake.keys.lock().unwrap().is_empty());
}
