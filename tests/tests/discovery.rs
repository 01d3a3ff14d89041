//! Progressive discovery (issue 16, point 2): with the mode on, the model gets a search over the
//! catalog and the definitions it loads, not every definition. A scripted model of each vendor
//! finds a tool of the fake MCP server's large catalog, loads it, and calls it: the recorded
//! requests show only the built-ins at first and the loaded tool's definition from the step
//! after the load; the call reaches the server only after a person approved it; a call to a
//! tool never loaded is refused and never reaches the server; the next turn still offers what
//! was loaded, and the turn's tools cost is told again once the loaded tool is offered.
//! `chat --discover` switches it on from the CLI, `agent add --discovery` for an
//! agent, whose scope bounds what it can find and load, in a conversation and when delegated
//! to. And the measurement: the tool definitions a turn's first request carries with a
//! 5,000-tool catalog, with and without the mode, counted with the host's own token counter.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::approval::Answer;
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::host::{Host, SendRequest, TurnInput, FIND_TOOL, LOAD_TOOL};
use switchboard_core::ids::{ConversationId, ProviderName};
use switchboard_core::llm::profiles::Wire;
use switchboard_core::llm::tokens::Counter;
use switchboard_tests::chat_cli::{newest_conversation, ok};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{send_collect, turn, AppData};
use switchboard_tests::*;

/// The tool definitions of a recorded request, as (name, the definition as sent), either wire.
fn tools_of(body: &Value) -> Vec<(String, Value)> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    let name = t["function"]["name"]
                        .as_str()
                        .or(t["name"].as_str())
                        .unwrap()
                        .to_owned();
                    (name, t.clone())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn names_of(body: &Value) -> Vec<String> {
    tools_of(body).into_iter().map(|(n, _)| n).collect()
}

async fn send(
    host: &Host,
    provider: &ProviderName,
    conversation: &ConversationId,
    text: &str,
) -> (TurnEnd, Vec<ChatEvent>) {
    let (out, events) = send_collect(
        host,
        SendRequest {
            conversation: Some(conversation.clone()),
            ..turn(provider.clone(), TurnInput::text(text))
        },
    )
    .await;
    (out.end, events)
}

