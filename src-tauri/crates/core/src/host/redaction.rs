//! The host's side of the redaction feature ([`crate::redaction`]): the facade shells use, and
//! the one question that needs the models feature too.

use super::{Host, HostError};
use crate::ids::{ConversationId, ProviderName};
use crate::redaction::{Redaction, RedactionState};

impl Host {
    /// The redaction feature: settings, the per-conversation switch, each turn's record.
    pub fn redaction(&self) -> &Redaction {
        &self.inner.features.redaction
    }

    /// Whether requests of `conversation` (none yet: a new chat) to `provider` are redacted.
    pub async fn redaction_state(
        &self,
        conversation: Option<&ConversationId>,
        provider: Option<&ProviderName>,
    ) -> Result<RedactionState, HostError> {
        let view = match provider {
            Some(name) => self
                .inner
                .features
                .models
                .list_providers()
                .await?
                .into_iter()
                .find(|v| &v.name == name),
            None => None,
        };
        Ok(self
            .inner
            .features
            .redaction
            .state(conversation, view.as_ref()))
    }
}
