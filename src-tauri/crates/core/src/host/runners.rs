//! Which processes are answering in conversations on a data directory, so the sweep of
//! unfinished work (ST-02) flags only what a dead process left behind.
//!
//! An answer being written is `incomplete`, its tool calls `running`, its agents' nodes
//! `running`. A process that dies mid-answer leaves them so, and a later one flags them
//! interrupted. The app and a `switchboard chat` in a terminal (or two terminals) may share a
//! data directory: a sweep must never flag another live process's answer (shown "interrupted"
//! while it still arrives), and a dead terminal's answer must not wait for the app to quit.
//!
//! So the lock is held per turn, not per process: every turn holds a shared `flock` on
//! `<data dir>/runners.lock` while it runs ([`Host::working`]). A turn that can take the lock
//! exclusively is the only one running anywhere, so whatever is still marked unfinished
//! belongs to a dead process: it sweeps, then downgrades to shared and runs. The kernel drops
//! a dead process's lock however it died, so a crash never blocks a later sweep (a pid file
//! could go stale). Rust opens files close-on-exec: no server inherits it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::{Host, HostError};

/// The lock file's name in the data directory.
pub(crate) const LOCK_FILE: &str = "runners.lock";

/// How long to wait for another process's sweep (three short UPDATEs) before going on without
/// the lock: this turn is then not protected from a later sweep, which a sweep stuck for ten
/// seconds makes the lesser risk next to a turn that never starts.
const WAIT_FOR_SWEEP: Duration = Duration::from_secs(10);

/// This process's place among the runners; dropping it leaves.
#[derive(Debug)]
pub(crate) struct RunnerLock(Flock<File>);

/// Where a process stands after joining.
#[derive(Debug)]
pub(crate) enum Joined {
    /// No other live process runs chats: sweep, then [`RunnerLock::share`].
    Alone(RunnerLock),
    /// Others run chats: their work is live, leave it alone.
    Shared(RunnerLock),
    /// Another process held its sweep's lock past [`WAIT_FOR_SWEEP`], or the file system has
    /// no `flock`: no sweep, no lock.
    Busy,
}

/// Joins the processes that run chats on `data_dir`. Blocking: call off the async workers.
pub(crate) fn join(data_dir: &Path) -> io::Result<Joined> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(data_dir.join(LOCK_FILE))?;
    let mut file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => return Ok(Joined::Alone(RunnerLock(lock))),
        Err((file, Errno::EWOULDBLOCK)) => file,
        Err((_, Errno::ENOLCK | Errno::EOPNOTSUPP)) => return Ok(Joined::Busy),
        Err((_, e)) => return Err(e.into()),
    };
    // Someone runs chats (shared), or is sweeping (exclusive, briefly): join them shared.
    let deadline = Instant::now() + WAIT_FOR_SWEEP;
    loop {
        file = match Flock::lock(file, FlockArg::LockSharedNonblock) {
            Ok(lock) => return Ok(Joined::Shared(RunnerLock(lock))),
            Err((file, Errno::EWOULDBLOCK)) if Instant::now() < deadline => file,
            Err((_, Errno::EWOULDBLOCK)) => return Ok(Joined::Busy),
            Err((_, e)) => return Err(e.into()),
        };
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl RunnerLock {
    /// After the sweep: lets other turns join. Blocking (a conversion is not atomic: another
    /// process may sweep in between, and this waits for it).
    pub(crate) fn share(&self) -> io::Result<()> {
        self.0.relock(FlockArg::LockShared).map_err(io::Error::from)
    }
}

/// A turn's place among those running on the data directory; dropping it leaves.
#[derive(Debug)]
pub(crate) struct Working {
    /// Held, never read: the kernel's lock is the point.
    _held: Option<RunnerLock>,
}

impl Host {
    /// Joins the turns running on this data directory for as long as the result is held. When
    /// none runs anywhere, first flags what dead processes left unfinished (answers, tool
    /// calls, agents), and says how many answers it flagged.
    pub(crate) async fn working(&self) -> Result<(Working, u64), HostError> {
        let dir = self.inner.data_dir.clone();
        let path = dir.join(LOCK_FILE);
        let cannot = move |source: io::Error| HostError::Io {
            context: format!("could not lock {}", path.display()),
            source,
        };
        let joined = blocking(move || join(&dir)).await.map_err(&cannot)?;
        match joined {
            Joined::Alone(lock) => {
                // Usually there is nothing: a read, and the writer stays free.
                let mut swept = 0;
                if self.inner.store.has_unfinished().await? {
                    // Agents that were working when it died are shown as cut off, not as
                    // running forever.
                    self.inner.features.agents.mark_interrupted().await?;
                    swept = self
                        .inner
                        .store
                        .mark_interrupted_on_startup()
                        .await?
                        .messages;
                }
                let lock = blocking(move || lock.share().map(|()| lock))
                    .await
                    .map_err(&cannot)?;
                Ok((Working { _held: Some(lock) }, swept))
            }
            Joined::Shared(lock) => Ok((Working { _held: Some(lock) }, 0)),
            Joined::Busy => {
                tracing::warn!("another process held the runners lock too long; not sweeping");
                Ok((Working { _held: None }, 0))
            }
        }
    }
}

/// Runs blocking `f` off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(io::Error::other(e.to_string())))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code: a panic is a failed test
mod tests {
    use super::*;

    #[test]
    fn the_first_runner_sweeps_and_the_next_ones_do_not_until_all_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let Joined::Alone(first) = join(dir.path()).unwrap() else {
            panic!("the first runner is alone");
        };
        // Mid-sweep, a second start waits; it would give up (Busy) only after the deadline.
        first.share().unwrap();
        let Joined::Shared(second) = join(dir.path()).unwrap() else {
            panic!("a second runner joins while the first lives");
        };
        drop(first);
        let Joined::Shared(third) = join(dir.path()).unwrap() else {
            panic!("the second still lives");
        };
        drop((second, third));
        // Everyone gone (a crash drops the lock the same way): the next start sweeps.
        assert!(matches!(join(dir.path()).unwrap(), Joined::Alone(_)));
    }
}
