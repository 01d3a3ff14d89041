//! Delegation across vendors (issue 15, points 2, 3, 5 and 7): a supervisor on an
//! OpenAI-format model hands a task to an agent on an Anthropic-format model and another to an
//! agent on an OpenAI-compatible profile; the first sub-agent writes the shared state, the
//! second and the supervisor read it, each answer comes back as the supervisor's tool result,
//! and each model saw only its own tools in its own wire format. Budgets stop a sub-agent with the reason
//! given to its parent; cycles and agents outside the profile's list are refused. Both models
//! are scripted servers on loopback that record every request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::Value;
use switchboard_core::agent_data::{AgentName, AgentProfile, Budget};
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::{Host, Lineage, DELEGATE_TOOL};
use switchboard_core::ids::{ConversationId, ProviderName, RunId};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::{FakeLlm, Outcome};
use switchboard_tests::*;
use tokio_util::sync::CancellationToken;

fn name(s: &str) -> AgentName {
    AgentName::new(s).unwrap()
}

/// A provider `pname` of `kind` at `base` with a key, and an agent on it.
async fn agent_on(
    host: &Host,
    pname: &str,
    kind: &str,
    base: String,
    agent: &str,
    delegates: Option<Vec<AgentName>>,
    budget: Budget,
) {
    let provider = ProviderName::new(pname).unwrap();
    if host.models().provider_view(&provider).await.is_err() {
        provider_with_key(host, pname, kind, base).await;
    }
    let mut p = AgentProfile::new(name(agent), provider);
    p.description = format!("the {agent}");
    p.delegates = delegates;
    p.budget = budget;
    host.add_agent(p).await.unwrap();
}

fn delegate(agent: &str, task: &str) -> Reply {
    let args = serde_json::json!({"agent": agent, "task": task}).to_string();
    Reply::calls(vec![ScriptedCall::new("call_d", DELEGATE_TOOL, &[&args])])
}

