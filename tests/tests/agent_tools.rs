//! An agent's tools (issue 15, points 1, 3 and 7): its scope hides the rest of the catalog
//! (neither offered nor resolvable), its `deny` tightening refuses before the server is called,
//! and its state tools write and read the run's shared state under its name, answered by the
//! host with no server behind them. Against a real fake server that records what it receives.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;

use serde_json::{json, Map, Value};
use switchboard_core::agent_data::{AgentName, AgentProfile, PolicyTightening, Tighten, ToolScope};
use switchboard_core::chat::{ToolCall, ToolRunner};
use switchboard_core::host::{AgentTools, Host, HostTools, Lineage, StateAuthor};
use switchboard_core::ids::{ConversationId, ProviderName, RunId};
use switchboard_tests::scenario::host_with_recorder;
use switchboard_tests::*;
use tokio_util::sync::CancellationToken;

fn profile(name: &str, scope: ToolScope, policy: Vec<PolicyTightening>) -> AgentProfile {
    let mut p = AgentProfile::new(
        AgentName::new(name).unwrap(),
        ProviderName::new("scripted").unwrap(),
    );
    p.scope = scope;
    p.policy = policy;
    p
}

/// The `tools/call` names the fake server received.
fn received(record: &Path) -> Vec<String> {
    recorded_calls(record).into_iter().map(|(n, _)| n).collect()
}

async fn agent_tools(host: &Host, p: AgentProfile, run: &RunId) -> AgentTools {
    let inner = HostTools::load(host, &ConversationId::random())
        .await
        .unwrap();
    let lineage = Lineage {
        run: run.clone(),
        ..Lineage::root(ConversationId::random())
    };
    AgentTools::new(host, inner, p, lineage)
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test]
async fn the_scope_hides_tools_and_a_deny_refuses_before_the_server() {
    let (host, _tmp, record) = host_with_recorder("fs").await;
    start_trusted(&host, fake_spec("other", &[])).await;
    let run = RunId::random();
    let scope = ToolScope {
        servers: vec!["fs".into()],
        tools: vec!["fs/echo".into(), "fs/add".into()],
    };
    let deny = vec![PolicyTightening {
        tool: "fs/add".into(),
        action: Tighten::Deny,
    }];
    let tools = agent_tools(&host, profile("coder", scope, deny), &run).await;

    let offered: Vec<String> = tools.specs().into_iter().map(|s| s.name).collect();
    assert!(offered.contains(&"fs__echo".to_owned()), "{offered:?}");
    assert!(offered.contains(&"fs__add".to_owned()), "{offered:?}");
    assert!(
        !offered
            .iter()
            .any(|n| n.starts_with("other__") || n == "fs__fail" || n == "fs__env"),
        "out of scope tools offered: {offered:?}"
    );
    assert!(offered.contains(&"switchboard_state_put".to_owned()));
    // Out of scope: not resolvable either, as if it did not exist.
    assert!(tools.resolve("other__echo").is_none());
    assert!(tools.resolve("fs__env").is_none());

    // The denied tool is refused here; the server never sees it.
    let add = tools.resolve("fs__add").unwrap();
    let call = ToolCall::new(add, args(json!({"a": 1, "b": 2})), CancellationToken::new());
    let refused = tools.run(call).await.unwrap_err().to_string();
    assert!(refused.contains("does not allow"), "{refused}");
    assert!(received(&record).is_empty(), "{:?}", received(&record));
    host.shutdown().await;
}

#[tokio::test]
async fn state_tools_write_under_the_agents_name_and_another_agent_reads_it() {
    let (host, _tmp) = test_host().await;
    let run = RunId::random();
    let planner = agent_tools(
        &host,
        profile("planner", ToolScope::default(), vec![]),
        &run,
    )
    .await;
    let coder = agent_tools(&host, profile("coder", ToolScope::default(), vec![]), &run).await;
    assert!(planner.is_local("switchboard_state_put"));
    assert!(!planner.is_local("fs__echo"));

    planner
        .run_local(
            "switchboard_state_put",
            args(json!({"key": "plan", "value": {"steps": ["read", "write"]}})),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let read = coder
        .run_local(
            "switchboard_state_get",
            args(json!({"key": "plan"})),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&read.content).unwrap();
    assert!(text.contains("planner"), "the author is named: {text}");
    assert!(text.contains("write"), "{text}");
    let stored = host.state_get(&run, "plan").await.unwrap().unwrap();
    assert_eq!(
        stored.author,
        StateAuthor::Agent(AgentName::new("planner").unwrap())
            .as_str()
            .to_owned()
    );
    // Another run sees nothing of it.
    let elsewhere = agent_tools(
        &host,
        profile("coder", ToolScope::default(), vec![]),
        &RunId::random(),
    )
    .await;
    let none = elsewhere
        .run_local(
            "switchboard_state_get",
            args(json!({"key": "plan"})),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(serde_json::to_string(&none.content)
        .unwrap()
        .contains("\\\"found\\\":false"));
    host.shutdown().await;
}
