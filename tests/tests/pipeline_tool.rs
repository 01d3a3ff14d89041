//! A saved pipeline offered to a chat model as one tool (issue 15, point 6): a scripted
//! OpenAI-format model on loopback, the fake MCP server (`calc`, recording every call it
//! receives) over stdio, a real SQLite store. The model sees only the pipelines marked to be
//! offered whose servers run and whose check passes, with the declared inputs as the schema;
//! when it calls one, a person is asked once about the whole pipeline (through the same inbox
//! as every approval), every step runs through the governed seam and the audit log, and the
//! model gets the last step's output after a line per step. A refusal runs nothing and tells
//! the model; a failing step stops the run and tells the model what ran.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::approval::{Answer, Origin, RequestKind};
use switchboard_core::host::{Host, TurnInput};
use switchboard_core::ids::ServerId;
use switchboard_core::pipeline_data::{parse, Format};
use switchboard_core::pipelines::RunStatus;
use switchboard_core::store::ServerTag;
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{self, host_with_recorder, keyless_provider};
use switchboard_tests::*;

/// Offered: says a label, adds 2 to `x`, then adds 10 to that sum (through a mapping).
const CHAIN: &str = r#"
name = "chain"
description = "adds twelve"
offer = true
[[inputs]]
name = "label"
schema = { type = "string" }
description = "said first"
[[inputs]]
name = "x"
schema = { type = "number" }
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = { "$input" = "label" } }
[[steps]]
id = "start"
tool = "calc/add"
args = { a = { "$input" = "x" }, b = 2 }
[[steps]]
id = "more"
tool = "calc/add"
args = { a = { "$from" = "start", pointer = "/sum" }, b = 10 }
"#;

/// Not marked to be offered.
const PRIVATE: &str = r#"
name = "private"
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = "hi" }
"#;

/// Marked, but its server is not configured: never offered.
const GHOST: &str = r#"
name = "ghost"
offer = true
[[steps]]
id = "say"
tool = "ghost/echo"
args = { text = "hi" }
"#;

/// Marked, but its mapping does not fit (`echo` gives no `sum`): never offered.
const BAD_MAPPING: &str = r#"
name = "bad-mapping"
offer = true
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = "hi" }
[[steps]]
id = "sum"
tool = "calc/add"
args = { a = { "$from" = "say", pointer = "/sum" }, b = 1 }
"#;

/// Offered, with a middle step that fails.
const BREAKS: &str = r#"
name = "breaks"
offer = true
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = "before" }
[[steps]]
id = "boom"
tool = "calc/fail"
[[steps]]
id = "after"
tool = "calc/echo"
args = { text = "after" }
"#;

const TOOL: &str = "switchboard_pipeline_chain";

/// A host with `calc` running, tagged trusted (so its read-only tools are covered by a
/// pipeline's approval), and the pipelines above stored.
async fn host_with_pipelines() -> (Host, tempfile::TempDir, PathBuf) {
    let (host, tmp, record) = host_with_recorder("calc").await;
    host.set_server_tags(&ServerId::new("calc").unwrap(), &[ServerTag::Trusted])
        .await
        .unwrap();
    for def in [CHAIN, PRIVATE, GHOST, BAD_MAPPING, BREAKS] {
        host.add_pipeline(&parse(def, Format::Toml).unwrap())
            .await
            .unwrap();
    }
    (host, tmp, record)
}

/// The audit entries for `calc`/`tool`, oldest first: (kind, actor, details).
async fn entries(host: &Host, tool: &str) -> Vec<Audited> {
    audit_trail(host, "calc", tool).await
}

/// A model that calls `tool` with `args`, then says "done".
async fn model_calling(tool: &str, args: Value) -> FakeLlm {
    FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_p",
            tool,
            &[&args.to_string()],
        )]),
        Reply::text(&["done"]),
    ]))
    .await
    .unwrap()
}

