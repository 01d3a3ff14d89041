//! The bounds of a delegation tree (issue 15, point 2), each against scripted models on
//! loopback that record every request: the agent at the deepest level (`MAX_DEPTH`, 3) is not
//! offered the delegate tool and cannot use it anyway; an agent lower down cannot delegate back
//! to one above it (A→B→A), and is told why; one answer asking for more than `MAX_CHILDREN`
//! (16) delegations runs 16 and refuses the rest; cancelling the root stops the whole tree,
//! down to the grandchild's model stream, and every node ends `cancelled`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::Value;
use switchboard_core::agent_data::{AgentName, AgentProfile};
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::{Host, Lineage, TaskOutcome, DELEGATE_TOOL};
use switchboard_core::ids::{ConversationId, ProviderName};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::{FakeLlm, Outcome, RecordedRequest};
use switchboard_tests::*;
use tokio_util::sync::CancellationToken;

fn name(s: &str) -> AgentName {
    AgentName::new(s).unwrap()
}

/// An agent on its own OpenAI-format provider at `llm`, which may delegate to `delegates`.
async fn agent(host: &Host, agent: &str, llm: &FakeLlm, delegates: &[&str]) {
    let provider = ProviderName::new(format!("p-{agent}")).unwrap();
    provider_with_key(host, provider.as_str(), "openai", llm.openai_base()).await;
    let mut p = AgentProfile::new(name(agent), provider);
    p.description = format!("the {agent}");
    p.delegates = Some(delegates.iter().map(|d| name(d)).collect());
    host.add_agent(p).await.unwrap();
}

fn delegate(id: &str, agent: &str, task: &str) -> ScriptedCall {
    let args = serde_json::json!({"agent": agent, "task": task}).to_string();
    ScriptedCall::new(id, DELEGATE_TOOL, &[&args])
}

async fn run(host: &Host, lineage: &Lineage, agent: &str) -> TaskOutcome {
    host.run_agent_task(
        lineage.clone(),
        name(agent),
        "Go.".into(),
        CancellationToken::new(),
    )
    .await
    .unwrap()
}