/// Answers every approval asked for, counting them, until aborted.
fn approve_all(
    host: &Host,
) -> (
    tokio::task::JoinHandle<()>,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let answerer = host.clone();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let task = tokio::spawn(async move {
        loop {
            for req in answerer.pending_approvals() {
                seen.lock().unwrap().push(req.reason.clone());
                let _ = answerer
                    .answer_approval(&req.nonce.to_string(), Answer::ALLOW)
                    .await;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    (task, asked)
}

/// The tools/call names a `--record`ing fake server received.
fn received(record: &Path) -> Vec<String> {
    recorded_calls(record).into_iter().map(|(n, _)| n).collect()
}

fn call(id: &str, name: &str, args: Value) -> ScriptedCall {
    ScriptedCall::new(id, name, &[&args.to_string()])
}

#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn find_load_call(kind: &str) {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![call("c1", FIND_TOOL, json!({"query": "gen_0042"}))]),
        Reply::calls(vec![call(
            "c2",
            LOAD_TOOL,
            json!({"tools": ["big/gen_0042"]}),
        )]),
        Reply::calls(vec![
            call("c3", "big__gen_0042", json!({"text": "found and loaded"})),
            call("c4", "big__gen_0007", json!({"text": "never loaded"})),
        ]),
        Reply::text(&["Done."]),
        Reply::text(&["Still here."]),
    ]))
    .await
    .unwrap();
    let (host, tmp) = test_host().await;
    let record = tmp.path().join("big-received.jsonl");
    start_trusted(
        &host,
        fake_spec(
            "big",
            &["--tools", "300", "--record", record.to_str().unwrap()],
        ),
    )
    .await;
    let base = match kind {
        "anthropic" => llm.anthropic_base(),
        _ => llm.openai_base(),
    };
    let provider = provider_with_key(&host, "m", kind, base).await;
    let conversation = host.create_conversation("big catalog").await.unwrap().id;
    assert!(!host.conversation_discovery(&conversation).await.unwrap());
    host.set_conversation_discovery(&conversation, true)
        .await
        .unwrap();
    assert!(host.conversation_discovery(&conversation).await.unwrap());

    let (approver, asked) = approve_all(&host);
    let (end, events) = send(&host, &provider, &conversation, "use gen 42").await;
    assert!(matches!(end, TurnEnd::Done(_)), "{kind}: {end:?}");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4, "{kind}");

    // Step 1: the two built-ins (and the output reader every turn has), no server tool.
    let first = names_of(&reqs[0].body);
    assert!(first.contains(&FIND_TOOL.to_owned()) && first.contains(&LOAD_TOOL.to_owned()));
    assert!(
        first.iter().all(|n| n.starts_with("switchboard__")),
        "{kind}: {first:?}"
    );
    assert_eq!(first.len(), 3, "{kind}: {first:?}");
    assert!(
        reqs[0]
            .body
            .to_string()
            .contains("switchboard__load_tools; a loaded tool"),
        "{kind}: the system prompt says how to get tools"
    );
    // The search answered with the tool's line (step 2 carries the result).
    let second = reqs[1].body.to_string();
    assert!(
        second.contains("big/gen_0042 — Generated echo tool."),
        "{kind}: {second}"
    );
    assert_eq!(
        names_of(&reqs[1].body),
        first,
        "{kind}: a search loads nothing"
    );
    // Step 3: the loaded tool's full definition, and only that one more.
    let third = tools_of(&reqs[2].body);
    assert_eq!(third.len(), 4, "{kind}: {third:?}");
    let (_, def) = third.iter().find(|(n, _)| n == "big__gen_0042").unwrap();
    assert!(
        def.to_string().contains("\"text\""),
        "{kind}: the schema: {def}"
    );
    // The loaded tool ran through the approval seam; the other never reached the server.
    let fourth = reqs[3].body.to_string();
    assert!(fourth.contains("found and loaded"), "{kind}: {fourth}");
    assert!(
        fourth.contains("big__gen_0007 is not loaded"),
        "{kind}: {fourth}"
    );
    assert_eq!(received(&record), ["gen_0042"], "{kind}");
    let reasons = asked.lock().unwrap().clone();
    assert_eq!(
        reasons.len(),
        1,
        "{kind}: one approval, for gen_0042: {reasons:?}"
    );
    // The turn's "tools: N" counted what was offered at its start (the built-ins only), and
    // again, higher, once the loaded tool was offered: the chat's cost line follows the turn.
    let counted: Vec<(u32, u64)> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolsCost { tools, tokens, .. } => Some((*tools, *tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(
        counted.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        [3, 4],
        "{kind}: {events:?}"
    );
    assert!(counted[1].1 > counted[0].1, "{kind}: {counted:?}");

    // The next turn offers what was loaded, rebuilt from the conversation.
    let (end, _) = send(&host, &provider, &conversation, "again").await;
    assert!(matches!(end, TurnEnd::Done(_)), "{kind}: {end:?}");
    let fifth = names_of(&llm.requests()[4].body);
    assert!(
        fifth.contains(&"big__gen_0042".to_owned()),
        "{kind}: {fifth:?}"
    );
    assert_eq!(fifth.len(), 4, "{kind}: {fifth:?}");

    // Switched off: every tool again.
    host.set_conversation_discovery(&conversation, false)
        .await
        .unwrap();
    approver.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_finds_loads_and_calls_through_the_approval_seam() {
    find_load_call("openai").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_finds_loads_and_calls_through_the_approval_seam() {
    find_load_call("anthropic").await;
}

/// The definitions' tokens of a recorded OpenAI request, counted like the host counts them.
fn definition_tokens(body: &Value) -> u64 {
    let c = Counter::new("openai", Wire::OpenAi, "gpt-4o");
    tools_of(body)
        .iter()
        .map(|(_, t)| c.text(&t.to_string()))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5000_tool_catalog_costs_under_2_percent_with_discovery() {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::text(&["Every tool."]),
        Reply::text(&["Two tools."]),
    ]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    start_trusted(&host, fake_spec("big", &["--tools", "5000"])).await;
    // A first pin takes 200 tools without review; the person approves the rest.
    let mut pinned = false;
    for _ in 0..250 {
        host.approve_pin_changes(&sid("big"), None).await.unwrap();
        if host.held_tools(&sid("big")).await.unwrap().is_empty() {
            pinned = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    assert!(pinned, "the 5,000 tools were never all approved");
    let p = ProviderName::new("oa").unwrap();
    host.models()
        .add_provider(
            &p,
            "openai",
            Some(llm.openai_base()),
            Some("gpt-4o".into()),
            Some(10_000_000),
        )
        .await
        .unwrap();
    host.models()
        .set_provider_key(&p, switchboard_core::redact::Secret::new("sk-test-5000"))
        .await
        .unwrap();

    let plain = host.create_conversation("every tool").await.unwrap().id;
    let (end, events) = send(&host, &p, &plain, "hello").await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
    // A new chat started with the mode on (the app's "Find tools" ticked before the first
    // message): even its first request carries only the search.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(
            SendRequest {
                discovery: Some(true),
                ..turn(p.clone(), TurnInput::text("hello"))
            },
            tx,
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{:?}", out.end);
    assert!(host
        .conversation_discovery(&out.conversation)
        .await
        .unwrap());
    let mut found_events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        found_events.push(e);
    }

    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let (all_n, few_n) = (tools_of(&reqs[0].body).len(), tools_of(&reqs[1].body).len());
    assert!(all_n > 5000, "{all_n}");
    assert_eq!(few_n, 3);
    let (all, few) = (
        definition_tokens(&reqs[0].body),
        definition_tokens(&reqs[1].body),
    );
    println!(
        "tool definitions in the first request, 5,000-tool catalog, gpt-4o (o200k): \
         {all} tokens ({all_n} tools) without discovery, {few} tokens ({few_n} tools) with \
         discovery ({:.3} %)",
        few as f64 * 100.0 / all as f64
    );
    assert!(few * 50 < all, "{few} is not under 2 % of {all}");
    // The turn's own count says the same as the requests.
    let counted = |ev: &[ChatEvent]| {
        ev.iter()
            .find_map(|e| match e {
                ChatEvent::ToolsCost { tokens, .. } => Some(*tokens),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(counted(&events), all);
    assert_eq!(counted(&found_events), few);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn chat_discover_switches_the_conversation_and_the_cli_asks_before_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![call(
            "c1",
            LOAD_TOOL,
            json!({"tools": ["demo/gen_0003"]}),
        )]),
        Reply::calls(vec![call(
            "c2",
            "demo__gen_0003",
            json!({"text": "via cli"}),
        )]),
        Reply::text(&["Done."]),
        Reply::text(&["All of them."]),
    ]))
    .await
    .unwrap();
    AppData::on(data)
        .approved_fake("demo", &["--tools", "50"])
        .provider("fake", "ollama", &llm.openai_base(), "m1");
    let o = run_cli(
        data,
        &["chat", "--model", "fake", "--discover", "use tool 3"],
        "y\n",
        &[],
    );
    let stdout = ok(&o);
    assert!(stdout.contains("Done."), "{stdout}");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        stderr.contains("The model wants to run gen_0003 on demo"),
        "{stderr}"
    );
    let reqs = llm.requests();
    assert_eq!(names_of(&reqs[0].body).len(), 3);
    assert!(names_of(&reqs[1].body).contains(&"demo__gen_0003".to_owned()));
    assert!(reqs[2].body.to_string().contains("via cli"));

    // --no-discover: every tool again in the same conversation.
    let id = newest_conversation(data);
    ok(&run_cli(
        data,
        &[
            "chat",
            "--model",
            "fake",
            "--conversation",
            &id,
            "--no-discover",
            "all",
        ],
        "",
        &[],
    ));
    assert!(names_of(&llm.requests()[3].body).len() > 50);

    // Per agent: `--discovery` on add, shown, exported, switched off by edit.
    ok(&run_cli(
        data,
        &[
            "agent",
            "add",
            "finder",
            "--provider",
            "fake",
            "--server",
            "demo",
            "--discovery",
        ],
        "",
        &[],
    ));
    let shown = ok(&run_cli(data, &["agent", "show", "finder"], "", &[]));
    assert!(shown.contains("progressive discovery"), "{shown}");
    let exported = ok(&run_cli(data, &["agent", "export"], "", &[]));
    assert!(exported.contains("discovery = true"), "{exported}");
    ok(&run_cli(
        data,
        &["agent", "edit", "finder", "--no-discovery"],
        "",
        &[],
    ));
    let shown = ok(&run_cli(data, &["agent", "show", "finder"], "", &[]));
    assert!(!shown.contains("progressive discovery"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_with_discovery_finds_and_loads_only_inside_its_scope() {
    use switchboard_core::agent_data::{AgentName, AgentProfile, ToolScope};
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![call(
            "c1",
            FIND_TOOL,
            json!({"query": "generated echo"}),
        )]),
        Reply::calls(vec![call(
            "c2",
            LOAD_TOOL,
            json!({"tools": ["big/gen_0001", "big/gen_0002"]}),
        )]),
        Reply::text(&["Loaded what I may."]),
    ]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    start_trusted(&host, fake_spec("big", &["--tools", "50"])).await;
    let provider = provider_with_key(&host, "m", "openai", llm.openai_base()).await;
    let mut p = AgentProfile::new(AgentName::new("finder").unwrap(), provider.clone());
    p.discovery = true;
    p.scope = ToolScope {
        servers: vec!["big".into()],
        tools: vec!["big/gen_0001".into(), "big/echo".into()],
    };
    host.add_agent(p).await.unwrap();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(
            SendRequest {
                agent: Some(AgentName::new("finder").unwrap()),
                ..turn(provider.clone(), TurnInput::text("find tools"))
            },
            tx,
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{:?}", out.end);
    // The conversation's own switch is off: the agent's profile turned it on.
    assert!(!host
        .conversation_discovery(&out.conversation)
        .await
        .unwrap());
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 3);
    let first = names_of(&reqs[0].body);
    assert!(
        !first.iter().any(|n| n.starts_with("big__")),
        "no server tool up front: {first:?}"
    );
    assert!(first.contains(&FIND_TOOL.to_owned()));
    // The search saw the scope only: the two tools in it, none of the 48 others.
    let found = reqs[1].body.to_string();
    assert!(found.contains("big/gen_0001 —"), "{found}");
    assert!(!found.contains("big/gen_0002"), "{found}");
    assert!(found.contains("2 of 2 tools match"), "{found}");
    // The load took the one in scope and called the other unknown.
    let loaded = reqs[2].body.to_string();
    assert!(loaded.contains("Loaded: big__gen_0001"), "{loaded}");
    assert!(
        loaded.contains("Unknown or not available here: big/gen_0002"),
        "{loaded}"
    );
    let third = names_of(&reqs[2].body);
    assert!(third.contains(&"big__gen_0001".to_owned()), "{third:?}");
    assert!(!third.contains(&"big__gen_0002".to_owned()), "{third:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_agent_with_discovery_starts_with_the_search_only() {
    use switchboard_core::agent_data::{AgentName, AgentProfile, ToolScope};
    use switchboard_core::host::Lineage;
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![call(
            "c1",
            LOAD_TOOL,
            json!({"tools": ["big/gen_0003"]}),
        )]),
        Reply::text(&["Ready."]),
    ]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    start_trusted(&host, fake_spec("big", &["--tools", "50"])).await;
    let provider = provider_with_key(&host, "m", "anthropic", llm.anthropic_base()).await;
    let mut p = AgentProfile::new(AgentName::new("finder").unwrap(), provider);
    p.discovery = true;
    p.delegates = Some(Vec::new());
    p.scope = ToolScope {
        servers: vec!["big".into()],
        tools: Vec::new(),
    };
    host.add_agent(p).await.unwrap();
    let out = host
        .run_agent_task(
            Lineage::root(ConversationId::random()),
            AgentName::new("finder").unwrap(),
            "get ready".into(),
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let first = names_of(&reqs[0].body);
    assert!(
        !first.iter().any(|n| n.starts_with("big__")),
        "no server tool up front: {first:?}"
    );
    assert!(
        reqs[0].body["system"].to_string().contains(LOAD_TOOL),
        "the child's system prompt says how to get tools"
    );
    let second = names_of(&reqs[1].body);
    assert!(second.contains(&"big__gen_0003".to_owned()), "{second:?}");
    assert_eq!(
        second.iter().filter(|n| n.starts_with("big__")).count(),
        1,
        "{second:?}"
    );
}
