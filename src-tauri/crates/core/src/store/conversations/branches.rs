//! Changing a conversation's course without losing history: edit-and-resend, regenerate and
//! fork; and bulk import.
//!
//! Invariant kept here: `superseded_by` points to a later message (higher `seq`) of the same
//! conversation. Supersession always cuts a suffix of the visible branch, which is what lets a
//! fork rebuild the branch of any message, visible or not.

use futures::TryStreamExt;
use sqlx::SqliteConnection;

use super::messages::{answer, insert_message, role_str, touch, NewMessage};
use super::{
    conversation_cols, corrupt, not_found, to_i64, to_json, Conversation, ConversationRow,
    ImportedMessage, MessageStatus,
};
use crate::ids::{ConversationId, MessageId};
use crate::store::{now_ms, Store, StoreError};
use crate::transcript::{Message, Part};

/// Whether a user message starts a turn (the person said something), as opposed to carrying
/// only tool results back to the model.
fn starts_turn(parts: &[Part]) -> bool {
    parts.iter().any(|p| !matches!(p, Part::ToolResult { .. }))
}

/// Marks every visible message from `from_seq` on (but `by` itself) as replaced by `by`.
async fn supersede_from(
    conn: &mut SqliteConnection,
    conversation: &ConversationId,
    from_seq: i64,
    by: MessageId,
    now: i64,
) -> Result<u64, StoreError> {
    let res = sqlx::query(
        "UPDATE messages SET superseded_by = ?, updated_at = ?
         WHERE conversation_id = ? AND seq >= ? AND superseded_by IS NULL AND id <> ?",
    )
    .bind(by.get())
    .bind(now)
    .bind(conversation.as_str())
    .bind(from_seq)
    .bind(by.get())
    .execute(conn)
    .await?;
    Ok(res.rows_affected())
}

