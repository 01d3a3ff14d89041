//! The run tree of agents in the real app window (issue 15, point 4): a message sent in the
//! chat with the supervisor agent chosen is answered by that agent (an OpenAI-format model),
//! which delegates a sub-task to a worker agent on an Anthropic-format model; the worker's tool
//! call waits for the approval dialog, which names the agent that asks and the agent it works
//! for, while the tree shows both agents running (the worker with the call it made so far);
//! once approved, the tree shows both done with the run's total. Both models are scripted
//! servers on loopback; the worker's tool is the fake MCP server's `echo`. Screenshots go to
//! `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_core::host::DELEGATE_TOOL;
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::AppData;

const WAIT: Duration = Duration::from_secs(30);

/// The fake MCP server `demo`; the supervisor `planner` on a keyless OpenAI-wire provider at
/// `sup`; the `worker` (scoped to `demo`) on an Anthropic provider at `sub` whose key goes to
/// the real keyring (without one, an OpenAI-compatible profile stands in, and the test says so).
fn setup(data: &Path, sup: &FakeLlm, sub: &FakeLlm) -> bool {
    let app = AppData::on(data).fake_server("demo", &[]).provider(
        "oa",
        "ollama",
        &sup.openai_base(),
        "gpt-sup",
    );
    let anthropic = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    let app = if anthropic {
        app.provider("an", "anthropic", &sub.anthropic_base(), "claude-worker")
            .provider_key("an", "sk-ant-e2e-runs")
    } else {
        eprintln!("no keyring: the worker runs on an OpenAI-compatible profile instead");
        app.provider("an", "ollama", &sub.openai_base(), "claude-worker")
    };
    app.cli(&[
        "agent",
        "add",
        "worker",
        "--provider",
        "an",
        "--description",
        "Runs the tools",
        "--server",
        "demo",
        "--no-delegation",
    ]);
    app.cli(&[
        "agent",
        "add",
        "planner",
        "--provider",
        "oa",
        "--description",
        "Plans and delegates",
        "--delegate",
        "worker",
    ]);
    anthropic
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn the_chat_shows_a_supervisors_run_tree_live_and_the_approval_names_the_agent() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let args = serde_json::json!({"agent": "worker", "task": "Echo the plan."}).to_string();
    let sup = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new("call_d", DELEGATE_TOOL, &[&args])])
            .with_usage(100, 10, 0),
        Reply::text(&["The worker echoed ", "the plan."]).with_usage(100, 10, 0),
    ]))
    .await
    .unwrap();
    let sub = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "toolu_1",
            "demo__echo",
            &["{\"text\":", "\"the plan\"}"],
        )])
        .with_usage(50, 5, 0),
        Reply::text(&["Echoed: the plan."]).with_usage(50, 5, 0),
    ]))
    .await
    .unwrap();
    let anthropic = setup(data, &sup, &sub);

    let (_driver, s) = open_window(data).await.unwrap();
    s.wait_text(r#"article[data-name="demo"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    s.click_on(r#".tab[data-page="chat"]"#, WAIT).await.unwrap();
    s.wait_for(r#".chat-agent option[value="planner"]"#, WAIT)
        .await
        .unwrap();
    s.set_value(".chat-agent", "planner").await.unwrap();
    // With an agent chosen, the provider and model pickers do not apply, and the page says so.
    s.wait_text(".chat-agent-hint", "Agent planner answers on oa", WAIT)
        .await
        .unwrap();
    s.wait_for(".chat-provider[disabled]", WAIT).await.unwrap();

    let input = s.wait_for(".chat-input", WAIT).await.unwrap();
    s.type_text(&input, "Plan the report.").await.unwrap();
    s.click_on(".chat-send", WAIT).await.unwrap();

    // The worker's call waits for the person; the dialog says which agent asks, for whom.
    if let Err(e) = s
        .wait_text(
            ".approval-dialog .approval-who",
            "Agent worker asks, for agent planner",
            WAIT,
        )
        .await
    {
        let _ = s
            .screenshot(&artifacts().join("agent-runs-0-failed.png"))
            .await;
        let page = s.execute("return document.body.innerText;").await;
        let log = std::fs::read_to_string(data.join("logs/switchboard.log")).unwrap_or_default();
        panic!(
            "{e}\npage: {page:?}\nplanner saw {:?}\nworker saw {:?}\nlog:\n{log}",
            sup.requests(),
            sub.requests()
        );
    }
    // Meanwhile the tree, live: the planner running, the worker running under it.
    let running = r#".run-node[data-agent="planner"][data-status="running"] .run-children .run-node[data-agent="worker"][data-status="running"]"#;
    s.wait_for(running, WAIT).await.unwrap();
    // The worker's call shows while it waits, not only once it ends: a node's calls and spend
    // are written as its turn goes.
    s.wait_text(
        r#".run-node[data-agent="worker"][data-status="running"] .run-calls"#,
        "1 call",
        WAIT,
    )
    .await
    .unwrap();
    s.wait_text(
        r#".run-node[data-agent="worker"] .run-task"#,
        "Echo the plan.",
        WAIT,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("agent-runs-1-live.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", WAIT)
        .await
        .unwrap();

    s.wait_text(".chat-log", "The worker echoed the plan.", WAIT)
        .await
        .unwrap();
    let done = r#".run-node[data-agent="planner"][data-status="done"] .run-children .run-node[data-agent="worker"][data-status="done"]"#;
    s.wait_for(done, WAIT).await.unwrap();
    let model = s
        .wait_text(
            r#".run-node[data-agent="worker"] .run-model"#,
            "claude-worker",
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(model.trim(), "an / claude-worker");
    s.wait_text(
        r#".run-node[data-agent="planner"] > .run-node-head .run-model"#,
        "oa / gpt-sup",
        WAIT,
    )
    .await
    .unwrap();
    // The run's total: both agents' tokens and calls (each made one: a delegation, an echo).
    let total = s
        .wait_text(".run-tree .run-total", "2 agent runs", WAIT)
        .await
        .unwrap();
    assert!(total.contains("300 in · 30 out"), "{total}");
    assert!(total.contains("2 calls"), "{total}");
    s.screenshot(&artifacts().join("agent-runs-2-done.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // Each model was asked in its own wire format, and the echo really ran.
    let (sup_reqs, sub_reqs) = (sup.requests(), sub.requests());
    assert_eq!((sup_reqs.len(), sub_reqs.len()), (2, 2));
    assert!(sup_reqs[0].path.ends_with("/chat/completions"));
    if anthropic {
        assert!(
            sub_reqs[0].path.ends_with("/v1/messages"),
            "{}",
            sub_reqs[0].path
        );
    }
    assert!(sub_reqs[0].body.to_string().contains("Echo the plan."));
    assert!(sub_reqs[1].body.to_string().contains("the plan"));
    assert!(sup_reqs[1].body.to_string().contains("Echoed: the plan."));
}
