//! Messages: appending, the streamed answer (begin, checkpoint, finish), loading and the
//! startup sweep. Branching (edit-and-resend, regenerate, fork) and bulk import are in
//! `branches.rs`.

use std::borrow::Cow;

use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use super::{corrupt, not_found, to_i64, to_json, to_u64};
use crate::ids::{ConversationId, MessageId};
use crate::store::{now_ms, Store, StoreError};
use crate::transcript::{Message, Part, Role, StopReason, Usage};

/// Where a message stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Whole: every user message, and answers that ended normally.
    Complete,
    /// Being streamed; what is stored is the last checkpoint.
    Incomplete,
    /// Found incomplete at startup (the app died mid-answer): kept as it was, flagged.
    Interrupted,
    /// The user stopped the answer.
    Cancelled,
    /// The provider failed mid-answer; `error` says how.
    Failed,
}

impl MessageStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Incomplete => "incomplete",
            Self::Interrupted => "interrupted",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "complete" => Self::Complete,
            "incomplete" => Self::Incomplete,
            "interrupted" => Self::Interrupted,
            "cancelled" => Self::Cancelled,
            "failed" => Self::Failed,
            _ => return None,
        })
    }
}

/// How a streamed answer ended (the statuses an answer may be finished with; `incomplete` is
/// not one of them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum MessageEnd {
    /// The provider finished the answer.
    Complete {
        /// Why it stopped.
        stop: StopReason,
    },
    /// The user stopped it.
    Cancelled,
    /// The provider failed mid-answer.
    Failed {
        /// What went wrong, as shown to the user.
        error: String,
    },
}

/// One stored message with its metadata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// Its id.
    pub id: MessageId,
    /// Its position in the conversation (1-based; superseded messages keep theirs, so the
    /// visible sequence can have gaps).
    pub seq: i64,
    /// Role and parts.
    pub message: Message,
    /// Where it stands.
    pub status: MessageStatus,
    /// The provider that produced it (answers only).
    pub provider: Option<String>,
    /// The model that produced it (answers only).
    pub model: Option<String>,
    /// Tokens of the call that produced it, when reported.
    pub usage: Option<Usage>,
    /// Why the model stopped, for complete answers.
    pub stop: Option<StopReason>,
    /// What went wrong, for failed answers.
    pub error: Option<String>,
    /// Created, ms since the epoch (for fork copies: when the original was).
    pub created_at_ms: i64,
    /// Last written (checkpoint, finish, superseded), ms since the epoch.
    pub updated_at_ms: i64,
    /// The message that replaced it, if it was edited away or regenerated.
    pub superseded_by: Option<MessageId>,
    /// For copies made by a fork: the original message.
    pub copied_from: Option<MessageId>,
}

/// What [`Store::mark_interrupted_on_startup`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovered {
    /// Answers that were incomplete and are now `interrupted`.
    pub messages: u64,
    /// Tool calls that were pending or running and are now `interrupted`.
    pub tool_calls: u64,
}

/// A message given whole to [`Store::import_messages`].
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedMessage {
    /// Role and parts.
    pub message: Message,
    /// Its status (`Incomplete` is stored as `Interrupted`: nothing will finish it).
    pub status: MessageStatus,
    /// The provider that produced it.
    pub provider: Option<String>,
    /// The model that produced it.
    pub model: Option<String>,
    /// Its usage.
    pub usage: Option<Usage>,
    /// When it was said, ms since the epoch.
    pub created_at_ms: i64,
}

/// What a message query selects, for `concat!` and [`decode`]: the id and `parts_json` as
/// columns of their own, everything else packed by SQLite into one JSON array ([`Meta`]).
///
/// Why packed: sqlx-sqlite copies every column of every row on its worker thread
/// (`sqlite3_value_dup`, one allocation or two) and the caller frees it, both under SQLite's
/// global allocator mutex, so the two threads contend on it per column. At 16 columns that
/// contention, not SQLite or JSON, was most of the time spent opening a long conversation
/// (10,000 messages: median 70 ms with 16 columns, 36 ms with these 3 on the benchmark machine;
/// `docs/benchmarks.md`, "Chat"). `json_array` is cheap next to it and quotes text columns
/// itself. The id stays a column so that a row whose JSON does not decode is still reported by
/// id.
macro_rules! message_cols {
    () => {
        "id, parts_json, json_array(seq, role, status, provider, model, usage_input, \
         usage_output, usage_cached_input, stop_reason_json, error, created_at, updated_at, \
         superseded_by, copied_from)"
    };
}

