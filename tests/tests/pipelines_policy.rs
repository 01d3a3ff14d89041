//! A pipeline the person's policy would refuse is refused before anything runs (issue 15,
//! point 6), over the fake server on stdio, recording what it receives (`--record`):
//! - a deny rule on step 3: the run is refused before the whole-pipeline question, the server
//!   saw no call (not even steps 1 and 2), no run is recorded, and the audit log has the
//!   refusal naming the step and the rule;
//! - a deny rule whose condition reads an argument mapped from an earlier step (unknown before
//!   the run) refuses up front, naming the argument; one whose condition is ruled out by the
//!   known arguments does not, and the run goes ahead;
//! - a step whose tool changed after the run was checked and asked about (TD-02), even with
//!   the change reviewed and accepted meanwhile, is not sent under that approval;
//! - a rule for models refuses a model's run of an offered pipeline (the model is told the
//!   step and the rule), not a person's own run;
//! - an ask rule on a step is named in the whole-pipeline question (the step, the rule), and
//!   that step, only that one, asks again when it runs;
//! - an allow rule with a limit that the run's steps together would exceed refuses the run up
//!   front (counting the earlier steps), not at the step that crosses it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::approval::{Answer, Condition, Effect, On, Origin, Rule, Source};
use switchboard_core::host::{CallOptions, Host, PipelineError, PipelineOutcome};
use switchboard_core::ids::ToolRef;
use switchboard_core::pipeline_data::{parse, Format, PipelineName};
use switchboard_core::pipelines::RunStatus;
use switchboard_core::policy_data::{Limit, Per};
use switchboard_core::supervisor::ServerHandle;
use switchboard_tests::*;

/// A host with `calc` (the fake server with `extra` flags, recording what it receives)
/// running, every tool call allowed by a rule.
async fn calc(extra: &[&str]) -> (Host, tempfile::TempDir, PathBuf, ServerHandle) {
    let (host, tmp) = test_host().await;
    let record = tmp.path().join("calc-received.jsonl");
    let mut args = vec!["--record", record.to_str().unwrap()];
    args.extend_from_slice(extra);
    let h = start_trusted(&host, fake_spec("calc", &args)).await;
    allow_every_call(&host).await;
    (host, tmp, record, h)
}

fn deny(id: &str, tool: &str, when: Vec<Condition>) -> Rule {
    Rule {
        id: id.into(),
        effect: Effect::Deny,
        server: "calc".into(),
        on: On::Tool,
        tool: tool.into(),
        origin: None,
        when,
        limit: None,
        note: None,
        source: Source::User,
    }
}

fn matches(arg: &str, pattern: &str) -> Condition {
    Condition::Matches {
        arg: arg.into(),
        pattern: pattern.into(),
    }
}

/// Starts `name` with `inputs` as a person would, and waits until it either ended or asks
/// something. Returns the run and what is pending.
async fn start(
    host: &Host,
    name: &str,
    inputs: Value,
) -> tokio::task::JoinHandle<Result<PipelineOutcome, PipelineError>> {
    let runner = host.clone();
    let name = PipelineName::new(name).unwrap();
    let run = tokio::spawn(async move {
        runner
            .run_pipeline(
                &name,
                None,
                inputs.as_object().unwrap().clone(),
                Origin::Manual,
                None,
            )
            .await
    });
    let settled = eventually(Duration::from_secs(30), || {
        run.is_finished() || !host.pending_approvals().is_empty()
    })
    .await;
    assert!(settled, "the run neither ended nor asked");
    run
}

/// Answers yes to every question until `run` ends.
async fn answering_yes<T>(host: &Host, run: tokio::task::JoinHandle<T>) -> T {
    while !run.is_finished() {
        let waited = eventually(Duration::from_secs(30), || {
            run.is_finished() || !host.pending_approvals().is_empty()
        })
        .await;
        assert!(waited, "the run neither ended nor asked");
        for asked in host.pending_approvals() {
            host.answer_approval(asked.nonce.as_str(), Answer::ALLOW)
                .await
                .unwrap();
        }
    }
    run.await.unwrap()
}

fn names(record: &Path) -> Vec<String> {
    recorded_calls(record).into_iter().map(|(n, _)| n).collect()
}

