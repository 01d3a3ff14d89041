//! Summaries made by context compaction (migration `0004_summaries.sql`).
//!
//! A summary stands in for the visible messages up to `through` when a request is built; the
//! messages themselves are never touched. Only summaries whose `through` message is still
//! visible count: an edit before it supersedes that message and with it the summary.

use serde::{Deserialize, Serialize};

use super::{conversation_id, Store, StoreError};
use crate::ids::{ConversationId, MessageId};
use crate::store::now_ms;

/// One stored summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Its row id.
    pub id: i64,
    /// The conversation.
    pub conversation: ConversationId,
    /// The last message it covers.
    pub through: MessageId,
    /// The position of that message.
    pub through_seq: i64,
    /// How many messages it stands in for.
    pub messages: u32,
    /// The summary.
    pub text: String,
    /// Who wrote it.
    pub provider: Option<String>,
    /// With which model.
    pub model: Option<String>,
    /// When, ms since the epoch.
    pub created_at_ms: i64,
}

/// A summary to store.
#[derive(Clone, Copy, Debug)]
pub struct NewSummary<'a> {
    /// The last message it covers.
    pub through: MessageId,
    /// How many messages it stands in for.
    pub messages: u32,
    /// The summary.
    pub text: &'a str,
    /// Who wrote it.
    pub provider: &'a str,
    /// With which model.
    pub model: &'a str,
}

type Row = (
    i64,
    String,
    i64,
    i64,
    i64,
    String,
    Option<String>,
    Option<String>,
    i64,
);

const VALID: &str = "SELECT s.id, s.conversation_id, s.through_message, m.seq, s.messages, s.text,
            s.provider, s.model, s.created_at
     FROM summaries s JOIN messages m ON m.id = s.through_message
     WHERE s.conversation_id = ? AND m.superseded_by IS NULL
     ORDER BY s.id";

fn summary(r: Row) -> Result<Summary, StoreError> {
    Ok(Summary {
        id: r.0,
        conversation: conversation_id(&r.1)?,
        through: MessageId::new(r.2),
        through_seq: r.3,
        messages: u32::try_from(r.4).unwrap_or(u32::MAX),
        text: r.5,
        provider: r.6,
        model: r.7,
        created_at_ms: r.8,
    })
}

impl Store {
    /// Stores a summary of `conversation` through `s.through`, which must be a visible message
    /// of it.
    pub async fn save_summary(
        &self,
        conversation: &ConversationId,
        s: &NewSummary<'_>,
    ) -> Result<i64, StoreError> {
        let res = sqlx::query(
            "INSERT INTO summaries (conversation_id, through_message, messages, text, provider,
                                    model, created_at)
             SELECT conversation_id, id, ?, ?, ?, ?, ? FROM messages
             WHERE id = ? AND conversation_id = ? AND superseded_by IS NULL",
        )
        .bind(i64::from(s.messages))
        .bind(s.text)
        .bind(s.provider)
        .bind(s.model)
        .bind(now_ms())
        .bind(s.through.get())
        .bind(conversation.as_str())
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!(
                "visible message {} in conversation {conversation}",
                s.through
            )));
        }
        Ok(res.last_insert_rowid())
    }

    /// The summaries that still describe the visible branch, oldest first; the last one is
    /// the one requests use.
    pub async fn summaries(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<Summary>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(VALID)
            .bind(conversation.as_str())
            .fetch_all(self.reader())
            .await?;
        rows.into_iter().map(summary).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Message;

    #[tokio::test]
    async fn a_summary_counts_until_an_edit_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        let c = store.create_conversation("t").await.unwrap().id;
        let first = store
            .append_message(&c, &Message::user_text("one"))
            .await
            .unwrap();
        let second = store
            .append_message(&c, &Message::user_text("two"))
            .await
            .unwrap();
        let new = |through| NewSummary {
            through,
            messages: 2,
            text: "they said one and two",
            provider: "p",
            model: "m",
        };
        store.save_summary(&c, &new(second)).await.unwrap();
        let all = store.summaries(&c).await.unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].through, second);
        assert_eq!(all[0].text, "they said one and two");

        // An edit of the first message supersedes the second: the summary no longer counts.
        store
            .edit_and_resend(&c, first, &Message::user_text("uno"))
            .await
            .unwrap();
        assert!(store.summaries(&c).await.unwrap().is_empty());
        assert!(
            matches!(
                store.save_summary(&c, &new(second)).await,
                Err(StoreError::NotFound(_))
            ),
            "a superseded message cannot be summarized through"
        );
        assert_eq!(
            store.load_history(&c).await.unwrap().len(),
            3,
            "nothing was deleted"
        );
    }
}
