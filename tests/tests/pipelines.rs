//! Tool pipelines (issue 15, point 6) over real servers on real transports: the reference
//! `server-everything` (whose `get-structured-content` declares an `outputSchema`) feeds the
//! fake server's `add` and `echo` through mappings. A pipeline runs end to end and the second
//! server receives the mapped values (its `--record` file); a step that the policy asks about
//! waits for a person, who sees the mapped arguments; a bad mapping is refused before any step
//! runs (neither server saw a call); a failing step stops the run; a run is replayed with its
//! inputs; every step is in the audit log.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::{Answer, Effect, Origin};
use switchboard_core::host::{Host, PipelineError};
use switchboard_core::pipeline_data::{parse, Format, PipelineName};
use switchboard_core::pipelines::RunStatus;
use switchboard_tests::scenario::{host_with_recorder, AppData};
use switchboard_tests::*;

/// A host with `everything` (the reference server) and `calc` (the fake server, recording
/// what it receives) running. `None` when server-everything is not installed.
async fn two_servers() -> Option<(Host, tempfile::TempDir, PathBuf)> {
    let dir = everything_dir()?;
    let (host, tmp) = test_host().await;
    let index = dir.join("dist/index.js");
    start_trusted(
        &host,
        stdio_spec("everything", &node(), &[index.to_str().unwrap(), "stdio"]),
    )
    .await;
    let record = tmp.path().join("calc-received.jsonl");
    start_trusted(
        &host,
        fake_spec("calc", &["--record", record.to_str().unwrap()]),
    )
    .await;
    Some((host, tmp, record))
}

/// The audit kinds recorded for `server`/`tool`, oldest first.
async fn audited(host: &Host, server: &str, tool: &str) -> Vec<String> {
    audit_trail(host, server, tool)
        .await
        .into_iter()
        .map(|(kind, _, _)| kind)
        .collect()
}

/// What one question asked: the tool, its arguments, and the tools the fake server had
/// received calls for when it was asked.
type Asked = (String, Value, Vec<String>);

/// Answers yes to every question until `run` ends; returns its result and what was asked.
async fn answering<T>(
    host: &Host,
    record: &Path,
    run: tokio::task::JoinHandle<T>,
) -> (T, Vec<Asked>) {
    let mut asked_about = Vec::new();
    while !run.is_finished() {
        let waited = eventually(Duration::from_secs(30), || {
            run.is_finished() || !host.pending_approvals().is_empty()
        })
        .await;
        assert!(waited, "the run neither ended nor asked");
        for asked in host.pending_approvals() {
            let seen = recorded_calls(record).into_iter().map(|(n, _)| n).collect();
            asked_about.push((asked.tool.clone(), asked.arguments.clone(), seen));
            host.answer_approval(asked.nonce.as_str(), Answer::ALLOW)
                .await
                .unwrap();
        }
    }
    (run.await.unwrap(), asked_about)
}

