//! The `switchboard` binary end to end: text and JSON output, exit codes, clear errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::process::{Command, Output, Stdio};

use switchboard_tests::scenario::AppData;
use switchboard_tests::*;

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn add_trust_list_call_and_logs() {
    let cli = AppData::new();
    let fake = fake_server();
    let o = cli.run(&[
        "server",
        "add",
        "fake",
        "--",
        fake.to_str().unwrap(),
        "--page-size",
        "4",
    ]);
    assert!(o.status.success(), "{}", err(&o));

    // Not approved: tools skips it and a call fails with a clear reason.
    let o = cli.run(&["call", "fake", "echo", "--args", r#"{"text":"x"}"#]);
    assert!(!o.status.success());
    assert!(err(&o).contains("needs approval"), "{}", err(&o));

    // Without a terminal, trust refuses unless --yes.
    let o = cli.run(&["server", "trust", "fake"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("--yes"), "{}", err(&o));
    let o = cli.run(&["server", "trust", "fake", "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains(fake.to_str().unwrap()),
        "the plan was not shown: {}",
        err(&o)
    );

    let o = cli.run(&["tools", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let tools: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"add"),
        "{names:?}"
    );
    assert!(tools[0]["llm_name"].as_str().unwrap().starts_with("fake__"));

    let o = cli.run(&[
        "call",
        "fake",
        "add",
        "--yes",
        "--args",
        r#"{"a": 20, "b": 22}"#,
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("42"));

    let o = cli.run(&[
        "call",
        "fake",
        "slow",
        "--yes",
        "--args",
        r#"{"steps": 3, "ms": 30}"#,
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("1/3"),
        "no progress bar on stderr: {}",
        err(&o)
    );

    let o = cli.run(&["call", "fake", "fail", "--yes"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));

    let o = cli.run(&["call", "fake", "echo", "--args", "not json"]);
    assert!(!o.status.success());
    assert!(
        err(&o).contains("--args must be a JSON object"),
        "{}",
        err(&o)
    );

    let o = cli.run(&["read", "fake", "fake://text"]);
    assert!(out(&o).contains("hello"), "{}", err(&o));
    let o = cli.run(&["prompt", "fake", "greet", "--arg", "name=zoe"]);
    assert!(out(&o).contains("zoe"), "{}", err(&o));
    let o = cli.run(&["resources"]);
    assert!(out(&o).contains("fake://item/{id}"));
    let o = cli.run(&["prompts"]);
    assert!(out(&o).contains("greet"));

    let o = cli.run(&["server", "logs", "fake", "--trace"]);
    assert!(out(&o).contains("prompts/list"), "{}", out(&o));

    let o = cli.run(&["doctor", "fake"]);
    assert!(o.status.success(), "{}", out(&o));

    let o = cli.run(&["server", "disable", "fake"]);
    assert!(o.status.success());
    let o = cli.run(&["call", "fake", "echo"]);
    assert!(err(&o).contains("disabled"), "{}", err(&o));
}

#[test]
fn errors_are_one_clear_sentence_with_nonzero_exit() {
    let cli = AppData::new();
    let o = cli.run(&["server", "show", "ghost"]);
    assert!(!o.status.success());
    assert!(
        err(&o).starts_with("error: there is no server named ghost"),
        "{}",
        err(&o)
    );
    let o = cli.run(&["server", "add", "bad name", "--", "x"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("not a usable server name"), "{}", err(&o));
    let o = cli.run(&["server", "add", "x"]);
    assert!(
        err(&o).contains("say how to reach the server"),
        "{}",
        err(&o)
    );
    let o = cli.run(&["server", "add", "h", "--url", "ftp://nope"]);
    assert!(err(&o).contains("only http and https"), "{}", err(&o));
    let o = cli.run(&["server", "add", "e", "--env", "1BAD=x", "--", "x"]);
    assert!(
        err(&o).contains("not a valid environment variable name"),
        "{}",
        err(&o)
    );
}

#[test]
fn import_and_export_round_trip() {
    let cli = AppData::new();
    let file = cli.path().join("claude_desktop_config.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}"#,
    )
    .unwrap();
    let o = cli.run(&["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("nothing was started"), "{}", out(&o));
    let o = cli.run(&["server", "list"]);
    assert!(
        out(&o).contains("fs") && out(&o).contains("NOT APPROVED"),
        "{}",
        out(&o)
    );
    let o = cli.run(&["export", "--format", "vscode"]);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["servers"]["fs"]["command"], "npx");
}

#[test]
fn secrets_are_read_from_stdin_and_never_printed() {
    let cli = AppData::new();
    // A secret belongs to a server: without one, or naming none, it is refused.
    let o = cli.run_in(&["secret", "set", "gh.token"], "canary-cli-secret-value\n");
    assert!(!o.status.success());
    assert!(err(&o).contains("--server"), "{}", err(&o));
    let o = cli.run_in(
        &["secret", "set", "--server", "gh", "gh.token"],
        "canary-cli-secret-value\n",
    );
    assert!(!o.status.success());
    assert!(err(&o).contains("no server named gh"), "{}", err(&o));
    let fake = fake_server();
    let o = cli.run(&["server", "add", "gh", "--", fake.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let o = cli.run_in(
        &["secret", "set", "--server", "gh", "gh.token"],
        "canary-cli-secret-value\n",
    );
    // With the in-process keyring unavailable outside `make test`, the error must say so.
    if !o.status.success() {
        assert!(err(&o).contains("keyring"), "{}", err(&o));
        return;
    }
    let o = cli.run(&["secret", "status", "--server", "gh", "gh.token"]);
    assert!(out(&o).contains("set"));
    assert!(!out(&o).contains("canary-cli-secret-value"));
    let o = cli.run(&["secret", "delete", "--server", "gh", "gh.token"]);
    assert!(o.status.success());
}

#[test]
fn ctrl_c_cancels_the_call_on_the_server() {
    let cli = AppData::new();
    let record = cli.path().join("record.jsonl");
    let fake = fake_server();
    let o = cli.run(&[
        "server",
        "add",
        "slow",
        "--",
        fake.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(cli
        .run(&["server", "trust", "slow", "--yes"])
        .status
        .success());
    let child = Command::new(workspace_bin("switchboard"))
        .args([
            "call",
            "slow",
            "slow",
            "--yes",
            "--args",
            r#"{"steps": 200, "ms": 50}"#,
        ])
        .env("SWITCHBOARD_DATA_DIR", cli.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the call is on the server, then press Ctrl-C.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&record)
        .unwrap_or_default()
        .contains("tools/call")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the call never reached the server"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", err(&o));
    assert!(err(&o).contains("cancelled"), "{}", err(&o));
    let sent = std::fs::read_to_string(&record).unwrap();
    assert!(sent.contains("notifications/cancelled"), "{sent}");
}
