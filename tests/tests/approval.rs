//! The approval seam (AP-01, AP-03): a run asked through `Host::run_tool` reaches the server
//! only after an answer naming its nonce; deny, cancel and bad nonces never let it through,
//! and invalid arguments are refused before anyone is asked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::json;
use switchboard_core::approval::{Answer, Origin};
use switchboard_core::host::{CallOptions, Host, HostError};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::McpError;
use switchboard_tests::*;

fn echo() -> ToolRef {
    ToolRef {
        server: sid("gate"),
        tool: "echo".into(),
    }
}

fn args(text: &str) -> serde_json::Map<String, serde_json::Value> {
    json!({ "text": text }).as_object().unwrap().clone()
}

/// How many `tools/call` requests the server has been sent.
fn calls_sent(host: &Host) -> usize {
    host.handle(&sid("gate"))
        .unwrap()
        .logs()
        .trace()
        .iter()
        .filter(|e| e.method.as_deref() == Some("tools/call"))
        .count()
}

async fn wait_pending(host: &Host, n: usize) {
    assert!(
        eventually(Duration::from_secs(5), || host.pending_approvals().len()
            == n)
        .await,
        "expected {n} pending approvals, have {:?}",
        host.pending_approvals()
    );
}

#[tokio::test]
async fn a_run_waits_for_its_nonce_and_shows_the_exact_arguments() {
    let (host, _dir) = test_host().await;
    start_trusted(&host, fake_spec("gate", &[])).await;
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_tool(
                &echo(),
                args("hello"),
                Origin::Manual,
                CallOptions::default(),
            )
            .await
    });
    wait_pending(&host, 1).await;
    let pending = host.pending_approvals().remove(0);
    assert_eq!(pending.tool, "echo");
    assert_eq!(pending.arguments, json!({"text": "hello"}));
    assert_eq!(pending.hints, vec!["read-only", "idempotent"]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(calls_sent(&host), 0, "the call went out before approval");

    let forged = "f".repeat(32);
    assert!(matches!(
        host.answer_approval(&forged, Answer::ALLOW).await,
        Err(HostError::Approval(_))
    ));
    assert_eq!(
        host.pending_approvals().len(),
        1,
        "a forged nonce released nothing"
    );

    host.answer_approval(pending.nonce.as_str(), Answer::ALLOW)
        .await
        .unwrap();
    let result = run.await.unwrap().unwrap();
    assert_eq!(
        result.content,
        vec![switchboard_core::mcp::catalog::Content::Text {
            text: "hello".into()
        }]
    );
    assert_eq!(calls_sent(&host), 1);
    assert!(host.pending_approvals().is_empty());
    host.shutdown().await;
}

#[tokio::test]
async fn deny_cancel_and_invalid_arguments_never_reach_the_server() {
    let (host, _dir) = test_host().await;
    start_trusted(&host, fake_spec("gate", &[])).await;

    // Denied.
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_tool(&echo(), args("no"), Origin::Manual, CallOptions::default())
            .await
    });
    wait_pending(&host, 1).await;
    let nonce = host.pending_approvals()[0].nonce.clone();
    host.answer_approval(
        nonce.as_str(),
        Answer::Deny {
            reason: Some("not today".into()),
        },
    )
    .await
    .unwrap();
    let r = run.await.unwrap();
    assert!(
        matches!(&r, Err(HostError::Denied { reason, .. }) if reason.contains("not today")),
        "the reason reaches the caller: {r:?}"
    );

    // Cancelled while waiting: the request is withdrawn.
    let id = host.open_run();
    let runner = host.clone();
    let token = id.clone();
    let run = tokio::spawn(async move {
        runner
            .run_tool(
                &echo(),
                args("later"),
                Origin::Manual,
                CallOptions::default().run(token),
            )
            .await
    });
    wait_pending(&host, 1).await;
    let stale = host.pending_approvals()[0].nonce.clone();
    assert!(host.cancel_run(&id));
    let r = run.await.unwrap();
    assert!(
        matches!(r, Err(HostError::Mcp(McpError::Cancelled))),
        "{r:?}"
    );
    assert!(host.pending_approvals().is_empty());
    assert!(host
        .answer_approval(stale.as_str(), Answer::ALLOW)
        .await
        .is_err());

    // Invalid arguments: refused before anyone is asked.
    let r = host
        .run_tool(
            &echo(),
            json!({"text": 5}).as_object().unwrap().clone(),
            Origin::Manual,
            CallOptions::default(),
        )
        .await;
    assert!(
        matches!(r, Err(HostError::Mcp(McpError::InvalidArguments { .. }))),
        "{r:?}"
    );
    assert!(host.pending_approvals().is_empty());

    assert_eq!(calls_sent(&host), 0);
    host.shutdown().await;
}

#[tokio::test]
async fn edited_arguments_are_checked_then_sent_instead() {
    let (host, _dir) = test_host().await;
    start_trusted(&host, fake_spec("gate", &[])).await;
    let (stx, srx) = tokio::sync::oneshot::channel();
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_tool(
                &echo(),
                args("from the model"),
                Origin::Manual,
                CallOptions::default().started(stx),
            )
            .await
    });
    wait_pending(&host, 1).await;
    let nonce = host.pending_approvals()[0].nonce.clone();

    // An edit that breaks the schema is refused and the request stays pending.
    let bad = host
        .answer_approval(
            nonce.as_str(),
            Answer::Allow {
                arguments: Some(json!({"text": 7}).as_object().unwrap().clone()),
                scope: Default::default(),
                constraints: Vec::new(),
            },
        )
        .await;
    assert!(
        matches!(bad, Err(HostError::Mcp(McpError::InvalidArguments { .. }))),
        "{bad:?}"
    );
    assert_eq!(host.pending_approvals().len(), 1, "still waiting");
    assert_eq!(calls_sent(&host), 0);

    host.answer_approval(
        nonce.as_str(),
        Answer::Allow {
            arguments: Some(args("from the person")),
            scope: Default::default(),
            constraints: Vec::new(),
        },
    )
    .await
    .unwrap();
    let result = run.await.unwrap().unwrap();
    assert_eq!(
        result.content,
        vec![switchboard_core::mcp::catalog::Content::Text {
            text: "from the person".into()
        }],
        "the server got the edited arguments"
    );
    assert_eq!(
        srx.await.unwrap().edited,
        Some(args("from the person")),
        "the caller learns what ran"
    );
    host.shutdown().await;
}
