//! `switchboard chat` end to end: the real CLI, a scripted OpenAI-format model on loopback, the
//! fake MCP server, a real SQLite file. Every tool call waits for a "y" on stdin; a denial is
//! told to the model; the conversation is stored and searchable. The fake model runs in this
//! process, so the runtime is multi-threaded: the CLI is waited for on a blocking thread.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;

use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::*;

const KEY: &str = "sk-chatCANARY-0123456789abcdefghij";

fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A data dir with the fake MCP server approved and a provider pointing at `llm`. With the
/// real keyring (make test) the provider is an OpenAI one with a key; without, a keyless
/// Ollama profile over the same wire format.
fn setup(data: &Path, llm: &FakeLlm) -> bool {
    let fake = fake_server();
    ok(&run_cli(
        data,
        &["server", "add", "demo", "--", fake.to_str().unwrap()],
        "",
        &[],
    ));
    ok(&run_cli(
        data,
        &["server", "trust", "demo", "--yes"],
        "",
        &[],
    ));
    let keyring = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    let base = llm.openai_base();
    let kind = if keyring { "openai" } else { "ollama" };
    ok(&run_cli(
        data,
        &[
            "provider",
            "add",
            "fake",
            "--kind",
            kind,
            "--base-url",
            &base,
            "--model",
            "m1",
        ],
        "",
        &[],
    ));
    if keyring {
        ok(&run_cli(
            data,
            &["provider", "set-key", "fake"],
            &format!("{KEY}\n"),
            &[],
        ));
    }
    keyring
}

fn scenario() -> Scenario {
    Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "demo__echo",
            &["{\"text\":", "\"hi from the model\"}"],
        )]),
        Reply::text(&["The tool ", "answered."]),
        Reply::text(&["You are welcome."]),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_runs_only_after_yes_and_the_conversation_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(scenario()).await.unwrap();
    let keyring = setup(data, &llm);

    let o = run_cli(
        data,
        &["chat", "--model", "fake", "please echo"],
        "y\n",
        &[],
    );
    let stdout = ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(stdout.contains("The tool answered."), "{stdout}");
    assert!(
        stderr.contains("The model wants to run echo on demo"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hi from the model"),
        "the prompt hid the arguments: {stderr}"
    );
    assert!(stderr.contains("allowed"), "{stderr}");

    // The second model call carried the tool's real result back.
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let second = reqs[1].body.to_string();
    assert!(second.contains("\"role\":\"tool\""), "{second}");
    assert!(second.contains("hi from the model"), "{second}");
    assert_eq!(reqs[0].body["model"], "m1");
    assert!(reqs[0].body["tools"].to_string().contains("demo__echo"));
    if keyring {
        assert_eq!(reqs[0].headers["authorization"], format!("Bearer {KEY}"));
    }

    // Stored: listed, shown with the tool call, found by search, exported.
    let list = ok(&run_cli(data, &["history", "list"], "", &[]));
    let id = list.split('\t').next().unwrap().trim().to_owned();
    assert!(list.contains("please echo"), "{list}");
    let shown = ok(&run_cli(data, &["history", "show", &id], "", &[]));
    assert!(shown.contains("user (Complete): please echo"), "{shown}");
    assert!(shown.contains("tool call call_1: demo__echo"), "{shown}");
    assert!(shown.contains("The tool answered."), "{shown}");
    let found = ok(&run_cli(data, &["history", "search", "answered"], "", &[]));
    assert!(found.starts_with(&id), "{found}");
    let json = ok(&run_cli(
        data,
        &["history", "export", &id, "--format", "json"],
        "",
        &[],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v.to_string().contains("hi from the model"));

    // Continuing the conversation sends the whole history.
    ok(&run_cli(
        data,
        &[
            "chat",
            "--model",
            "fake:m2",
            "--conversation",
            &id,
            "thanks",
        ],
        "",
        &[],
    ));
    let third = &llm.requests()[2].body;
    assert_eq!(third["model"], "m2");
    assert!(third.to_string().contains("please echo"), "{third}");

    // The key lives in the keyring only.
    assert_no_file_contains(data, KEY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_never_runs_and_the_model_is_told_why() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let canary = data.join("canary-written");
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_9",
            "demo__write_canary",
            &[&format!(
                "{{\"path\":{}}}",
                serde_json::json!(canary.display().to_string())
            )],
        )]),
        Reply::text(&["Understood, I will not."]),
    ]))
    .await
    .unwrap();
    setup(data, &llm);
    // No "y": end of input denies.
    let o = run_cli(
        data,
        &["chat", "--model", "fake", "write the file"],
        "",
        &[],
    );
    let stdout = ok(&o);
    assert!(stdout.contains("Understood"), "{stdout}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("denied"));
    assert!(!canary.exists(), "a denied call ran");
    let second = llm.requests()[1].body.to_string();
    assert!(second.contains("did not allow"), "{second}");
    // The refusal is recorded as the user's decision, and the call as never run.
    let list = ok(&run_cli(data, &["history", "list"], "", &[]));
    let id = list.split('\t').next().unwrap().trim().to_owned();
    let json = ok(&run_cli(
        data,
        &["history", "export", &id, "--format", "json"],
        "",
        &[],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"deny\""), "{text}");
    assert!(
        !text.contains("\"allow\""),
        "an approval was recorded before the user answered: {text}"
    );
}
