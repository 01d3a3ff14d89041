//! Handing a conversation over (issue 15, points 2 and 7), with scripted models on loopback
//! that record every request. Across vendors: an agent on an OpenAI-format model calls a tool
//! of our fake MCP server, then hands the conversation to an agent on an Anthropic-format
//! model, whose `/v1/messages` request carries the earlier turn translated (tool_use blocks
//! answered by tool_result blocks in the next message, none of OpenAI's shapes). The limit: a
//! message changes hands at most `MAX_HAND_OVERS` (3) times; the fourth agent's hand-over is
//! refused where the tool is answered, so its model is told so and answers itself, and the
//! audit log records no hand-over that did not happen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::Value;
use switchboard_core::agent_data::{AgentName, AgentProfile, ToolScope};
use switchboard_core::approval::Effect;
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::host::{Host, SendOutcome, SendRequest, TurnInput, HAND_OVER_TOOL};
use switchboard_core::ids::ProviderName;
use switchboard_core::store::AuditQuery;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{host_with_recorder, send_collect, turn};
use switchboard_tests::*;

fn name(s: &str) -> AgentName {
    AgentName::new(s).unwrap()
}

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::calls(vec![ScriptedCall::new(id, tool, &[&args.to_string()])])
}

fn hand_to(id: &str, agent: &str, note: &str) -> Reply {
    call(
        id,
        HAND_OVER_TOOL,
        serde_json::json!({"agent": agent, "note": note}),
    )
}

/// Sends the person's `text` to a new conversation answered by `agent`.
async fn send(
    host: &Host,
    provider: ProviderName,
    agent: &str,
    text: &str,
) -> (SendOutcome, Vec<ChatEvent>) {
    let (out, events) = send_collect(
        host,
        SendRequest {
            agent: Some(name(agent)),
            ..turn(provider, TurnInput::text(text))
        },
    )
    .await;
    (out, events)
}

fn handed_over(events: &[ChatEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::HandedOver { from, to, .. } => Some((from.clone(), to.clone())),
            _ => None,
        })
        .collect()
}