pub(super) const LOAD_VISIBLE: &str = concat!(
    "SELECT ",
    message_cols!(),
    " FROM messages WHERE conversation_id = ? AND superseded_by IS NULL ORDER BY seq"
);
const LOAD_HISTORY: &str = concat!(
    "SELECT ",
    message_cols!(),
    " FROM messages WHERE conversation_id = ? ORDER BY seq"
);
// Both match their partial index's WHERE exactly, so only unfinished rows are visited.
pub(super) const SWEEP_MESSAGES: &str =
    "UPDATE messages SET status = 'interrupted', updated_at = ? WHERE status = 'incomplete'";
pub(super) const SWEEP_TOOL_CALLS: &str = "UPDATE tool_calls SET status = 'interrupted', \
     finished_at = ? WHERE status IN ('pending', 'running')";

/// The packed columns of `message_cols!`, in order. Text borrows from the row where it can;
/// `stop_reason_json` is JSON inside a JSON string, so it usually needs unescaping (`Cow`).
#[derive(Deserialize)]
struct Meta<'a>(
    i64,
    &'a str,
    &'a str,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    #[serde(borrow)] Option<Cow<'a, str>>,
    Option<String>,
    i64,
    i64,
    Option<i64>,
    Option<i64>,
);

/// One row of a `message_cols!` query as a [`StoredMessage`]. Columns are read by position
/// and text is borrowed from the row: `parts_json` (most of the bytes) is parsed in place.
fn decode(row: &SqliteRow) -> Result<StoredMessage, StoreError> {
    let id: i64 = row.try_get(0)?;
    let what = || format!("message {id}");
    let parts_json: &str = row.try_get(1).map_err(|e| corrupt(what(), e))?;
    let meta: &str = row.try_get(2).map_err(|e| corrupt(what(), e))?;
    let Meta(
        seq,
        role,
        status,
        provider,
        model,
        usage_input,
        usage_output,
        usage_cached_input,
        stop_reason_json,
        error,
        created_at,
        updated_at,
        superseded_by,
        copied_from,
    ) = serde_json::from_str(meta).map_err(|e| corrupt(what(), e))?;
    let role = match role {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => return Err(corrupt(what(), format!("unknown role {other:?}"))),
    };
    let parts: Vec<Part> = serde_json::from_str(parts_json).map_err(|e| corrupt(what(), e))?;
    let status = MessageStatus::parse(status)
        .ok_or_else(|| corrupt(what(), format!("unknown status {status:?}")))?;
    let stop = stop_reason_json
        .as_deref()
        .map(serde_json::from_str::<StopReason>)
        .transpose()
        .map_err(|e| corrupt(what(), e))?;
    let usage = usage_input.map(|input| Usage {
        input_tokens: to_u64(input),
        output_tokens: to_u64(usage_output.unwrap_or(0)),
        cached_input_tokens: to_u64(usage_cached_input.unwrap_or(0)),
    });
    Ok(StoredMessage {
        id: MessageId::new(id),
        seq,
        message: Message { role, parts },
        status,
        provider,
        model,
        usage,
        stop,
        error,
        created_at_ms: created_at,
        updated_at_ms: updated_at,
        superseded_by: superseded_by.map(MessageId::new),
        copied_from: copied_from.map(MessageId::new),
    })
}

