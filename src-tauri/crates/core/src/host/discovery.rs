//! The host's side of progressive discovery ([`crate::discovery`]): the per-conversation switch
//! the shells call, and the wrapper a turn gets, each one line over the feature.

use super::{Host, HostError};
use crate::chat::ToolRunner;
use crate::discovery::Discovering;
use crate::ids::ConversationId;

impl Host {
    /// Whether `conversation` runs in progressive-discovery mode.
    pub async fn conversation_discovery(
        &self,
        conversation: &ConversationId,
    ) -> Result<bool, HostError> {
        self.inner
            .features
            .discovery
            .conversation_discovery(conversation)
            .await
    }

    /// Switches progressive discovery on or off for `conversation`.
    pub async fn set_conversation_discovery(
        &self,
        conversation: &ConversationId,
        on: bool,
    ) -> Result<(), HostError> {
        self.inner
            .features
            .discovery
            .set_conversation_discovery(conversation, on)
            .await
    }

    /// `runner` behind progressive discovery when `conversation` or `agent` has it on, with
    /// what the conversation loaded before; `None` when neither has.
    pub(in crate::host) async fn discovering<'a>(
        &self,
        conversation: &ConversationId,
        agent: Option<&crate::agent_data::AgentProfile>,
        runner: &'a dyn ToolRunner,
    ) -> Result<Option<Discovering<'a>>, HostError> {
        let agent_on = agent.is_some_and(|a| a.discovery);
        self.inner
            .features
            .discovery
            .wrap(conversation, agent_on, runner)
            .await
    }
}
