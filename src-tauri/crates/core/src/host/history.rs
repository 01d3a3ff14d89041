//! Conversations as the shells see them: list, open, search, rename, delete, fork, export.
//!
//! The shells reach the store only through these methods (there is no `Host::store()`), so
//! every way into SQLite stays behind the host: a shell cannot write a tool call, an approval
//! or a policy rule around the seam in `host::run`. Each method is a thin pass-through; the
//! store's own docs say what it guarantees.

use super::{Host, HostError};
use crate::ids::{ConversationId, MessageId};
use crate::store::{
    Conversation, ConversationPage, ConversationQuery, SearchHit, StoreError, StoredMessage,
    Summary,
};

impl Host {
    /// A page of conversations, newest first.
    pub async fn list_conversations(
        &self,
        query: &ConversationQuery,
    ) -> Result<ConversationPage, HostError> {
        Ok(self.inner.store.list_conversations(query).await?)
    }

    /// One conversation, if it exists.
    pub async fn conversation(
        &self,
        id: &ConversationId,
    ) -> Result<Option<Conversation>, HostError> {
        Ok(self.inner.store.get_conversation(id).await?)
    }

    /// Starts an empty conversation (the first message usually does this).
    pub async fn create_conversation(&self, title: &str) -> Result<Conversation, HostError> {
        Ok(self.inner.store.create_conversation(title).await?)
    }

    /// The visible transcript of a conversation, in order.
    pub async fn messages(&self, id: &ConversationId) -> Result<Vec<StoredMessage>, HostError> {
        Ok(self.inner.store.load_messages(id).await?)
    }

    /// The summaries that describe the visible branch, oldest first.
    pub async fn summaries(&self, id: &ConversationId) -> Result<Vec<Summary>, HostError> {
        Ok(self.inner.store.summaries(id).await?)
    }

    /// Renames a conversation.
    pub async fn rename_conversation(
        &self,
        id: &ConversationId,
        title: &str,
    ) -> Result<(), HostError> {
        Ok(self.inner.store.rename_conversation(id, title).await?)
    }

    /// Deletes a conversation; `false` when there was none.
    pub async fn delete_conversation(&self, id: &ConversationId) -> Result<bool, HostError> {
        Ok(self.inner.store.delete_conversation(id).await?)
    }

    /// Full-text search over every message, best first.
    pub async fn search_conversations(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<SearchHit>, HostError> {
        Ok(self.inner.store.search(query, limit).await?)
    }

    /// A new conversation with the messages of `source` up to `at`.
    pub async fn fork_conversation(
        &self,
        source: &ConversationId,
        at: MessageId,
        title: Option<&str>,
    ) -> Result<Conversation, HostError> {
        Ok(self
            .inner
            .store
            .fork_conversation(source, at, title)
            .await?)
    }

    /// A conversation as Markdown.
    pub async fn export_markdown(&self, id: &ConversationId) -> Result<String, HostError> {
        Ok(self.inner.store.export_markdown(id).await?)
    }

    /// A conversation as JSON.
    pub async fn export_json(&self, id: &ConversationId) -> Result<String, HostError> {
        Ok(self.inner.store.export_json(id).await?)
    }
}

/// An error for a conversation that does not exist.
pub fn no_conversation(id: &ConversationId) -> HostError {
    HostError::Store(StoreError::NotFound(format!("conversation {id}")))
}