fn inputs(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

const WEATHER_SUM: &str = r#"
name = "weather-sum"
description = "the weather of a city, summed and said"

[[inputs]]
name = "city"
schema = { type = "string" }

[[steps]]
id = "weather"
tool = "everything/get-structured-content"
args = { location = { "$input" = "city" } }

[[steps]]
id = "sum"
tool = "calc/add"
args = { a = { "$from" = "weather", pointer = "/temperature" }, b = { "$from" = "weather", pointer = "/humidity" } }

[[steps]]
id = "say"
tool = "calc/echo"
args = { text = { "$from" = "weather", pointer = "/conditions" } }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_runs_end_to_end_asks_where_the_policy_asks_and_replays() {
    let Some((host, _tmp, record)) = two_servers().await else {
        return;
    };
    let p = parse(WEATHER_SUM, Format::Toml).unwrap();
    let (stored, added) = host.add_pipeline(&p).await.unwrap();
    assert_eq!((stored.pipeline.version, added), (1, true));
    // The same definition again is the same version; a different one is the next.
    assert_eq!(host.add_pipeline(&p).await.unwrap().0.pipeline.version, 1);
    let mut changed = p.clone();
    changed.description = "changed".into();
    let (v2, added) = host.add_pipeline(&changed).await.unwrap();
    assert_eq!((v2.pipeline.version, added), (2, true));
    let name = PipelineName::new("weather-sum").unwrap();

    // What flows where, checked against the live catalogs.
    let plan = host.check_pipeline(&p).await.unwrap().unwrap();
    let lines = plan.lines();
    assert!(
        lines.contains(&"step 2 \"sum\" calc/add.a <- step 1 \"weather\" (everything/get-structured-content) /temperature".to_owned()),
        "{lines:?}"
    );

    // The person's policy asks about `add`: the step waits for an answer, and the question
    // shows the values that flowed into it.
    host.put_policy_rule(user_rule("ask-add", Effect::Ask, "calc", "add"))
        .await
        .unwrap();
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_pipeline(
                &name,
                Some(1),
                inputs(json!({"city": "Chicago"})),
                Origin::Manual,
                None,
            )
            .await
    });
    // With no rule, a person's own tool calls ask: every question is answered, noting what
    // was asked and what the second server had received by then.
    let (outcome, asked_about) = answering(&host, &record, run).await;
    let add = asked_about
        .iter()
        .find(|(t, _, _)| t == "add")
        .unwrap_or_else(|| panic!("the add step did not ask: {asked_about:?}"));
    // The question shows the values that flowed into it, and add had not run before it.
    assert_eq!(add.1, json!({"a": 36, "b": 82}));
    assert!(!add.2.contains(&"add".to_owned()), "{asked_about:?}");
    let outcome = outcome.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.steps.len(), 3);
    assert_eq!(
        outcome.steps[1].result.as_ref().unwrap()["structuredContent"],
        json!({"sum": 118})
    );
    // The second server received exactly the mapped values.
    assert_eq!(
        recorded_calls(&record),
        [
            ("add".to_owned(), json!({"a": 36, "b": 82})),
            ("echo".to_owned(), json!({"text": "Light rain / drizzle"})),
        ]
    );
    // Every step is in the audit log, as proposed, decided, started and finished.
    for (server, tool) in [
        ("everything", "get-structured-content"),
        ("calc", "add"),
        ("calc", "echo"),
    ] {
        let kinds = audited(&host, server, tool).await;
        for kind in ["proposed", "decided", "started", "finished"] {
            assert!(
                kinds.iter().any(|k| k == kind),
                "{server}/{tool}: {kinds:?}"
            );
        }
    }

    // A replay runs the same version with the same inputs (add is allowed always now).
    host.put_policy_rule(user_rule("ask-add", Effect::Allow, "calc", "add"))
        .await
        .unwrap();
    let replayer = host.clone();
    let id = outcome.run.id.clone();
    let replay = tokio::spawn(async move {
        replayer
            .replay_pipeline_run(&id, Origin::Manual, None)
            .await
    });
    let (again, asked_again) = answering(&host, &record, replay).await;
    let again = again.unwrap();
    assert!(
        !asked_again.iter().any(|(t, _, _)| t == "add"),
        "{asked_again:?}"
    );
    assert_eq!(again.run.status, RunStatus::Succeeded, "{again:?}");
    assert_eq!(
        again.run.replay_of.as_deref(),
        Some(outcome.run.id.as_str())
    );
    assert_eq!(
        (again.run.version, &again.run.inputs),
        (1, &json!({"city": "Chicago"}))
    );
    assert_ne!(again.run.id, outcome.run.id);
    let received = recorded_calls(&record);
    assert_eq!(received.len(), 4, "{received:?}");
    assert_eq!(received[2], received[0]);
    let runs = host.pipeline_runs(None).await.unwrap();
    assert_eq!(runs.len(), 2);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_mapping_is_refused_before_any_step_runs() {
    let Some((host, _tmp, record)) = two_servers().await else {
        return;
    };
    allow_every_call(&host).await;
    // Step 2 maps a number into a string argument, step 3 points at nothing, step 4 maps from a
    // tool without an outputSchema.
    let bad = parse(
        &json!({
            "name": "bad",
            "steps": [
                {"id": "sum", "tool": "calc/add", "args": {"a": 1, "b": 2}},
                {"id": "say", "tool": "calc/echo", "args": {"text": {"$from": "sum", "pointer": "/sum"}}},
                {"id": "weather", "tool": "everything/get-structured-content",
                 "args": {"location": {"$from": "sum", "pointer": "/total"}}},
                {"id": "echo", "tool": "everything/echo", "args": {"message": "hi"}},
                {"id": "again", "tool": "calc/echo", "args": {"text": {"$from": "echo", "pointer": "/content"}}},
            ]
        })
        .to_string(),
        Format::Json,
    )
    .unwrap();
    host.add_pipeline(&bad).await.unwrap();
    let err = host
        .run_pipeline(
            &PipelineName::new("bad").unwrap(),
            None,
            Map::new(),
            Origin::Manual,
            None,
        )
        .await
        .unwrap_err();
    let PipelineError::Mapping(errors) = &err else {
        panic!("not refused as a mapping: {err}");
    };
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(
        text[0].starts_with("step 2 (\"say\"), argument \"text\""),
        "{text:?}"
    );
    assert!(
        text[0].contains("would get number but calc/echo wants string"),
        "{text:?}"
    );
    assert!(text[1].contains("\"/total\" does not resolve"), "{text:?}");
    assert!(text[2].contains("declares no outputSchema"), "{text:?}");
    // Nothing ran: neither server saw a call, nothing was audited or recorded as a run.
    assert!(recorded_calls(&record).is_empty());
    assert!(audited(&host, "calc", "add").await.is_empty());
    assert!(audited(&host, "everything", "get-structured-content")
        .await
        .is_empty());
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());

    // Inputs are checked before anything runs too.
    let p = parse(WEATHER_SUM, Format::Toml).unwrap();
    host.add_pipeline(&p).await.unwrap();
    let name = PipelineName::new("weather-sum").unwrap();
    for given in [
        json!({}),
        json!({"city": 3}),
        json!({"city": "Chicago", "x": 1}),
    ] {
        let err = host
            .run_pipeline(&name, None, inputs(given.clone()), Origin::Manual, None)
            .await
            .unwrap_err();
        assert!(matches!(err, PipelineError::Inputs(_)), "{given}: {err}");
    }
    assert!(recorded_calls(&record).is_empty());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_step_stops_the_run() {
    let Some((host, _tmp, record)) = two_servers().await else {
        return;
    };
    allow_every_call(&host).await;
    let p = parse(
        &json!({
            "name": "fails",
            "steps": [
                {"id": "one", "tool": "calc/echo", "args": {"text": "first"}},
                {"id": "boom", "tool": "calc/fail"},
                {"id": "never", "tool": "calc/echo", "args": {"text": "never"}},
            ]
        })
        .to_string(),
        Format::Json,
    )
    .unwrap();
    host.add_pipeline(&p).await.unwrap();
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_pipeline(
                &PipelineName::new("fails").unwrap(),
                None,
                Map::new(),
                Origin::Manual,
                None,
            )
            .await
    });
    // Only the pipeline itself is asked about: every call is allowed by a rule.
    let (outcome, asked) = answering(&host, &record, run).await;
    let outcome = outcome.unwrap();
    let asked: Vec<&str> = asked.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(asked, ["fails"]);
    assert_eq!(outcome.run.status, RunStatus::Failed);
    assert!(
        outcome
            .run
            .error
            .as_deref()
            .unwrap()
            .contains("step 2 (\"boom\""),
        "{outcome:?}"
    );
    assert_eq!(outcome.steps.len(), 2);
    assert_eq!(outcome.steps[1].status, RunStatus::Failed);
    let names: Vec<String> = recorded_calls(&record)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["echo", "fail"]);
    host.shutdown().await;
}

