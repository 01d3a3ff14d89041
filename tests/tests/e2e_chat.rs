//! The chat view end to end in the real app window (WebDriver, under Xvfb in `make test`),
//! against scripted OpenAI- and Anthropic-format models on loopback and the fake MCP server:
//! a tool call approved in the shared dialog; a call denied with a reason the model reads; a
//! call run with arguments edited in the dialog; a turn stopped mid-answer; the vendor
//! switched mid-conversation with the whole context; an answer regenerated; the conversation
//! reopened after an app restart with its usage line; a fork from a message. Screenshots go to
//! `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, idle, send, ONE_WINDOW};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

/// The fake MCP server `demo` added and trusted, and a keyless provider `fake` (Ollama
/// profile, OpenAI wire) at `llm`.
fn setup(data: &Path, llm: &FakeLlm) {
    let fake = fake_server();
    let base = llm.openai_base();
    for args in [
        vec!["server", "add", "demo", "--", fake.to_str().unwrap()],
        vec!["server", "trust", "demo", "--yes"],
        vec!["server", "always-on", "demo", "on"],
        vec![
            "provider",
            "add",
            "fake",
            "--kind",
            "ollama",
            "--base-url",
            &base,
            "--model",
            "m1",
        ],
    ] {
        let o = run_cli(data, &args, "", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Starts the app on `data` and opens the chat view once the demo server runs.
async fn open_chat(driver: &Driver) -> Session {
    let s = driver
        .session(&workspace_bin("switchboard-desktop"))
        .await
        .unwrap();
    s.wait_text(r#"article[data-name="demo"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    s.click_on(r#".tab[data-page="chat"]"#, WAIT).await.unwrap();
    s.wait_for(r#".chat-provider option[value="fake"]"#, WAIT)
        .await
        .unwrap();
    s
}

#[tokio::test]
async fn chat_sends_a_message_approves_a_tool_call_and_shows_the_answer() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "demo__echo",
            &["{\"text\":", "\"from the chat\"}"],
        )]),
        Reply::text(&[
            "The **tool** said: ",
            "from the chat. <img src=x onerror=alert(1)>",
        ]),
    ]))
    .await
    .unwrap();
    setup(data, &llm);
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = open_chat(&driver).await;
    let wait = WAIT;
    send(&s, "please echo").await.unwrap();
    // The model's tool call waits for the same approval dialog, with its arguments.
    s.wait_text(".approval-dialog .approval-args", "from the chat", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("17-chat-approval.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", wait)
        .await
        .unwrap();
    let answer = s
        .wait_text(".chat-log", "The tool said: from the chat.", wait)
        .await
        .unwrap();
    assert!(answer.contains("<img src=x onerror=alert(1)>"), "{answer}");
    let injected = s
        .execute("return document.querySelectorAll('.chat-log img, .chat-log script').length;")
        .await
        .unwrap();
    assert_eq!(injected, serde_json::json!(0));
    s.wait_for(".chat-log .tool-card", wait).await.unwrap();
    s.screenshot(&artifacts().join("18-chat-answer.png"))
        .await
        .unwrap();
    // The tool's real result went back to the model.
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].body.to_string().contains("from the chat"));
    s.close().await.unwrap();
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn deny_with_reason_edit_stop_switch_vendor_regenerate_restart_and_fork() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let mut slow = Reply::text(&vec!["a long story, word by word. "; 200]);
    slow.chunk_delay_ms = 100;
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "demo__echo",
            &["{\"text\":\"first try\"}"],
        )]),
        Reply::text(&["Understood, I did not run it."]),
        Reply::calls(vec![ScriptedCall::new(
            "call_2",
            "demo__echo",
            &["{\"text\":\"the model's words\"}"],
        )]),
        Reply::text(&["Echoed your edit."]),
        slow,
        Reply::text(&["Anthropic here, with the whole context."]),
        Reply::text(&["Regenerated by Anthropic."]),
    ]))
    .await
    .unwrap();
    setup(data, &llm);
    // A second vendor on the Anthropic wire; its key goes to the real keyring.
    let keyring = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    if keyring {
        let base = llm.anthropic_base();
        for (args, stdin) in [
            (
                vec![
                    "provider",
                    "add",
                    "anth",
                    "--kind",
                    "anthropic",
                    "--base-url",
                    &base,
                    "--model",
                    "claude-sonnet-4-5",
                ],
                "",
            ),
            (vec!["provider", "set-key", "anth"], "sk-ant-e2e-key\n"),
        ] {
            let o = run_cli(data, &args, stdin, &[]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = open_chat(&driver).await;

    // 1. Deny with a reason: the call never runs and the model reads why.
    send(&s, "echo something").await.unwrap();
    s.wait_text(".approval-dialog .approval-args", "first try", WAIT)
        .await
        .unwrap();
    s.set_value(".approval-dialog .approval-reason", "not with those words")
        .await
        .unwrap();
    s.click_on(".approval-dialog button.deny", WAIT)
        .await
        .unwrap();
    s.wait_text(".chat-log", "Understood, I did not run it.", WAIT)
        .await
        .unwrap();
    idle(&s).await.unwrap();
    let told = llm.requests()[1].body.to_string();
    assert!(told.contains("not with those words"), "{told}");

    // 2. Edit the arguments in the dialog, then run: the server gets the person's version.
    send(&s, "echo again").await.unwrap();
    s.wait_text(".approval-dialog .approval-args", "the model's words", WAIT)
        .await
        .unwrap();
    s.click_on(".approval-dialog .approval-edit", WAIT)
        .await
        .unwrap();
    s.set_value(
        ".approval-dialog .approval-args-edit",
        r#"{"text": "edited in the dialog"}"#,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("19-chat-edit-arguments.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", WAIT)
        .await
        .unwrap();
    s.wait_text(".chat-log", "Echoed your edit.", WAIT)
        .await
        .unwrap();
    // The stored result says what ran (the view is rebuilt from the store after a turn).
    s.wait_text(
        ".chat-log",
        "the call ran with: {\"text\":\"edited in the dialog\"}",
        WAIT,
    )
    .await
    .unwrap();
    idle(&s).await.unwrap();
    let result = llm.requests()[3].body.to_string();
    assert!(
        result.contains("edited in the dialog") && result.contains("edited the arguments"),
        "{result}"
    );

    // 3. Stop a turn mid-answer: the partial answer stays, marked.
    send(&s, "tell me a long story").await.unwrap();
    s.wait_text(".chat-log", "word by word", WAIT)
        .await
        .unwrap();
    s.click_on(".chat-stop", WAIT).await.unwrap();
    idle(&s).await.unwrap();
    let log = s
        .text(&s.wait_for(".chat-log", WAIT).await.unwrap())
        .await
        .unwrap();
    assert!(log.to_lowercase().contains("stopped"), "{log}");
    let after_stop = llm.requests().len();
    assert_eq!(after_stop, 5);

    if keyring {
        // 4. Switch vendor mid-conversation: Anthropic gets the whole context.
        s.execute(
            "const p = document.querySelector('.chat-provider'); p.value = 'anth'; \
             p.dispatchEvent(new Event('change', { bubbles: true })); return 1;",
        )
        .await
        .unwrap();
        send(&s, "and you?").await.unwrap();
        s.wait_text(".chat-log", "Anthropic here", WAIT)
            .await
            .unwrap();
        idle(&s).await.unwrap();
        let req = &llm.requests()[5];
        assert!(req.path.ends_with("/messages"), "{}", req.path);
        let body = req.body.to_string();
        for earlier in ["echo something", "edited in the dialog", "and you?"] {
            assert!(body.contains(earlier), "{earlier} missing: {body}");
        }

        // 5. Regenerate the last answer.
        s.click_on(".chat-log .msg-regenerate", WAIT).await.unwrap();
        s.wait_text(".chat-log", "Regenerated by Anthropic.", WAIT)
            .await
            .unwrap();
        idle(&s).await.unwrap();
        let log = s
            .text(&s.wait_for(".chat-log", WAIT).await.unwrap())
            .await
            .unwrap();
        assert!(
            !log.contains("Anthropic here"),
            "the replaced answer is still shown: {log}"
        );
    }
    s.screenshot(&artifacts().join("20-chat-course.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // 6. Restart the app and reopen the conversation: everything is there, with its usage.
    let s = open_chat(&driver).await;
    s.click_on(".conv-list .conv-open", WAIT).await.unwrap();
    s.wait_text(".chat-log", "Echoed your edit.", WAIT)
        .await
        .unwrap();
    let log = s
        .text(&s.wait_for(".chat-log", WAIT).await.unwrap())
        .await
        .unwrap();
    assert!(
        log.contains("word by word"),
        "the stopped answer was lost: {log}"
    );
    if keyring {
        assert!(log.contains("Regenerated by Anthropic."), "{log}");
    }
    s.wait_for(".chat-usage", WAIT).await.unwrap();

    // 7. Fork from the first message: a second conversation appears, holding only it.
    s.click_on(".chat-log .msg-fork", WAIT).await.unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while s.find_all(".conv-list .conv-open").await.unwrap().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "no fork in the list");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let log = s
        .text(&s.wait_for(".chat-log", WAIT).await.unwrap())
        .await
        .unwrap();
    assert!(
        log.contains("echo something") && !log.contains("Echoed your edit."),
        "{log}"
    );
    s.screenshot(&artifacts().join("21-chat-reopened-forked.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}
