//! An agent profile's policy overrides only tighten, at the point of decision (issue 15,
//! point 3): the person's deny rule refuses an agent whose profile says nothing about the tool
//! (the call never reaches the server), and an agent's `ask` tightening still asks after the
//! person answered "always allow" for that tool. The grant such an answer creates covers the
//! agent that asked only: its next call runs without a question, while another agent's and a
//! plain model's are still asked. Against our fake MCP server, which records every call it
//! receives.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::agent_data::{AgentName, AgentProfile, PolicyTightening, Tighten, ToolScope};
use switchboard_core::approval::{Answer, ApprovalRequest, Effect, Scope, Source};
use switchboard_core::chat::{ToolCall, ToolRunner};
use switchboard_core::host::{AgentTools, Host, HostTools, Lineage};
use switchboard_core::ids::{ConversationId, ProviderName};
use switchboard_core::mcp::catalog::ToolResult;
use switchboard_tests::scenario::host_with_recorder;
use switchboard_tests::*;
use tokio_util::sync::CancellationToken;

fn profile(policy: Vec<PolicyTightening>) -> AgentProfile {
    named("coder", policy)
}

fn named(name: &str, policy: Vec<PolicyTightening>) -> AgentProfile {
    let mut p = AgentProfile::new(
        AgentName::new(name).unwrap(),
        ProviderName::new("scripted").unwrap(),
    );
    p.scope = ToolScope {
        servers: vec!["fs".into()],
        tools: Vec::new(),
    };
    p.policy = policy;
    p
}

/// The `tools/call` names the fake server received.
fn received(record: &Path) -> Vec<String> {
    recorded_calls(record).into_iter().map(|(n, _)| n).collect()
}

async fn host_tools(host: &Host, conversation: &ConversationId) -> Arc<HostTools> {
    HostTools::load(host, conversation).await.unwrap()
}

fn agent_tools(
    host: &Host,
    inner: Arc<HostTools>,
    p: AgentProfile,
    conv: &ConversationId,
) -> AgentTools {
    AgentTools::new(host, inner, p, Lineage::root(conv.clone()))
}

/// Runs `llm_name` through `tools` as a turn would.
async fn call(tools: &dyn ToolRunner, llm_name: &str, args: Value) -> Result<ToolResult, String> {
    let tool = tools.resolve(llm_name).expect("the tool is offered");
    let args: Map<String, Value> = args.as_object().unwrap().clone();
    tools
        .run(ToolCall::new(tool, args, CancellationToken::new()))
        .await
        .map_err(|e| e.to_string())
}