async fn run(host: &Host, agent: &str, task: &str) -> switchboard_core::host::TaskOutcome {
    let lineage = Lineage::root(ConversationId::random());
    host.run_agent_task(lineage, name(agent), task.into(), CancellationToken::new())
        .await
        .unwrap()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| {
                    t["function"]["name"]
                        .as_str()
                        .or_else(|| t["name"].as_str())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_supervisor_delegates_to_an_agent_on_another_vendor_through_shared_state() {
    let sup = FakeLlm::spawn(Scenario::new([
        delegate("summariser", "Summarise the three findings."),
        delegate("checker", "Check the stored summary."),
        Reply::calls(vec![ScriptedCall::new(
            "call_s",
            "switchboard_state_get",
            &[r#"{"key":"summary"}"#],
        )]),
        Reply::text(&["The summariser says: ", "three points."]),
    ]))
    .await
    .unwrap();
    // The third agent runs on an OpenAI-compatible profile (`custom`): it reads what the
    // Anthropic-format agent stored and answers its parent.
    let chk = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_c",
            "switchboard_state_get",
            &[r#"{"key":"summary"}"#],
        )]),
        Reply::text(&["Checked: the summary holds."]),
    ]))
    .await
    .unwrap();
    let sub = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "toolu_1",
            "switchboard_state_put",
            &[r#"{"key":"summary","value":"three points"}"#],
        )]),
        Reply::text(&["Stored the summary: three points."]),
    ]))
    .await
    .unwrap();
    let (host, tmp) = test_host().await;
    agent_on(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "planner",
        None,
        Budget::default(),
    )
    .await;
    agent_on(
        &host,
        "an",
        "anthropic",
        sub.anthropic_base(),
        "summariser",
        Some(vec![]),
        Budget::default(),
    )
    .await;

    agent_on(
        &host,
        "lc",
        "custom",
        chk.openai_base(),
        "checker",
        Some(vec![]),
        Budget::default(),
    )
    .await;

    let lineage = Lineage::root(ConversationId::random());
    let out = host
        .run_agent_task(
            lineage.clone(),
            name("planner"),
            "Plan the report.".into(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.answer, "The summariser says: three points.");

    // Each vendor in its own wire format, each with its own tools.
    let sup_reqs = sup.requests();
    let sub_reqs = sub.requests();
    let chk_reqs = chk.requests();
    assert_eq!(sup_reqs.len(), 4);
    assert_eq!(sub_reqs.len(), 2);
    assert_eq!(chk_reqs.len(), 2);
    assert!(
        sup_reqs[0].path.ends_with("/chat/completions"),
        "{}",
        sup_reqs[0].path
    );
    assert!(
        sub_reqs[0].path.ends_with("/v1/messages"),
        "{}",
        sub_reqs[0].path
    );
    let sup_tools = tool_names(&sup_reqs[0].body);
    assert!(
        sup_tools.contains(&DELEGATE_TOOL.to_owned()),
        "{sup_tools:?}"
    );
    let sub_tools = tool_names(&sub_reqs[0].body);
    assert!(
        !sub_tools.contains(&DELEGATE_TOOL.to_owned()),
        "{sub_tools:?}"
    );
    assert!(sub_tools.contains(&"switchboard_state_put".to_owned()));
    // The delegate tool names whom it may pick: not the planner itself.
    let spec = sup_reqs[0].body["tools"].to_string();
    assert!(
        spec.contains("summariser") && !spec.contains("\"planner\""),
        "{spec}"
    );
    // The task reached the sub-agent; its answer came back as the supervisor's tool result.
    assert!(sub_reqs[0]
        .body
        .to_string()
        .contains("Summarise the three findings."));
    assert!(sub_reqs[0].body["system"]
        .to_string()
        .contains("agent planner gave you"));
    let back = sup_reqs[1].body.to_string();
    assert!(back.contains("Stored the summary: three points."), "{back}");
    // The agent on the OpenAI-compatible profile: the OpenAI wire format, only its own tools,
    // its task; its answer came back to the planner too.
    assert!(
        chk_reqs[0].path.ends_with("/chat/completions"),
        "{}",
        chk_reqs[0].path
    );
    let chk_tools = tool_names(&chk_reqs[0].body);
    assert!(
        !chk_tools.contains(&DELEGATE_TOOL.to_owned())
            && chk_tools.contains(&"switchboard_state_get".to_owned()),
        "{chk_tools:?}"
    );
    assert!(chk_reqs[0]
        .body
        .to_string()
        .contains("Check the stored summary."));
    let back = sup_reqs[2].body.to_string();
    assert!(back.contains("Checked: the summary holds."), "{back}");
    // What the Anthropic-format model put in the shared state, the OpenAI-compatible and the
    // OpenAI-format models read, with its author, in the one neutral form.
    let last_tool_result = |body: &Value| {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].to_string())
            .unwrap_or_default()
    };
    for read in [
        last_tool_result(&chk_reqs[1].body),
        last_tool_result(&sup_reqs[3].body),
    ] {
        assert!(
            read.contains("three points") && read.contains("summariser"),
            "{read}"
        );
    }
    // The run tree: the planner at the root, the summariser and the checker under it, each on
    // its vendor.
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    assert_eq!(tree.len(), 3, "{tree:?}");
    assert_eq!(
        (tree[0].agent.as_str(), tree[0].parent.as_ref()),
        ("planner", None)
    );
    assert_eq!(tree[1].agent, "summariser");
    assert_eq!(tree[1].parent.as_ref(), Some(&tree[0].node));
    assert_eq!(tree[2].agent, "checker");
    assert_eq!(tree[2].parent.as_ref(), Some(&tree[0].node));
    assert_eq!(
        (
            tree[0].provider.as_str(),
            tree[1].provider.as_str(),
            tree[2].provider.as_str()
        ),
        ("oa", "an", "lc")
    );
    assert_eq!(tree[1].task, "Summarise the three findings.");
    assert!(
        tree.iter()
            .all(|n| n.status == "done" && n.ended_ms.is_some()),
        "{tree:?}"
    );
    assert_eq!(
        (tree[0].tool_calls, tree[1].tool_calls, tree[2].tool_calls),
        (3, 1, 1)
    );
    assert_eq!(out.node, tree[0].node);
    // `switchboard agent runs RUN` prints the same tree.
    let printed = run_cli(
        tmp.path(),
        &["agent", "runs", lineage.run.as_str()],
        "",
        &[],
    );
    let text = String::from_utf8_lossy(&printed.stdout).into_owned();
    assert!(printed.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("planner [oa/model-1] done: 3 calls"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("  summariser [an/model-1] done: 1 call,"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("  checker [lc/model-1] done: 1 call,"),
        "{text}"
    );
    assert!(lines[3].starts_with("total: 3 agents"), "{text}");
    // The state one vendor's model wrote, with its author.
    let entry = host
        .state_get(&lineage.run, "summary")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entry.author, "summariser");
    assert_eq!(entry.value, Value::from("three points"));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_over_budget_stops_and_its_parent_is_told_why() {
    let sup = FakeLlm::spawn(Scenario::new([
        delegate("coder", "Write two notes."),
        Reply::text(&["The coder ran out."]),
    ]))
    .await
    .unwrap();
    let note = |id: &str, text: &str| {
        ScriptedCall::new(
            id,
            "switchboard_note_add",
            &[&format!(r#"{{"text":"{text}"}}"#)],
        )
    };
    let sub = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![note("toolu_1", "one"), note("toolu_2", "two")]),
        Reply::text(&["never asked for"]),
    ]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    agent_on(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "planner",
        None,
        Budget::default(),
    )
    .await;
    let one_call = Budget {
        tool_calls: Some(1),
        ..Budget::default()
    };
    agent_on(
        &host,
        "an",
        "anthropic",
        sub.anthropic_base(),
        "coder",
        Some(vec![]),
        one_call,
    )
    .await;

    let out = run(&host, "planner", "Get two notes written.").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    let roots = host.agent_runs(10).await.unwrap();
    let tree = host
        .agent_run_tree(&RunId::parse(&roots[0].run).unwrap())
        .await
        .unwrap();
    assert_eq!(tree[1].agent, "coder");
    assert_eq!(tree[1].status, "over_budget");
    assert!(tree[1]
        .reason
        .as_deref()
        .unwrap_or_default()
        .contains("1 tool calls"));
    assert_eq!(sub.requests().len(), 1, "the sub-agent was not asked again");
    let back = sup.requests()[1].body.to_string();
    assert!(
        back.contains("Agent coder stopped: its budget of 1 tool calls is spent"),
        "{back}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycles_and_agents_outside_the_list_are_refused() {
    let sup = FakeLlm::spawn(Scenario::new([
        delegate("planner", "Do it yourself."),
        delegate("outsider", "Not on the list."),
        Reply::text(&["done"]),
    ]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    agent_on(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "helper",
        Some(vec![]),
        Budget::default(),
    )
    .await;
    agent_on(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "outsider",
        Some(vec![]),
        Budget::default(),
    )
    .await;
    agent_on(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "planner",
        Some(vec![name("helper")]),
        Budget::default(),
    )
    .await;

    let out = run(&host, "planner", "Try.").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    let reqs = sup.requests();
    assert_eq!(
        reqs.len(),
        3,
        "no sub-agent ran: every request is the planner's"
    );
    assert!(
        reqs[1].body.to_string().contains("round in a circle"),
        "{}",
        reqs[1].body
    );
    assert!(
        reqs[2]
            .body
            .to_string()
            .contains("may not delegate to outsider"),
        "{}",
        reqs[2].body
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_supervisor_stops_the_agent_it_delegated_to() {
    let sup = FakeLlm::spawn(Scenario::new([
        delegate("slowpoke", "Take your time."),
        Reply::text(&["never reached"]),
    ]))
    .await
    .unwrap();
    // The sub-agent's model answers two deltas a second for minutes: it is mid-answer when the
    // stop comes, and its next write finds the client gone.
    let deltas = vec!["."; 400];
    let sub = FakeLlm::spawn(Scenario::new([Reply {
        chunk_delay_ms: 500,
        ..Reply::text(&deltas)
    }]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    agent_on(
        &host,
        "oa",
        "openai",
        sup.openai_base(),
        "planner",
        None,
        Budget::default(),
    )
    .await;
    agent_on(
        &host,
        "an",
        "anthropic",
        sub.anthropic_base(),
        "slowpoke",
        Some(vec![]),
        Budget::default(),
    )
    .await;

    let cancel = CancellationToken::new();
    let lineage = Lineage::root(ConversationId::random());
    let task = {
        let host = host.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            host.run_agent_task(lineage, name("planner"), "Go.".into(), cancel)
                .await
                .unwrap()
        })
    };
    // Wait (bounded) until the sub-agent's model has the request, then stop the supervisor.
    for _ in 0..500 {
        if !sub.requests().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        sub.requests().len(),
        1,
        "the sub-agent never asked its model"
    );
    cancel.cancel();
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), task)
        .await
        .expect("the tree stopped")
        .unwrap();
    assert_eq!(out.end, TurnEnd::Cancelled, "{out:?}");
    assert_eq!(
        sup.requests().len(),
        1,
        "the supervisor was not asked again"
    );
    // The sub-agent's stream was dropped, not left running: its model saw the client go.
    for _ in 0..500 {
        if sub.requests()[0].outcome.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(sub.requests()[0].outcome, Some(Outcome::ClientGone));
    host.shutdown().await;
}
