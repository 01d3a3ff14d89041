//! The host's side of progressive discovery: the per-conversation switch, what a
//! conversation loaded before (read back from its messages), and the wrapper a turn gets.

use super::{loaded_in, Discovering, DISCOVERY_PROMPT};
use crate::chat::ToolRunner;
use crate::llm::Message;

impl crate::host::Host {
    /// Whether `conversation` runs in progressive-discovery mode.
    pub async fn conversation_discovery(
        &self,
        conversation: &crate::ids::ConversationId,
    ) -> Result<bool, crate::host::HostError> {
        Ok(self
            .inner
            .store
            .conversation_discovery(conversation)
            .await?)
    }

    /// Switches progressive discovery on or off for `conversation`.
    pub async fn set_conversation_discovery(
        &self,
        conversation: &crate::ids::ConversationId,
        on: bool,
    ) -> Result<(), crate::host::HostError> {
        self.inner
            .store
            .set_conversation_discovery(conversation, on)
            .await?;
        tracing::info!(conversation = %conversation, on, "conversation discovery switched");
        Ok(())
    }

    /// The names loaded by the past load calls of `conversation`'s visible messages.
    pub(in crate::host) async fn discovery_loaded(
        &self,
        conversation: &crate::ids::ConversationId,
    ) -> Result<Vec<String>, crate::host::HostError> {
        let messages: Vec<Message> = self
            .inner
            .store
            .load_messages(conversation)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect();
        Ok(loaded_in(&messages))
    }
}

impl crate::host::Host {
    /// `runner` behind progressive discovery when `conversation` or `agent` has it on, with
    /// what the conversation loaded before; `None` when neither has.
    pub(in crate::host) async fn discovering<'a>(
        &self,
        conversation: &crate::ids::ConversationId,
        agent: Option<&crate::agent_data::AgentProfile>,
        runner: &'a dyn ToolRunner,
    ) -> Result<Option<Discovering<'a>>, crate::host::HostError> {
        let on =
            agent.is_some_and(|a| a.discovery) || self.conversation_discovery(conversation).await?;
        if !on {
            return Ok(None);
        }
        let earlier = self.discovery_loaded(conversation).await?;
        Ok(Some(Discovering::new(runner, &earlier)))
    }
}

/// `system` with the sentence telling the model to find and load tools first.
pub fn with_discovery_prompt(system: &str) -> String {
    if system.is_empty() {
        DISCOVERY_PROMPT.to_owned()
    } else {
        format!("{system}\n\n{DISCOVERY_PROMPT}")
    }
}
