//! The discovery feature's store repository: whether a conversation runs in
//! progressive-discovery mode (issue 16, point 2; migration `0018_conversation_discovery.sql`,
//! the schema stays in `store`). One flag per conversation, off by default; deleting the
//! conversation deletes it with the row. What the model loaded is not stored: the feature reads
//! it back from the conversation's own tool calls ([`super::loaded_in`]).

use crate::ids::ConversationId;
use crate::store::{Store, StoreError};

impl Store {
    /// Whether `conversation` offers a search over the catalog instead of every tool.
    pub async fn conversation_discovery(
        &self,
        conversation: &ConversationId,
    ) -> Result<bool, StoreError> {
        let row: Option<(i64,)> =
            sqlx::query_as("SELECT discovery FROM conversations WHERE id = ?")
                .bind(conversation.as_str())
                .fetch_optional(self.writer())
                .await?;
        match row {
            Some((on,)) => Ok(on != 0),
            None => Err(StoreError::NotFound(format!("conversation {conversation}"))),
        }
    }

    /// Switches progressive discovery on or off for `conversation`.
    pub async fn set_conversation_discovery(
        &self,
        conversation: &ConversationId,
        on: bool,
    ) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE conversations SET discovery = ? WHERE id = ?")
            .bind(i64::from(on))
            .bind(conversation.as_str())
            .execute(self.writer())
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("conversation {conversation}")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test
    use crate::ids::ConversationId;
    use crate::store::{Store, StoreError};

    #[tokio::test]
    async fn the_flag_is_off_by_default_switches_and_needs_a_conversation() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
        let c = store.create_conversation("big catalog").await.unwrap();
        assert!(!store.conversation_discovery(&c.id).await.unwrap());
        store.set_conversation_discovery(&c.id, true).await.unwrap();
        assert!(store.conversation_discovery(&c.id).await.unwrap());
        store
            .set_conversation_discovery(&c.id, false)
            .await
            .unwrap();
        assert!(!store.conversation_discovery(&c.id).await.unwrap());
        let other = ConversationId::random();
        assert!(matches!(
            store.set_conversation_discovery(&other, true).await,
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            store.conversation_discovery(&other).await,
            Err(StoreError::NotFound(_))
        ));
    }
}
