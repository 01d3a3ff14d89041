//! The catalog's cost in tokens (issue 16, point 1): per tool and per server from the fake MCP
//! server's real catalog, for an OpenAI model (exact, o200k_base) and a Claude model
//! (estimated); a stopped and a disabled server priced from their last-known tools, one that
//! never ran listed with its cost unknown (not zero, not missing); the chat's per-turn count checked against the request the
//! scripted model server recorded, and its warning past the share of the window, which does
//! not stop the turn; the CLI's `catalog` command, and the cost `server trust` and `server
//! enable` print before or as a server is switched on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::host::{CatalogCosts, CostTarget, Host, TurnInput};
use switchboard_core::ids::{ProviderName, ToolRef};
use switchboard_core::llm::profiles::Wire;
use switchboard_core::llm::tokens::{Counter, Method};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{send_collect, turn};
use switchboard_tests::*;

async fn provider(host: &Host, name: &str, kind: &str, base: String, model: &str, window: u32) {
    let p = ProviderName::new(name).unwrap();
    host.models()
        .add_provider(&p, kind, Some(base), Some(model.into()), Some(window))
        .await
        .unwrap();
    host.models()
        .set_provider_key(&p, switchboard_core::redact::Secret::new("sk-test-cost"))
        .await
        .unwrap();
}

