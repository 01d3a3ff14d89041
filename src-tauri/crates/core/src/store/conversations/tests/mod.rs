//! Tests of the conversation store on a temporary database file each.

mod branches;
mod export;
mod lifecycle;
mod schema;
mod search;

use super::*;
use crate::transcript::{Message, Part, ResultPart, Role};

pub(super) async fn open() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
    (store, dir)
}

pub(super) fn user(text: &str) -> Message {
    Message::user_text(text)
}

pub(super) fn said(text: &str) -> Vec<Part> {
    vec![Part::Text { text: text.into() }]
}

pub(super) fn tool_results(call_id: &str, text: &str) -> Message {
    Message {
        role: Role::User,
        parts: vec![Part::ToolResult {
            call_id: call_id.into(),
            content: vec![ResultPart::Text { text: text.into() }],
            is_error: false,
        }],
    }
}

/// A finished answer with `parts`.
pub(super) async fn answer(store: &Store, c: &ConversationId, parts: Vec<Part>) -> MessageId {
    let id = store
        .begin_assistant_message(c, "openai", "gpt-x")
        .await
        .unwrap();
    store
        .finish_assistant_message(
            id,
            &parts,
            MessageEnd::Complete {
                stop: crate::transcript::StopReason::EndTurn,
            },
            None,
        )
        .await
        .unwrap();
    id
}

/// `role: text` of each message, for compact assertions.
pub(super) fn transcript(msgs: &[StoredMessage]) -> Vec<String> {
    msgs.iter()
        .map(|m| {
            let role = match m.message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            format!("{role}: {}", m.message.text())
        })
        .collect()
}

/// FTS5's own check that the index matches the `messages` table it indexes.
pub(super) async fn assert_fts_consistent(store: &Store) {
    sqlx::query("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
        .execute(store.writer())
        .await
        .unwrap();
}

pub(super) async fn count(store: &Store, sql: &'static str) -> i64 {
    let (n,): (i64,) = sqlx::query_as(sql).fetch_one(store.reader()).await.unwrap();
    n
}
