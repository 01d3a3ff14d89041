//! Outbound redaction in the real app window (issue 16, point 5; WebDriver under Xvfb in
//! `make test`), against a scripted OpenAI-format cloud model on loopback that records every
//! request, and the fake MCP server: a canary e-mail address and an API-key shape typed in the
//! chat never reach the model; the transcript says, at that turn, what was redacted and for
//! which provider; a tool call the model writes with a placeholder asks in a dialog that shows
//! the placeholder next to the real value, and the server gets the real value; switched off
//! in the chat, the next message goes out as typed; after an app restart the reopened
//! conversation still shows the notice at its turn. Screenshots (`tests/results/e2e/`):
//! `redaction-notice.png`, `redaction-approval.png`.
//!
//! A cloud provider needs its key in the OS keyring: without `SWITCHBOARD_TEST_KEYRING` (set
//! by `make test`) there is no cloud provider to redact for, and the test says so and stops.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use switchboard_tests::e2e::{artifacts, e2e_available, idle, send, ONE_WINDOW};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{self, app_window, AppData};
use switchboard_tests::webdriver::{Driver, Session};

const WAIT: Duration = Duration::from_secs(30);
const EMAIL: &str = "canary.window@example.org";
const API_KEY: &str = "sk-windowCanary0123456789abcdefXYZ";

/// The fake MCP server `demo` (recording what it receives to `record`) and the cloud
/// provider `cloud` (OpenAI profile, key in the keyring) at `llm`.
fn setup(data: &Path, llm: &FakeLlm, record: &Path) {
    AppData::on(data)
        .fake_server("demo", &["--record", record.to_str().unwrap()])
        .provider("cloud", "openai", &llm.openai_base(), "m1")
        .provider_key("cloud", "sk-e2e-provider-key");
}

async fn open_chat(driver: &Driver) -> Session {
    let s = app_window(driver).await;
    scenario::open_chat(&s, "demo", "cloud").await;
    s
}

/// The text of every lasting redaction notice in the transcript, in order.
async fn notices(s: &Session) -> Vec<String> {
    serde_json::from_value(
        s.execute(
            "return [...document.querySelectorAll('.chat-log .chat-redacted-turn')]
               .map((n) => n.textContent);",
        )
        .await
        .unwrap(),
    )
    .unwrap()
}

/// Waits until the transcript shows `n` lasting notices; returns them.
async fn wait_notices(s: &Session, n: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let got = notices(s).await;
        if got.len() == n {
            return got;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{n} notices expected: {got:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const NOTICE: &str = "Redacted before sending to OpenAI: 1 API key, 1 e-mail address";

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn the_window_redacts_says_so_at_the_turn_and_switches_off_per_conversation() {
    if !e2e_available() {
        return;
    }
    if std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_none() {
        eprintln!("skipped: a cloud provider needs the keyring (run through `make test`)");
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let record = data.join("demo-received.jsonl");
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "demo__echo",
            &[&json!({ "text": "note for [REDACTED_EMAIL_1]" }).to_string()],
        )]),
        Reply::text(&["Noted, without seeing it."]),
        Reply::text(&["This time I saw it."]),
    ]))
    .await
    .unwrap();
    setup(data, &llm, &record);
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = open_chat(&driver).await;
    s.wait_text(".chat-redaction", "Redaction: on", WAIT)
        .await
        .unwrap();

    // 1. Canaries typed in the chat: the model gets placeholders, and writes one in a call.
    send(&s, &format!("Write to {EMAIL}, key {API_KEY}"))
        .await
        .unwrap();
    let item = s
        .wait_text(
            ".approval-dialog .approval-restored-item",
            "[REDACTED_EMAIL_1]",
            WAIT,
        )
        .await
        .unwrap();
    assert!(
        item.contains("Switchboard put back the real value before running"),
        "{item}"
    );
    assert!(item.contains(&format!("note for {EMAIL}")), "{item}");
    s.screenshot(&artifacts().join("redaction-approval.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", WAIT)
        .await
        .unwrap();
    s.wait_text(".chat-log", "Noted, without seeing it.", WAIT)
        .await
        .unwrap();
    idle(&s).await.unwrap();
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        let body = r.body.to_string();
        assert!(
            !body.contains(EMAIL) && !body.contains(API_KEY),
            "a canary reached the model: {body}"
        );
    }
    assert!(reqs[0].body.to_string().contains("[REDACTED_EMAIL_1]"));
    let got = std::fs::read_to_string(&record).unwrap();
    assert!(
        got.contains(&format!("note for {EMAIL}")),
        "the server did not get the real value: {got}"
    );

    // The transcript says so at that turn, right after the person's message.
    assert_eq!(wait_notices(&s, 1).await, [NOTICE]);
    let placed = s
        .execute(
            "const n = document.querySelector('.chat-log .chat-redacted-turn');
             const m = n.previousElementSibling;
             return [m.dataset.role, m.textContent.includes('Write to'), n.title];",
        )
        .await
        .unwrap();
    assert_eq!(placed[0], "user", "{placed}");
    assert_eq!(placed[1], true, "{placed}");
    assert!(
        placed[2].as_str().unwrap().contains("never saw the values"),
        "{placed}"
    );
    s.screenshot(&artifacts().join("redaction-notice.png"))
        .await
        .unwrap();

    // 2. Switched off for this conversation: the next message goes out as typed.
    s.click_on(".chat-redaction-toggle", WAIT).await.unwrap();
    s.wait_text(".chat-redaction", "off for this conversation", WAIT)
        .await
        .unwrap();
    send(&s, &format!("Again: {EMAIL}")).await.unwrap();
    s.wait_text(".chat-log", "This time I saw it.", WAIT)
        .await
        .unwrap();
    idle(&s).await.unwrap();
    let body = llm.requests()[2].body.to_string();
    assert!(
        body.contains(&format!("Again: {EMAIL}")) && body.contains(API_KEY),
        "switched off, the real text should go: {body}"
    );
    // The first turn keeps its notice; the second had nothing redacted.
    assert_eq!(wait_notices(&s, 1).await, [NOTICE]);
    s.close().await.unwrap();

    // 3. After a restart, the reopened conversation still says it at its turn, and the
    // switch is still off.
    let s = open_chat(&driver).await;
    s.click_on(".conv-list .conv-open", WAIT).await.unwrap();
    s.wait_text(".chat-log", "This time I saw it.", WAIT)
        .await
        .unwrap();
    assert_eq!(wait_notices(&s, 1).await, [NOTICE]);
    s.wait_text(".chat-redaction", "off for this conversation", WAIT)
        .await
        .unwrap();
    s.close().await.unwrap();
}