/// Waits (bounded) for the next question and gives it `answer`.
async fn answer_next(host: &Host, answer: Answer) -> ApprovalRequest {
    for _ in 0..1500 {
        if let Some(req) = host.pending_approvals().into_iter().next() {
            host.answer_approval(&req.nonce.to_string(), answer)
                .await
                .unwrap();
            return req;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nobody asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_deny_rule_refuses_an_agent_whose_profile_says_nothing() {
    let (host, _tmp, record) = host_with_recorder("fs").await;
    host.put_policy_rule(user_rule("no-echo", Effect::Deny, "fs", "echo"))
        .await
        .unwrap();
    let conv = ConversationId::random();
    let tools = agent_tools(
        &host,
        host_tools(&host, &conv).await,
        profile(vec![]),
        &conv,
    );
    // Whatever is asked is allowed: were the deny not applied, the call would reach the server.
    let yes = {
        let host = host.clone();
        tokio::spawn(async move {
            loop {
                answer_next(&host, Answer::ALLOW).await;
            }
        })
    };
    let refused = call(&tools, "fs__echo", json!({"text": "hi"}))
        .await
        .unwrap_err();
    assert!(refused.contains("no-echo"), "{refused}");
    // The same agent's other tools still run: the server is there and records.
    let added = call(&tools, "fs__add", json!({"a": 1, "b": 2})).await;
    yes.abort();
    assert!(added.is_ok(), "{added:?}");
    assert_eq!(received(&record), vec!["add".to_owned()]);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_tightening_still_asks_after_the_person_said_always_allow() {
    let (host, _tmp, record) = host_with_recorder("fs").await;
    let conv = ConversationId::random();
    let ask = vec![PolicyTightening {
        tool: "fs/echo".into(),
        action: Tighten::Ask,
    }];
    let tools = agent_tools(&host, host_tools(&host, &conv).await, profile(ask), &conv);
    let always = Answer::Allow {
        arguments: None,
        scope: Scope::Always,
        constraints: Vec::new(),
    };

    // 1. Asked (nothing allows it yet); the person answers "always allow".
    let (first, asked) = tokio::join!(
        call(&tools, "fs__echo", json!({"text": "one"})),
        answer_next(&host, always)
    );
    assert!(first.is_ok(), "{first:?}");
    assert_eq!(asked.tool, "echo");
    let rules = host.policy_rules().await.unwrap();
    assert!(
        rules.iter().any(|r| r.effect == Effect::Allow
            && r.tool == "echo"
            && matches!(
                r.source,
                Source::Grant {
                    conversation: None,
                    ..
                }
            )),
        "the answer created an always-grant: {rules:?}"
    );

    // 2. The grant is coder's: a plain model's call is still asked about (and refused here).
    let plain = host_tools(&host, &conv).await;
    let (refused, asked_plain) = tokio::join!(
        call(plain.as_ref(), "fs__echo", json!({"text": "two"})),
        answer_next(&host, Answer::DENY)
    );
    assert!(refused.is_err(), "{refused:?}");
    assert!(asked_plain.origin.acting().is_none());
    let no = {
        let host = host.clone();
        tokio::spawn(async move { answer_next(&host, Answer::DENY).await })
    };

    // 3. The agent's tightening turns that allow back into a question, with its reason; the
    // person says no and the server never sees the call.
    let (third, asked) = tokio::join!(call(&tools, "fs__echo", json!({"text": "three"})), async {
        tokio::time::timeout(Duration::from_secs(60), no)
            .await
            .expect("the agent's call was asked about")
            .unwrap()
    });
    let refused = third.unwrap_err();
    assert!(refused.contains("the user said no"), "{refused}");
    assert!(
        asked
            .reason
            .contains("Agent coder's profile asks a person before every call"),
        "{}",
        asked.reason
    );
    assert_eq!(
        asked.origin.acting().map(|a| a.agent.as_str()),
        Some("coder")
    );
    assert_eq!(received(&record), vec!["echo".to_owned()]);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_answer_to_an_agent_covers_that_agent_and_nobody_else() {
    let (host, _tmp, record) = host_with_recorder("fs").await;
    let conv = ConversationId::random();
    let worker = agent_tools(
        &host,
        host_tools(&host, &conv).await,
        named("worker", vec![]),
        &conv,
    );
    let browser = agent_tools(
        &host,
        host_tools(&host, &conv).await,
        named("browser", vec![]),
        &conv,
    );
    let always = Answer::Allow {
        arguments: None,
        scope: Scope::Always,
        constraints: Vec::new(),
    };
    // Asked (no rule allows it); "always" for the worker.
    let (first, asked) = tokio::join!(
        call(&worker, "fs__echo", json!({"text": "one"})),
        answer_next(&host, always)
    );
    assert!(first.is_ok(), "{first:?}");
    assert_eq!(
        asked.origin.acting().map(|a| a.agent.as_str()),
        Some("worker")
    );
    let rules = host.policy_rules().await.unwrap();
    let grant = rules
        .iter()
        .find(|r| matches!(r.source, Source::Grant { .. }))
        .expect("the answer made a grant");
    assert!(
        matches!(&grant.source, Source::Grant { agent: Some(a), .. } if a == "worker"),
        "{grant:?}"
    );
    // The worker's next call runs without a question (anything asked is refused here).
    let no = {
        let host = host.clone();
        tokio::spawn(async move { answer_next(&host, Answer::DENY).await })
    };
    let again = call(&worker, "fs__echo", json!({"text": "two"})).await;
    assert!(
        again.is_ok(),
        "the grant did not cover its agent: {again:?}"
    );
    assert!(!no.is_finished(), "the worker was asked again");
    // Another agent is asked, and refused.
    let other = call(&browser, "fs__echo", json!({"text": "three"})).await;
    assert!(other.is_err(), "{other:?}");
    let asked = tokio::time::timeout(Duration::from_secs(60), no)
        .await
        .expect("the other agent was asked")
        .unwrap();
    assert_eq!(
        asked.origin.acting().map(|a| a.agent.as_str()),
        Some("browser")
    );
    assert_eq!(
        received(&record),
        vec!["echo".to_owned(), "echo".to_owned()]
    );
    host.shutdown().await;
}