/// `switchboard pipeline add|show|run|runs|replay` on the fake server: the steps go through
/// the policy (without a terminal or `--yes` the first step is refused and nothing is sent),
/// the JSON output carries every step, and a bad mapping fails before anything is sent.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
fn the_cli_adds_shows_runs_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let record = dir.path().join("calc-received.jsonl");
    AppData::on(&data).approved_fake("calc", &["--record", record.to_str().unwrap()]);
    let file = dir.path().join("twice.toml");
    std::fs::write(
        &file,
        r#"
name = "twice"
[[inputs]]
name = "x"
schema = { type = "number" }
[[steps]]
id = "first"
tool = "calc/add"
args = { a = { "$input" = "x" }, b = 2 }
[[steps]]
id = "again"
tool = "calc/add"
args = { a = { "$from" = "first", pointer = "/sum" }, b = 10 }
"#,
    )
    .unwrap();
    let added = cli_ok(&data, &["pipeline", "add", file.to_str().unwrap()]);
    assert!(added.contains("added twice version 1"), "{added}");
    let shown = cli_ok(&data, &["pipeline", "show", "twice"]);
    assert!(
        shown.contains("step 2 \"again\" calc/add.a <- step 1 \"first\" (calc/add) /sum"),
        "{shown}"
    );

    // No terminal and no --yes: the question about the pipeline as a whole is refused.
    let o = run_cli(
        &data,
        &["pipeline", "run", "twice", "--input", "x=5"],
        "",
        &[],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the user said no"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        recorded_calls(&record).is_empty(),
        "{:?}",
        recorded_calls(&record)
    );
    assert_eq!(
        serde_json::from_str::<Value>(&cli_ok(&data, &["pipeline", "runs", "--json"])).unwrap(),
        json!([])
    );

    let o = run_cli(
        &data,
        &[
            "pipeline", "run", "twice", "--input", "x=5", "--yes", "--json",
        ],
        "",
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The plan, as approved as a whole, is shown before the run.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("run twice v1:")
            && stderr.contains("step 1 \"first\" calc/add.a <- input x"),
        "{stderr}"
    );
    let outcome: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(outcome["run"]["status"], "succeeded");
    assert_eq!(
        outcome["steps"][1]["result"]["structuredContent"],
        json!({"sum": 17})
    );
    assert_eq!(recorded_calls(&record)[1].1, json!({"a": 7, "b": 10}));

    let runs: Value =
        serde_json::from_str(&cli_ok(&data, &["pipeline", "runs", "twice", "--json"])).unwrap();
    let ok = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "succeeded")
        .unwrap();
    let id = ok["id"].as_str().unwrap();
    let again: Value = serde_json::from_str(&cli_ok(
        &data,
        &["pipeline", "replay", id, "--yes", "--json"],
    ))
    .unwrap();
    assert_eq!(again["run"]["replay_of"], id);
    assert_eq!(again["run"]["inputs"], json!({"x": 5}));
    assert_eq!(recorded_calls(&record).len(), 4);

    // A mapping from a step that does not exist: refused before anything is sent.
    std::fs::write(
        &file,
        r#"
name = "broken"
[[steps]]
id = "only"
tool = "calc/add"
args = { a = { "$from" = "ghost", pointer = "/sum" }, b = 1 }
"#,
    )
    .unwrap();
    cli_ok(&data, &["pipeline", "add", file.to_str().unwrap()]);
    let o = run_cli(&data, &["pipeline", "run", "broken", "--yes"], "", &[]);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("nothing was called") && stderr.contains("no such step"),
        "{stderr}"
    );
    assert_eq!(recorded_calls(&record).len(), 4);
}

