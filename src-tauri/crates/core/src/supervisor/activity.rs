//! When a server was last used, and whether a call is in flight: what the host's idle stop reads
//! (issue 14: servers start when needed and stop after a quiet while).
//!
//! Kept on the [`crate::supervisor::ServerHandle`] as atomics rather than in a map of the host's,
//! because every tool call touches it: a call already holds the handle's entry for its catalog
//! and connection, so marking it busy costs two atomic writes and no lock.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One server's use.
#[derive(Debug)]
pub struct Activity {
    epoch: Instant,
    /// Milliseconds after `epoch` of the last use.
    last_ms: AtomicU64,
    in_flight: AtomicUsize,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            last_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        }
    }
}

impl Activity {
    /// Marks a use now.
    pub fn touch(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// Marks a call in flight until the guard drops (a use at both ends).
    pub fn busy(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.touch();
        Busy(self.clone())
    }

    /// How long since the last use; `None` while a call is in flight.
    pub fn idle_for(&self) -> Option<Duration> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        Some(self.epoch.elapsed().saturating_sub(last))
    }
}

/// A call in flight; see [`Activity::busy`].
#[derive(Debug)]
pub struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_in_flight_is_never_idle_and_its_end_counts_as_use() {
        let a = Arc::new(Activity::default());
        std::thread::sleep(Duration::from_millis(20));
        assert!(a.idle_for().is_some_and(|d| d >= Duration::from_millis(20)));
        let busy = a.busy();
        let inner = a.busy();
        assert_eq!(a.idle_for(), None);
        drop(inner);
        assert_eq!(a.idle_for(), None);
        std::thread::sleep(Duration::from_millis(20));
        drop(busy);
        assert!(a.idle_for().is_some_and(|d| d < Duration::from_millis(20)));
    }
}