const THREE: &str = r#"
name = "three"
[[steps]]
id = "say"
tool = "calc/echo"
args = { text = "first" }
[[steps]]
id = "sum"
tool = "calc/add"
args = { a = 1, b = 2 }
[[steps]]
id = "nap"
tool = "calc/sleep"
args = { ms = 1 }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_the_policy_denies_refuses_the_run_before_anything_runs() {
    let (host, _tmp, record, _h) = calc(&[]).await;
    host.add_pipeline(&parse(THREE, Format::Toml).unwrap())
        .await
        .unwrap();
    host.put_policy_rule(deny("no-naps", "sleep", Vec::new()))
        .await
        .unwrap();

    let run = start(&host, "three", json!({})).await;
    // Refused without a question: nothing was pending when it ended.
    assert!(host.pending_approvals().is_empty());
    let err = run.await.unwrap().unwrap_err();
    let PipelineError::Refused(refusal) = &err else {
        panic!("not refused by the policy: {err}");
    };
    assert_eq!(
        (refusal.step, refusal.id.as_str(), refusal.tool.as_str()),
        (3, "nap", "calc/sleep")
    );
    assert_eq!(refusal.rule.as_deref(), Some("no-naps"));
    assert!(refusal.depends_on.is_empty(), "{refusal:?}");
    let text = err.to_string();
    assert!(
        text.contains("nothing was called")
            && text.contains("step 3 (\"nap\", calc/sleep) would be refused")
            && text.contains("\"no-naps\""),
        "{text}"
    );
    // No step ran: the server saw no call, not even of steps 1 and 2; no run was recorded.
    assert!(names(&record).is_empty(), "{:?}", names(&record));
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());
    for tool in ["echo", "add", "sleep"] {
        assert!(audit_trail(&host, "calc", tool).await.is_empty(), "{tool}");
    }
    // The audit log has the refusal: the pipeline proposed, denied by the rule.
    let audited = audit_trail(&host, "calc", "three").await;
    let kinds: Vec<&str> = audited.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(kinds, ["proposed", "decided"], "{audited:?}");
    assert!(audited[0].2.contains("pipeline"), "{audited:?}");
    let (_, actor, detail) = &audited[1];
    assert_eq!(actor, "policy:no-naps", "{audited:?}");
    assert!(
        detail.contains("no-naps") && detail.contains("step 3") && detail.contains("deny"),
        "{detail}"
    );

    // Without the rule the same run is asked about and goes ahead: the refusal was the rule's.
    host.remove_policy_rule("no-naps").await.unwrap();
    let run = start(&host, "three", json!({})).await;
    let outcome = answering_yes(&host, run).await.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(names(&record), ["echo", "add", "sleep"]);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_question_names_the_step_a_rule_will_ask_about_and_only_it_asks() {
    let (host, _tmp, record, _h) = calc(&[]).await;
    host.add_pipeline(&parse(THREE, Format::Toml).unwrap())
        .await
        .unwrap();
    let ask = Rule {
        effect: Effect::Ask,
        ..deny("ask-naps", "sleep", Vec::new())
    };
    host.put_policy_rule(ask).await.unwrap();

    let run = start(&host, "three", json!({})).await;
    let waited = eventually(Duration::from_secs(30), || {
        !host.pending_approvals().is_empty()
    })
    .await;
    assert!(waited, "the pipeline was not asked about");
    let whole = host.pending_approvals().remove(0);
    assert_eq!(whole.tool, "three");
    assert_eq!(
        whole.arguments["asks_again"],
        json!([{"step": 3, "id": "nap", "tool": "calc/sleep", "why": "the policy rule \"ask-naps\" asks about it"}])
    );
    assert!(
        whole
            .reason
            .contains("step 3 (\"nap\", calc/sleep) will ask again when it runs"),
        "{}",
        whole.reason
    );
    host.answer_approval(whole.nonce.as_str(), Answer::ALLOW)
        .await
        .unwrap();
    // Steps 1 and 2 go through on the approval; step 3 asks, as the question said.
    let waited = eventually(Duration::from_secs(30), || {
        !host.pending_approvals().is_empty()
    })
    .await;
    assert!(waited, "step 3 did not ask");
    let pending = host.pending_approvals();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool, "sleep");
    assert_eq!(names(&record), ["echo", "add"]);
    let outcome = answering_yes(&host, run).await.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(names(&record), ["echo", "add", "sleep"]);
    host.shutdown().await;
}