/// A host with only `calc` (the fake server, trusted, recording what it receives).
async fn calc_only() -> (Host, tempfile::TempDir, PathBuf) {
    let (host, tmp, record) = host_with_recorder("calc").await;
    (host, tmp, record)
}

/// Echo (read-only), sleep (no readOnlyHint: it may write), add (read-only, but a rule asks).
const MIXED: &str = r#"
name = "mixed"
[[inputs]]
name = "word"
schema = { type = "string" }
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = { "$input" = "word" } }
[[steps]]
id = "nap"
tool = "calc/sleep"
args = { ms = 1 }
[[steps]]
id = "sum"
tool = "calc/add"
args = { a = 1, b = 2 }
"#;

/// Runs `mixed` with every question answered yes; returns what was asked.
async fn run_mixed(host: &Host, record: &Path) -> Vec<Asked> {
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_pipeline(
                &PipelineName::new("mixed").unwrap(),
                None,
                inputs(json!({"word": "hello"})),
                Origin::Manual,
                None,
            )
            .await
    });
    let (outcome, asked) = answering(host, record, run).await;
    let outcome = outcome.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    asked
}

/// The pipeline is asked about once as a whole, before anything is sent, with every step and
/// what flows where; then a read-only step is not asked about again, while a step that may
/// write and a step a rule asks about still ask. The audit log has the pipeline's decision
/// and every step, the read-only one allowed by the pipeline's approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_is_approved_as_a_whole_and_only_what_writes_asks_again() {
    let (host, _tmp, record) = calc_only().await;
    let p = parse(MIXED, Format::Toml).unwrap();
    host.add_pipeline(&p).await.unwrap();
    host.put_policy_rule(user_rule("ask-add", Effect::Ask, "calc", "add"))
        .await
        .unwrap();
    let plan = host.check_pipeline(&p).await.unwrap().unwrap();
    // A server the person did not tag trusted: its read-only claims relax nothing (TD-01),
    // so every step still asks after the pipeline's approval.
    let asked = run_mixed(&host, &record).await;
    let tools: Vec<&str> = asked.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(tools, ["mixed", "echo", "sleep", "add"], "{asked:?}");
    let before = recorded_calls(&record).len();
    assert_eq!(before, 3);
    // Tagged trusted: the read-only echo is covered by the pipeline's approval.
    host.set_server_tags(
        &switchboard_core::ids::ServerId::new("calc").unwrap(),
        &[switchboard_core::store::ServerTag::Trusted],
    )
    .await
    .unwrap();
    let asked = run_mixed(&host, &record).await;
    let tools: Vec<&str> = asked.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(tools, ["mixed", "sleep", "add"], "{asked:?}");
    // The whole pipeline was asked about first, before the server saw anything, showing
    // every step and every flow line.
    let (_, whole, seen) = &asked[0];
    assert_eq!(seen.len(), before, "{seen:?}");
    assert_eq!(whole["version"], 1);
    assert_eq!(whole["inputs"], json!({"word": "hello"}));
    let steps: Vec<&str> = whole["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["calc/echo", "calc/sleep", "calc/add"]);
    assert_eq!(whole["flows"], json!(plan.lines()));
    assert!(
        plan.lines()
            .contains(&"step 1 \"say\" calc/echo.text <- input word".to_owned()),
        "{:?}",
        plan.lines()
    );
    let names: Vec<String> = recorded_calls(&record)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names[before..], ["echo", "sleep", "add"]);

    // The audit log: the pipeline proposed, asked about and allowed by the user...
    let pipeline = audit_trail(&host, "calc", "mixed").await;
    let kinds: Vec<&str> = pipeline.iter().map(|(k, _, _)| k.as_str()).collect();
    // (once per run).
    assert_eq!(
        kinds,
        ["proposed", "decided", "decided", "proposed", "decided", "decided"],
        "{pipeline:?}"
    );
    assert!(pipeline[0].2.contains("pipeline"), "{pipeline:?}");
    assert_eq!(
        (&*pipeline[2].1, &*pipeline[5].1),
        ("user", "user"),
        "{pipeline:?}"
    );
    // ...and every step, the read-only one allowed by that approval.
    for tool in ["echo", "sleep", "add"] {
        let kinds: Vec<String> = audit_trail(&host, "calc", tool)
            .await
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        for kind in ["proposed", "decided", "started", "finished"] {
            assert!(kinds.iter().any(|k| k == kind), "{tool}: {kinds:?}");
        }
    }
    let echo = audit_trail(&host, "calc", "echo").await;
    assert!(
        echo.iter().any(|(k, a, d)| k == "decided"
            && a == "user"
            && d.contains("approved with the pipeline mixed@1")),
        "{echo:?}"
    );
    let sleep = audit_trail(&host, "calc", "sleep").await;
    assert!(
        !sleep
            .iter()
            .any(|(_, _, d)| d.contains("approved with the pipeline")),
        "{sleep:?}"
    );
    host.shutdown().await;
}

