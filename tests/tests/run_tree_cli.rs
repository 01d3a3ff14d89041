//! The run tree in the CLI (issue 15, points 4 and 5): a supervisor on an OpenAI model delegates
//! to an agent on an Anthropic model and to one on an OpenAI-compatible model of unknown price
//! that spends its budget; `switchboard history show` prints the conversation's run nested with
//! statuses and the run's total, and `switchboard agent runs [RUN]` prints the total and each
//! agent's cost. Every number expected is derived from the usage the scripted model servers
//! reported and the list price table, so a tree that drops a node, misattributes a model call or
//! sums wrongly fails here.
//!
//! One cost per conversation (point 5): the conversation's tokens line in `history show`
//! counts its stored answers plus what delegated agents spent (their calls are stored only in
//! the run tree), never an agent's answers twice; for a conversation only agents answered, it
//! agrees with the sum of its runs' totals.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::Value;
use switchboard_core::agent_data::{AgentName, AgentProfile, Budget};
use switchboard_core::chat::TurnEnd;
use switchboard_core::host::{Host, Lineage, SendRequest, TurnInput, DELEGATE_TOOL};
use switchboard_core::llm::limits::price;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::turn;
use switchboard_tests::*;
use tokio_util::sync::CancellationToken;

/// A provider `pname` of `kind` at `base`, and agent `agent` on `model` there.
async fn agent_on(
    host: &Host,
    (pname, kind, base): (&str, &str, String),
    agent: &str,
    model: &str,
    delegates: Option<Vec<AgentName>>,
    budget: Budget,
) {
    let provider = provider_with_key(host, pname, kind, base).await;
    let mut p = AgentProfile::new(AgentName::new(agent).unwrap(), provider);
    p.description = format!("the {agent}");
    p.model = Some(model.into());
    p.delegates = delegates;
    p.budget = budget;
    host.add_agent(p).await.unwrap();
}

fn delegate(id: &str, agent: &str, task: &str) -> Reply {
    let args = serde_json::json!({"agent": agent, "task": task}).to_string();
    Reply::calls(vec![ScriptedCall::new(id, DELEGATE_TOOL, &[&args])])
}

/// `lines` from the one starting with `first` on, or a failure showing `text`.
fn from<'a>(text: &'a str, first: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(first))
        .unwrap_or_else(|| panic!("no line starting {first:?} in:\n{text}"));
    lines[at..].to_vec()
}