/// The audit entries that record a hand-over, as (actor, detail).
async fn hand_over_audits(host: &Host) -> Vec<(String, String)> {
    let log = host
        .audit_page(&AuditQuery {
            search: None,
            before: None,
            limit: 500,
        })
        .await
        .unwrap();
    log.entries
        .into_iter()
        .filter(|e| e.detail_json.contains("\"handed_over\""))
        .map(|e| (e.actor, e.detail_json))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_hand_over_to_an_anthropic_model_carries_the_tool_turn_translated() {
    let sup = FakeLlm::spawn(Scenario::new([
        call("call_e", "fs__echo", serde_json::json!({"text": "ready"})),
        hand_to("call_h", "closer", "The echo said ready."),
        Reply::text(&["Handing you to the closer."]),
    ]))
    .await
    .unwrap();
    let an = FakeLlm::spawn(Scenario::new([Reply::text(&["All done: ready."])]))
        .await
        .unwrap();
    let (host, _tmp, record) = host_with_recorder("fs").await;
    host.put_policy_rule(user_rule("allow-echo", Effect::Allow, "fs", "echo"))
        .await
        .unwrap();
    let oa = provider_with_key(&host, "oa", "openai", sup.openai_base()).await;
    let anp = provider_with_key(&host, "an", "anthropic", an.anthropic_base()).await;
    let mut planner = AgentProfile::new(name("planner"), oa.clone());
    planner.scope = ToolScope {
        servers: vec!["fs".into()],
        tools: vec!["fs/echo".into()],
    };
    planner.delegates = Some(vec![name("closer")]);
    let mut closer = AgentProfile::new(name("closer"), anp);
    closer.delegates = Some(vec![]);
    host.add_agent(closer).await.unwrap();
    host.add_agent(planner).await.unwrap();

    let (out, events) = send(&host, oa, "planner", "Is it ready?").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.agent, Some(name("closer")));
    assert_eq!(
        handed_over(&events),
        vec![("planner".to_owned(), "closer".to_owned())]
    );
    assert_eq!(recorded_calls(&record).len(), 1, "the echo ran once");
    assert_eq!(sup.requests().len(), 3);

    let reqs = an.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].path.ends_with("/v1/messages"), "{}", reqs[0].path);
    let body = &reqs[0].body;
    let text = body.to_string();
    // None of OpenAI's shapes.
    for openai in [
        "\"tool_calls\"",
        "\"tool_call_id\"",
        "\"role\":\"tool\"",
        "\"function\"",
    ] {
        assert!(!text.contains(openai), "{openai} in {text}");
    }
    let messages = body["messages"].as_array().unwrap();
    // Roles alternate, as the Messages API requires, starting with the person.
    for (i, m) in messages.iter().enumerate() {
        let want = if i % 2 == 0 { "user" } else { "assistant" };
        assert_eq!(m["role"], want, "message {i} of {text}");
    }
    assert!(messages[0].to_string().contains("Is it ready?"), "{text}");
    let last = messages.last().unwrap().to_string();
    assert!(last.contains("handed over to you"), "{text}");
    // Every tool_use is answered by a tool_result with its id in the next message, and every
    // tool_result answers a tool_use of the message before.
    let blocks = |m: &Value, kind: &str| -> Vec<Value> {
        m["content"]
            .as_array()
            .map(|c| c.iter().filter(|b| b["type"] == kind).cloned().collect())
            .unwrap_or_default()
    };
    let mut uses = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for u in blocks(m, "tool_use") {
            let id = u["id"].as_str().unwrap().to_owned();
            let answered = messages
                .get(i + 1)
                .map(|next| {
                    blocks(next, "tool_result")
                        .iter()
                        .any(|r| r["tool_use_id"] == id.as_str())
                })
                .unwrap_or(false);
            assert!(answered, "tool_use {id} unanswered in {text}");
            uses.push((i, u));
        }
        for r in blocks(m, "tool_result") {
            let id = r["tool_use_id"].as_str().unwrap();
            let asked = i > 0
                && blocks(&messages[i - 1], "tool_use")
                    .iter()
                    .any(|u| u["id"] == id);
            assert!(asked, "tool_result {id} answers nothing in {text}");
        }
    }
    // The echo call and its result, then the hand-over call, in that order.
    let names: Vec<&str> = uses
        .iter()
        .map(|(_, u)| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["fs__echo", HAND_OVER_TOOL], "{text}");
    let (at, echo) = &uses[0];
    assert_eq!(echo["input"], serde_json::json!({"text": "ready"}));
    let result = blocks(&messages[at + 1], "tool_result")
        .into_iter()
        .find(|r| r["tool_use_id"] == echo["id"])
        .unwrap();
    assert!(result["content"].to_string().contains("ready"), "{result}");
    // The planner's words before it handed over are there too; the note is in the system
    // prompt, as data.
    assert!(text.contains("Handing you to the closer."), "{text}");
    let system = body["system"].to_string();
    assert!(
        system.contains("Agent planner handed this conversation over to you")
            && system.contains("The echo said ready."),
        "{system}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fourth_hand_over_of_a_message_is_not_offered_and_refused() {
    let a = FakeLlm::spawn(Scenario::new([
        hand_to("call_a", "b", ""),
        Reply::text(&["a: over to b"]),
    ]))
    .await
    .unwrap();
    let b = FakeLlm::spawn(Scenario::new([
        hand_to("call_b", "c", ""),
        Reply::text(&["b: over to c"]),
    ]))
    .await
    .unwrap();
    let c = FakeLlm::spawn(Scenario::new([
        hand_to("call_c", "d", ""),
        Reply::text(&["c: over to d"]),
    ]))
    .await
    .unwrap();
    let d = FakeLlm::spawn(Scenario::new([
        hand_to("call_d", "e", "Please take it."),
        Reply::text(&["d: I answer myself."]),
    ]))
    .await
    .unwrap();
    let e = FakeLlm::spawn(Scenario::new([Reply::text(&["e: never asked"])]))
        .await
        .unwrap();
    let (host, _tmp) = test_host().await;
    let mut first = None;
    for (agent, llm) in [("a", &a), ("b", &b), ("c", &c), ("d", &d), ("e", &e)] {
        let provider =
            provider_with_key(&host, &format!("p-{agent}"), "openai", llm.openai_base()).await;
        first.get_or_insert(provider.clone());
        // Each may hand over to any other agent: only the limit stops d.
        host.add_agent(AgentProfile::new(name(agent), provider))
            .await
            .unwrap();
    }

    let (out, events) = send(&host, first.unwrap(), "a", "Who answers?").await;
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.agent, Some(name("d")));
    assert_eq!(
        handed_over(&events),
        vec![
            ("a".to_owned(), "b".to_owned()),
            ("b".to_owned(), "c".to_owned()),
            ("c".to_owned(), "d".to_owned()),
        ]
    );
    assert!(e.requests().is_empty(), "e was asked: {:?}", e.requests());
    // d is not offered the hand-over tool (the message changed hands 3 times), and its call
    // to it anyway is refused: nobody takes over.
    let d_reqs = d.requests();
    assert_eq!(d_reqs.len(), 2);
    let offered = d_reqs[0].body["tools"].to_string();
    assert!(!offered.contains(HAND_OVER_TOOL), "{offered}");
    let told = d_reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        told.contains(&format!("There is no tool named \\\"{HAND_OVER_TOOL}\\\"")),
        "{told}"
    );
    assert!(!told.contains("takes over this conversation"), "{told}");
    // The audit log: the three hand-overs that happened, none by d.
    let audits = hand_over_audits(&host).await;
    let mut actors: Vec<&str> = audits.iter().map(|(a, _)| a.as_str()).collect();
    actors.sort_unstable();
    assert_eq!(actors, vec!["model:a", "model:b", "model:c"], "{audits:?}");
    // The run tree: each agent below the one that handed over to it; d's node is done.
    let nodes = host
        .conversation_agent_runs(&out.conversation)
        .await
        .unwrap();
    let agents: Vec<&str> = nodes.iter().map(|n| n.agent.as_str()).collect();
    assert_eq!(agents, vec!["a", "b", "c", "d"]);
    for pair in nodes.windows(2) {
        assert_eq!(pair[1].parent.as_ref(), Some(&pair[0].node));
    }
    assert_eq!(nodes[3].status, "done");
    // The person sees d's answer last.
    let history = host.messages(&out.conversation).await.unwrap();
    let last = history.last().map(|m| m.message.text()).unwrap_or_default();
    assert_eq!(last, "d: I answer myself.");
    host.shutdown().await;
}