/// Three additions in a row.
const ADDS: &str = r#"
name = "adds"
[[steps]]
id = "one"
tool = "calc/add"
args = { a = 1, b = 1 }
[[steps]]
id = "two"
tool = "calc/add"
args = { a = 2, b = 2 }
[[steps]]
id = "three"
tool = "calc/add"
args = { a = 3, b = 3 }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_that_together_exceed_an_allow_limit_refuse_the_run_up_front() {
    let (host, _tmp, record, _h) = calc(&[]).await;
    host.remove_policy_rule(ALLOW_ALL).await.unwrap();
    host.add_pipeline(&parse(ADDS, Format::Toml).unwrap())
        .await
        .unwrap();
    let two_a_day = |max| Rule {
        effect: Effect::Allow,
        limit: Some(Limit { max, per: Per::Day }),
        ..deny("adds-a-day", "add", Vec::new())
    };
    // Each step alone is within the limit; the three together are not.
    host.put_policy_rule(two_a_day(2)).await.unwrap();
    let run = start(&host, "adds", json!({})).await;
    // Refused without a question.
    assert!(host.pending_approvals().is_empty());
    let err = run.await.unwrap().unwrap_err();
    let PipelineError::Refused(refusal) = &err else {
        panic!("not refused by the policy: {err}");
    };
    assert_eq!((refusal.step, refusal.id.as_str()), (3, "three"));
    assert_eq!(refusal.rule.as_deref(), Some("adds-a-day"));
    assert!(
        refusal
            .reason
            .contains("counting the 2 earlier steps of this run it allows"),
        "{refusal:?}"
    );
    // Nothing ran: before, steps 1 and 2 ran and the run stopped at step 3.
    assert!(names(&record).is_empty(), "{:?}", names(&record));
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());

    // A limit of three fits: asked as a whole, the three run on the rule and nothing else asks.
    host.put_policy_rule(two_a_day(3)).await.unwrap();
    let run = start(&host, "adds", json!({})).await;
    let outcome = answering_yes(&host, run).await.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(names(&record), ["add", "add", "add"]);
    // Spent: the next run is refused at its first step.
    let run = start(&host, "adds", json!({})).await;
    let err = run.await.unwrap().unwrap_err();
    let PipelineError::Refused(refusal) = &err else {
        panic!("not refused by the policy: {err}");
    };
    assert_eq!(refusal.step, 1, "{refusal:?}");
    assert_eq!(names(&record).len(), 3);
    host.shutdown().await;
}

