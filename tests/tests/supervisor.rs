//! A conversation run by a supervisor agent (issue 15, points 2, 4 and 7): the person sends a
//! message with an agent picked; the agent (an OpenAI-format model) delegates a sub-task to an
//! agent on an Anthropic-format model, whose tool call is asked about because its profile
//! tightens the tool to `ask` although the person's policy allows it, and the prompt names the
//! agent and on whose behalf it asks; the supervisor then hands the conversation over to an
//! agent on an OpenAI-compatible local profile, which answers the same message. The run tree,
//! the audit log and the stored transcript say who did what. Models are scripted servers on
//! loopback; the tool is our fake MCP server, which records what it receives.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use switchboard_core::agent_data::{AgentName, AgentProfile, PolicyTightening, Tighten, ToolScope};
use switchboard_core::approval::{Answer, Effect};
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::host::{SendRequest, TurnInput, DELEGATE_TOOL, HAND_OVER_TOOL};
use switchboard_core::store::AuditQuery;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{host_with_recorder, turn};
use switchboard_tests::*;

fn name(s: &str) -> AgentName {
    AgentName::new(s).unwrap()
}

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::calls(vec![ScriptedCall::new(id, tool, &[&args.to_string()])])
}

/// The `tools/call` names the fake server received.
fn received(record: &Path) -> Vec<String> {
    recorded_calls(record).into_iter().map(|(n, _)| n).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_supervisor_runs_the_conversation_delegates_across_vendors_and_hands_over() {
    let sup = FakeLlm::spawn(Scenario::new([
        call(
            "call_d",
            DELEGATE_TOOL,
            serde_json::json!({"agent": "researcher", "task": "Echo the word ready."}),
        ),
        call(
            "call_h",
            HAND_OVER_TOOL,
            serde_json::json!({"agent": "closer", "note": "The researcher echoed ready."}),
        ),
        Reply::text(&["Handing you to the closer."]),
    ]))
    .await
    .unwrap();
    let sub = FakeLlm::spawn(Scenario::new([
        call("toolu_1", "fs__echo", serde_json::json!({"text": "ready"})),
        Reply::text(&["It echoed: ready."]),
    ]))
    .await
    .unwrap();
    let local = FakeLlm::spawn(Scenario::new([Reply::text(&["All done: ready."])]))
        .await
        .unwrap();
    let (host, _tmp, record) = host_with_recorder("fs").await;
    // The person's policy allows echo for models: only the researcher's tightening asks.
    host.put_policy_rule(user_rule("allow-echo", Effect::Allow, "fs", "echo"))
        .await
        .unwrap();
    let oa = provider_with_key(&host, "oa", "openai", sup.openai_base()).await;
    let an = provider_with_key(&host, "an", "anthropic", sub.anthropic_base()).await;
    let lo = provider_with_key(&host, "lo", "ollama", local.openai_base()).await;
    let mut researcher = AgentProfile::new(name("researcher"), an);
    researcher.delegates = Some(vec![]);
    researcher.scope = ToolScope {
        servers: vec!["fs".into()],
        tools: vec!["fs/echo".into()],
    };
    researcher.policy = vec![PolicyTightening {
        tool: "fs/echo".into(),
        action: Tighten::Ask,
    }];
    host.add_agent(researcher).await.unwrap();
    let mut closer = AgentProfile::new(name("closer"), lo.clone());
    closer.delegates = Some(vec![]);
    host.add_agent(closer).await.unwrap();
    let mut planner = AgentProfile::new(name("planner"), oa);
    planner.delegates = Some(vec![name("researcher"), name("closer")]);
    host.add_agent(planner).await.unwrap();

    // The person answers the one question: it must name the researcher, for the planner.
    let answerer = host.clone();
    let asked = tokio::spawn(async move {
        loop {
            if let Some(req) = answerer.pending_approvals().into_iter().next() {
                let acting = req.origin.acting().cloned();
                answerer
                    .answer_approval(&req.nonce.to_string(), Answer::ALLOW)
                    .await
                    .unwrap();
                return (acting, req.reason);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(
            SendRequest {
                agent: Some(name("planner")),
                ..turn(
                    lo,
                    TurnInput::text("Get the researcher to check readiness."),
                )
            },
            tx,
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.agent, Some(name("closer")));
    let (acting, reason) = tokio::time::timeout(Duration::from_secs(30), asked)
        .await
        .expect("the researcher's call was asked about (its `ask` tightening)")
        .unwrap();
    let acting = acting.expect("the question names an agent");
    assert_eq!(acting.agent, name("researcher"));
    assert_eq!(acting.for_agent, Some(name("planner")));
    assert!(reason.contains("researcher"), "{reason}");
    assert_eq!(received(&record), vec!["echo".to_owned()]);

    let mut handed = None;
    while let Ok(ev) = rx.try_recv() {
        if let ChatEvent::HandedOver { from, to, note } = ev {
            handed = Some((from, to, note));
        }
    }
    assert_eq!(
        handed,
        Some((
            "planner".into(),
            "closer".into(),
            "The researcher echoed ready.".into()
        ))
    );

    // Each model in its own format; the closer got the note as data in its system prompt and
    // the transcript so far, not the delegate's or the researcher's tools.
    let sup_reqs = sup.requests();
    assert_eq!(sup_reqs.len(), 3);
    let sup_system = sup_reqs[0].body.to_string();
    assert!(sup_system.contains("You are agent planner"), "{sup_system}");
    let local_reqs = local.requests();
    assert_eq!(local_reqs.len(), 1);
    let closer_body = local_reqs[0].body.to_string();
    assert!(
        closer_body.contains("Agent planner handed this conversation over to you")
            && closer_body.contains("The researcher echoed ready."),
        "{closer_body}"
    );
    assert!(closer_body.contains("Get the researcher to check readiness."));
    assert!(
        !closer_body.contains("\"name\":\"fs__echo\""),
        "{closer_body}"
    );
    assert!(sub.requests()[0].path.ends_with("/v1/messages"));

    // The tree: planner at the root, the researcher it delegated to and the closer it handed
    // over to below it, all done.
    let nodes = host
        .conversation_agent_runs(&out.conversation)
        .await
        .unwrap();
    let shape: Vec<(&str, Option<&str>, &str)> = nodes
        .iter()
        .map(|n| {
            let parent = n
                .parent
                .as_ref()
                .and_then(|p| nodes.iter().find(|m| &m.node == p))
                .map(|m| m.agent.as_str());
            (n.agent.as_str(), parent, n.status.as_str())
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("planner", None, "done"),
            ("researcher", Some("planner"), "done"),
            ("closer", Some("planner"), "done"),
        ]
    );
    assert!(nodes.iter().all(|n| n.run == nodes[0].run));
    // The closer is local (free): its cost is known and zero.
    assert_eq!(nodes[2].cost_usd, Some(0.0));

    // The audit log names the researcher as the one who proposed the call.
    let log = host
        .audit_page(&AuditQuery {
            search: None,
            before: None,
            limit: 100,
        })
        .await
        .unwrap();
    let actors: Vec<&str> = log
        .entries
        .iter()
        .filter(|e| e.tool.as_deref() == Some("echo"))
        .map(|e| e.actor.as_str())
        .collect();
    assert!(actors.contains(&"model:researcher"), "{actors:?}");
    // ...and the planner as the one who delegated to it and handed the conversation over.
    let planner: Vec<&str> = log
        .entries
        .iter()
        .filter(|e| e.actor == "model:planner")
        .map(|e| e.detail_json.as_str())
        .collect();
    assert!(
        planner
            .iter()
            .any(|d| d.contains("\"delegated\"") && d.contains("\"researcher\"")),
        "{planner:?}"
    );
    assert!(
        planner
            .iter()
            .any(|d| d.contains("\"handed_over\"") && d.contains("\"closer\"")),
        "{planner:?}"
    );
    assert!(
        !planner.iter().any(|d| d.contains("Echo the word ready")),
        "the task is kept by digest, not as text: {planner:?}"
    );

    // The stored transcript has both answers, each under the provider that gave it.
    let history = host.messages(&out.conversation).await.unwrap();
    let texts: Vec<String> = history.iter().map(|m| m.message.text()).collect();
    assert!(
        texts.iter().any(|t| t == "Handing you to the closer."),
        "{texts:?}"
    );
    assert_eq!(texts.last().map(String::as_str), Some("All done: ready."));
    host.shutdown().await;
}

/// `switchboard chat --agent`: the real CLI runs the conversation through the agent, the
/// question on the terminal names the agent that asks and for whom, and `history show` prints
/// the run tree. Both models speak the OpenAI format here (keyless local profiles, so the CLI
/// needs no keyring); the vendors' formats are crossed in the test above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_with_an_agent_on_the_command_line_names_the_agent_that_asks() {
    use switchboard_tests::chat_cli::{newest_conversation, ok, setup_chat};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let sup = FakeLlm::spawn(Scenario::new([
        call(
            "call_d",
            DELEGATE_TOOL,
            serde_json::json!({"agent": "researcher", "task": "Echo the word ready."}),
        ),
        Reply::text(&["Done: ready."]),
    ]))
    .await
    .unwrap();
    let sub = FakeLlm::spawn(Scenario::new([
        call("call_e", "demo__echo", serde_json::json!({"text": "ready"})),
        Reply::text(&["It echoed ready."]),
    ]))
    .await
    .unwrap();
    setup_chat(data, &sup, &[]);
    let sub_base = sub.openai_base();
    ok(&run_cli(
        data,
        &[
            "provider",
            "add",
            "sub",
            "--kind",
            "ollama",
            "--base-url",
            &sub_base,
            "--model",
            "m1",
        ],
        "",
        &[],
    ));
    ok(&run_cli(
        data,
        &[
            "agent",
            "add",
            "researcher",
            "--provider",
            "sub",
            "--server",
            "demo",
            "--tool",
            "demo/echo",
            "--ask",
            "demo/echo",
            "--no-delegation",
        ],
        "",
        &[],
    ));
    ok(&run_cli(
        data,
        &["agent", "add", "planner", "--provider", "fake"],
        "",
        &[],
    ));

    let o = run_cli(
        data,
        &["chat", "--agent", "planner", "Check readiness."],
        "y\n",
        &[],
    );
    let stdout = ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(stdout.contains("Done: ready."), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "The model of agent researcher, for agent planner, wants to run echo on demo with:"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("answered by agent planner"), "{stderr}");
    // The researcher's result came back to the planner as its tool result.
    let back = sup.requests()[1].body.to_string();
    assert!(back.contains("It echoed ready."), "{back}");

    let conv = newest_conversation(data);
    let shown = ok(&run_cli(data, &["history", "show", &conv], "", &[]));
    let planner = shown
        .lines()
        .position(|l| l.trim_start().starts_with("planner ["))
        .unwrap_or_else(|| panic!("no planner node: {shown}"));
    let next = shown.lines().nth(planner + 1).unwrap_or_default();
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(
        next.trim_start().starts_with("researcher [")
            && indent(next) > indent(shown.lines().nth(planner).unwrap()),
        "{shown}"
    );
}
