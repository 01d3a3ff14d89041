//! [`Redacting`]: a [`Provider`] that redacts every request before the real one sends it (and
//! puts the placeholders back in the answer's text, `unmask`), and the per-turn [`Session`] it
//! shares with [`super::Restoring`].

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{redact_request, restore_arguments, restore_text, Counts, Restored, Rules, Vault};
use crate::chat::events::RedactedCount;
use crate::chat::ChatEvent;
use crate::llm::{ChatRequest, EventStream, LlmError, Provider};

/// One turn's redaction: the rules, the vault of the latest request (in memory only, gone
/// with the turn) and where the person is told what was redacted.
#[derive(Debug)]
pub struct Session {
    rules: Rules,
    vault: Mutex<Vault>,
    /// The counts last announced, so a turn's many requests announce only what grew.
    shown: Mutex<Counts>,
    events: Option<mpsc::UnboundedSender<ChatEvent>>,
}

impl Session {
    /// A session redacting with `rules`, announcing [`ChatEvent::Redacted`] on `events`.
    pub fn new(rules: Rules, events: Option<mpsc::UnboundedSender<ChatEvent>>) -> Arc<Self> {
        Arc::new(Self {
            rules,
            vault: Mutex::new(Vault::default()),
            shown: Mutex::new(Counts::new()),
            events,
        })
    }

    /// What the latest request had redacted, by kind (distinct values).
    pub fn counts(&self) -> Counts {
        self.shown
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `req` redacted; the vault is replaced by this request's, and the person is told when
    /// more was redacted than they were last told.
    pub fn redact(&self, req: &ChatRequest) -> ChatRequest {
        let (out, vault) = redact_request(req, &self.rules);
        let counts = vault.counts().clone();
        *self.vault.lock().unwrap_or_else(PoisonError::into_inner) = vault;
        let grew = {
            let mut shown = self.shown.lock().unwrap_or_else(PoisonError::into_inner);
            let grew = counts
                .iter()
                .any(|(k, n)| shown.get(k).is_none_or(|s| n > s));
            if grew {
                for (k, n) in &counts {
                    let s = shown.entry(*k).or_insert(0);
                    *s = (*s).max(*n);
                }
            }
            grew.then(|| shown.clone())
        };
        if let (Some(counts), Some(tx)) = (grew, &self.events) {
            let _ = tx.send(ChatEvent::Redacted {
                counts: counts
                    .iter()
                    .map(|(k, n)| RedactedCount {
                        kind: k.id().to_owned(),
                        count: *n,
                        label: k.describe(*n),
                    })
                    .collect(),
            });
        }
        out
    }

    /// `arguments` with this turn's placeholders replaced by their values, and which were.
    pub fn restore(&self, arguments: &Map<String, Value>) -> (Map<String, Value>, Vec<Restored>) {
        let vault = self.vault.lock().unwrap_or_else(PoisonError::into_inner);
        restore_arguments(arguments, &vault)
    }

    /// `text` with this turn's placeholders replaced by their values, and which were: for
    /// what comes back to this machine's side (the model's answer as it streams, `unmask`),
    /// never for what goes to the model.
    pub fn restore_text(&self, text: &str) -> (String, Vec<String>) {
        let vault = self.vault.lock().unwrap_or_else(PoisonError::into_inner);
        restore_text(text, &vault)
    }
}

/// The real provider behind a redacting door.
#[derive(Debug)]
pub struct Redacting {
    inner: Box<dyn Provider>,
    session: Arc<Session>,
}

impl Redacting {
    /// Redacts what `inner` sends with `session`.
    pub fn new(inner: Box<dyn Provider>, session: Arc<Session>) -> Self {
        Self { inner, session }
    }
}

impl Provider for Redacting {
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        let req = self.session.redact(&req);
        let session = self.session.clone();
        Box::pin(async move {
            let stream = self.inner.stream(req, cancel).await?;
            Ok(super::unmask::unmasked(stream, session))
        })
    }

    fn profile_id(&self) -> &str {
        self.inner.profile_id()
    }
}
