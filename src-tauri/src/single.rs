//! One desktop app per data directory: a second launch shows the first one's window and exits.
//!
//! Two apps on one data directory would run two hosts on one database and start every enabled
//! server twice. The unit is the data directory, not the app: tests and power users run several
//! apps on different data directories at once, so an app-wide name (the single-instance
//! plugin's D-Bus name on Linux, derived from the app identifier; it also needs a session bus
//! and runs only after our host is built) would be the wrong key in the wrong place.
//!
//! - **The lock**: an exclusive `flock` on `<data dir>/app.lock`, taken before logging or the
//!   host start. The kernel drops it when the process dies, however it dies, so a crash never
//!   leaves a stale lock (a pid file would). Rust opens files close-on-exec, so no server
//!   inherits it.
//! - **The doorbell**: a Unix socket `<data dir>/app.sock` (mode 0600; only the owner may
//!   ring), bound right after the lock is taken and served by a thread from then on. A second
//!   launch sends `show`; the first answers `shown` and brings its main window up (unminimize,
//!   show, focus), or, once it has started to quit, `closing`: then the second waits for the
//!   lock and starts normally, which is what "close and reopen" needs.
//!
//! A request that arrives before the window exists is answered `shown`: the window is about to
//! appear anyway.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use tauri::{AppHandle, Manager, Runtime};

/// How long a second launch waits for a first one that is quitting.
const WAIT_FOR_QUIT: Duration = Duration::from_secs(30);
/// How long a second launch keeps trying a first one that does not answer at all.
const WAIT_FOR_ANSWER: Duration = Duration::from_secs(5);
/// Read and write limit on one doorbell connection, either side.
const IO_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest request or answer line.
const MAX_LINE: u64 = 64;

/// Why the data directory could not be claimed or the running app reached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SingleError {
    /// The lock file could not be created or locked.
    #[error("could not use the lock file {}: {source}", .path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another app holds the data directory but did not answer in time.
    #[error(
        "Switchboard is already running on {} but does not answer; close it or end that \
         process (it holds {})",
        .dir.display(),
        .dir.join("app.lock").display()
    )]
    NoAnswer {
        /// The data directory.
        dir: PathBuf,
    },
}

/// What `main` does next.
pub enum Start {
    /// This is the only app on the data directory: run, holding it.
    Run(Primary),
    /// Another app runs on it and was asked to show its window: exit.
    HandedOver,
}

/// The claim on a data directory: the lock (held until the process ends) and the doorbell.
pub struct Primary {
    _lock: Flock<File>,
    shared: Arc<Shared>,
    /// Why a second launch cannot reach us, for the log (which starts after the claim).
    problem: Option<String>,
}

/// What the doorbell thread and the app share.
#[derive(Default)]
struct Shared {
    /// Shows the main window; set once the app exists.
    show: Mutex<Option<Box<dyn Fn() + Send>>>,
    /// The app has started to quit: a new launch should wait and take over.
    closing: AtomicBool,
}

