//! Redaction wiring (issue 16 point 5; a feature of its own since issue 26): the door to
//! outbound redaction ([`crate::outbound`], the engine): its settings file, the
//! per-conversation switch, wrapping a turn's provider (and a server's sampling request, which
//! goes to a model too), the audit entry that says redaction happened and the per-turn record
//! the chat shows at each turn (kinds and counts, never the values).
//!
//! [`Redaction`] owns the settings file and the `turn_redactions` table and gets narrow handles:
//! the store, the data directory and the audit [`Recorder`]. Shells reach it through
//! `host.redaction()`; whether a conversation's requests to a named provider are redacted needs
//! the models feature too and is composed in the host (`Host::redaction_state`).

use std::sync::Arc;

use tokio::sync::mpsc;

use std::path::PathBuf;

use crate::approval::audit::{AuditEvent, ConfigChange, Recorder};
use crate::audit_data::AuditContext;
use crate::chat::ChatEvent;
use crate::error::HostError;
use crate::ids::{ConversationId, ServerId};
use crate::llm::Provider;
use crate::models::ProviderView;
use crate::outbound::{self, Counts, RedactionConfigError, RedactionSettings, Session};
use crate::store::{Store, TurnRedaction};

/// Whether one conversation's requests to one provider are redacted, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedactionState {
    /// Redaction is on in the settings (for every conversation).
    pub enabled: bool,
    /// It is on for this conversation (always true for a conversation not yet created).
    pub on_for_conversation: bool,
    /// The provider is a local runtime at a loopback address or one the person marked local,
    /// so nothing is redacted (RD-02).
    pub local: bool,
    /// The provider's profile id, when a provider was named and found.
    pub profile: Option<String>,
}

impl RedactionState {
    /// Whether requests are redacted with all three taken together.
    pub fn applies(&self) -> bool {
        self.enabled && self.on_for_conversation && !self.local
    }
}

fn count_ids(counts: &Counts) -> std::collections::BTreeMap<String, u32> {
    counts
        .iter()
        .map(|(k, n)| (k.id().to_owned(), *n))
        .collect()
}

/// The redaction feature: its settings, the per-conversation switch, the doors a turn's
/// provider goes through, and what each turn had redacted.
pub struct Redaction {
    store: Store,
    data_dir: PathBuf,
    audit: Arc<dyn Recorder>,
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redaction").finish_non_exhaustive()
    }
}

impl Redaction {
    /// The feature over the host's handles.
    pub(crate) fn new(store: Store, data_dir: PathBuf, audit: Arc<dyn Recorder>) -> Self {
        Self {
            store,
            data_dir,
            audit,
        }
    }

    /// The redaction settings in effect.
    pub fn settings(&self) -> RedactionSettings {
        outbound::config::load(&self.data_dir)
    }

    /// Validates and saves the redaction settings.
    pub fn save_settings(&self, new: RedactionSettings) -> Result<RedactionSettings, HostError> {
        outbound::config::save(&self.data_dir, new).map_err(|e| match e {
            RedactionConfigError::Io { path, source } => HostError::Io {
                context: format!("saving the redaction settings to {}", path.display()),
                source,
            },
            other => HostError::Invalid(other.to_string()),
        })
    }

    /// Marks the host of `base_url` local (RD-02, RD-03): a local runtime there is not
    /// redacted, and plain http may go there. The person's explicit act, audited; the shell
    /// warns them what it means. Returns the host as it is compared.
    pub async fn mark_local(&self, base_url: &str) -> Result<String, HostError> {
        let host = crate::llm::locality::host_of(base_url)
            .ok_or_else(|| HostError::Invalid(format!("{base_url:?} names no host")))?;
        let mut s = self.settings();
        if s.local_hosts.insert(host.clone()) {
            self.save_settings(s)?;
            self.audit_local(&host, true).await;
            tracing::info!(host = %host, "address marked local");
        }
        Ok(host)
    }

    /// Takes `host` off the addresses marked local; `false` when it was not marked.
    pub async fn unmark_local(&self, host: &str) -> Result<bool, HostError> {
        let host = crate::llm::locality::normalize_host(host);
        let mut s = self.settings();
        if !s.local_hosts.remove(&host) {
            return Ok(false);
        }
        self.save_settings(s)?;
        self.audit_local(&host, false).await;
        Ok(true)
    }

    async fn audit_local(&self, host: &str, local: bool) {
        self.audit
            .config_changed(
                ConfigChange::ProviderSaved,
                None,
                serde_json::json!({ "local_host": host, "local": local }),
            )
            .await;
    }

