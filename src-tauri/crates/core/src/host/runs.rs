//! Runs a shell can stop: tool calls started by hand and chat turns.
//!
//! The host mints every run id ([`Host::open_run`]) and owns the cancellation behind it, so
//! the CLI's Ctrl-C and the desktop's Stop button stop a run the same way
//! ([`Host::cancel_run`]) and no shell keeps a token map of its own keyed by ids it made up.
//! A run is opened before it starts (the desktop needs the id before the call returns, to
//! offer Stop), claimed by the operation that runs it, and closed when that operation ends,
//! however it ends. A run cancelled before it is claimed starts cancelled.
//!
//! The registry is a `std` mutex around a small map: it is held only to insert, look up or
//! remove a token, never across an `.await`. Ids are 128 random bits, so one shell cannot
//! guess another's run. Runs opened and never claimed (a window closed in between) are
//! dropped after [`UNCLAIMED_TTL`], and at most [`OPEN_MAX`] are kept, oldest dropped first.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{Host, HostError};
use crate::ids::RunId;

/// How long an opened run waits to be claimed.
const UNCLAIMED_TTL: Duration = Duration::from_secs(600);
/// Most runs open at once (claimed or not).
const OPEN_MAX: usize = 1024;

struct Entry {
    cancel: CancellationToken,
    opened: Instant,
    claimed: bool,
}

/// The runs that are open, by id.
#[derive(Default)]
pub(super) struct Runs {
    open: Mutex<HashMap<RunId, Entry>>,
}

impl Runs {
    fn open(&self) -> MutexGuard<'_, HashMap<RunId, Entry>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A claimed run: cancels through its token, and closes the run when dropped.
pub(crate) struct Claimed<'h> {
    host: &'h Host,
    id: Option<RunId>,
    /// Fires when the run is cancelled.
    pub(crate) cancel: CancellationToken,
}

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.host.inner.seam.runs.open().remove(&id);
        }
    }
}

impl Host {
    /// Opens a run and returns its id: pass it to the operation that runs (`CallOptions::run`,
    /// `SendRequest::run`), and to [`Host::cancel_run`] to stop it.
    pub fn open_run(&self) -> RunId {
        let id = RunId::random();
        let mut open = self.inner.seam.runs.open();
        open.retain(|_, e| e.claimed || e.opened.elapsed() < UNCLAIMED_TTL);
        if open.len() >= OPEN_MAX {
            if let Some(oldest) = open
                .iter()
                .filter(|(_, e)| !e.claimed)
                .min_by_key(|(_, e)| e.opened)
                .map(|(id, _)| id.clone())
            {
                open.remove(&oldest);
            }
        }
        open.insert(
            id.clone(),
            Entry {
                cancel: CancellationToken::new(),
                opened: Instant::now(),
                claimed: false,
            },
        );
        id
    }

    /// Stops a run: a pending approval is withdrawn, a call in flight is cancelled at the
    /// server, a chat turn stops keeping what arrived. Returns whether such a run was open.
    pub fn cancel_run(&self, id: &RunId) -> bool {
        self.inner
            .seam
            .runs
            .open()
            .get(id)
            .map(|e| e.cancel.cancel())
            .is_some()
    }

    /// Claims the run `id` for the operation about to run it. Without an id the operation
    /// runs privately, cancelled through `token` (a chat turn's own) or never. A run can be
    /// claimed once.
    pub(crate) fn claim_run(
        &self,
        id: Option<&RunId>,
        token: Option<CancellationToken>,
    ) -> Result<Claimed<'_>, HostError> {
        let Some(id) = id else {
            return Ok(Claimed {
                host: self,
                id: None,
                cancel: token.unwrap_or_default(),
            });
        };
        let mut open = self.inner.seam.runs.open();
        match open.get_mut(id) {
            Some(e) if !e.claimed => {
                e.claimed = true;
                Ok(Claimed {
                    host: self,
                    id: Some(id.clone()),
                    cancel: e.cancel.clone(),
                })
            }
            Some(_) => Err(HostError::Invalid(format!("run {id} is already going"))),
            None => Err(HostError::Invalid(format!(
                "run {id} is not open; open one with open_run first"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::host::HostBuilder;
    use crate::secrets::{MemoryStore, Secrets};

    #[tokio::test]
    async fn runs_are_minted_claimed_once_and_closed() {
        let dir = tempfile::tempdir().unwrap();
        let host = HostBuilder::new(dir.path())
            .secrets(Secrets::new(MemoryStore::default()))
            .build()
            .await
            .unwrap();
        let id = host.open_run();
        assert_ne!(id, host.open_run(), "ids are random");
        {
            let claimed = host.claim_run(Some(&id), None).unwrap();
            assert!(host.claim_run(Some(&id), None).is_err(), "claimed twice");
            assert!(!claimed.cancel.is_cancelled());
            assert!(host.cancel_run(&id));
            assert!(claimed.cancel.is_cancelled());
        }
        // Closed when the claim ends: no longer known.
        assert!(!host.cancel_run(&id));
        assert!(host.claim_run(Some(&id), None).is_err());
        // Cancelled before it is claimed: it starts cancelled.
        let early = host.open_run();
        assert!(host.cancel_run(&early));
        assert!(host
            .claim_run(Some(&early), None)
            .unwrap()
            .cancel
            .is_cancelled());
        host.shutdown().await;
    }
}
