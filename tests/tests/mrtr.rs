//! Multi-round-trip requests (SEP-2322) against a real 2026-07-28 server, the official Python
//! SDK (`tests/fixtures/mrtr_server.py`): the host negotiates 2026-07-28 by `server/discover`,
//! and a tool whose answer is `input_required` reaches the person through the same question
//! inbox as an elicitation of an older session; the answer goes back with the server's
//! `requestState`, and the call finishes. A declined question reaches the server as declined;
//! cancelling the call withdraws the open question. A stateless session hears list changes
//! through `subscriptions/listen`, and the catalog follows them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::questions::{ElicitReply, Question, QuestionRequest, Reply};
use switchboard_core::approval::Origin;
use switchboard_core::config::{NamedValue, ValueSource};
use switchboard_core::events::HostEvent;
use switchboard_core::host::{CallOptions, Host};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::ToolResult;
use switchboard_core::status::ServerStatus;
use switchboard_tests::scenario::{next_question, tool_text};
use switchboard_tests::*;

const SERVER: &str = "modern";

fn tool(name: &str) -> ToolRef {
    ToolRef {
        server: sid(SERVER),
        tool: name.into(),
    }
}

fn map(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

async fn host() -> (Host, tempfile::TempDir) {
    host_with_ttl(0).await
}

/// The fixture, its `tools/list` answers carrying `ttlMs: ttl_ms`.
async fn host_with_ttl(ttl_ms: u64) -> (Host, tempfile::TempDir) {
    let (host, dir) = test_host().await;
    let py = python_with("mcp.server.mcpserver").expect("the Python MCP SDK (make deps)");
    let script = fixture("mrtr_server.py");
    let mut spec = stdio_spec(SERVER, py.to_str().unwrap(), &[script.to_str().unwrap()]);
    spec.values_mut().push(NamedValue {
        name: "FIXTURE_TOOLS_TTL_MS".into(),
        value: ValueSource::Plain(ttl_ms.to_string()),
    });
    start_trusted(&host, spec).await;
    allow_all(&host, SERVER).await;
    (host, dir)
}

fn run(
    host: &Host,
    name: &str,
    opts: CallOptions,
) -> tokio::task::JoinHandle<Result<ToolResult, String>> {
    let host = host.clone();
    let tool = tool(name);
    tokio::spawn(async move {
        host.run_tool(&tool, Map::new(), Origin::Manual, opts)
            .await
            .map_err(|e| e.to_string())
    })
}

fn answer(host: &Host, q: &QuestionRequest, content: Value) {
    host.answer_question(
        q.nonce.as_str(),
        Reply::Elicit(ElicitReply::Accept {
            content: map(content),
        }),
    )
    .unwrap();
}

#[tokio::test]
async fn input_required_is_asked_in_the_inbox_and_the_call_finishes_with_the_answer() {
    let (host, _dir) = host().await;
    let ServerStatus::Running { peer, .. } = host.handle(&sid(SERVER)).unwrap().status() else {
        panic!("not running")
    };
    assert_eq!(peer.protocol_version, "2026-07-28", "{peer:?}");
    assert_eq!(
        host.last_peer(&sid(SERVER)).unwrap().peer.protocol_version,
        "2026-07-28",
        "the negotiated revision is saved for `server show`"
    );

    let call = run(&host, "greet", CallOptions::default());
    let q = next_question(&host, Duration::from_secs(15)).await;
    assert_eq!(q.server, sid(SERVER));
    let Question::Form(f) = &q.question else {
        panic!("{q:?}")
    };
    assert!(f.message.contains("What is your name?"), "{f:?}");
    answer(&host, &q, json!({"name": "Ada"}));
    let r = call.await.unwrap().unwrap();
    assert!(!r.is_error, "{r:?}");
    assert_eq!(tool_text(&r), "hello Ada");

    // Declined: the server hears "decline" and finishes its own way.
    let call = run(&host, "greet", CallOptions::default());
    let q = next_question(&host, Duration::from_secs(15)).await;
    host.answer_question(q.nonce.as_str(), Reply::Elicit(ElicitReply::Decline))
        .unwrap();
    assert_eq!(
        tool_text(&call.await.unwrap().unwrap()),
        "no name (decline)"
    );

    // Two questions in one round: asked one after the other (in the server's key order), both
    // answers in one retry.
    let call = run(&host, "twice", CallOptions::default());
    let mut asked = Vec::new();
    for _ in 0..2 {
        let q = next_question(&host, Duration::from_secs(15)).await;
        let Question::Form(f) = &q.question else {
            panic!("{q:?}")
        };
        asked.push(f.message.clone());
        if f.message.contains("colour") {
            answer(&host, &q, json!({"colour": "teal"}));
        } else {
            answer(&host, &q, json!({"name": "Grace"}));
        }
    }
    asked.sort();
    assert_eq!(asked, ["What is your name?", "Which colour?"]);
    assert_eq!(tool_text(&call.await.unwrap().unwrap()), "Grace likes teal");
}

#[tokio::test]
async fn cancelling_a_call_that_waits_for_input_withdraws_the_question() {
    let (host, _dir) = host().await;
    let id = host.open_run();
    let call = run(&host, "greet", CallOptions::default().run(id.clone()));
    next_question(&host, Duration::from_secs(15)).await;
    assert!(host.cancel_run(&id));
    assert!(call.await.unwrap().is_err(), "the call ends cancelled");
    assert!(
        eventually(Duration::from_secs(5), || host
            .pending_questions()
            .is_empty())
        .await,
        "the question is withdrawn: {:?}",
        host.pending_questions()
    );
}

fn names(host: &Host) -> Vec<String> {
    let handle = host.handle(&sid(SERVER)).unwrap();
    let catalog = handle.catalog();
    catalog.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_list_is_fetched_again_when_its_caching_hint_runs_out() {
    // ttlMs 1 s (the test supervisor's floor is 0.5 s); the change is never announced.
    let (host, _dir) = host_with_ttl(1000).await;
    let r = run(&host, "grow_quietly", CallOptions::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tool_text(&r), "grew quietly");
    assert!(
        eventually(Duration::from_secs(10), || names(&host)
            .contains(&"quiet".to_owned()))
        .await,
        "the stale list was not fetched again: {:?}",
        names(&host)
    );
    // Without a hint (ttlMs 0) nothing is fetched until the server announces a change.
    let (host, _dir) = host_with_ttl(0).await;
    run(&host, "grow_quietly", CallOptions::default())
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !names(&host).contains(&"quiet".to_owned()),
        "{:?}",
        names(&host)
    );
}

#[tokio::test]
async fn a_stateless_session_hears_list_changes_through_subscriptions_listen() {
    let (host, _dir) = host().await;
    assert!(!names(&host).contains(&"grown".to_owned()));
    let r = run(&host, "grow", CallOptions::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tool_text(&r), "grew");
    assert!(
        eventually(Duration::from_secs(10), || names(&host)
            .contains(&"grown".to_owned()))
        .await,
        "the catalog did not follow the announced change: {:?}",
        names(&host)
    );
}

#[tokio::test]
async fn a_stateless_request_asks_for_log_lines_and_they_reach_the_host() {
    let (host, _dir) = host().await;
    let mut events = host.subscribe();
    let r = run(&host, "chatty", CallOptions::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tool_text(&r), "said");
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Ok(HostEvent::ServerLog {
                    server, message, ..
                }) if server == sid(SERVER) => {
                    if message.contains("chatty says hi") {
                        return true;
                    }
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return false,
            }
        }
    })
    .await;
    assert_eq!(heard, Ok(true), "the server's log line did not arrive");
}