    /// Switches redaction on or off for one conversation.
    pub async fn set_for_conversation(
        &self,
        conversation: &ConversationId,
        on: bool,
    ) -> Result<(), HostError> {
        let mut s = self.settings();
        let id = conversation.as_str().to_owned();
        let changed = if on {
            s.off_for.remove(&id)
        } else {
            s.off_for.insert(id)
        };
        if changed {
            self.save_settings(s)?;
            tracing::info!(conversation = %conversation, on, "conversation redaction switched");
        }
        Ok(())
    }

    /// Whether requests of `conversation` are redacted (for a cloud provider).
    pub fn conversation_redacted(&self, conversation: &ConversationId) -> bool {
        !self.settings().off_for.contains(conversation.as_str())
    }

    /// Whether requests of `conversation` (none yet: a new chat) to the provider `view` (none:
    /// not named or not found) are redacted.
    pub fn state(
        &self,
        conversation: Option<&ConversationId>,
        view: Option<&ProviderView>,
    ) -> RedactionState {
        let settings = self.settings();
        RedactionState {
            enabled: settings.enabled,
            on_for_conversation: conversation
                .is_none_or(|c| !settings.off_for.contains(c.as_str())),
            local: view.is_some_and(|v| settings.exempt(v.profile.id, v.base_url.as_deref())),
            profile: view.map(|v| v.profile.id.to_owned()),
        }
    }

    /// What each turn of `conversation` had redacted, oldest first (kinds and counts).
    pub async fn turn_redactions(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<TurnRedaction>, HostError> {
        Ok(self.store.turn_redactions(conversation).await?)
    }

    /// `provider` behind a redacting door for a server's sampling request, with the session
    /// its answer is restored from; unchanged (and `None`) when redaction is off or the
    /// provider runs on this machine. A sampling request belongs to no conversation, so only
    /// the global switch applies.
    pub(crate) fn redacting_sampling(
        &self,
        provider: Box<dyn Provider>,
        view: &ProviderView,
    ) -> (Box<dyn Provider>, Option<Arc<Session>>) {
        let settings = self.settings();
        if !settings.applies(view.profile.id, view.base_url.as_deref(), None) {
            return (provider, None);
        }
        let session = Session::new(settings.rules(), None);
        (
            Box::new(outbound::Redacting::new(provider, session.clone())),
            Some(session),
        )
    }

    /// Records that a server's sampling request to `provider` had values redacted, when it
    /// did (the audit entry names the server; no conversation, no turn).
    pub(crate) async fn audit_sampling_redaction(
        &self,
        session: Option<&Arc<Session>>,
        server: &ServerId,
        provider: &str,
    ) {
        let Some(session) = session else { return };
        let counts = session.counts();
        if counts.is_empty() {
            return;
        }
        let event = AuditEvent::Redacted {
            provider: provider.to_owned(),
            counts: count_ids(&counts),
        };
        self.audit
            .record(vec![(
                event,
                AuditContext {
                    server: Some(server.clone()),
                    ..AuditContext::default()
                },
            )])
            .await;
    }

    /// `provider` behind a redacting door for a turn of `conversation`, with the session the
    /// turn's runner restores from; unchanged (and `None`) when redaction does not apply (off,
    /// off for the conversation, or a provider on this machine).
    pub(crate) fn redacting(
        &self,
        provider: Box<dyn Provider>,
        view: &ProviderView,
        conversation: &ConversationId,
        events: &mpsc::UnboundedSender<ChatEvent>,
    ) -> (Box<dyn Provider>, Option<Arc<Session>>) {
        let settings = self.settings();
        if !settings.applies(
            view.profile.id,
            view.base_url.as_deref(),
            Some(conversation.as_str()),
        ) {
            return (provider, None);
        }
        let session = Session::new(settings.rules(), Some(events.clone()));
        (
            Box::new(outbound::Redacting::new(provider, session.clone())),
            Some(session),
        )
    }

    /// Records that a turn of `conversation` to `provider` had values redacted, when it did.
    pub(crate) async fn audit_redaction(
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
        let counts = count_ids(&counts);
        // The chat shows it at the turn, also after the conversation is opened again. A
        // failure to keep it costs the reopened view its notice only: logged, not raised.
        if let Err(e) = self
            .store
            .record_turn_redaction(conversation, provider, &counts)
            .await
        {
            tracing::warn!(conversation = %conversation, error = %e, "could not record the turn's redaction");
        }
        let event = AuditEvent::Redacted {
            provider: provider.to_owned(),
            counts,
        };
        self.audit
            .record(vec![(
                event,
                AuditContext {
                    conversation: Some(conversation.clone()),
                    ..AuditContext::default()
                },
            )])
            .await;
    }
}