/// Polls the costs until `f` holds (the last-known list is written as the server runs).
async fn costs_until(host: &Host, f: impl Fn(&CatalogCosts) -> bool) -> CatalogCosts {
    for _ in 0..500 {
        let c = host.catalog_costs(&[]).await.unwrap();
        if f(&c) {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the costs never reached the expected state");
}

/// A tool as each wire sends it, built here from the live catalog, independently of the host.
fn wire_json(wire: Wire, name: &str, t: &switchboard_core::mcp::catalog::ToolInfo) -> String {
    let desc = t
        .description
        .clone()
        .or_else(|| t.title.clone())
        .unwrap_or_default();
    match wire {
        Wire::OpenAi => json!({"type": "function", "function": {
            "name": name, "description": desc, "parameters": t.input_schema}}),
        Wire::Anthropic => {
            json!({"name": name, "description": desc, "input_schema": t.input_schema})
        }
    }
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn every_tool_and_server_is_priced_live_stopped_disabled_and_never_run() {
    let (host, _tmp) = test_host().await;
    let h = start_trusted(&host, fake_spec("fs", &[])).await;
    add_trusted(&host, {
        let mut s = fake_spec("later", &[]);
        s.enabled = false;
        s
    })
    .await;
    provider(
        &host,
        "oa",
        "openai",
        "http://127.0.0.1:9/v1".into(),
        "gpt-4o",
        128_000,
    )
    .await;
    provider(
        &host,
        "an",
        "anthropic",
        "http://127.0.0.1:9".into(),
        "claude-sonnet-4-5",
        200_000,
    )
    .await;

    let costs = host.catalog_costs(&[]).await.unwrap();
    let methods: Vec<(String, Method)> = costs
        .models
        .iter()
        .map(|m| (m.provider.to_string(), m.method))
        .collect();
    assert_eq!(
        methods,
        vec![
            ("an".into(), Method::AnthropicEstimate),
            ("oa".into(), Method::O200k)
        ]
    );
    let (an, oa) = (0, 1);
    let names = host.tool_names().await.unwrap();
    let catalog = h.catalog();
    assert!(catalog.tools.len() >= 2, "{:?}", catalog.tools);
    let fs = costs
        .servers
        .iter()
        .find(|s| s.server.as_str() == "fs")
        .unwrap();
    assert!(fs.running && fs.enabled && fs.known && fs.last_known_ms.is_none());
    assert_eq!(fs.tools.len(), catalog.tools.len());
    let gpt = Counter::new("openai", Wire::OpenAi, "gpt-4o");
    let claude = Counter::new("anthropic", Wire::Anthropic, "claude-sonnet-4-5");
    let mut sums = [0u64; 2];
    for t in &catalog.tools {
        let r = ToolRef {
            server: h.id().clone(),
            tool: t.name.as_str().into(),
        };
        let llm = names.llm_name(&r).unwrap();
        let cost = fs.tools.iter().find(|c| c.tool == t.name).unwrap();
        assert_eq!(cost.llm_name, llm);
        assert!(cost.offered);
        assert_eq!(
            cost.tokens[oa],
            gpt.text(&wire_json(Wire::OpenAi, llm, t)),
            "{}",
            t.name
        );
        assert_eq!(
            cost.tokens[an],
            claude.text(&wire_json(Wire::Anthropic, llm, t)),
            "{}",
            t.name
        );
        assert!(cost.tokens[oa] > 10, "{cost:?}");
        sums[oa] += cost.tokens[oa];
        sums[an] += cost.tokens[an];
    }
    assert_eq!(fs.tokens[oa], sums[oa]);
    assert_eq!(fs.offered_tokens, fs.tokens);
    assert_eq!(costs.offered_tokens[oa], sums[oa]);
    // Claude's documented tool-use system prompt comes once per request.
    assert_eq!(costs.offered_tokens[an], sums[an] + 346);
    let later = costs
        .servers
        .iter()
        .find(|s| s.server.as_str() == "later")
        .unwrap();
    assert!(!later.enabled && !later.running && later.last_known_ms.is_none());
    assert!(!later.known, "a server that never ran has no known cost");
    assert!(later.tools.is_empty() && later.tokens == vec![0, 0]);

    // A tool switched off still shows its cost, but the next turn does not pay it.
    let off = &fs.tools[0];
    host.set_tool_enabled(
        &ToolRef {
            server: sid("fs"),
            tool: off.tool.as_str().into(),
        },
        false,
    )
    .await
    .unwrap();
    let c = host.catalog_costs(&[]).await.unwrap();
    let fs2 = c
        .servers
        .iter()
        .find(|s| s.server.as_str() == "fs")
        .unwrap();
    assert!(!fs2.tools[0].offered);
    assert_eq!(fs2.tokens, fs.tokens);
    assert_eq!(fs2.offered_tokens[oa], fs.tokens[oa] - off.tokens[oa]);
    host.set_tool_enabled(
        &ToolRef {
            server: sid("fs"),
            tool: off.tool.as_str().into(),
        },
        true,
    )
    .await
    .unwrap();

    // Stopped: priced from the tools it listed when it ran, the same numbers.
    host.stop_server(&sid("fs")).await.unwrap();
    let c = costs_until(&host, |c| {
        c.servers
            .iter()
            .any(|s| s.server.as_str() == "fs" && !s.running && s.last_known_ms.is_some())
    })
    .await;
    let stopped = c
        .servers
        .iter()
        .find(|s| s.server.as_str() == "fs")
        .unwrap();
    assert_eq!(stopped.tokens, fs.tokens);
    assert!(stopped.known);
    assert_eq!(c.offered_tokens, costs.offered_tokens);

    // Disabled (before it is enabled again): still priced, offered to no one.
    host.set_enabled(&sid("fs"), false).await.unwrap();
    let c = host.catalog_costs(&[]).await.unwrap();
    let disabled = c
        .servers
        .iter()
        .find(|s| s.server.as_str() == "fs")
        .unwrap();
    assert!(!disabled.enabled);
    assert_eq!(disabled.tokens, fs.tokens);
    assert!(disabled.tools.iter().all(|t| !t.offered));
    assert_eq!(c.offered_tokens, vec![0, 0]);

    // One model asked for by name.
    let only = host
        .catalog_costs(&[CostTarget {
            provider: ProviderName::new("oa").unwrap(),
            model: Some("gpt-4".into()),
        }])
        .await
        .unwrap();
    assert_eq!(only.models.len(), 1);
    assert_eq!(only.models[0].method, Method::Cl100k);
}

/// The definitions in a recorded OpenAI-format request, counted like the host counts them.
fn counted(body: &Value, c: &Counter) -> u64 {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| c.text(&t.to_string()))
        .sum()
}

async fn send(host: &Host, provider: &str) -> (TurnEnd, Vec<ChatEvent>) {
    let (out, events) = send_collect(
        host,
        turn(
            ProviderName::new(provider).unwrap(),
            TurnInput::text("hello"),
        ),
    )
    .await;
    (out.end, events)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_counts_the_tools_it_sends_and_warns_past_the_share() {
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::text(&["Hi."]),
        Reply::text(&["Hi again."]),
    ]))
    .await
    .unwrap();
    let (host, _tmp) = test_host().await;
    start_trusted(&host, fake_spec("fs", &[])).await;
    provider(
        &host,
        "big",
        "openai",
        llm.openai_base(),
        "gpt-4o",
        1_000_000,
    )
    .await;

    let (end, events) = send(&host, "big").await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1);
    let sent = counted(
        &reqs[0].body,
        &Counter::new("openai", Wire::OpenAi, "gpt-4o"),
    );
    let n_tools = reqs[0].body["tools"].as_array().unwrap().len();
    assert!(sent > 0);
    let cost = events
        .iter()
        .find_map(|e| match e {
            ChatEvent::ToolsCost {
                tools,
                tokens,
                estimate,
                context_window,
                share_percent,
            } => Some((*tools, *tokens, *estimate, *context_window, *share_percent)),
            _ => None,
        })
        .expect("a ToolsCost event");
    assert_eq!(cost.0 as usize, n_tools);
    assert_eq!(cost.1, sent, "the count is what the request carried");
    assert!(!cost.2, "gpt-4o is counted exactly");
    assert_eq!(cost.3, 1_000_000);
    assert!((cost.4 - sent as f64 / 10_000.0).abs() < 1e-9);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ChatEvent::ToolsOverBudget { .. })),
        "{events:?}"
    );

    // A window where the same definitions take half: warned, and the turn still goes out.
    let window = u32::try_from(sent * 2).unwrap();
    provider(
        &host,
        "small",
        "openai",
        llm.openai_base(),
        "gpt-4o",
        window,
    )
    .await;
    let (end, events) = send(&host, "small").await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
    assert_eq!(llm.requests().len(), 2, "a warning does not stop the turn");
    let warned = events.iter().find_map(|e| match e {
        ChatEvent::ToolsOverBudget {
            tokens,
            context_window,
            share_percent,
            limit_percent,
        } => Some((*tokens, *context_window, *share_percent, *limit_percent)),
        _ => None,
    });
    assert_eq!(warned, Some((sent, window, 50.0, 25)), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_prints_tokens_per_tool_and_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    cli_ok(
        data,
        &["server", "add", "demo", "--", fake.to_str().unwrap()],
    );
    // Before it ever ran: the approval says its cost is unknown; nothing starts to find out.
    let trust = run_cli(data, &["server", "trust", "demo", "--yes"], "", &[]);
    assert!(trust.status.success());
    let trust = String::from_utf8_lossy(&trust.stderr).into_owned();
    assert!(
        trust.contains("  tools      unknown until it starts (it never ran): it will add its tools' definitions to every turn"),
        "{trust}"
    );
    cli_ok(
        data,
        &[
            "provider",
            "add",
            "loc",
            "--kind",
            "ollama",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "llama3.1",
        ],
    );
    // Never ran: listed, its cost unknown (not a zero).
    let before = cli_ok(data, &["catalog"]);
    let demo = before
        .lines()
        .find(|l| l.starts_with("demo "))
        .unwrap_or_else(|| panic!("{before}"));
    assert!(demo.ends_with("unknown (never ran)"), "{demo}");
    assert!(!demo.contains(" 0"), "{demo}");
    let json: Value = serde_json::from_str(&cli_ok(data, &["--json", "catalog"])).unwrap();
    assert_eq!(json["servers"][0]["server"], "demo");
    assert_eq!(json["servers"][0]["known"], false);
    // Started once: live; then, in a new process with the server stopped, from its last list.
    let live = cli_ok(data, &["--json", "catalog", "--start", "--model", "loc"]);
    let live: Value = serde_json::from_str(&live).unwrap();
    assert_eq!(live["models"][0]["method"], "estimate");
    let tools = live["servers"][0]["tools"].as_array().unwrap();
    assert!(!tools.is_empty(), "{live}");
    let echo = tools.iter().find(|t| t["tool"] == "echo").expect("echo");
    let echo_tokens = echo["tokens"][0].as_u64().unwrap();
    assert!(echo_tokens > 10, "{echo}");
    let sum: u64 = tools.iter().map(|t| t["tokens"][0].as_u64().unwrap()).sum();
    assert_eq!(live["servers"][0]["tokens"][0].as_u64(), Some(sum));
    let text = cli_ok(data, &["catalog", "--model", "loc:llama3.1"]);
    assert!(
        text.contains("[1] loc:llama3.1 (estimate: cl100k_base; window 131072 tokens)"),
        "{text}"
    );
    assert!(text.contains("tools as listed"), "{text}");
    let echo_line = text
        .lines()
        .find(|l| l.trim_start().starts_with("echo "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        echo_line.trim_end().ends_with(&echo_tokens.to_string()),
        "{echo_line}"
    );
    assert!(text.contains(&format!("[1] {sum} tokens")), "{text}");

    // Enabling it again says what its tools add to every turn, from the tools it last listed.
    cli_ok(data, &["server", "disable", "demo"]);
    let on = run_cli(data, &["server", "enable", "demo"], "", &[]);
    assert!(on.status.success());
    let on = String::from_utf8_lossy(&on.stderr).into_owned();
    let n = tools.len();
    assert!(
        on.contains(&format!("  its tools: {n} tools as listed ")),
        "{on}"
    );
    assert!(
        on.contains(&format!(": ~{sum} tokens for loc:llama3.1 ("))
            && on.contains("on every turn while enabled"),
        "{sum}: {on}"
    );
    // And so does approving it again.
    cli_ok(data, &["server", "untrust", "demo"]);
    let again = run_cli(data, &["server", "trust", "demo", "--yes"], "", &[]);
    assert!(again.status.success());
    let again = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(
        again.contains(&format!("  tools      {n} tools as listed "))
            && again.contains(&format!("~{sum} tokens for loc:llama3.1")),
        "{again}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_chat_prints_the_tools_cost_and_warns_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["Hi."])]))
        .await
        .unwrap();
    // A window small enough that the fake server's definitions take more than a quarter.
    switchboard_tests::chat_cli::setup_chat(data, &llm, &["--context-window", "1000"]);
    let o = run_cli(data, &["chat", "--model", "fake", "hello"], "", &[]);
    let stdout = switchboard_tests::chat_cli::ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(stdout.contains("Hi."), "{stdout}");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1, "the warning does not stop the turn");
    // `m1` is no OpenAI model: counted with the cl100k_base stand-in, marked `~`.
    let sent = counted(&reqs[0].body, &Counter::new("ollama", Wire::OpenAi, "m1"));
    assert!(
        stderr.contains(&format!("[tools: ~{sent} tokens for ")),
        "{sent}: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "WARNING: the tool definitions take {sent} of the model's 1000 tokens"
        )),
        "{stderr}"
    );
}

