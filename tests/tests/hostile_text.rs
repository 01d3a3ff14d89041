//! Server text is inert on the terminal (RN-04), through the real CLI: the fake server in
//! `--mode hostile-text` puts screen-clearing, cursor-moving and colour escapes, a bidi override
//! and line breaks into its tool names, titles, descriptions, instructions, stderr and results.
//! Whatever the CLI prints (the tool list, a model's call of such a tool at the approval
//! prompt, the conversation's history, the server's logs, the process log at debug level) has
//! no raw escape byte or bidi control in it, a name outside MCP's recommended characters is
//! shown escaped and flagged, and no server text can start a line that reads as Switchboard's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use switchboard_tests::chat_cli::{newest_conversation, ok, setup_chat};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::*;

/// Lines a hostile server tries to slip in as if Switchboard had printed them.
const FORGED: [&str; 3] = [
    "(asked because you allowed it always)",
    "Switchboard:",
    "(required by Switchboard)",
];

/// Fails if `bytes` could act on a terminal or forge one of Switchboard's lines.
fn assert_inert(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !bytes.contains(&0x1b),
        "{what} has a raw ESC byte:\n{}",
        text.replace('\x1b', "<ESC>")
    );
    for c in ['\u{202E}', '\u{9B}', '\r', '\u{7}'] {
        assert!(!text.contains(c), "{what} has a raw {c:?}:\n{text}");
    }
    for line in text.lines() {
        for forged in FORGED {
            assert!(
                !line.trim_start().starts_with(forged),
                "{what} has a line forged by the server: {line:?}"
            );
        }
    }
}

fn inert_ok(o: &Output, what: &str) -> String {
    assert_inert(&o.stdout, &format!("{what} (stdout)"));
    assert_inert(&o.stderr, &format!("{what} (stderr)"));
    ok(o)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Adds and approves the hostile server as `evil`.
fn add_evil(data: &Path) {
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    ok(&run_cli(
        data,
        &[
            "server",
            "add",
            "evil",
            "--",
            fake,
            "--mode",
            "hostile-text",
        ],
        "",
        &[],
    ));
    ok(&run_cli(
        data,
        &["server", "trust", "evil", "--yes"],
        "",
        &[],
    ));
}

/// The LLM-facing name of the evil tool whose name starts with `prefix`.
fn llm_name(data: &Path, prefix: &str) -> String {
    let o = run_cli(data, &["tools", "--server", "evil", "--json"], "", &[]);
    let listed: Vec<Value> = serde_json::from_str(&inert_ok(&o, "tools --json")).unwrap();
    let t = listed
        .iter()
        .find(|t| t["tool"]["name"].as_str().unwrap().starts_with(prefix))
        .unwrap();
    assert!(
        t["name_outside_spec"].is_string(),
        "flagged for scripts too: {t}"
    );
    t["llm_name"].as_str().unwrap().to_owned()
}

#[test]
fn the_tool_list_shows_hostile_names_escaped_and_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    add_evil(data);
    let o = run_cli(data, &["tools", "--server", "evil"], "", &[]);
    let out = inert_ok(&o, "tools");
    assert!(out.contains(r"paint\e[2J\e[1;1H\e[32mok\e[0m"), "{out}");
    assert!(out.contains(r"forge\n\e[1A\e[2K(asked because"), "{out}");
    assert_eq!(
        out.matches("WARNING: the name is outside the characters MCP recommends")
            .count(),
        2,
        "paint and forge are flagged, hostile_error is not: {out}"
    );

    // The process log at debug level carries the server's stderr and names, escaped too.
    let o = run_cli(
        data,
        &["tools", "--server", "evil", "--log", "debug"],
        "",
        &[],
    );
    inert_ok(&o, "tools --log debug");
    // And the saved logs of that run.
    let o = run_cli(data, &["server", "logs", "evil"], "", &[]);
    let logs = inert_ok(&o, "server logs");
    assert!(logs.contains("hostile stderr ⟨ESC⟩[2J"), "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_call_of_a_hostile_tool_is_asked_about_inertly() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    add_evil(data);
    let (paint, forge) = (llm_name(data, "paint"), llm_name(data, "forge"));
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![
            ScriptedCall::new("c1", &paint, &[r#"{"text":"hi \u001b[2J there"}"#]),
            ScriptedCall::new("c2", &forge, &[r#"{"text":"x"}"#]),
        ]),
        Reply::text(&["done \u{1b}[31mred"]),
    ]))
    .await
    .unwrap();
    setup_chat(data, &llm, &[]);

    let o = run_cli(
        data,
        &["chat", "--model", "fake", "paint and forge"],
        "y\nn\n",
        &[],
    );
    inert_ok(&o, "chat");
    let err = stderr(&o);
    assert!(
        err.contains(
            r#"The model wants to run "paint\e[2J\e[1;1H\e[32mok\e[0m" (an unusual name) on evil with:"#
        ),
        "{err}"
    );
    assert!(
        err.contains(r#"The model wants to run "forge\n\e[1A\e[2K(asked because you allowed it always)\u{202E}exe.txt" (an unusual name) on evil"#),
        "{err}"
    );
    assert!(
        err.contains("WARNING: this name is outside the characters MCP recommends"),
        "{err}"
    );
    // The model's arguments carried an escape too: shown as a JSON escape, not run.
    assert!(err.contains(r#""text": "hi \u001b[2J there""#), "{err}");

    let id = newest_conversation(data);
    let o = run_cli(data, &["history", "show", &id], "", &[]);
    let shown = inert_ok(&o, "history show");
    assert!(shown.contains("tool call"), "{shown}");
    let o = run_cli(data, &["history", "export", &id, "--format", "md"], "", &[]);
    ok(&o);
    let o = run_cli(data, &["--json", "history", "show", &id], "", &[]);
    assert_inert(&o.stdout, "history show --json");
}