impl Store {
    /// Edit-and-resend: `message` (visible, in `conversation`) and everything visible after it
    /// become superseded by `edited`, appended as a new complete message; one transaction.
    /// Returns the new message's id; the caller then begins the answer.
    pub async fn edit_and_resend(
        &self,
        conversation: &ConversationId,
        message: MessageId,
        edited: &Message,
    ) -> Result<MessageId, StoreError> {
        let parts_json = to_json("message parts", &edited.parts)?;
        let text = edited.text();
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let seq: Option<(i64,)> = sqlx::query_as(
            "SELECT seq FROM messages
             WHERE id = ? AND conversation_id = ? AND superseded_by IS NULL",
        )
        .bind(message.get())
        .bind(conversation.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let Some((seq,)) = seq else {
            return Err(StoreError::NotFound(format!(
                "visible message {message} in conversation {conversation}"
            )));
        };
        touch(&mut tx, conversation, now, None, None).await?;
        let id = insert_message(
            &mut tx,
            conversation,
            &NewMessage {
                role: edited.role,
                parts_json: &parts_json,
                text: &text,
                status: MessageStatus::Complete,
                provider: None,
                model: None,
            },
            now,
        )
        .await?;
        supersede_from(&mut tx, conversation, seq, id, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Regenerate: everything visible after the last message in which the person said
    /// something (answers, tool-result messages, further answers) becomes superseded by a new
    /// answer begun here (`incomplete`, as [`Store::begin_assistant_message`]); one
    /// transaction. Returns the new answer's id. Cancel a running answer first.
    pub async fn regenerate(
        &self,
        conversation: &ConversationId,
        provider: &str,
        model: &str,
    ) -> Result<MessageId, StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        touch(&mut tx, conversation, now, Some(provider), Some(model)).await?;
        let mut turn_seq = None;
        {
            let mut rows = sqlx::query_as::<_, (i64, i64, String)>(
                "SELECT id, seq, parts_json FROM messages
                 WHERE conversation_id = ? AND superseded_by IS NULL AND role = 'user'
                 ORDER BY seq DESC",
            )
            .bind(conversation.as_str())
            .fetch(&mut *tx);
            while let Some((id, seq, json)) = rows.try_next().await? {
                let parts: Vec<Part> =
                    serde_json::from_str(&json).map_err(|e| corrupt(format!("message {id}"), e))?;
                if starts_turn(&parts) {
                    turn_seq = Some(seq);
                    break;
                }
            }
        }
        let Some(turn_seq) = turn_seq else {
            return Err(StoreError::NotFound(format!(
                "a user message to answer in conversation {conversation}"
            )));
        };
        let id = insert_message(&mut tx, conversation, &answer(provider, model), now).await?;
        supersede_from(&mut tx, conversation, turn_seq + 1, id, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Forks `source` at `up_to`: a new conversation holding copies of the branch that ends at
    /// `up_to` (the visible messages up to it, or, for a superseded message, the branch as it
    /// was when that message was current), with their tool calls and approvals; one
    /// transaction. Copies keep their content, metadata and creation times and are renumbered
    /// from 1; unfinished ones become `interrupted`.
    pub async fn fork_conversation(
        &self,
        source: &ConversationId,
        up_to: MessageId,
        title: Option<&str>,
    ) -> Result<Conversation, StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let src: Option<ConversationRow> = sqlx::query_as(concat!(
            "SELECT ",
            conversation_cols!(),
            " FROM conversations c WHERE c.id = ?"
        ))
        .bind(source.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let src = Conversation::try_from(src.ok_or_else(|| not_found(source))?)?;
        let up_seq: Option<(i64,)> =
            sqlx::query_as("SELECT seq FROM messages WHERE id = ? AND conversation_id = ?")
                .bind(up_to.get())
                .bind(source.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        let Some((up_seq,)) = up_seq else {
            return Err(StoreError::NotFound(format!(
                "message {up_to} in conversation {source}"
            )));
        };
        let fork = Conversation {
            id: ConversationId::random(),
            title: title.map_or_else(|| src.title.clone(), str::to_owned),
            created_at_ms: now,
            updated_at_ms: now,
            provider: src.provider.clone(),
            model: src.model.clone(),
            archived: false,
            forked_from_conversation: Some(source.clone()),
            forked_from_message: Some(up_to),
        };
        sqlx::query(
            "INSERT INTO conversations (id, title, created_at, updated_at, provider, model,
                                        forked_from_conversation, forked_from_message)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(fork.id.as_str())
        .bind(&fork.title)
        .bind(now)
        .bind(now)
        .bind(&fork.provider)
        .bind(&fork.model)
        .bind(source.as_str())
        .bind(up_to.get())
        .execute(&mut *tx)
        .await?;

        // A message belonged to the branch of `up_to` if it came no later and was still
        // visible when `up_to` was written: never superseded, or superseded by a later one.
        let copied = sqlx::query(
            "INSERT INTO messages (conversation_id, seq, role, parts_json, text, status,
                    provider, model, usage_input, usage_output, usage_cached_input,
                    stop_reason_json, error, created_at, updated_at, copied_from)
             SELECT ?, ROW_NUMBER() OVER (ORDER BY m.seq), m.role, m.parts_json, m.text,
                    CASE m.status WHEN 'incomplete' THEN 'interrupted' ELSE m.status END,
                    m.provider, m.model, m.usage_input, m.usage_output, m.usage_cached_input,
                    m.stop_reason_json, m.error, m.created_at, ?, m.id
             FROM messages m LEFT JOIN messages s ON s.id = m.superseded_by
             WHERE m.conversation_id = ? AND m.seq <= ?
               AND (m.superseded_by IS NULL OR s.seq > ?)
             ORDER BY m.seq",
        )
        .bind(fork.id.as_str())
        .bind(now)
        .bind(source.as_str())
        .bind(up_seq)
        .bind(up_seq)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        super::tool_calls::copy_for_fork(&mut tx, &fork.id).await?;
        tx.commit().await?;
        tracing::info!(source = %source, fork = %fork.id, messages = copied, "forked conversation");
        Ok(fork)
    }

    /// Appends many complete messages at once, in order, in one transaction with multi-row
    /// inserts (imports, benchmark corpora). Returns how many were added.
    pub async fn import_messages(
        &self,
        conversation: &ConversationId,
        messages: &[ImportedMessage],
    ) -> Result<u64, StoreError> {
        // 13 parameters a row; SQLite allows 32,766 per statement.
        const ROWS: usize = 256;
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        touch(&mut tx, conversation, now, None, None).await?;
        let (last,): (i64,) =
            sqlx::query_as("SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?")
                .bind(conversation.as_str())
                .fetch_one(&mut *tx)
                .await?;
        let mut seq = last;
        for chunk in messages.chunks(ROWS) {
            let mut rows = Vec::with_capacity(chunk.len());
            for m in chunk {
                seq += 1;
                rows.push((seq, m, to_json("message parts", &m.message.parts)?));
            }
            let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
                "INSERT INTO messages (conversation_id, seq, role, parts_json, text, status,
                        provider, model, usage_input, usage_output, usage_cached_input,
                        created_at, updated_at) ",
            );
            q.push_values(rows, |mut b, (seq, m, parts_json)| {
                let status = match m.status {
                    MessageStatus::Incomplete => MessageStatus::Interrupted,
                    s => s,
                };
                b.push_bind(conversation.as_str().to_owned())
                    .push_bind(seq)
                    .push_bind(role_str(m.message.role))
                    .push_bind(parts_json)
                    .push_bind(m.message.text())
                    .push_bind(status.as_str())
                    .push_bind(m.provider.clone())
                    .push_bind(m.model.clone())
                    .push_bind(m.usage.map(|u| to_i64(u.input_tokens)))
                    .push_bind(m.usage.map(|u| to_i64(u.output_tokens)))
                    .push_bind(m.usage.map(|u| to_i64(u.cached_input_tokens)))
                    .push_bind(m.created_at_ms)
                    .push_bind(m.created_at_ms);
            });
            q.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(messages.len() as u64)
    }
}