/// The tools offered in a request (OpenAI format).
fn offered(req: &RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The agents the delegate tool of a request lets the model pick.
fn choices(req: &RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["function"]["name"] == DELEGATE_TOOL))
        .and_then(|t| t["function"]["parameters"]["properties"]["agent"]["enum"].as_array())
        .map(|e| {
            e.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The tool results (OpenAI `role: tool` messages) of a request, by call id.
fn tool_results(req: &RecordedRequest) -> Vec<(String, String)> {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                m["content"].to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_at_the_deepest_level_is_not_offered_delegation_and_cannot_use_it() {
    let a = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_a", "b", "Ask c.")]),
        Reply::text(&["a: done"]),
    ]))
    .await
    .unwrap();
    let b = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_b", "c", "Ask d.")]),
        Reply::text(&["b: done"]),
    ]))
    .await
    .unwrap();
    // c is third deep: it names the delegate tool though it was not offered.
    let c = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_c", "d", "Go deeper.")]),
        Reply::text(&["c: did it myself"]),
    ]))
    .await
    .unwrap();
    let d = FakeLlm::spawn(Scenario::new([Reply::text(&["d: never asked"])]))
        .await
        .unwrap();
    let (host, _tmp) = test_host().await;
    // Each may delegate to the next: only the depth stops c.
    agent(&host, "d", &d, &[]).await;
    agent(&host, "c", &c, &["d"]).await;
    agent(&host, "b", &b, &["c"]).await;
    agent(&host, "a", &a, &["b"]).await;

    let lineage = Lineage::root(ConversationId::random());
    let out = run(&host, &lineage, "a").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.answer, "a: done");

    let (a, b, c) = (a.requests(), b.requests(), c.requests());
    assert_eq!((a.len(), b.len(), c.len()), (2, 2, 2));
    assert_eq!(choices(&a[0]), vec!["b".to_owned()]);
    assert_eq!(choices(&b[0]), vec!["c".to_owned()]);
    let deepest = offered(&c[0]);
    assert!(
        !deepest.contains(&DELEGATE_TOOL.to_owned()),
        "the third agent deep was offered the delegate tool: {deepest:?}"
    );
    assert!(deepest.contains(&"switchboard_state_get".to_owned()));
    // Its call of it anyway was answered as a tool that does not exist; d never ran.
    let refused = tool_results(&c[1]);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, "call_c");
    assert!(
        refused[0]
            .1
            .contains("There is no tool named \\\"switchboard_delegate\\\""),
        "{refused:?}"
    );
    assert!(d.requests().is_empty(), "d ran: {:?}", d.requests());
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    let agents: Vec<&str> = tree.iter().map(|n| n.agent.as_str()).collect();
    assert_eq!(agents, vec!["a", "b", "c"]);
    assert_eq!(tree[2].parent.as_ref(), Some(&tree[1].node));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_delegate_back_to_the_one_above_it() {
    let a = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_a", "b", "Check with me again.")]),
        Reply::text(&["a: done"]),
        Reply::text(&["a: ran a second time"]),
    ]))
    .await
    .unwrap();
    let b = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_b", "a", "Back to you.")]),
        Reply::text(&["b: done alone"]),
    ]))
    .await
    .unwrap();
    let c = FakeLlm::spawn(Scenario::new([Reply::text(&["c: never asked"])]))
        .await
        .unwrap();
    let (host, _tmp) = test_host().await;
    // b's profile lists a: only the tree refuses the way back up. c keeps its tool offered.
    agent(&host, "c", &c, &[]).await;
    agent(&host, "b", &b, &["c"]).await;
    agent(&host, "a", &a, &["b"]).await;
    let mut back = host.agent(&name("b")).await.unwrap();
    back.delegates = Some(vec![name("a"), name("c")]);
    host.update_agent(back).await.unwrap();

    let lineage = Lineage::root(ConversationId::random());
    let out = run(&host, &lineage, "a").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.answer, "a: done");

    let (a, b) = (a.requests(), b.requests());
    assert_eq!(a.len(), 2, "a ran a second time");
    assert_eq!(b.len(), 2);
    // b is offered c, not a (above it).
    assert_eq!(choices(&b[0]), vec!["c".to_owned()]);
    let told = tool_results(&b[1]);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0]
            .1
            .contains("Agent a is already working on this task higher up"),
        "{told:?}"
    );
    assert!(told[0].1.contains("round in a circle"), "{told:?}");
    // b's answer is what reached a.
    assert!(tool_results(&a[1])[0].1.contains("b: done alone"));
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    let agents: Vec<&str> = tree.iter().map(|n| n.agent.as_str()).collect();
    assert_eq!(agents, vec!["a", "b"], "{tree:?}");
    assert!(c.requests().is_empty());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_answer_asking_for_seventeen_delegations_runs_sixteen() {
    let calls: Vec<ScriptedCall> = (1..=17)
        .map(|i| delegate(&format!("call_{i:02}"), "worker", &format!("Part {i}.")))
        .collect();
    let boss = FakeLlm::spawn(Scenario::new([
        Reply::calls(calls),
        Reply::text(&["boss: done"]),
    ]))
    .await
    .unwrap();
    // Enough answers for all seventeen: only the limit keeps the last one from running.
    let worker = FakeLlm::spawn(Scenario::new(
        (0..17).map(|_| Reply::text(&["worker: part done"])),
    ))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    agent(&host, "worker", &worker, &[]).await;
    agent(&host, "boss", &boss, &["worker"]).await;

    let lineage = Lineage::root(ConversationId::random());
    let out = run(&host, &lineage, "boss").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");

    assert_eq!(worker.requests().len(), 16, "the worker ran 16 times");
    let reqs = boss.requests();
    assert_eq!(reqs.len(), 2);
    let results = tool_results(&reqs[1]);
    assert_eq!(results.len(), 17, "{results:?}");
    let refused: Vec<&(String, String)> = results
        .iter()
        .filter(|(_, r)| r.contains("At most 16 delegations per task"))
        .collect();
    let ran = results
        .iter()
        .filter(|(_, r)| r.contains("worker: part done"))
        .count();
    assert_eq!((ran, refused.len()), (16, 1), "{results:?}");
    // The calls start in the model's order, each counted before it runs: the 17th is refused.
    assert_eq!(refused[0].0, "call_17");
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    assert_eq!(tree.len(), 17, "the boss and sixteen workers");
    assert!(tree[1..].iter().all(|n| n.agent == "worker"
        && n.parent.as_ref() == Some(&tree[0].node)
        && n.status == "done"));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_root_stops_its_whole_tree() {
    let planner = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_p", "middle", "Get the leaf going.")]),
        Reply::text(&["planner: never reached"]),
    ]))
    .await
    .unwrap();
    let middle = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![delegate("call_m", "leaf", "Take your time.")]),
        Reply::text(&["middle: never reached"]),
    ]))
    .await
    .unwrap();
    // The grandchild's model answers two deltas a second for minutes: it is mid-answer when
    // the stop comes, and its next write finds the client gone.
    let leaf = FakeLlm::spawn(Scenario::new([Reply {
        chunk_delay_ms: 500,
        ..Reply::text(&vec!["."; 400])
    }]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    agent(&host, "leaf", &leaf, &[]).await;
    agent(&host, "middle", &middle, &["leaf"]).await;
    agent(&host, "planner", &planner, &["middle"]).await;

    let cancel = CancellationToken::new();
    let lineage = Lineage::root(ConversationId::random());
    let task = {
        let (host, cancel, lineage) = (host.clone(), cancel.clone(), lineage.clone());
        tokio::spawn(async move {
            host.run_agent_task(lineage, name("planner"), "Go.".into(), cancel)
                .await
                .unwrap()
        })
    };
    // Wait (bounded) until the leaf's model has the request, then stop the root.
    for _ in 0..500 {
        if !leaf.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(leaf.requests().len(), 1, "the leaf never asked its model");
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the tree stopped")
        .unwrap();
    assert_eq!(out.end, TurnEnd::Cancelled, "{out:?}");
    assert_eq!(
        planner.requests().len(),
        1,
        "the planner was not asked again"
    );
    assert_eq!(middle.requests().len(), 1, "the middle was not asked again");
    // The leaf's stream was dropped, not left running: its model saw the client go.
    for _ in 0..500 {
        if leaf.requests()[0].outcome.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(leaf.requests()[0].outcome, Some(Outcome::ClientGone));
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    let shape: Vec<(&str, &str, bool)> = tree
        .iter()
        .map(|n| (n.agent.as_str(), n.status.as_str(), n.ended_ms.is_some()))
        .collect();
    assert_eq!(
        shape,
        vec![
            ("planner", "cancelled", true),
            ("middle", "cancelled", true),
            ("leaf", "cancelled", true),
        ]
    );
    assert_eq!(tree[1].parent.as_ref(), Some(&tree[0].node));
    assert_eq!(tree[2].parent.as_ref(), Some(&tree[1].node));
    host.shutdown().await;
}
