//! Install links (`switchboard://add?config=...`, docs/links.md) in the window.
//!
//! A link reaches the app as a launch argument, its own or a second launch's passed on by the
//! doorbell (`single.rs`); either way it is queued here and [`LinkReceived`] tells the window,
//! which takes the queue ([`take_links`]) and shows each link's trust dialog. The queue is
//! bounded: links beyond [`QUEUE_MAX`] are dropped, so a script launching the app in a loop
//! cannot pile up dialogs or memory.
//!
//! The window never sends a spec: [`propose_link`] and [`approve_link`] both take the link
//! itself, and the core parses it each time, so what is added is what the link says and what
//! was shown (the fingerprint must match). Nothing is stored or started before approval.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::launch::Fingerprint;
use switchboard_core::host::{Host, LinkView};
use switchboard_core::redact::Secret;
use tauri::{AppHandle, Emitter, Manager, Runtime, State};
use tauri_specta::Event;

use super::IpcError;

/// The most links waiting for the window at once.
pub const QUEUE_MAX: usize = 8;

/// Links received and not yet taken by the window.
#[derive(Default)]
pub struct PendingLinks(Mutex<VecDeque<String>>);

impl PendingLinks {
    fn push(&self, link: String) -> bool {
        let mut q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if q.len() >= QUEUE_MAX {
            return false;
        }
        q.push_back(link);
        true
    }

    fn take(&self) -> Vec<String> {
        let mut q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        q.drain(..).collect()
    }
}

/// A link arrived; the window takes it with [`take_links`].
#[derive(Clone, Debug, Serialize, Deserialize, Type, Event)]
pub struct LinkReceived {}

/// Queues `link` for the window and tells it.
pub fn deliver<R: Runtime>(app: &AppHandle<R>, link: String) {
    let Some(pending) = app.try_state::<PendingLinks>() else {
        return;
    };
    if !pending.push(link) {
        tracing::warn!("too many links waiting for the window; one was dropped");
        return;
    }
    // Tauri's own emit, under the typed event's name: tauri-specta's panics when its registry
    // is not mounted yet, and a first launch queues its link before the app's setup ran.
    let _ = app.emit(LinkReceived::NAME, LinkReceived {});
}

/// What the dialog shows for a link (SP-01): the server as it would be added, every line of
/// what would run or be contacted, and the fields the person is asked for.
#[derive(Clone, Debug, Serialize, Type)]
pub struct LinkProposalDto {
    /// The name it would be added under.
    pub name: String,
    /// The name the link asked for, when that one is taken.
    pub renamed_from: Option<String>,
    /// Whether it is a remote server.
    pub remote: bool,
    /// (label, value) pairs: labelled, escaped, untruncated.
    pub lines: Vec<(String, String)>,
    /// Dangerous patterns found (SP-02).
    pub warnings: Vec<String>,
    /// The fingerprint to send back with the approval.
    pub fingerprint: String,
    /// Env vars or headers whose values the person types; they go to the keyring.
    pub asked: Vec<String>,
}

impl From<LinkView> for LinkProposalDto {
    fn from(v: LinkView) -> Self {
        Self {
            name: v.trust.server.to_string(),
            renamed_from: v.renamed_from.map(|n| n.to_string()),
            remote: v.remote,
            lines: v.trust.lines,
            warnings: v.trust.warnings,
            fingerprint: v.trust.fingerprint.0,
            asked: v.asked,
        }
    }
}

/// A value typed for an asked field.
#[derive(Clone, Debug, Deserialize, Type)]
pub struct LinkSecret {
    /// The env var or header.
    pub field: String,
    /// The value; it goes to the keyring.
    pub value: String,
}

/// The links received since the last call, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn take_links(pending: State<'_, PendingLinks>) -> Vec<String> {
    pending.take()
}

/// What approving `link` would add and run. Stores nothing, starts nothing.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn propose_link(
    host: State<'_, Host>,
    link: String,
) -> Result<LinkProposalDto, IpcError> {
    Ok(host.propose_link(&link).await?.into())
}

/// Adds the server `link` proposes, approves exactly the plan with `fingerprint`, and starts
/// it (a failure to start shows on its card, not here). Returns its name.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn approve_link(
    host: State<'_, Host>,
    link: String,
    fingerprint: String,
    secrets: Vec<LinkSecret>,
) -> Result<String, IpcError> {
    let typed = secrets
        .into_iter()
        .filter(|s| !s.value.is_empty())
        .map(|s| (s.field, Secret::new(s.value)))
        .collect();
    let id = host
        .add_from_link(&link, typed, &Fingerprint(fingerprint))
        .await?;
    if let Err(e) = host.start_server(&id).await {
        tracing::warn!(server = %id, error = %e, "a server added from a link did not start");
    }
    Ok(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_is_bounded_and_drains_in_order() {
        let q = PendingLinks::default();
        for i in 0..QUEUE_MAX {
            assert!(q.push(format!("l{i}")));
        }
        assert!(!q.push("one too many".into()));
        let taken = q.take();
        assert_eq!(taken.len(), QUEUE_MAX);
        assert_eq!(taken[0], "l0");
        assert!(q.take().is_empty());
    }
}
