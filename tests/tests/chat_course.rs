//! Changing a conversation's course through the real CLI, against a scripted OpenAI-format
//! model on loopback and a real SQLite file: regenerate, edit-and-resend, fork, images,
//! context compaction and the cost line. Nothing is ever deleted: replaced messages stay in
//! the history; a summary stands in for older messages only in requests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use switchboard_tests::chat_cli::{newest_conversation, ok, setup_chat, shown_messages};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::*;

/// The messages a recorded OpenAI request sent, as text.
fn sent_messages(body: &serde_json::Value) -> String {
    body["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn regenerate_edit_and_fork_keep_every_branch() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
        Reply::text(&["answer to the edit"]),
    ]))
    .await
    .unwrap();
    setup_chat(data, &llm, &[]);
    ok(&run_cli(
        data,
        &["chat", "--model", "fake", "hello"],
        "",
        &[],
    ));
    let id = newest_conversation(data);

    // Regenerate: a new answer replaces the old one, which the model does not see again.
    let out = ok(&run_cli(
        data,
        &["chat", "--conversation", &id, "--regenerate"],
        "",
        &[],
    ));
    assert!(out.contains("second answer"), "{out}");
    let second = sent_messages(&llm.requests()[1].body);
    assert!(
        second.contains("hello") && !second.contains("first answer"),
        "{second}"
    );
    let shown = shown_messages(data, &id);
    let texts: Vec<&str> = shown.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "user (Complete): hello",
            "assistant (Complete): second answer"
        ]
    );

    // Edit-and-resend: the person's message is replaced and answered.
    let user_id = shown[0].0.clone();
    let out = ok(&run_cli(
        data,
        &[
            "chat",
            "--conversation",
            &id,
            "--edit",
            &user_id,
            "hello, edited",
        ],
        "",
        &[],
    ));
    assert!(out.contains("answer to the edit"), "{out}");
    let third = sent_messages(&llm.requests()[2].body);
    assert!(
        third.contains("hello, edited") && !third.contains("second answer"),
        "{third}"
    );
    let shown = shown_messages(data, &id);
    let texts: Vec<&str> = shown.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "user (Complete): hello, edited",
            "assistant (Complete): answer to the edit"
        ]
    );
    // Every branch is still in the store (the export has the visible branch only).
    let store = switchboard_core::store::Store::open(&data.join("switchboard.sqlite"))
        .await
        .unwrap();
    let all = store
        .load_history(&switchboard_core::ids::ConversationId::parse(&id).unwrap())
        .await
        .unwrap();
    let texts: Vec<String> = all.iter().map(|m| m.message.text()).collect();
    assert_eq!(
        texts,
        [
            "hello",
            "first answer",
            "second answer",
            "hello, edited",
            "answer to the edit"
        ],
        "a replaced message was deleted"
    );
    drop(store);

    // An answer cannot be "edited" as if the person wrote it.
    let o = run_cli(
        data,
        &["chat", "--conversation", &id, "--edit", &shown[1].0, "no"],
        "",
        &[],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a visible message the person wrote"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Fork at the edited message: a new conversation with that message only.
    let fork = ok(&run_cli(
        data,
        &["history", "fork", &id, "--at", &shown[0].0],
        "",
        &[],
    ))
    .trim()
    .to_owned();
    assert_ne!(fork, id);
    let forked = shown_messages(data, &fork);
    assert_eq!(forked.len(), 1, "{forked:?}");
    assert_eq!(forked[0].1, "user (Complete): hello, edited");
    assert_eq!(
        shown_messages(data, &id).len(),
        2,
        "the source is unchanged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_image_reaches_the_model_and_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["a red pixel"])]))
        .await
        .unwrap();
    setup_chat(data, &llm, &[]);
    // A 1x1 PNG.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90,
        0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8,
        0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00,
        0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    let path = data.join("pixel.png");
    std::fs::write(&path, png).unwrap();
    let out = ok(&run_cli(
        data,
        &[
            "chat",
            "--model",
            "fake",
            "--image",
            path.to_str().unwrap(),
            "what is this?",
        ],
        "",
        &[],
    ));
    assert!(out.contains("a red pixel"), "{out}");
    let body = sent_messages(&llm.requests()[0].body);
    assert!(body.contains("data:image/png;base64,iVBORw0KGgo"), "{body}");
    let id = newest_conversation(data);
    let json = ok(&run_cli(
        data,
        &["history", "export", &id, "--format", "json"],
        "",
        &[],
    ));
    assert!(json.contains("image/png"), "{json}");

    // Not an image: refused before anything is stored or sent.
    let text = data.join("notes.txt");
    std::fs::write(&text, "hi").unwrap();
    let o = run_cli(
        data,
        &[
            "chat",
            "--model",
            "fake",
            "--image",
            text.to_str().unwrap(),
            "x",
        ],
        "",
        &[],
    );
    assert!(!o.status.success());
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_turns_are_summarized_near_the_context_window_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let replies: Vec<Reply> = (0..12)
        .map(|i| Reply::text(&[&format!("reply-{i}")]))
        .collect();
    let llm = FakeLlm::spawn(Scenario::new(replies)).await.unwrap();
    setup_chat(data, &llm, &["--context-window", "3000"]);
    // Each message is about 600 tokens by the host's estimate; 75% of 3,000 is reached within
    // a few turns.
    let long = |tag: &str| format!("{tag} {}", "lorem ipsum dolor sit amet ".repeat(90));
    ok(&run_cli(
        data,
        &["chat", "--model", "fake", &long("FIRST-MARKER")],
        "",
        &[],
    ));
    let id = newest_conversation(data);
    let mut compacted_at = None;
    for turn in 2..=6 {
        let o = run_cli(
            data,
            &[
                "chat",
                "--conversation",
                &id,
                &long(&format!("TURN-{turn}")),
            ],
            "",
            &[],
        );
        ok(&o);
        if String::from_utf8_lossy(&o.stderr).contains("were summarized") {
            compacted_at = Some(turn);
            break;
        }
    }
    let turn = compacted_at.expect("no compaction within six long turns");
    let reqs = llm.requests();
    let k = reqs
        .iter()
        .position(|r| r.body.to_string().contains("condense conversations"))
        .expect("a summary request");
    // The summary request carried the old turn; the answer's request carried the summary
    // instead of it, and the newest message word for word.
    assert!(reqs[k].body.to_string().contains("FIRST-MARKER"));
    let summary = format!("reply-{k}");
    let next = reqs[k + 1].body.to_string();
    assert!(
        next.contains(&summary),
        "the summary is not in the request: {next}"
    );
    assert!(
        !next.contains("FIRST-MARKER"),
        "the old turn was still sent"
    );
    assert!(next.contains(&format!("TURN-{turn}")));
    // The person sees the summary; every message is still there.
    let shown = ok(&run_cli(data, &["history", "show", &id], "", &[]));
    assert!(shown.contains("summary of"), "{shown}");
    assert!(shown.contains(&summary), "{shown}");
    assert!(
        shown.contains("FIRST-MARKER"),
        "a summarized message was deleted"
    );
    // The next turn reuses the stored summary without asking for another.
    let before = llm.requests().len();
    ok(&run_cli(
        data,
        &["chat", "--conversation", &id, "short question"],
        "",
        &[],
    ));
    let after = llm.requests();
    assert_eq!(after.len(), before + 1, "summarized again without need");
    assert!(after[before].body.to_string().contains(&summary));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_shows_tokens_and_the_estimated_cost() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::text(&["priced"]).with_usage(1_000_000, 100_000, 0)
    ]))
    .await
    .unwrap();
    let keyring = setup_chat(data, &llm, &[]);
    ok(&run_cli(
        data,
        &["chat", "--model", "fake:gpt-4o", "how much?"],
        "",
        &[],
    ));
    let id = newest_conversation(data);
    let shown = ok(&run_cli(data, &["history", "show", &id], "", &[]));
    assert!(shown.contains("tokens: 1000000 in, 100000 out"), "{shown}");
    if keyring {
        // OpenAI list price of gpt-4o: $2.50 in, $10 out per million.
        assert!(shown.contains("about $3.50 at list prices"), "{shown}");
    } else {
        // The keyless fallback is a local (Ollama) profile: free.
        assert!(shown.contains("about $0.00 at list prices"), "{shown}");
    }
}
