//! Which processes run chats on a data directory, so the start-up sweep (ST-02) flags only
//! what a dead process left behind.
//!
//! At start, a process that runs chats flags the answers, tool calls and agent runs that were
//! unfinished when a previous process died. The app and a `switchboard chat` in a terminal (or
//! two terminals) may share one data directory. Without this, the second to start would flag
//! the first one's live work: an answer still arriving shown as "interrupted", an agent still
//! working shown as cut off.
//!
//! Each such process holds a shared `flock` on `<data dir>/runners.lock` for as long as its
//! host lives. The sweep runs only under an exclusive lock, which can be had only when no other
//! live process runs chats; the lock is then downgraded to shared. The kernel drops a process's
//! lock however it dies, so a crash never blocks the next sweep (a pid file could go stale).
//! Rust opens files close-on-exec: no server inherits it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// The lock file's name in the data directory.
pub(crate) const LOCK_FILE: &str = "runners.lock";

/// How long to wait for another process's sweep (two short UPDATEs) before going on without
/// the lock; going on is safe, it only skips this process's own sweep.
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
    /// Another process held its sweep's lock past [`WAIT_FOR_SWEEP`]: no sweep, no lock.
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
    /// After the sweep: lets other processes that run chats join.
    pub(crate) fn share(&self) -> io::Result<()> {
        self.0.relock(FlockArg::LockShared).map_err(io::Error::from)
    }
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