/// Runs a `message_cols!` query for one conversation and decodes each row as it arrives, so
/// decoding overlaps SQLite stepping on sqlx's worker thread and each row is freed at once.
async fn load(
    store: &Store,
    sql: &'static str,
    conversation: &ConversationId,
) -> Result<Vec<StoredMessage>, StoreError> {
    let mut rows = sqlx::query(sql)
        .bind(conversation.as_str())
        .fetch(store.reader());
    let mut out = Vec::new();
    while let Some(row) = rows.try_next().await? {
        out.push(decode(&row)?);
    }
    Ok(out)
}

pub(super) fn role_str(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The text search indexes: exactly [`Message::text`].
pub(super) fn text_of(role: Role, parts: &[Part]) -> String {
    Message {
        role,
        parts: parts.to_vec(),
    }
    .text()
}

pub(super) struct NewMessage<'a> {
    pub(super) role: Role,
    pub(super) parts_json: &'a str,
    pub(super) text: &'a str,
    pub(super) status: MessageStatus,
    pub(super) provider: Option<&'a str>,
    pub(super) model: Option<&'a str>,
}

/// Appends at the end of the conversation (`seq` = last + 1; the caller holds the write lock).
pub(super) async fn insert_message(
    conn: &mut SqliteConnection,
    conversation: &ConversationId,
    m: &NewMessage<'_>,
    now: i64,
) -> Result<MessageId, StoreError> {
    let res = sqlx::query(
        "INSERT INTO messages (conversation_id, seq, role, parts_json, text, status, provider,
                               model, created_at, updated_at)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?),
                 ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(conversation.as_str())
    .bind(conversation.as_str())
    .bind(role_str(m.role))
    .bind(m.parts_json)
    .bind(m.text)
    .bind(m.status.as_str())
    .bind(m.provider)
    .bind(m.model)
    .bind(now)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(MessageId::new(res.last_insert_rowid()))
}

/// Records activity on a conversation (and the provider/model that answered, when given);
/// fails with `NotFound` if it does not exist.
pub(super) async fn touch(
    conn: &mut SqliteConnection,
    id: &ConversationId,
    now: i64,
    provider: Option<&str>,
    model: Option<&str>,
) -> Result<(), StoreError> {
    let res = sqlx::query(
        "UPDATE conversations SET updated_at = ?, provider = COALESCE(?, provider),
                model = COALESCE(?, model)
         WHERE id = ?",
    )
    .bind(now)
    .bind(provider)
    .bind(model)
    .bind(id.as_str())
    .execute(conn)
    .await?;
    if res.rows_affected() == 0 {
        return Err(not_found(id));
    }
    Ok(())
}

impl Store {
    /// Appends a complete message (the user's, or tool results going back to the model) and
    /// commits it before returning: call this before the model is asked anything (ST-02).
    pub async fn append_message(
        &self,
        conversation: &ConversationId,
        message: &Message,
    ) -> Result<MessageId, StoreError> {
        let parts_json = to_json("message parts", &message.parts)?;
        let text = message.text();
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        touch(&mut tx, conversation, now, None, None).await?;
        let id = insert_message(
            &mut tx,
            conversation,
            &NewMessage {
                role: message.role,
                parts_json: &parts_json,
                text: &text,
                status: MessageStatus::Complete,
                provider: None,
                model: None,
            },
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Starts an answer: an empty assistant message with `status = incomplete`, and the
    /// conversation's last-used provider and model set.
    pub async fn begin_assistant_message(
        &self,
        conversation: &ConversationId,
        provider: &str,
        model: &str,
    ) -> Result<MessageId, StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        touch(&mut tx, conversation, now, Some(provider), Some(model)).await?;
        let id = insert_message(&mut tx, conversation, &answer(provider, model), now).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Saves the answer so far (one `UPDATE`; call it at most about once a second while
    /// streaming). The message stays `incomplete`. Also accepted on an `interrupted` answer,
    /// which it makes `incomplete` again: another process on the same file may have run the
    /// startup sweep while this one was streaming.
    pub async fn checkpoint_assistant_message(
        &self,
        id: MessageId,
        parts: &[Part],
    ) -> Result<(), StoreError> {
        let parts_json = to_json("message parts", parts)?;
        let res = sqlx::query(
            "UPDATE messages SET parts_json = ?, text = ?, status = 'incomplete', updated_at = ?
             WHERE id = ? AND role = 'assistant' AND status IN ('incomplete', 'interrupted')",
        )
        .bind(parts_json)
        .bind(text_of(Role::Assistant, parts))
        .bind(now_ms())
        .bind(id.get())
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("unfinished answer {id}")));
        }
        Ok(())
    }