/// `first` adds the input to 2; `again` adds 10 to what `first` returned (`$from`).
const TWICE: &str = r#"
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
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_on_an_argument_known_only_mid_run_refuses_up_front() {
    let (host, _tmp, record, _h) = calc(&[]).await;
    host.add_pipeline(&parse(TWICE, Format::Toml).unwrap())
        .await
        .unwrap();
    // Denies add when `a` is 7: step 2's `a` is step 1's sum (5 + 2 = 7), known only once
    // step 1 ran. Decided per call, step 1 would run and the run stop at step 2.
    host.put_policy_rule(deny("no-sevens", "add", vec![matches("a", "7")]))
        .await
        .unwrap();
    let run = start(&host, "twice", json!({"x": 5})).await;
    assert!(host.pending_approvals().is_empty());
    let err = run.await.unwrap().unwrap_err();
    let PipelineError::Refused(refusal) = &err else {
        panic!("not refused by the policy: {err}");
    };
    assert_eq!((refusal.step, refusal.id.as_str()), (2, "again"));
    assert_eq!(refusal.rule.as_deref(), Some("no-sevens"));
    assert_eq!(refusal.depends_on, ["a"]);
    let text = err.to_string();
    assert!(
        text.contains("step 2 (\"again\", calc/add) could be refused")
            && text.contains("the argument \"a\""),
        "{text}"
    );
    assert!(names(&record).is_empty(), "{:?}", names(&record));
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());

    // A rule that the known arguments already rule out does not refuse: `b` is 2 and 10.
    host.put_policy_rule(deny("no-sevens", "add", vec![matches("b", "7")]))
        .await
        .unwrap();
    let run = start(&host, "twice", json!({"x": 5})).await;
    let outcome = answering_yes(&host, run).await.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        recorded_calls(&record),
        [
            ("add".to_owned(), json!({"a": 5, "b": 2})),
            ("add".to_owned(), json!({"a": 7, "b": 10})),
        ]
    );

    // A rule on an input is decided on its value: refused for 7, not for 6.
    host.put_policy_rule(deny("no-sevens", "add", vec![matches("a", "7")]))
        .await
        .unwrap();
    let run = start(&host, "twice", json!({"x": 7})).await;
    let err = run.await.unwrap().unwrap_err();
    let PipelineError::Refused(refusal) = &err else {
        panic!("not refused by the policy: {err}");
    };
    assert_eq!(refusal.step, 1);
    assert!(refusal.depends_on.is_empty(), "{refusal:?}");
    assert_eq!(recorded_calls(&record).len(), 2);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_whose_tool_changed_after_the_approval_is_not_sent() {
    // `echo`'s description changes after the server's first tool call.
    let (host, _tmp, record, h) = calc(&["--mode", "rug-description"]).await;
    let p = parse(
        &json!({
            "name": "say",
            "steps": [{"id": "say", "tool": "calc/echo", "args": {"text": "hello"}}]
        })
        .to_string(),
        Format::Json,
    )
    .unwrap();
    host.add_pipeline(&p).await.unwrap();
    let run = start(&host, "say", json!({})).await;
    let asked = host.pending_approvals();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].tool, "say");

    // While the person looks at the question, echo changes; the change is reviewed and
    // accepted, so the seam itself would now let echo through.
    let before = h.catalog();
    let add = ToolRef {
        server: h.id().clone(),
        tool: "add".into(),
    };
    host.run_tool(
        &add,
        json!({"a": 1, "b": 2}).as_object().unwrap().clone(),
        Origin::Manual,
        CallOptions::default(),
    )
    .await
    .unwrap();
    assert!(eventually(Duration::from_secs(30), || *h.catalog() != *before).await);
    assert!(host.approve_pin_changes(h.id(), None).await.unwrap() > 0);
    assert!(host.held_tools(h.id()).await.unwrap().is_empty());

    // The person approves the pipeline as it was shown: its step is not sent.
    host.answer_approval(asked[0].nonce.as_str(), Answer::ALLOW)
        .await
        .unwrap();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.run.status, RunStatus::Failed, "{outcome:?}");
    let error = outcome.run.error.clone().unwrap_or_default();
    assert!(
        error.contains("step 1 (\"say\", calc/echo)")
            && error.contains("changed since the pipeline was approved"),
        "{error}"
    );
    assert!(outcome.steps.is_empty(), "{outcome:?}");
    assert_eq!(names(&record), ["add"]);

    // Run again, it is asked about as it is now and runs.
    let run = start(&host, "say", json!({})).await;
    let outcome = answering_yes(&host, run).await.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(names(&record), ["add", "echo"]);
    host.shutdown().await;
}

/// A rule for models only: a model's run of an offered pipeline is refused before anything is
/// asked or sent, and the model is told which step and rule; a person's own run is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_offered_pipeline_is_refused_by_a_rule_for_models() {
    let (host, _tmp, record, _h) = calc(&[]).await;
    let mut p = parse(THREE, Format::Toml).unwrap();
    p.offer = true;
    host.add_pipeline(&p).await.unwrap();
    let mut rule = deny("models-no-naps", "sleep", Vec::new());
    rule.origin = Some("model".into());
    host.put_policy_rule(rule).await.unwrap();

    let catalogs = host.catalogs().await.unwrap();
    let offered = host.offered_pipelines(&catalogs).await.unwrap();
    let three = offered
        .iter()
        .find(|o| o.pipeline.name.as_str() == "three")
        .expect("three is offered");
    let told = host
        .run_offered_pipeline(
            three,
            serde_json::Map::new(),
            &switchboard_core::ids::ConversationId::random(),
            None,
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        told.contains("step 3 (\"nap\", calc/sleep)") && told.contains("models-no-naps"),
        "{told}"
    );
    assert!(host.pending_approvals().is_empty());
    assert!(names(&record).is_empty(), "{:?}", names(&record));
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());

    // A person's own run of it: the rule is not theirs, so it is asked about and runs.
    let run = start(&host, "three", json!({})).await;
    let outcome = answering_yes(&host, run).await.unwrap();
    assert_eq!(outcome.run.status, RunStatus::Succeeded, "{outcome:?}");
    assert_eq!(names(&record), ["echo", "add", "sleep"]);
    host.shutdown().await;
}
