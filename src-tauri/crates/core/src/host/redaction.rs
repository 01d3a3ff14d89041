//! The host's door to outbound redaction ([`crate::outbound`], issue 16 point 5): its settings
//! file, the per-conversation switch, wrapping a turn's provider and runner, and the audit
//! entry that says redaction happened (kinds and counts, never the values).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{Host, HostError};
use crate::approval::audit::AuditEvent;
use crate::audit_data::AuditContext;
use crate::chat::ChatEvent;
use crate::ids::ConversationId;
use crate::llm::Provider;
use crate::outbound::{self, RedactionConfigError, RedactionSettings, Session};

impl Host {
    /// The redaction settings in effect.
    pub fn redaction_settings(&self) -> RedactionSettings {
        outbound::config::load(self.data_dir())
    }

    /// Validates and saves the redaction settings.
    pub fn save_redaction_settings(
        &self,
        new: RedactionSettings,
    ) -> Result<RedactionSettings, HostError> {
        outbound::config::save(self.data_dir(), new).map_err(|e| match e {
            RedactionConfigError::Io { path, source } => HostError::Io {
                context: format!("saving the redaction settings to {}", path.display()),
                source,
            },
            other => HostError::Invalid(other.to_string()),
        })
    }

    /// Switches redaction on or off for one conversation.
    pub async fn set_conversation_redaction(
        &self,
        conversation: &ConversationId,
        on: bool,
    ) -> Result<(), HostError> {
        let mut s = self.redaction_settings();
        let id = conversation.as_str().to_owned();
        let changed = if on {
            s.off_for.remove(&id)
        } else {
            s.off_for.insert(id)
        };
        if changed {
            self.save_redaction_settings(s)?;
            tracing::info!(conversation = %conversation, on, "conversation redaction switched");
        }
        Ok(())
    }

    /// Whether requests of `conversation` are redacted (for a cloud provider).
    pub fn conversation_redacted(&self, conversation: &ConversationId) -> bool {
        !self
            .redaction_settings()
            .off_for
            .contains(conversation.as_str())
    }

    /// `provider` behind a redacting door for a turn of `conversation`, with the session the
    /// turn's runner restores from; unchanged (and `None`) when redaction does not apply (off,
    /// off for the conversation, or a provider on this machine).
    pub(super) fn redacting(
        &self,
        provider: Box<dyn Provider>,
        conversation: &ConversationId,
        events: &mpsc::UnboundedSender<ChatEvent>,
    ) -> (Box<dyn Provider>, Option<Arc<Session>>) {
        let settings = self.redaction_settings();
        if !settings.applies(provider.profile_id(), Some(conversation.as_str())) {
            return (provider, None);
        }
        let session = Session::new(settings.rules(), Some(events.clone()));
        (
            Box::new(outbound::Redacting::new(provider, session.clone())),
            Some(session),
        )
    }

    /// Records that a turn of `conversation` to `provider` had values redacted, when it did.
    pub(super) async fn audit_redaction(
        &self,
        session: Option<&Arc<Session>>,
        conversation: &ConversationId,
        provider: &str,
    ) {
        let Some(session) = session else { return };
        let counts = session.counts();
        if counts.is_empty() {
            return;
        }
        let event = AuditEvent::Redacted {
            provider: provider.to_owned(),
            counts: counts
                .iter()
                .map(|(k, n)| (k.id().to_owned(), *n))
                .collect(),
        };
        self.audit(
            event,
            AuditContext {
                conversation: Some(conversation.clone()),
                ..AuditContext::default()
            },
        )
        .await;
    }
}