    /// Closes an answer with its final parts, how it ended and its usage.
    pub async fn finish_assistant_message(
        &self,
        id: MessageId,
        parts: &[Part],
        end: MessageEnd,
        usage: Option<Usage>,
    ) -> Result<(), StoreError> {
        let parts_json = to_json("message parts", parts)?;
        let (status, stop, error) = match end {
            MessageEnd::Complete { stop } => (
                MessageStatus::Complete,
                Some(to_json("stop reason", &stop)?),
                None,
            ),
            MessageEnd::Cancelled => (MessageStatus::Cancelled, None, None),
            MessageEnd::Failed { error } => (MessageStatus::Failed, None, Some(error)),
        };
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let res = sqlx::query(
            "UPDATE messages SET parts_json = ?, text = ?, status = ?, stop_reason_json = ?,
                    error = ?, usage_input = ?, usage_output = ?, usage_cached_input = ?,
                    updated_at = ?
             WHERE id = ? AND role = 'assistant' AND status IN ('incomplete', 'interrupted')",
        )
        .bind(parts_json)
        .bind(text_of(Role::Assistant, parts))
        .bind(status.as_str())
        .bind(stop)
        .bind(error)
        .bind(usage.map(|u| to_i64(u.input_tokens)))
        .bind(usage.map(|u| to_i64(u.output_tokens)))
        .bind(usage.map(|u| to_i64(u.cached_input_tokens)))
        .bind(now)
        .bind(id.get())
        .execute(&mut *tx)
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("unfinished answer {id}")));
        }
        sqlx::query(
            "UPDATE conversations SET updated_at = ?
             WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)",
        )
        .bind(now)
        .bind(id.get())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Whether anything is marked unfinished: an `incomplete` answer, a pending or running tool
    /// call, a running agent node. A read on partial indexes, so a turn can ask it every time
    /// and take the writer for a sweep only when there is something to sweep.
    pub async fn has_unfinished(&self) -> Result<bool, StoreError> {
        let (any,): (bool,) = sqlx::query_as(
            "SELECT EXISTS (SELECT 1 FROM messages WHERE status = 'incomplete')
                 OR EXISTS (SELECT 1 FROM tool_calls WHERE status IN ('pending', 'running'))
                 OR EXISTS (SELECT 1 FROM agent_runs WHERE status = 'running')",
        )
        .fetch_one(self.reader())
        .await?;
        Ok(any)
    }

    /// The startup sweep: every `incomplete` answer becomes `interrupted` (kept, content as of
    /// its last checkpoint) and every pending or running tool call becomes `interrupted`.
    /// Deletes nothing. Run it once at startup, by the process that owns the chat loop, before
    /// any answer streams: a second process (the CLI beside the desktop app) would flag the
    /// other's live answer (harmless, as checkpoint and finish accept it, but misleading).
    pub async fn mark_interrupted_on_startup(&self) -> Result<Recovered, StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let messages = sqlx::query(SWEEP_MESSAGES)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        let tool_calls = sqlx::query(SWEEP_TOOL_CALLS)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        if messages + tool_calls > 0 {
            tracing::info!(
                messages,
                tool_calls,
                "marked unfinished work as interrupted"
            );
        }
        Ok(Recovered {
            messages,
            tool_calls,
        })
    }

    /// The visible transcript: messages not superseded, in order.
    pub async fn load_messages(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        load(self, LOAD_VISIBLE, conversation).await
    }

    /// Every message, superseded ones included, in order.
    pub async fn load_history(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        load(self, LOAD_HISTORY, conversation).await
    }
}

