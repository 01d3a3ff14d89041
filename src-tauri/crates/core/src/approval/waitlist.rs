//! A set of requests that wait for a person, each named by a random [`Nonce`]: the one mechanism
//! behind tool-call approvals ([`super::pending`]) and server questions
//! ([`super::questions`]).
//!
//! The nonce is 128 random bits made in Rust, never derivable from the request: a web view that
//! was tricked into calling IPC commands still cannot answer a request it was not shown (AP-03).
//! Dropping the [`Waiting`] withdraws the request, so a cancelled caller never leaves a stale
//! dialog behind. The map is touched only to insert, take or list, never across an `.await`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, oneshot};

use crate::events::HostEvent;

/// The random handle of one pending request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nonce(String);

impl Nonce {
    fn random() -> Self {
        let bytes: [u8; 16] = rand::rng().random();
        Self(hex::encode(bytes))
    }

    /// The nonce as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Milliseconds since the Unix epoch, for "asked at" stamps.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

struct Entry<R, A> {
    request: R,
    answer: oneshot::Sender<A>,
}

struct Shared<R, A> {
    waiting: Mutex<HashMap<Nonce, Entry<R, A>>>,
    events: broadcast::Sender<HostEvent>,
    /// Sent whenever the set changes.
    changed: HostEvent,
}

impl<R, A> Shared<R, A> {
    fn waiting(&self) -> MutexGuard<'_, HashMap<Nonce, Entry<R, A>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn announce(&self) {
        let _ = self.events.send(self.changed.clone());
    }
}

/// Requests of type `R` waiting for answers of type `A`. Cheap to clone.
pub struct Waitlist<R, A> {
    shared: Arc<Shared<R, A>>,
}

impl<R, A> Clone for Waitlist<R, A> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<R, A> std::fmt::Debug for Waitlist<R, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waitlist")
            .field("waiting", &self.shared.waiting().len())
            .finish()
    }
}

/// A caller's claim on one pending request. Dropping it withdraws the request.
pub struct Waiting<R, A> {
    nonce: Nonce,
    answer: Option<oneshot::Receiver<A>>,
    owner: Waitlist<R, A>,
}

impl<R, A> std::fmt::Debug for Waiting<R, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiting")
            .field("nonce", &self.nonce)
            .finish()
    }
}

impl<R, A> Waiting<R, A> {
    /// The request's nonce.
    pub fn nonce(&self) -> &Nonce {
        &self.nonce
    }

    /// Waits for the answer; `None` when the request was dropped without one.
    pub async fn answer(mut self) -> Option<A> {
        match self.answer.take() {
            Some(rx) => rx.await.ok(),
            None => None,
        }
    }
}

impl<R, A> Drop for Waiting<R, A> {
    fn drop(&mut self) {
        if self.owner.shared.waiting().remove(&self.nonce).is_some() {
            self.owner.shared.announce();
        }
    }
}

impl<R: Clone, A> Waitlist<R, A> {
    /// An empty list that sends `changed` on `events` whenever it changes.
    pub fn new(events: broadcast::Sender<HostEvent>, changed: HostEvent) -> Self {
        Self {
            shared: Arc::new(Shared {
                waiting: Mutex::new(HashMap::new()),
                events,
                changed,
            }),
        }
    }

    /// Registers the request `make` builds around its new nonce, and announces it.
    pub fn insert(&self, make: impl FnOnce(Nonce) -> R) -> Waiting<R, A> {
        let nonce = Nonce::random();
        let (tx, rx) = oneshot::channel();
        let request = make(nonce.clone());
        self.shared.waiting().insert(
            nonce.clone(),
            Entry {
                request,
                answer: tx,
            },
        );
        self.shared.announce();
        Waiting {
            nonce,
            answer: Some(rx),
            owner: self.clone(),
        }
    }

    /// The pending request named by `nonce`.
    pub fn get(&self, nonce: &str) -> Option<R> {
        self.shared
            .waiting()
            .get(&Nonce(nonce.to_owned()))
            .map(|e| e.request.clone())
    }

    /// Answers the request named by `nonce`; false when none is pending under it.
    pub fn answer(&self, nonce: &str, answer: A) -> bool {
        let Some(entry) = self.shared.waiting().remove(&Nonce(nonce.to_owned())) else {
            return false;
        };
        let _ = entry.answer.send(answer);
        self.shared.announce();
        true
    }

    /// Every pending request, in no particular order.
    pub fn list(&self) -> Vec<R> {
        self.shared
            .waiting()
            .values()
            .map(|e| e.request.clone())
            .collect()
    }

    /// How many wait.
    pub fn len(&self) -> usize {
        self.shared.waiting().len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> (Waitlist<String, u8>, broadcast::Receiver<HostEvent>) {
        let (tx, rx) = broadcast::channel(16);
        (Waitlist::new(tx, HostEvent::ApprovalsChanged), rx)
    }

    #[tokio::test]
    async fn only_the_right_nonce_answers_and_only_once() {
        let (l, _rx) = list();
        let w = l.insert(|n| n.to_string());
        let nonce = w.nonce().to_string();
        assert_eq!(nonce.len(), 32);
        assert_eq!(
            l.get(&nonce),
            Some(nonce.clone()),
            "the request knows its nonce"
        );
        assert!(!l.answer(&"0".repeat(32), 1));
        assert!(l.answer(&nonce, 7));
        assert!(!l.answer(&nonce, 8), "answered twice");
        assert_eq!(w.answer().await, Some(7));
        assert!(l.is_empty());
    }

    #[tokio::test]
    async fn dropping_withdraws_and_every_change_is_announced() {
        let (l, mut rx) = list();
        let a = l.insert(|_| "a".into());
        let b = l.insert(|_| "b".into());
        assert_ne!(a.nonce(), b.nonce());
        assert_eq!(l.len(), 2);
        let nonce = a.nonce().to_string();
        drop(a);
        assert!(!l.answer(&nonce, 1), "a dropped request cannot be answered");
        assert!(l.answer(&b.nonce().to_string(), 2));
        let mut changes = 0;
        while rx.try_recv().is_ok() {
            changes += 1;
        }
        assert_eq!(changes, 4, "insert, insert, withdraw, answer");
    }
}
