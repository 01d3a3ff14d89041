//! The Agents page in the real app window (issue 15, point 1): a profile added with the CLI is
//! listed with its scope, overrides and limits; one added through the page's form is saved to
//! the same database (the CLI then shows it); a refused save says why and keeps the form.
//! Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn the_agents_page_lists_adds_and_refuses_profiles() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    for name in ["claude", "local"] {
        cli_ok(
            data,
            &[
                "provider",
                "add",
                name,
                "--kind",
                "ollama",
                "--base-url",
                "http://127.0.0.1:9/v1",
            ],
        );
    }
    cli_ok(
        data,
        &[
            "agent",
            "add",
            "coder",
            "--provider",
            "local",
            "--description",
            "Writes code",
            "--server",
            "memory",
            "--deny",
            "memory/delete_*",
            "--max-calls",
            "3",
        ],
    );

    let (_driver, s) = open_window(data).await.unwrap();
    s.click_on(r#".tab[data-page="agents"]"#, WAIT)
        .await
        .unwrap();
    let coder = r#".agent-row[data-name="coder"]"#;
    s.wait_text(
        &format!("{coder} .agent-override"),
        "deny memory/delete_*",
        WAIT,
    )
    .await
    .unwrap();
    s.wait_text(&format!("{coder} .agent-budget"), "3 calls", WAIT)
        .await
        .unwrap();

    // A new agent through the form.
    s.click_on(".agents-new", WAIT).await.unwrap();
    s.wait_for(r#".agents-provider option[value="claude"]"#, WAIT)
        .await
        .unwrap();
    s.set_value(".agents-name", "planner").await.unwrap();
    s.set_value(".agents-description", "Plans and delegates")
        .await
        .unwrap();
    s.set_value(".agents-provider", "claude").await.unwrap();
    s.set_value(".agents-delegation", "some").await.unwrap();
    s.set_value(".agents-delegates", "coder").await.unwrap();
    s.set_value(".agents-max-cost", "1.5").await.unwrap();
    s.screenshot(&artifacts().join("agents-1-form.png"))
        .await
        .unwrap();
    s.click_on(".agents-save", WAIT).await.unwrap();
    let planner = r#".agent-row[data-name="planner"]"#;
    s.wait_text(&format!("{planner} .agent-delegates"), "coder", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("agents-2-list.png"))
        .await
        .unwrap();
    let shown: serde_json::Value =
        serde_json::from_str(&cli_ok(data, &["--json", "agent", "show", "planner"])).unwrap();
    assert_eq!(shown["provider"], "claude");
    assert_eq!(shown["delegates"], serde_json::json!(["coder"]));
    assert_eq!(shown["budget"]["cost_usd"], 1.5);

    // Rust refuses a delegate that does not exist; the form stays, with the reason.
    s.click_on(".agents-new", WAIT).await.unwrap();
    s.wait_for(r#".agents-provider option[value="local"]"#, WAIT)
        .await
        .unwrap();
    s.set_value(".agents-name", "helper").await.unwrap();
    s.set_value(".agents-provider", "local").await.unwrap();
    s.set_value(".agents-delegation", "some").await.unwrap();
    s.set_value(".agents-delegates", "ghost").await.unwrap();
    s.wait_for(
        ".agents-form:not([hidden]) .agents-save:not([disabled])",
        WAIT,
    )
    .await
    .unwrap();
    s.click_on(".agents-save", WAIT).await.unwrap();
    s.wait_text(".agents-form-error", "no agent named ghost", WAIT)
        .await
        .unwrap();
    s.close().await.unwrap();
    let list = cli_ok(data, &["agent", "list"]);
    assert!(!list.contains("helper"), "{list}");
}