pub(super) fn answer<'a>(provider: &'a str, model: &'a str) -> NewMessage<'a> {
    NewMessage {
        role: Role::Assistant,
        parts_json: "[]",
        text: "",
        status: MessageStatus::Incomplete,
        provider: Some(provider),
        model: Some(model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn open() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
        (store, dir)
    }

    #[tokio::test]
    async fn every_field_survives_the_packed_row() {
        let (store, _dir) = open().await;
        let c = store.create_conversation("fields").await.unwrap();
        let q = store
            .append_message(&c.id, &Message::user_text("say \"hi\" \\ \u{1F600}"))
            .await
            .unwrap();
        let a = store
            .begin_assistant_message(&c.id, "open\"ai", "gpt \\ x")
            .await
            .unwrap();
        let stop = StopReason::Other("vendor said \"no\" \\ ok".into());
        let usage = Usage {
            input_tokens: 7,
            output_tokens: 8,
            cached_input_tokens: 9,
        };
        let parts = vec![Part::Text {
            text: "line\nbreak".into(),
        }];
        store
            .finish_assistant_message(
                a,
                &parts,
                MessageEnd::Complete { stop: stop.clone() },
                Some(usage),
            )
            .await
            .unwrap();
        let f = store
            .begin_assistant_message(&c.id, "p", "m")
            .await
            .unwrap();
        store
            .finish_assistant_message(
                f,
                &[],
                MessageEnd::Failed {
                    error: "boom \"quoted\"".into(),
                },
                None,
            )
            .await
            .unwrap();

        let m = store.load_messages(&c.id).await.unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!((m[0].id, m[0].seq), (q, 1));
        assert_eq!(m[0].message, Message::user_text("say \"hi\" \\ \u{1F600}"));
        assert_eq!(m[0].status, MessageStatus::Complete);
        assert_eq!((m[0].provider.as_deref(), m[0].usage), (None, None));
        assert_eq!((m[1].id, m[1].seq), (a, 2));
        assert_eq!(m[1].message.role, Role::Assistant);
        assert_eq!(m[1].message.parts, parts);
        assert_eq!(m[1].provider.as_deref(), Some("open\"ai"));
        assert_eq!(m[1].model.as_deref(), Some("gpt \\ x"));
        assert_eq!(m[1].stop, Some(stop));
        assert_eq!(m[1].usage, Some(usage));
        assert!(m[1].updated_at_ms >= m[1].created_at_ms);
        assert_eq!(m[2].status, MessageStatus::Failed);
        assert_eq!(m[2].error.as_deref(), Some("boom \"quoted\""));
        assert_eq!((m[2].stop.as_ref(), m[2].copied_from), (None, None));
        assert_eq!(store.load_history(&c.id).await.unwrap(), m);
    }

    #[tokio::test]
    async fn a_row_that_does_not_decode_is_reported_by_id() {
        let (store, _dir) = open().await;
        let c = store.create_conversation("corrupt").await.unwrap();
        let ok = store
            .append_message(&c.id, &Message::user_text("fine"))
            .await
            .unwrap();
        let bad = store
            .append_message(&c.id, &Message::user_text("soon broken"))
            .await
            .unwrap();
        let set = |column: &str, value: Option<&str>| {
            let store = store.clone();
            let sql = format!("UPDATE messages SET {column} = ? WHERE id = ?");
            let value = value.map(str::to_owned);
            async move {
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(value)
                    .bind(bad.get())
                    .execute(store.writer())
                    .await
                    .unwrap();
            }
        };
        for (column, broken, fixed) in [
            ("parts_json", "[{\"type\":\"hologram\"}]", Some("[]")),
            ("stop_reason_json", "not json", None),
        ] {
            set(column, Some(broken)).await;
            match store.load_messages(&c.id).await {
                Err(StoreError::Corrupt { what, .. }) => assert_eq!(what, format!("message {bad}")),
                other => panic!("{column}: {other:?}"),
            }
            set(column, fixed).await;
        }
        assert_eq!(store.load_messages(&c.id).await.unwrap()[0].id, ok);
    }
}
