//! What outbound redaction replaced in each turn (migration `0019_turn_redactions.sql`,
//! issue 16 point 5): kinds and counts per provider, kept so a reopened conversation still
//! shows, at the turn, what its model never saw. Never the values.

use std::collections::BTreeMap;

use sqlx::Row as _;

use super::{now_ms, Store, StoreError};
use crate::ids::ConversationId;

/// What one turn had redacted before it went to one provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRedaction {
    /// The person's message that started the turn.
    pub message_id: i64,
    /// The provider profile the requests went to.
    pub provider: String,
    /// Distinct values replaced, by kind id (`email`, `api_key`, ...).
    pub counts: BTreeMap<String, u32>,
    /// When it was last recorded, ms since the epoch.
    pub at_ms: i64,
}

/// The turn's prompt: the newest visible message of the person with text or an image (a
/// message of tool results only is also the user's role, but it is no turn of its own).
const TURN_MESSAGE: &str = "SELECT id FROM messages
    WHERE conversation_id = ? AND role = 'user' AND superseded_by IS NULL
      AND (text != '' OR parts_json LIKE '%\"type\":\"image\"%')
    ORDER BY seq DESC LIMIT 1";

impl Store {
    /// Records what the latest turn of `conversation` had redacted for `provider`: merged with
    /// what the turn already recorded (a turn of agents sends many requests; a kind keeps its
    /// largest count). Returns the turn's message, or `None` when the conversation has none.
    pub async fn record_turn_redaction(
        &self,
        conversation: &ConversationId,
        provider: &str,
        counts: &BTreeMap<String, u32>,
    ) -> Result<Option<i64>, StoreError> {
        let mut tx = self.writer().begin().await?;
        let Some(row) = sqlx::query(TURN_MESSAGE)
            .bind(conversation.as_str())
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(None);
        };
        let message: i64 = row.get("id");
        let old: Option<String> = sqlx::query_scalar(
            "SELECT counts_json FROM turn_redactions WHERE message_id = ? AND provider = ?",
        )
        .bind(message)
        .bind(provider)
        .fetch_optional(&mut *tx)
        .await?;
        let mut merged: BTreeMap<String, u32> = old
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default();
        for (k, n) in counts {
            let e = merged.entry(k.clone()).or_insert(0);
            *e = (*e).max(*n);
        }
        let json = serde_json::to_string(&merged).map_err(|e| StoreError::Corrupt {
            what: "turn redaction counts".into(),
            reason: e.to_string(),
        })?;
        sqlx::query(
            "INSERT INTO turn_redactions (message_id, conversation_id, provider, counts_json, at)
             VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (message_id, provider)
             DO UPDATE SET counts_json = excluded.counts_json, at = excluded.at",
        )
        .bind(message)
        .bind(conversation.as_str())
        .bind(provider)
        .bind(json)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(message))
    }

    /// What each turn of `conversation` had redacted, oldest turn first.
    pub async fn turn_redactions(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<TurnRedaction>, StoreError> {
        let rows = sqlx::query(
            "SELECT message_id, provider, counts_json, at FROM turn_redactions
             WHERE conversation_id = ? ORDER BY message_id, provider",
        )
        .bind(conversation.as_str())
        .fetch_all(self.reader())
        .await?;
        rows.into_iter()
            .map(|r| {
                let json: String = r.get("counts_json");
                let counts = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                    what: "turn redaction counts".into(),
                    reason: e.to_string(),
                })?;
                Ok(TurnRedaction {
                    message_id: r.get("message_id"),
                    provider: r.get("provider"),
                    counts,
                    at_ms: r.get("at"),
                })
            })
            .collect()
    }
}
