//! ST-02 with several processes on one data directory: a `switchboard chat` started while
//! another one streams an answer leaves that answer alone (it is live, not interrupted); once
//! the first process is killed, the next start flags it, although a long-lived host (as the
//! app is) has been open on the same directory all along. Real CLI processes, a real SQLite
//! file, a scripted model on loopback whose first answer stalls.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use switchboard_core::llm::Role;
use switchboard_core::store::{ArchiveFilter, ConversationQuery, MessageStatus, Store};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::AppData;
use switchboard_tests::*;

/// The status of every assistant answer, in the order of their conversations' user messages.
async fn answers(data: &Path) -> Vec<(String, MessageStatus)> {
    let store = Store::open(&data.join("switchboard.sqlite")).await.unwrap();
    let page = store
        .list_conversations(&ConversationQuery {
            filter: ArchiveFilter::All,
            limit: 100,
            after: None,
        })
        .await
        .unwrap();
    let mut out = Vec::new();
    for c in page.items {
        let history = store.load_history(&c.conversation.id).await.unwrap();
        let asked = history
            .iter()
            .find(|m| m.message.role == Role::User)
            .map(|m| m.message.text())
            .unwrap_or_default();
        for m in history {
            if m.message.role == Role::Assistant {
                out.push((asked.clone(), m.status));
            }
        }
    }
    store.close().await;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn add_provider(data: &Path, name: &str, base: &str) {
    AppData::on(data).provider(name, "ollama", base, "m");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_chat_process_leaves_a_live_answer_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // The slow model sends one word, then stalls far longer than the test runs.
    let mut stall = Reply::text(&["thinking ", "more ", "…done"]);
    stall.immediate_frames = 3;
    stall.chunk_delay_ms = 600_000;
    let slow = FakeLlm::spawn(Scenario::new([stall])).await.unwrap();
    let mut fast = Scenario::new([Reply::text(&["quick answer"])]);
    fast.repeat_last = true;
    let fast = FakeLlm::spawn(fast).await.unwrap();
    add_provider(data, "slow", &slow.openai_base());
    add_provider(data, "fast", &fast.openai_base());
    // A host that stays open, idle, the whole time, as the app does; it recovered at start.
    let app = switchboard_core::host::HostBuilder::new(data)
        .secrets(switchboard_core::secrets::Secrets::new(
            switchboard_core::secrets::MemoryStore::default(),
        ))
        .build()
        .await
        .unwrap();
    app.recover_interrupted().await.unwrap();

    let first = KillOnDrop(
        Command::new(workspace_bin("switchboard"))
            .args(["chat", "--model", "slow", "a first question"])
            .env("SWITCHBOARD_DATA_DIR", data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(data.join("first.stderr")).unwrap())
            .spawn()
            .unwrap(),
    );
    // Its answer is being written.
    let mut live = false;
    for _ in 0..600 {
        let a = answers(data).await;
        if a.iter()
            .any(|(q, s)| q == "a first question" && *s == MessageStatus::Incomplete)
        {
            live = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        live,
        "the first answer never started: {:?}\n{}",
        answers(data).await,
        std::fs::read_to_string(data.join("first.stderr")).unwrap_or_default()
    );

    // A second process chats to the end while the first streams.
    let o = run_cli(
        data,
        &["chat", "--model", "fast", "a second question"],
        "",
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut first = first;
    assert!(
        first.0.try_wait().unwrap().is_none(),
        "the first chat must still be streaming for this test to mean anything"
    );
    assert_eq!(
        answers(data).await,
        [
            ("a first question".to_owned(), MessageStatus::Incomplete),
            ("a second question".to_owned(), MessageStatus::Complete),
        ],
        "the second start flagged the first process's live answer"
    );

    // The first dies mid-answer: the next start flags what it left, with the app still open.
    let _ = first.0.kill();
    let _ = first.0.wait();
    let o = run_cli(
        data,
        &["chat", "--model", "fast", "a third question"],
        "",
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        answers(data).await,
        [
            ("a first question".to_owned(), MessageStatus::Interrupted),
            ("a second question".to_owned(), MessageStatus::Complete),
            ("a third question".to_owned(), MessageStatus::Complete),
        ]
    );
    app.shutdown().await;
}