/// Claims `data_dir` for this app, or hands over to the app that holds it.
pub fn start(data_dir: &Path) -> Result<Start, SingleError> {
    let began = Instant::now();
    let mut unanswered: Option<Instant> = None;
    loop {
        if let Some(primary) = try_claim(data_dir)? {
            return Ok(Start::Run(primary));
        }
        match ring(data_dir) {
            Some(Answer::Shown) => return Ok(Start::HandedOver),
            Some(Answer::Closing) => unanswered = None,
            None => {
                let since = *unanswered.get_or_insert_with(Instant::now);
                if since.elapsed() > WAIT_FOR_ANSWER {
                    return Err(SingleError::NoAnswer {
                        dir: data_dir.to_path_buf(),
                    });
                }
            }
        }
        if began.elapsed() > WAIT_FOR_QUIT {
            return Err(SingleError::NoAnswer {
                dir: data_dir.to_path_buf(),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn try_claim(data_dir: &Path) -> Result<Option<Primary>, SingleError> {
    let path = data_dir.join("app.lock");
    let lock_err = |source| SingleError::Lock {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(lock_err)?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(lock_err)?;
    let lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((_, Errno::EWOULDBLOCK)) => return Ok(None),
        Err((_, e)) => return Err(lock_err(e.into())),
    };
    let shared = Arc::new(Shared::default());
    let socket = data_dir.join("app.sock");
    // A socket file left by an app that died: we hold the lock, so nobody serves it.
    let _ = std::fs::remove_file(&socket);
    // Without a doorbell this is still the only app on the data directory; a second launch
    // just cannot reach it (a path too long for a socket, say) and says so.
    let problem = match UnixListener::bind(&socket) {
        Ok(listener) => {
            let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600));
            let serving = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("single-instance".into())
                .spawn(move || serve(&listener, &serving))
                .err()
                .map(|e| format!("could not start the single-instance thread: {e}"))
        }
        Err(e) => Some(format!("could not listen on {}: {e}", socket.display())),
    };
    Ok(Some(Primary {
        _lock: lock,
        shared,
        problem,
    }))
}

impl Primary {
    /// From now on a second launch brings up this app's main window.
    pub fn attach<R: Runtime>(&self, app: &AppHandle<R>) {
        let app = app.clone();
        let show = move || {
            let window = app
                .get_webview_window("main")
                .or_else(|| app.webview_windows().into_values().next());
            if let Some(w) = window {
                let _ = w.unminimize();
                let _ = w.show();
                let _ = w.set_focus();
            }
        };
        *self
            .shared
            .show
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(show));
    }

    /// Why a second launch cannot reach this app, if it cannot.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The app has started to quit: a second launch now waits for the lock instead.
    pub fn closing(&self) {
        self.shared.closing.store(true, Ordering::SeqCst);
    }
}

/// The doorbell: one short request at a time, each bounded in size and time.
fn serve(listener: &UnixListener, shared: &Shared) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
        let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
        let mut line = String::new();
        let mut reader = BufReader::new((&stream).take(MAX_LINE));
        if reader.read_line(&mut line).is_err() || line.trim() != "show" {
            continue;
        }
        let answer = if shared.closing.load(Ordering::SeqCst) {
            "closing\n"
        } else {
            tracing::info!("another launch on this data directory asked for the window");
            if let Some(show) = shared
                .show
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
            {
                show();
            }
            "shown\n"
        };
        let _ = (&stream).write_all(answer.as_bytes());
    }
}

enum Answer {
    Shown,
    Closing,
}

/// Asks the app on `data_dir` to show its window; `None` when it cannot be reached.
fn ring(data_dir: &Path) -> Option<Answer> {
    let stream = UnixStream::connect(data_dir.join("app.sock")).ok()?;
    stream.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(IO_TIMEOUT)).ok()?;
    (&stream).write_all(b"show\n").ok()?;
    let mut line = String::new();
    BufReader::new((&stream).take(MAX_LINE))
        .read_line(&mut line)
        .ok()?;
    match line.trim() {
        "shown" => Some(Answer::Shown),
        "closing" => Some(Answer::Closing),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(dir: &Path) -> Primary {
        match start(dir).unwrap() {
            Start::Run(p) => p,
            Start::HandedOver => panic!("handed over with nobody there"),
        }
    }

    #[test]
    fn a_second_claim_on_the_same_dir_hands_over() {
        let dir = tempfile::tempdir().unwrap();
        let first = claimed(dir.path());
        let shown = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&shown);
        *first.shared.show.lock().unwrap() = Some(Box::new(move || {
            flag.store(true, Ordering::SeqCst);
        }));
        assert!(matches!(start(dir.path()).unwrap(), Start::HandedOver));
        assert!(shown.load(Ordering::SeqCst), "the window was not shown");
        // Another data directory is not blocked.
        let other = tempfile::tempdir().unwrap();
        let _second = claimed(other.path());
    }

    #[test]
    fn a_launch_while_the_first_quits_takes_over() {
        let dir = tempfile::tempdir().unwrap();
        let first = claimed(dir.path());
        first.closing();
        let path = dir.path().to_path_buf();
        let next = std::thread::spawn(move || matches!(start(&path), Ok(Start::Run(_))));
        std::thread::sleep(Duration::from_millis(400));
        drop(first);
        assert!(next.join().unwrap(), "the next launch did not take over");
    }

    #[test]
    fn a_dead_app_leaves_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        drop(claimed(dir.path()));
        // Its socket file is still there; the next claim replaces it.
        assert!(dir.path().join("app.sock").exists());
        let _again = claimed(dir.path());
    }
}
