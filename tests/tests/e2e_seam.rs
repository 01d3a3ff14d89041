//! The governed seam in the real app window (AP-09): with deny rules for a tool, a resource and
//! a prompt, the catalog's run form, the Resources page and the Prompts page are refused with
//! the rule named, nothing is asked, nothing reaches the server, and the Audit page lists each
//! refusal. Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::{open_tool, AppData};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn deny_rules_stop_the_run_form_the_resource_and_prompt_pages_and_are_audited() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let record = dir.path().join("received.jsonl");
    AppData::on(&data).fake_server("demo", &["--record", record.to_str().unwrap()]);
    for rule in [
        &["noecho", "--tool", "echo"][..],
        &["noreads", "--on", "resource", "--name", "fake://text"],
        &["nogreet", "--on", "prompt", "--name", "greet"],
    ] {
        let mut args = vec![
            "policy", "add", rule[0], "--effect", "deny", "--server", "demo",
        ];
        args.extend_from_slice(&rule[1..]);
        cli_ok(&data, &args);
    }

    let (_driver, s) = open_window(&data).await.unwrap();
    s.wait_text(r#"article[data-name="demo"] .badge"#, "running", WAIT)
        .await
        .unwrap();

    // The run form: refused by the rule, no approval dialog.
    open_tool(&s, "demo", "echo").await;
    s.wait_for("#run-text", WAIT).await.unwrap();
    s.set_value("#run-text", "should never arrive")
        .await
        .unwrap();
    s.click_on(".run-panel button.run", WAIT).await.unwrap();
    s.wait_text(".run-output", "noecho", WAIT).await.unwrap();
    assert!(s.find_all(".approval-dialog").await.unwrap().is_empty());
    s.screenshot(&artifacts().join("40-seam-run-denied.png"))
        .await
        .unwrap();

    // The Resources page: the read is refused.
    s.click_on(r#".tab[data-page="resources"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(r#"button[aria-label="Read Plain text"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(".resource-viewer", "noreads", WAIT)
        .await
        .unwrap();

    // The Prompts page: the prompt get is refused.
    s.click_on(r#".tab[data-page="prompts"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(r#"button[aria-label="Open Greet"]"#, WAIT)
        .await
        .unwrap();
    let who = s.wait_for(".ctx-prompt .ctx-arg", WAIT).await.unwrap();
    s.type_text(&who, "bob").await.unwrap();
    s.click_on(".ctx-prompt .get-prompt", WAIT).await.unwrap();
    s.wait_text(".ctx-result", "nogreet", WAIT).await.unwrap();
    s.screenshot(&artifacts().join("41-seam-prompt-denied.png"))
        .await
        .unwrap();

    // The Audit page lists each refusal with the rule that made it.
    s.click_on(r#".tab[data-page="audit"]"#, WAIT)
        .await
        .unwrap();
    for rule in ["policy:noecho", "policy:noreads", "policy:nogreet"] {
        s.click_on(".audit-refresh", WAIT).await.unwrap();
        s.wait_text(".audit-list", rule, WAIT).await.unwrap();
    }
    s.screenshot(&artifacts().join("42-seam-audit.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    let got = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(!got.contains("should never arrive"));
    for method in ["\"resources/read\"", "\"prompts/get\""] {
        assert!(!got.contains(method), "{method} reached the server");
    }
}