fn ok_stdout(o: &std::process::Output, what: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{what}: {out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn history_show_and_agent_runs_print_the_tree_its_total_and_each_agents_cost() {
    // Usage each scripted model reports, per reply: (input, output).
    let planner_usage = [(10_000, 1_000), (12_000, 500), (14_000, 800)];
    let summariser_usage = (4_000, 600);
    let coder_usage = (300, 40);
    let sup = FakeLlm::spawn(Scenario::new([
        delegate("call_1", "summariser", "Summarise the findings.").with_usage(
            planner_usage[0].0,
            planner_usage[0].1,
            0,
        ),
        delegate("call_2", "coder", "Write two notes.\nThen stop.").with_usage(
            planner_usage[1].0,
            planner_usage[1].1,
            0,
        ),
        Reply::text(&["Summary done; the coder ran out."]).with_usage(
            planner_usage[2].0,
            planner_usage[2].1,
            0,
        ),
    ]))
    .await
    .unwrap();
    let summariser = FakeLlm::spawn(Scenario::new([Reply::text(&["Three points."]).with_usage(
        summariser_usage.0,
        summariser_usage.1,
        0,
    )]))
    .await
    .unwrap();
    // Two notes where its budget allows one call.
    let notes = ["one", "two"]
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let args = serde_json::json!({ "text": text }).to_string();
            ScriptedCall::new(&format!("c_{i}"), "switchboard_note_add", &[&args])
        })
        .collect();
    let coder = FakeLlm::spawn(Scenario::new([
        Reply::calls(notes).with_usage(coder_usage.0, coder_usage.1, 0),
        Reply::text(&["never asked for"]),
    ]))
    .await
    .unwrap();
    let (host, tmp) = test_host().await;
    let none = Budget::default();
    let oa = ("oa", "openai", sup.openai_base());
    agent_on(&host, oa, "planner", "gpt-4o", None, none.clone()).await;
    let an = ("an", "anthropic", summariser.anthropic_base());
    agent_on(
        &host,
        an,
        "summariser",
        "claude-haiku-4-5",
        Some(vec![]),
        none,
    )
    .await;
    let one_call = Budget {
        tool_calls: Some(1),
        ..Budget::default()
    };
    let local = ("local", "custom", coder.openai_base());
    agent_on(
        &host,
        local,
        "coder",
        "my-own-model",
        Some(vec![]),
        one_call,
    )
    .await;
    assert!(
        price("custom", "my-own-model").is_none(),
        "the coder's price is unknown"
    );

    let conversation = host.create_conversation("Report").await.unwrap();
    let quiet = host.create_conversation("No agents").await.unwrap();
    let lineage = Lineage::root(conversation.id.clone());
    let out = host
        .run_agent_task(
            lineage.clone(),
            AgentName::new("planner").unwrap(),
            "Plan the report.".into(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    let tree = host.agent_run_tree(&lineage.run).await.unwrap();
    assert_eq!(tree.len(), 3, "{tree:?}");
    let coder_calls = tree[2].tool_calls;

    // What each agent spent, from what its model reported and its list price.
    let p_in: u64 = planner_usage.iter().map(|u| u.0).sum();
    let p_out: u64 = planner_usage.iter().map(|u| u.1).sum();
    let p_cost = price("openai", "gpt-4o").unwrap().cost(p_in, p_out);
    let s_cost = price("anthropic", "claude-haiku-4-5")
        .unwrap()
        .cost(summariser_usage.0, summariser_usage.1);
    let planner_spent = format!("2 calls, {p_in}+{p_out} tokens, ${p_cost:.4}");
    let summariser_spent = format!(
        "0 calls, {}+{} tokens, ${s_cost:.4}",
        summariser_usage.0, summariser_usage.1
    );
    let coder_tokens = format!("{}+{} tokens", coder_usage.0, coder_usage.1);
    let total = format!(
        "total: 3 agents, 3 nodes, {} calls, {}+{} tokens, at least ${:.4}",
        2 + coder_calls,
        p_in + summariser_usage.0 + coder_usage.0,
        p_out + summariser_usage.1 + coder_usage.1,
        p_cost + s_cost
    );

    // `history show`: the messages, then the run nested under the conversation, then its total.
    let data = tmp.path();
    let id = conversation.id.to_string();
    let shown = ok_stdout(
        &run_cli(data, &["history", "show", &id], "", &[]),
        "history show",
    );
    let lines = from(&shown, "agent runs (1 run):");
    assert_eq!(
        lines[1],
        format!("  run {}", lineage.run.as_str()),
        "{shown}"
    );
    assert!(
        lines[2].starts_with(&format!("    planner [oa/gpt-4o] done: {planner_spent}, ")),
        "{shown}"
    );
    assert!(lines[2].ends_with(": Plan the report."), "{shown}");
    assert!(
        lines[3].starts_with(&format!(
            "      summariser [an/claude-haiku-4-5] done: {summariser_spent}, "
        )),
        "{shown}"
    );
    assert!(lines[3].ends_with(": Summarise the findings."), "{shown}");
    assert!(
        lines[4].starts_with("      coder [local/my-own-model] over_budget ("),
        "{shown}"
    );
    assert!(lines[4].contains("1 tool calls"), "{shown}");
    assert!(
        lines[4].contains(&format!(" calls, {coder_tokens}, $?, ")),
        "{shown}"
    );
    assert!(
        lines[4].ends_with(": Write two notes.…"),
        "the task on one line: {shown}"
    );
    assert_eq!(lines[5], format!("    {total}"), "{shown}");
    assert_eq!(lines.len(), 6, "{shown}");
    // No message was stored (the planner ran as a task): the conversation's tokens are its
    // run's, and its dollars the known part of them.
    let all_in = p_in + summariser_usage.0 + coder_usage.0;
    let all_out = p_out + summariser_usage.1 + coder_usage.1;
    assert_eq!(
        from(&shown, "tokens: ")[0],
        format!(
            "tokens: {all_in} in, {all_out} out; about ${:.2} at list prices plus models of \
             unknown price (answers plus {all_in}+{all_out} tokens agents spent on tasks)",
            p_cost + s_cost
        ),
        "{shown}"
    );
    // A conversation no agent worked for prints no run section.
    let quiet_shown = ok_stdout(
        &run_cli(data, &["history", "show", &quiet.id.to_string()], "", &[]),
        "history show (no runs)",
    );
    assert!(!quiet_shown.contains("agent runs"), "{quiet_shown}");

    // `agent runs RUN`: the same tree, its total, and what each agent spent.
    let printed = ok_stdout(
        &run_cli(data, &["agent", "runs", lineage.run.as_str()], "", &[]),
        "agent runs RUN",
    );
    let lines: Vec<&str> = printed.lines().collect();
    assert!(
        lines[0].starts_with("planner [oa/gpt-4o] done"),
        "{printed}"
    );
    assert!(lines[1].starts_with("  summariser [an/"), "{printed}");
    assert!(lines[2].starts_with("  coder [local/"), "{printed}");
    assert_eq!(lines[3], total, "{printed}");
    assert_eq!(
        &lines[4..],
        [
            "per agent:".to_owned(),
            format!(
                "  coder: 1 node, {} calls, {coder_tokens}, cost unknown",
                coder_calls
            ),
            format!("  planner: 1 node, {planner_spent}"),
            format!("  summariser: 1 node, {summariser_spent}"),
        ],
        "{printed}"
    );
    // The same as JSON.
    let json: Value = serde_json::from_str(&ok_stdout(
        &run_cli(
            data,
            &["--json", "agent", "runs", lineage.run.as_str()],
            "",
            &[],
        ),
        "agent runs RUN --json",
    ))
    .unwrap();
    assert_eq!(json["nodes"].as_array().map(Vec::len), Some(3), "{json}");
    assert_eq!(json["total"]["cost_partial"], Value::Bool(true), "{json}");
    assert_eq!(
        json["total"]["usage_input"],
        Value::from(p_in + 4_300),
        "{json}"
    );
    let per_agent = json["per_agent"].as_array().unwrap();
    assert_eq!(per_agent[1]["agent"], "planner", "{json}");
    let planner_cost = per_agent[1]["cost_usd"].as_f64().unwrap();
    assert!((planner_cost - p_cost).abs() < 1e-12, "{json}");

    // `agent runs`: each run with what it cost in all.
    let listed = ok_stdout(&run_cli(data, &["agent", "runs"], "", &[]), "agent runs");
    let row: Vec<&str> = listed
        .lines()
        .find(|l| l.starts_with(lineage.run.as_str()))
        .unwrap_or_else(|| panic!("{listed}"))
        .split('\t')
        .collect();
    assert_eq!(
        row[1..],
        [
            "planner",
            "done",
            &format!("at least ${:.4}", p_cost + s_cost),
            "Plan the report."
        ],
        "{listed}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_conversations_cost_counts_its_answers_and_its_delegated_agents_once() {
    // The supervisor answers in the conversation (its answers are stored messages); the worker
    // it delegates to is a task node whose calls are stored only in the run tree.
    let sup_usage = [(2_000_u64, 200_u64), (2_600, 120)];
    let work_usage = (7_000_u64, 900_u64);
    let sup = FakeLlm::spawn(Scenario::new([
        delegate("call_1", "worker", "Find the figures.").with_usage(
            sup_usage[0].0,
            sup_usage[0].1,
            0,
        ),
        Reply::text(&["The figures are in."]).with_usage(sup_usage[1].0, sup_usage[1].1, 0),
    ]))
    .await
    .unwrap();
    let work = FakeLlm::spawn(Scenario::new([
        Reply::text(&["Figures: 1, 2, 3."]).with_usage(work_usage.0, work_usage.1, 0)
    ]))
    .await
    .unwrap();
    let (host, tmp) = test_host().await;
    let none = Budget::default();
    let oa = ("oa", "openai", sup.openai_base());
    agent_on(&host, oa, "planner", "gpt-4o", None, none.clone()).await;
    let an = ("an", "anthropic", work.anthropic_base());
    agent_on(&host, an, "worker", "claude-haiku-4-5", Some(vec![]), none).await;

    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .send_message(
            SendRequest {
                agent: Some(AgentName::new("planner").unwrap()),
                ..turn(
                    switchboard_core::ids::ProviderName::new("oa").unwrap(),
                    TurnInput::text("Get me the figures."),
                )
            },
            tx,
        )
        .await
        .unwrap();
    assert!(matches!(out.end, TurnEnd::Done(_)), "{out:?}");
    assert_eq!(work.requests().len(), 1, "the worker ran");

    let s_in: u64 = sup_usage.iter().map(|u| u.0).sum();
    let s_out: u64 = sup_usage.iter().map(|u| u.1).sum();
    let s_cost = price("openai", "gpt-4o").unwrap().cost(s_in, s_out);
    let w_cost = price("anthropic", "claude-haiku-4-5")
        .unwrap()
        .cost(work_usage.0, work_usage.1);
    let usage = host.conversation_usage(&out.conversation).await.unwrap();
    assert_eq!(
        (usage.total.input_tokens, usage.total.output_tokens),
        (s_in + work_usage.0, s_out + work_usage.1),
        "answers plus the delegated worker, the supervisor once: {usage:?}"
    );
    assert_eq!(
        (usage.tasks.input_tokens, usage.tasks.output_tokens),
        work_usage,
        "{usage:?}"
    );
    assert!(usage.cost_complete, "{usage:?}");
    assert!(
        (usage.cost_usd - (s_cost + w_cost)).abs() < 1e-12,
        "{usage:?}"
    );
    let worker_row = usage
        .by_model
        .iter()
        .find(|m| m.model.as_deref() == Some("claude-haiku-4-5"))
        .unwrap_or_else(|| panic!("{usage:?}"));
    assert_eq!(worker_row.provider.as_deref(), Some("an"));

    // `history show`: the conversation's line and its run's total say the same tokens.
    let id = out.conversation.to_string();
    let shown = ok_stdout(
        &run_cli(tmp.path(), &["history", "show", &id], "", &[]),
        "history show",
    );
    let tokens = from(&shown, "tokens: ");
    assert_eq!(
        tokens[0],
        format!(
            "tokens: {} in, {} out; about ${:.2} at list prices (answers plus {}+{} tokens \
             agents spent on tasks)",
            s_in + work_usage.0,
            s_out + work_usage.1,
            s_cost + w_cost,
            work_usage.0,
            work_usage.1
        ),
        "{shown}"
    );
    let runs = from(&shown, "agent runs (1 run):");
    assert!(
        runs[2].starts_with("    planner [oa/gpt-4o] done: 1 call, "),
        "{shown}"
    );
    assert!(
        runs[3].starts_with("      worker [an/claude-haiku-4-5] done: 0 calls, "),
        "{shown}"
    );
    assert_eq!(
        runs[4],
        format!(
            "    total: 2 agents, 2 nodes, 1 call, {}+{} tokens, ${:.4}",
            s_in + work_usage.0,
            s_out + work_usage.1,
            s_cost + w_cost
        ),
        "{shown}"
    );
    host.shutdown().await;
}
