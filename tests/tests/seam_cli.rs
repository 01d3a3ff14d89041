//! The governed seam through the real `switchboard` binary (AP-09): a deny rule stops the CLI's
//! `call`, `read` and `prompt` and the audit log records each; without a terminal the policy's
//! question is refused unless the person passed `--yes`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use switchboard_tests::*;

fn run(data: &Path, args: &[&str]) -> Output {
    run_cli(data, args, "", &[])
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every audit entry, oldest first.
fn audit(data: &Path) -> Vec<Value> {
    ok(&run(data, &["audit", "export"]))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The audit entries about `name`, as (kind, actor, decision or "").
fn about(data: &Path, name: &str) -> Vec<(String, String, String)> {
    audit(data)
        .into_iter()
        .filter(|e| e["tool"] == name)
        .map(|e| {
            let detail: Value =
                serde_json::from_str(e["detail_json"].as_str().unwrap_or("null")).unwrap();
            (
                e["kind"].as_str().unwrap_or_default().to_owned(),
                e["actor"].as_str().unwrap_or_default().to_owned(),
                detail["decision"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn setup(data: &Path) -> std::path::PathBuf {
    let record = data.join("received.jsonl");
    let fake = fake_server();
    ok(&run(
        data,
        &[
            "server",
            "add",
            "everything",
            "--",
            fake.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
        ],
    ));
    ok(&run(data, &["server", "trust", "everything", "--yes"]));
    record
}

#[test]
fn a_deny_rule_stops_the_clis_call_read_and_prompt_and_each_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let record = setup(data);
    // The finding, as filed: a deny rule, then `call` of the denied tool.
    ok(&run(
        data,
        &[
            "policy",
            "add",
            "noecho",
            "--effect",
            "deny",
            "--server",
            "everything",
            "--tool",
            "echo",
        ],
    ));
    let o = run(
        data,
        &[
            "call",
            "everything",
            "echo",
            "--args",
            r#"{"text":"x"}"#,
            "--yes",
        ],
    );
    assert!(!o.status.success(), "a denied call exits non-zero");
    assert!(stderr(&o).contains("denied"), "{}", stderr(&o));
    assert!(stderr(&o).contains("noecho"), "{}", stderr(&o));
    let rows = about(data, "echo");
    assert!(
        rows.contains(&("decided".into(), "policy:noecho".into(), "deny".into())),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|(k, _, _)| k == "started"), "{rows:?}");

    // Reads and prompt gets are policy targets too.
    ok(&run(
        data,
        &[
            "policy",
            "add",
            "noreads",
            "--effect",
            "deny",
            "--server",
            "everything",
            "--on",
            "resource",
            "--name",
            "fake://*",
        ],
    ));
    ok(&run(
        data,
        &[
            "policy", "add", "nogreet", "--effect", "deny", "--on", "prompt", "--name", "greet",
        ],
    ));
    let o = run(data, &["read", "everything", "fake://text"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("noreads"), "{}", stderr(&o));
    let o = run(
        data,
        &["prompt", "everything", "greet", "--arg", "name=zoe"],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nogreet"), "{}", stderr(&o));
    for (name, rule) in [
        ("fake://text", "policy:noreads"),
        ("greet", "policy:nogreet"),
    ] {
        let rows = about(data, name);
        assert!(
            rows.contains(&("decided".into(), rule.into(), "deny".into())),
            "{name}: {rows:?}"
        );
    }
    let got = std::fs::read_to_string(&record).unwrap_or_default();
    for method in ["\"tools/call\"", "\"resources/read\"", "\"prompts/get\""] {
        assert!(!got.contains(method), "{method} reached the server");
    }
    // The rules are listed with what they cover.
    let listed = ok(&run(data, &["policy", "list"]));
    assert!(listed.contains("resource fake://*"), "{listed}");
}

#[test]
fn without_a_terminal_the_policys_question_is_refused_unless_approved_with_yes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let record = setup(data);
    let o = run(
        data,
        &[
            "call",
            "everything",
            "echo",
            "--args",
            r#"{"text":"unasked"}"#,
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--yes"), "{}", stderr(&o));
    assert!(!std::fs::read_to_string(&record)
        .unwrap_or_default()
        .contains("unasked"));
    let o = run(
        data,
        &[
            "call",
            "everything",
            "echo",
            "--args",
            r#"{"text":"approved"}"#,
            "--yes",
        ],
    );
    assert!(ok(&o).contains("approved"));
    let rows = about(data, "echo");
    let users: Vec<_> = rows
        .iter()
        .filter(|(k, a, _)| k == "decided" && a == "user")
        .map(|(_, _, d)| d.as_str())
        .collect();
    assert_eq!(users, ["deny", "allow"], "{rows:?}");
    // A person's own read needs no question and is audited.
    assert!(ok(&run(data, &["read", "everything", "fake://text"])).contains("hello"));
    let rows = about(data, "fake://text");
    assert!(rows.iter().any(|(k, _, _)| k == "finished"), "{rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_into_a_denied_path_is_refused_at_the_prompt() {
    use switchboard_tests::chat_cli::setup_chat;
    use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
    use switchboard_tests::fake_llm::FakeLlm;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "demo__echo",
            &[r#"{"text":"/tmp/harmless"}"#],
        )]),
        Reply::text(&["Refused, as you said."]),
    ]))
    .await
    .unwrap();
    setup_chat(data, &llm, &[]);
    ok(&run(
        data,
        &[
            "policy",
            "add",
            "no-etc",
            "--effect",
            "deny",
            "--server",
            "demo",
            "--path-under",
            "/etc",
        ],
    ));
    // The "editor" points the call into /etc.
    let editor = data.join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf '{\"text\": \"/etc/shadow\"}' > \"$1\"\n",
    )
    .unwrap();
    let o = run_cli(
        data,
        &["chat", "--model", "fake", "echo something"],
        "e\ny\nn\n",
        &[
            ("VISUAL", ""),
            ("EDITOR", &format!("sh {}", editor.display())),
        ],
    );
    ok(&o);
    let err = stderr(&o);
    assert!(err.contains("not run"), "{err}");
    assert!(err.contains("no-etc"), "{err}");
    // The model never got a result of the edited call: the person said no in the end.
    let second = llm.requests()[1].body.to_string();
    assert!(second.contains("did not allow"), "{second}");
    assert!(!second.contains("/etc/shadow\\\"}"), "{second}");
    let rows = about(data, "echo");
    assert!(!rows.iter().any(|(k, _, _)| k == "started"), "{rows:?}");
}