/// A server that is starting (here: it never answers `initialize`) has an empty live catalog
/// that says nothing about its cost: it is priced from the tools it listed on an earlier run,
/// and one with no earlier run stays unknown, not zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_still_starting_is_priced_from_its_last_tools_or_unknown() {
    let (host, tmp) = test_host().await;
    provider(
        &host,
        "oa",
        "openai",
        "http://127.0.0.1:9/v1".into(),
        "gpt-4o",
        128_000,
    )
    .await;
    add_trusted(&host, fake_spec("slow", &["--mode", "never-init"])).await;
    add_trusted(&host, fake_spec("never", &["--mode", "never-init"])).await;
    // What `slow` listed on an earlier run.
    let tool: switchboard_core::mcp::catalog::ToolInfo = serde_json::from_value(json!({
        "name": "echo", "description": "Echo the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
    }))
    .unwrap();
    let store = switchboard_core::store::Store::open(&tmp.path().join("switchboard.sqlite"))
        .await
        .unwrap();
    store
        .save_last_tools(&sid("slow"), std::slice::from_ref(&tool), 1_000)
        .await
        .unwrap();
    let slow = host.start_server(&sid("slow")).await.unwrap();
    let never = host.start_server(&sid("never")).await.unwrap();
    assert!(!matches!(
        slow.status(),
        switchboard_core::supervisor::ServerStatus::Running { .. }
    ));
    assert!(!matches!(
        never.status(),
        switchboard_core::supervisor::ServerStatus::Running { .. }
    ));

    let c = host.catalog_costs(&[]).await.unwrap();
    let get = |name: &str| {
        c.servers
            .iter()
            .find(|s| s.server.as_str() == name)
            .unwrap()
            .clone()
    };
    let slow = get("slow");
    assert!(slow.known && !slow.running, "{slow:?}");
    assert_eq!(slow.last_known_ms, Some(1_000));
    assert_eq!(slow.tools.len(), 1, "{slow:?}");
    let gpt = Counter::new("openai", Wire::OpenAi, "gpt-4o");
    let expected = gpt.text(&wire_json(Wire::OpenAi, &slow.tools[0].llm_name, &tool));
    assert!(expected > 10);
    assert_eq!(slow.tokens, vec![expected]);
    let never = get("never");
    assert!(!never.known && never.tools.is_empty(), "{never:?}");
}