/// A pipeline the person says no to sends nothing and records no run; the refusal is audited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_pipeline_sends_nothing() {
    let (host, _tmp, record) = calc_only().await;
    allow_every_call(&host).await;
    host.add_pipeline(&parse(MIXED, Format::Toml).unwrap())
        .await
        .unwrap();
    let runner = host.clone();
    let run = tokio::spawn(async move {
        runner
            .run_pipeline(
                &PipelineName::new("mixed").unwrap(),
                None,
                inputs(json!({"word": "hello"})),
                Origin::Manual,
                None,
            )
            .await
    });
    assert!(
        eventually(Duration::from_secs(30), || !host
            .pending_approvals()
            .is_empty())
        .await
    );
    let asked = host.pending_approvals();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "mixed");
    // Its arguments cannot be edited: it is approved as shown or not at all.
    let edited = host
        .answer_approval(
            asked[0].nonce.as_str(),
            Answer::Allow {
                arguments: Some(Map::new()),
                scope: switchboard_core::approval::Scope::Once,
                constraints: Vec::new(),
            },
        )
        .await;
    assert!(edited.is_err());
    host.answer_approval(
        asked[0].nonce.as_str(),
        Answer::Deny {
            reason: Some("not today".into()),
        },
    )
    .await
    .unwrap();
    let err = run.await.unwrap().unwrap_err();
    assert!(matches!(err, PipelineError::Declined(_)), "{err}");
    assert!(err.to_string().contains("not today"), "{err}");
    assert!(
        recorded_calls(&record).is_empty(),
        "{:?}",
        recorded_calls(&record)
    );
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());
    let pipeline = audit_trail(&host, "calc", "mixed").await;
    assert!(
        pipeline
            .iter()
            .any(|(k, a, d)| k == "decided" && a == "user" && d.contains("not today")),
        "{pipeline:?}"
    );
    host.shutdown().await;
}