/// A hand-over takes effect only when the turn that asked for it ends well: an answer that
/// then fails leaves the conversation with the agent that had it, and the audit log records
/// no hand-over that did not happen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_whose_turn_then_fails_is_neither_made_nor_audited() {
    let a = FakeLlm::spawn(Scenario::new([
        hand_to("call_a", "b", "Over to you."),
        Reply::http_error(400, "invalid_request_error", "the model broke"),
    ]))
    .await
    .unwrap();
    let b = FakeLlm::spawn(Scenario::new([Reply::text(&["b: never asked"])]))
        .await
        .unwrap();
    let (host, _tmp) = test_host().await;
    let pa = provider_with_key(&host, "p-a", "openai", a.openai_base()).await;
    let pb = provider_with_key(&host, "p-b", "openai", b.openai_base()).await;
    host.add_agent(AgentProfile::new(name("b"), pb))
        .await
        .unwrap();
    host.add_agent(AgentProfile::new(name("a"), pa.clone()))
        .await
        .unwrap();

    let (out, events) = send(&host, pa, "a", "Who answers?").await;
    assert!(!matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(out.agent, Some(name("a")));
    assert!(handed_over(&events).is_empty(), "{events:?}");
    assert!(b.requests().is_empty(), "b was asked");
    assert_eq!(a.requests().len(), 2);
    assert!(
        hand_over_audits(&host).await.is_empty(),
        "a hand-over that never happened is in the audit log"
    );
    host.shutdown().await;
}
