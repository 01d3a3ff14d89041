//! `switchboard chat` end to end: the real CLI, a scripted OpenAI-format model on loopback, the
//! fake MCP server, a real SQLite file. Every tool call waits for a "y" on stdin; a denial is
//! told to the model; the conversation is stored and searchable. The fake model runs in this
//! process, so the runtime is multi-threaded: the CLI is waited for on a blocking thread.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use switchboard_tests::chat_cli::{ok, setup_chat, KEY};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::*;

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
    let keyring = setup_chat(data, &llm, &[]);

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
    setup_chat(data, &llm, &[]);
    // "n REASON": refused, and the model is told why.
    let o = run_cli(
        data,
        &["chat", "--model", "fake", "write the file"],
        "n Not In My Data Dir\n",
        &[],
    );
    let stdout = ok(&o);
    assert!(stdout.contains("Understood"), "{stdout}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("denied"));
    assert!(!canary.exists(), "a denied call ran");
    let second = llm.requests()[1].body.to_string();
    assert!(second.contains("did not allow"), "{second}");
    assert!(
        second.contains("Not In My Data Dir"),
        "the reason: {second}"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_then_yes_runs_the_persons_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(scenario()).await.unwrap();
    setup_chat(data, &llm, &[]);
    // The "editor" rewrites the file it is given, as a person would.
    let editor = data.join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf '{\"text\": \"edited by a person\"}' > \"$1\"\n",
    )
    .unwrap();
    let o = run_cli(
        data,
        &["chat", "--model", "fake", "please echo"],
        "e\ny\n",
        &[
            ("VISUAL", ""),
            ("EDITOR", &format!("sh {}", editor.display())),
        ],
    );
    ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(stderr.contains("with your edit"), "{stderr}");
    assert!(stderr.contains("edited by a person"), "{stderr}");
    let second = llm.requests()[1].body.to_string();
    assert!(
        second.contains("edited the arguments") && second.contains("edited by a person"),
        "the model learns what really ran: {second}"
    );
    assert!(
        !second.contains("\"text\":\"hi from the model\"}\"}"),
        "the tool result is the edited run's"
    );
    // The approval records the edit.
    let list = ok(&run_cli(data, &["history", "list"], "", &[]));
    let id = list.split('\t').next().unwrap().trim().to_owned();
    let json = ok(&run_cli(
        data,
        &["history", "export", &id, "--format", "json"],
        "",
        &[],
    ));
    assert!(json.contains("approved with edited arguments"), "{json}");
}
