//! The Pipelines page in the real app window (issue 15, point 6): a pipeline added with the CLI
//! is run from the page; the approval dialog asks about it as a whole, listing every step and
//! what flows where; once approved, its read-only steps on a server tagged trusted run without
//! asking again, the run shows as succeeded with each step's result, and the fake server
//! received exactly the mapped values. Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::AppData;
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn a_pipeline_runs_from_the_page_after_its_approval_as_a_whole() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let record = dir.path().join("calc-received.jsonl");
    AppData::on(&data).approved_fake("calc", &["--record", record.to_str().unwrap()]);
    cli_ok(&data, &["policy", "tags", "calc", "trusted"]);
    let file = dir.path().join("twice.toml");
    std::fs::write(
        &file,
        r#"
name = "twice"
description = "adds 2, then 10"
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
    cli_ok(&data, &["pipeline", "add", file.to_str().unwrap()]);

    let (_driver, s) = open_window(&data).await.unwrap();
    s.click_on(r#".tab[data-page="pipelines"]"#, WAIT)
        .await
        .unwrap();
    let page = s
        .wait_text(".pipelines-page", "Past runs", WAIT)
        .await
        .unwrap();
    eprintln!("PAGE: {page}");
    s.click_on(r#".pipeline-open[data-pipeline="twice"]"#, WAIT)
        .await
        .unwrap();
    // Shown checked against the live catalog (the page started the server for the look).
    s.wait_text(".pipeline-detail-flows", "calc/add.a <- input x", WAIT)
        .await
        .unwrap();
    s.wait_for(r#".pipeline-input[data-input="x"]"#, WAIT)
        .await
        .unwrap();
    s.set_value(r#".pipeline-input[data-input="x"]"#, "5")
        .await
        .unwrap();
    s.click_on(".pipeline-run-button", WAIT).await.unwrap();

    // Asked about as a whole: every step and what flows where, before anything is sent.
    s.wait_text(".approval-dialog h2", "Run the pipeline twice?", WAIT)
        .await
        .unwrap();
    s.wait_text(
        ".approval-dialog .pipeline-flows",
        "step 2 \"again\" calc/add.a <- step 1 \"first\" (calc/add) /sum",
        WAIT,
    )
    .await
    .unwrap();
    let steps = s
        .wait_text(".approval-dialog .pipeline-steps", "calc/add (again)", WAIT)
        .await
        .unwrap();
    assert!(
        steps.contains("calc/add (first)") && steps.contains("calc/add (again)"),
        "{steps}"
    );
    // Both steps are read-only on a trusted server: the question says none will ask again.
    assert!(!steps.contains("asks again"), "{steps}");
    s.wait_text(
        ".approval-dialog .pipeline-version",
        "No step is expected to ask again.",
        WAIT,
    )
    .await
    .unwrap();
    assert!(
        recorded_calls(&record).is_empty(),
        "{:?}",
        recorded_calls(&record)
    );
    s.screenshot(&artifacts().join("pipelines-1-approval.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog .allow", WAIT).await.unwrap();

    // Approved: both read-only steps run without asking again, and the run shows done.
    s.wait_text(".pipeline-run-status", "succeeded", WAIT)
        .await
        .unwrap();
    let shown = s
        .wait_text(".pipeline-run-steps", "again", WAIT)
        .await
        .unwrap();
    assert!(shown.contains("{\"sum\":17}"), "{shown}");
    s.screenshot(&artifacts().join("pipelines-2-done.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
    assert_eq!(
        recorded_calls(&record),
        [
            ("add".to_owned(), json!({"a": 5, "b": 2})),
            ("add".to_owned(), json!({"a": 7, "b": 10})),
        ]
    );
    let runs: Value =
        serde_json::from_str(&cli_ok(&data, &["pipeline", "runs", "twice", "--json"])).unwrap();
    assert_eq!(runs[0]["status"], "succeeded", "{runs}");
}