/// Sends one message to `llm` in the background; every approval asked meanwhile is answered
/// with `answer`. Returns what was asked.
async fn turn(host: &Host, llm: &FakeLlm, answer: Answer) -> Vec<(RequestKind, String, Value)> {
    let provider = keyless_provider(host, "fake", llm.openai_base()).await;
    let sender = host.clone();
    let run = tokio::spawn(async move {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        sender
            .send_message(scenario::turn(provider, TurnInput::text("run it")), tx)
            .await
    });
    let mut asked = Vec::new();
    while !run.is_finished() {
        let waited = eventually(Duration::from_secs(30), || {
            run.is_finished() || !host.pending_approvals().is_empty()
        })
        .await;
        assert!(waited, "the turn neither ended nor asked");
        for a in host.pending_approvals() {
            assert!(
                matches!(a.origin, Origin::Model { agent: None, .. }),
                "{:?}",
                a.origin
            );
            asked.push((a.kind, a.tool.clone(), a.arguments.clone()));
            host.answer_approval(a.nonce.as_str(), answer.clone())
                .await
                .unwrap();
        }
    }
    run.await.unwrap().unwrap();
    asked
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What the model was sent back for its call: the text of the tool message of its second
/// request.
fn tool_message(llm: &FakeLlm) -> String {
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2, "the model was not called back");
    let messages = reqs[1].body["messages"].as_array().unwrap().clone();
    let m = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message: {messages:?}"));
    m["content"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_runs_an_offered_pipeline_approved_once_as_a_whole() {
    let (host, _tmp, record) = host_with_pipelines().await;
    let llm = model_calling(TOOL, json!({"label": "hello", "x": 30})).await;
    let asked = turn(&host, &llm, Answer::ALLOW).await;

    // Offered: the marked pipelines that can run now, beside the server's tools.
    let first = &llm.requests()[0].body;
    let names = tool_names(first);
    assert!(names.contains(&TOOL.to_owned()), "{names:?}");
    assert!(names.contains(&"switchboard_pipeline_breaks".to_owned()));
    assert!(names.contains(&"calc__echo".to_owned()), "{names:?}");
    for hidden in ["private", "ghost", "bad-mapping"] {
        assert!(
            !names.iter().any(|n| n.contains(hidden)),
            "{hidden} was offered: {names:?}"
        );
    }
    let spec = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == TOOL)
        .unwrap();
    let params = &spec["function"]["parameters"];
    assert_eq!(params["required"], json!(["label", "x"]), "{spec}");
    assert_eq!(params["properties"]["x"]["type"], "number", "{spec}");
    assert_eq!(
        params["properties"]["label"]["description"], "said first",
        "{spec}"
    );

    // Asked once, about the whole pipeline, with every step and what flows where; the
    // read-only steps of the trusted server are covered by that approval.
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (kind, tool, whole) = &asked[0];
    assert_eq!((*kind, tool.as_str()), (RequestKind::Pipeline, "chain"));
    assert_eq!(whole["inputs"], json!({"label": "hello", "x": 30}));
    assert_eq!(whole["steps"].as_array().unwrap().len(), 3, "{whole}");
    assert!(
        whole["flows"]
            .to_string()
            .contains("step 3 \\\"more\\\" calc/add.a <- step 2 \\\"start\\\""),
        "{whole}"
    );

    // Every step ran, with the mapped values.
    assert_eq!(
        recorded_calls(&record),
        [
            ("echo".to_owned(), json!({"text": "hello"})),
            ("add".to_owned(), json!({"a": 30, "b": 2})),
            ("add".to_owned(), json!({"a": 32, "b": 10})),
        ]
    );
    // The model got the summary and the last step's output.
    let back = tool_message(&llm);
    assert!(back.contains("Pipeline chain (version 1"), "{back}");
    assert!(back.contains("3. more (calc/add): ok"), "{back}");
    assert!(
        back.ends_with("The last step's output follows.\n42"),
        "{back}"
    );

    // One run recorded; the pipeline's decision and every step in the audit log.
    let runs = host.pipeline_runs(None).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Succeeded);
    let whole = entries(&host, "chain").await;
    assert!(
        whole.iter().any(|(k, a, _)| k == "decided" && a == "user"),
        "{whole:?}"
    );
    for (tool, n) in [("echo", 1), ("add", 2)] {
        let e = entries(&host, tool).await;
        for kind in ["proposed", "started", "finished"] {
            let seen = e.iter().filter(|(k, _, _)| k == kind).count();
            assert_eq!(seen, n, "{tool} {kind}: {e:?}");
        }
        assert!(
            e.iter()
                .any(|(k, _, d)| k == "decided" && d.contains("approved with the pipeline chain@1")),
            "{tool}: {e:?}"
        );
        assert!(
            e.iter()
                .any(|(k, a, _)| k == "proposed" && a.starts_with("model")),
            "{tool}: {e:?}"
        );
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_pipeline_runs_nothing_and_the_model_is_told() {
    let (host, _tmp, record) = host_with_pipelines().await;
    let llm = model_calling(TOOL, json!({"label": "hello", "x": 30})).await;
    let asked = turn(
        &host,
        &llm,
        Answer::Deny {
            reason: Some("not today".into()),
        },
    )
    .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, RequestKind::Pipeline);
    let back = tool_message(&llm);
    assert!(
        back.contains("The user did not allow the pipeline chain (not today); nothing was run."),
        "{back}"
    );
    assert!(
        recorded_calls(&record).is_empty(),
        "{:?}",
        recorded_calls(&record)
    );
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());
    for tool in ["echo", "add"] {
        let e = entries(&host, tool).await;
        assert!(e.is_empty(), "{tool}: {e:?}");
    }
    let whole = entries(&host, "chain").await;
    assert!(
        whole
            .iter()
            .any(|(k, a, d)| k == "decided" && a == "user" && d.contains("not today")),
        "{whole:?}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_step_stops_the_pipeline_and_the_model_is_told_what_ran() {
    let (host, _tmp, record) = host_with_pipelines().await;
    let llm = model_calling("switchboard_pipeline_breaks", json!({})).await;
    let asked = turn(&host, &llm, Answer::ALLOW).await;
    // The whole pipeline, then `fail` (not read-only: it may write) on its own.
    let tools: Vec<&str> = asked.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(tools, ["breaks", "fail"], "{asked:?}");
    let names: Vec<String> = recorded_calls(&record)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["echo", "fail"]);
    let back = tool_message(&llm);
    assert!(back.contains("The pipeline breaks (version 1"), "{back}");
    assert!(back.contains("stopped"), "{back}");
    assert!(back.contains("1. say (calc/echo): ok"), "{back}");
    assert!(back.contains("2. boom (calc/fail): failed"), "{back}");
    assert!(!back.contains("3. after"), "{back}");
    let runs = host.pipeline_runs(None).await.unwrap();
    assert_eq!(runs[0].status, RunStatus::Failed);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_are_refused_before_anything_is_asked_or_sent() {
    let (host, _tmp, record) = host_with_pipelines().await;
    let llm = model_calling(TOOL, json!({"label": "hello", "x": "thirty"})).await;
    let asked = turn(&host, &llm, Answer::ALLOW).await;
    assert!(asked.is_empty(), "{asked:?}");
    let back = tool_message(&llm);
    assert!(back.contains("The pipeline chain was not run"), "{back}");
    assert!(back.contains("the input \"x\""), "{back}");
    assert!(recorded_calls(&record).is_empty());
    host.shutdown().await;
}

/// An agent's run: the question names the agent, every step is its call in the audit log, a
/// step its profile says to ask about asks after the whole was approved, and a profile that
/// denies a step or leaves it out of scope refuses the pipeline before anything is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn an_agent_runs_a_pipeline_as_itself_within_its_profile() {
    use switchboard_core::agent_data::{
        AgentName, AgentProfile, PolicyTightening, Tighten, ToolScope,
    };
    use switchboard_core::approval::Acting;
    use switchboard_core::host::{agent_refusal, pipeline_in_scope, PipelineAgent};
    use switchboard_core::ids::{ConversationId, ProviderName};

    let (host, _tmp, record) = host_with_pipelines().await;
    let catalogs = host.catalogs().await.unwrap();
    let offered = host.offered_pipelines(&catalogs).await.unwrap();
    let mut names: Vec<&str> = offered.iter().map(|o| o.llm_name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["switchboard_pipeline_breaks", "switchboard_pipeline_chain"]
    );
    let chain = offered.iter().find(|o| o.llm_name == TOOL).unwrap();
    let helper = AgentName::new("helper").unwrap();
    let acting = Acting {
        agent: helper.clone(),
        for_agent: Some(AgentName::new("planner").unwrap()),
    };
    let mut profile = AgentProfile::new(helper, ProviderName::new("oa").unwrap());
    profile.scope = ToolScope {
        servers: vec!["calc".into()],
        tools: vec!["calc/echo".into(), "calc/add".into()],
    };
    profile.policy = vec![PolicyTightening {
        tool: "calc/add".into(),
        action: Tighten::Ask,
    }];
    assert!(pipeline_in_scope(&chain.pipeline, &profile.scope));
    assert_eq!(agent_refusal(&chain.pipeline, &profile), None);

    let conversation = ConversationId::random();
    let runner = host.clone();
    let (o, p, a, c) = (
        chain.clone(),
        profile.clone(),
        acting.clone(),
        conversation.clone(),
    );
    let run = tokio::spawn(async move {
        let agent = PipelineAgent {
            acting: &a,
            profile: &p,
        };
        runner
            .run_offered_pipeline(
                &o,
                json!({"label": "hi", "x": 1}).as_object().unwrap().clone(),
                &c,
                Some(agent),
                tokio_util::sync::CancellationToken::new(),
            )
            .await
    });
    let mut asked = Vec::new();
    while !run.is_finished() {
        let waited = eventually(Duration::from_secs(30), || {
            run.is_finished() || !host.pending_approvals().is_empty()
        })
        .await;
        assert!(waited, "the run neither ended nor asked");
        for q in host.pending_approvals() {
            match &q.origin {
                Origin::Model {
                    conversation: c,
                    agent: Some(who),
                } => {
                    assert_eq!(c, &conversation);
                    assert_eq!(who, &acting);
                }
                other => panic!("the question does not name the agent: {other:?}"),
            }
            asked.push(q.tool.clone());
            host.answer_approval(q.nonce.as_str(), Answer::ALLOW)
                .await
                .unwrap();
        }
    }
    let result = run.await.unwrap().unwrap();
    // The whole, then each `add` (the profile asks about it); `echo` is covered.
    assert_eq!(asked, ["chain", "add", "add"]);
    assert_eq!(result.structured_content, Some(json!({"sum": 13})));
    assert_eq!(recorded_calls(&record).len(), 3);
    for tool in ["echo", "add"] {
        let e = entries(&host, tool).await;
        assert!(
            e.iter()
                .any(|(k, a, _)| k == "proposed" && a.contains("helper")),
            "{tool}: {e:?}"
        );
    }

    // Denied, or out of scope: refused before anything is asked or sent.
    let before = recorded_calls(&record).len();
    profile.policy[0].action = Tighten::Deny;
    let denied = host
        .run_offered_pipeline(
            chain,
            json!({"label": "hi", "x": 1}).as_object().unwrap().clone(),
            &conversation,
            Some(PipelineAgent {
                acting: &acting,
                profile: &profile,
            }),
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(denied.contains("does not allow calc/add"), "{denied}");
    profile.policy.clear();
    profile.scope.tools = vec!["calc/echo".into()];
    assert!(!pipeline_in_scope(&chain.pipeline, &profile.scope));
    let outside = host
        .run_offered_pipeline(
            chain,
            json!({"label": "hi", "x": 1}).as_object().unwrap().clone(),
            &conversation,
            Some(PipelineAgent {
                acting: &acting,
                profile: &profile,
            }),
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(outside.contains("outside its scope"), "{outside}");
    assert!(host.pending_approvals().is_empty());
    assert_eq!(recorded_calls(&record).len(), before);

    // Through the agent's own tools: offered (and runnable as a local tool) only in scope.
    {
        use switchboard_core::chat::ToolRunner;
        use switchboard_core::host::{AgentTools, HostTools, Lineage};
        let tools_of = |p: AgentProfile| {
            let host = host.clone();
            let conversation = conversation.clone();
            async move {
                let inner = HostTools::load(&host, &conversation).await.unwrap();
                AgentTools::new(&host, inner, p, Lineage::root(conversation))
            }
        };
        let narrow = tools_of(profile.clone()).await;
        assert!(!narrow.specs().iter().any(|s| s.name == TOOL));
        assert!(!narrow.is_local(TOOL));
        profile.scope.tools.push("calc/add".into());
        let wide = tools_of(profile.clone()).await;
        assert!(wide.specs().iter().any(|s| s.name == TOOL));
        assert!(wide.is_local(TOOL));
    }

    // With its server stopped (its tools only last-known), no pipeline is offered.
    host.stop_server(&ServerId::new("calc").unwrap())
        .await
        .unwrap();
    let catalogs = host.catalogs().await.unwrap();
    assert!(catalogs.iter().any(|c| c.last_known_ms.is_some()));
    assert!(host.offered_pipelines(&catalogs).await.unwrap().is_empty());
    host.shutdown().await;
}

/// `pipeline add --offer` marks a definition to be offered (a new version when the stored one
/// was not), and `pipeline list` says which are.
#[test]
fn the_cli_marks_a_pipeline_to_be_offered() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("private.toml");
    std::fs::write(&file, PRIVATE).unwrap();
    cli_ok(&data, &["pipeline", "add", file.to_str().unwrap()]);
    let list = cli_ok(&data, &["pipeline", "list"]);
    assert!(list.contains("private v1 (1 step)"), "{list}");
    assert!(!list.contains("offered"), "{list}");
    let added = cli_ok(
        &data,
        &["pipeline", "add", "--offer", file.to_str().unwrap()],
    );
    assert!(added.contains("added private version 2"), "{added}");
    let list = cli_ok(&data, &["pipeline", "list"]);
    assert!(
        list.contains("private v2 (1 step, offered to models)"),
        "{list}"
    );
    let json: Value =
        serde_json::from_str(&cli_ok(&data, &["pipeline", "list", "--json"])).unwrap();
    assert_eq!(json[0]["pipeline"]["offer"], true, "{json}");
}
