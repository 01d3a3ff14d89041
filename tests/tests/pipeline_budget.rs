//! An offered pipeline against an agent's tool-call budget (issue 15, points 5 and 6): each of
//! its steps is a tool call, so a budget of 2 calls does not let the agent's model run a
//! 3-step pipeline as "one call". A scripted OpenAI-format model on loopback, the fake MCP
//! server (`calc`, recording every call it receives) over stdio.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::agent_data::{AgentName, AgentProfile, Budget, ToolScope};
use switchboard_core::approval::Answer;
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::Lineage;
use switchboard_core::ids::{ConversationId, ProviderName};
use switchboard_core::pipeline_data::{parse, Format};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::host_with_recorder;
use switchboard_tests::*;
use tokio_util::sync::CancellationToken;

/// Offered: three steps, three tool calls.
const CHAIN: &str = r#"
name = "chain"
offer = true
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = "hi" }
[[steps]]
id = "start"
tool = "calc/add"
args = { a = 1, b = 2 }
[[steps]]
id = "more"
tool = "calc/add"
args = { a = { "$from" = "start", pointer = "/sum" }, b = 10 }
"#;

/// Runs agent `worker` (budget `tool_calls`) whose model calls the pipeline once, answering
/// yes to every question; returns how its turn ended and the tools the server received.
async fn worker_with(tool_calls: u32) -> (TurnEnd, Vec<String>) {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_p",
            "switchboard_pipeline_chain",
            &["{}"],
        )]),
        Reply::text(&["done"]),
    ]))
    .await
    .unwrap();
    let (host, _tmp, record) = host_with_recorder("calc").await;
    allow_every_call(&host).await;
    host.add_pipeline(&parse(CHAIN, Format::Toml).unwrap())
        .await
        .unwrap();
    provider_with_key(&host, "oa", "openai", llm.openai_base()).await;
    let name = AgentName::new("worker").unwrap();
    let mut p = AgentProfile::new(name.clone(), ProviderName::new("oa").unwrap());
    p.description = "the worker".into();
    p.scope = ToolScope {
        servers: vec!["calc".into()],
        tools: Vec::new(),
    };
    p.budget = Budget {
        tool_calls: Some(tool_calls),
        ..Budget::default()
    };
    host.add_agent(p).await.unwrap();

    let runner = host.clone();
    let run = tokio::spawn(async move {
        let lineage = Lineage::root(ConversationId::random());
        runner
            .run_agent_task(
                lineage,
                name,
                "run the chain".into(),
                CancellationToken::new(),
            )
            .await
            .unwrap()
    });
    while !run.is_finished() {
        let waited = eventually(Duration::from_secs(30), || {
            run.is_finished() || !host.pending_approvals().is_empty()
        })
        .await;
        assert!(waited, "the task neither ended nor asked");
        for q in host.pending_approvals() {
            host.answer_approval(q.nonce.as_str(), Answer::ALLOW)
                .await
                .unwrap();
        }
    }
    let out = run.await.unwrap();
    let received = recorded_calls(&record)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    host.shutdown().await;
    (out.end, received)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_counts_each_step_against_a_tool_call_budget() {
    // Two calls left, three steps: not run, nothing sent, the budget is spent.
    let (end, received) = worker_with(2).await;
    assert!(received.is_empty(), "{received:?}");
    match &end {
        TurnEnd::BudgetExceeded(why) => assert!(why.contains("2 tool calls"), "{why}"),
        other => panic!("not stopped by its budget: {other:?}"),
    }
    // Three calls: it runs.
    let (end, received) = worker_with(3).await;
    assert_eq!(received, ["echo", "add", "add"]);
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
}
