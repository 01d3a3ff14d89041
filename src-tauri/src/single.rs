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
//! - **Links**: a launch given a `switchboard://` link (a desktop entry's `Exec=... %u` passes
//!   it as the first argument) sends `open <link>` instead of `show`. The line is bounded by
//!   the core's link cap, so a hostile link costs the running app one bounded read; the link is
//!   only queued for the window, which has the core parse it and shows the trust dialog
//!   (docs/links.md). A first launch queues its own link the same way. A link over the cap is
//!   not passed on: the second launch says so and only shows the window.
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
use switchboard_core::config::link::{LINK_MAX_BYTES, SCHEME};
use tauri::{AppHandle, Manager, Runtime};

/// How long a second launch waits for a first one that is quitting.
const WAIT_FOR_QUIT: Duration = Duration::from_secs(30);
/// How long a second launch keeps trying a first one that does not answer at all.
const WAIT_FOR_ANSWER: Duration = Duration::from_secs(5);
/// Read and write limit on one doorbell connection, either side.
const IO_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest request or answer line: `open ` and a link of the largest size accepted.
const MAX_LINE: u64 = LINK_MAX_BYTES as u64 + 64;

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
    /// The link this launch was given, for its own window.
    link: Option<String>,
    /// Why a second launch cannot reach us, for the log (which starts after the claim).
    problem: Option<String>,
}

/// What the doorbell thread and the app share.
#[derive(Default)]
struct Shared {
    /// Shows the main window and queues a link for it, if one came; set once the app exists.
    show: Mutex<Option<Deliver>>,
    /// The app has started to quit: a new launch should wait and take over.
    closing: AtomicBool,
}

/// What the doorbell calls: bring the window up, with the link a launch passed.
type Deliver = Box<dyn Fn(Option<String>) + Send>;

/// Claims `data_dir` for this app, or hands over to the app that holds it, passing on the
/// `switchboard://` link among the program's arguments, if any.
pub fn start(data_dir: &Path) -> Result<Start, SingleError> {
    start_with(data_dir, link_argument(std::env::args_os().skip(1)))
}

/// The first argument that is a `switchboard:` link (the scheme is case-insensitive).
fn link_argument(args: impl Iterator<Item = std::ffi::OsString>) -> Option<String> {
    args.filter_map(|a| a.into_string().ok()).find(|a| {
        a.get(..SCHEME.len() + 1)
            .is_some_and(|p| p.eq_ignore_ascii_case(&format!("{SCHEME}:")))
    })
}

/// The request line for `link`: `open <link>`, or `show` when there is none or it cannot be
/// passed (over the cap, or with a control character that would break the line).
fn request(link: Option<&str>) -> String {
    match link {
        Some(l) if l.len() > LINK_MAX_BYTES => {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "The link is {} bytes long; Switchboard accepts links of at most {LINK_MAX_BYTES} bytes. It was not passed on.",
                l.len()
            );
            "show\n".into()
        }
        Some(l) if !l.chars().any(char::is_control) => format!("open {l}\n"),
        Some(_) => {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "The link has a control character in it and was not passed on."
            );
            "show\n".into()
        }
        None => "show\n".into(),
    }
}

fn start_with(data_dir: &Path, link: Option<String>) -> Result<Start, SingleError> {
    let began = Instant::now();
    let mut unanswered: Option<Instant> = None;
    let line = request(link.as_deref());
    loop {
        if let Some(mut primary) = try_claim(data_dir)? {
            primary.link = link;
            return Ok(Start::Run(primary));
        }
        match ring(data_dir, &line) {
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
        link: None,
        problem,
    }))
}

impl Primary {
    /// From now on a second launch brings up this app's main window, and a link it passes is
    /// queued for the window ([`crate::ipc::links::PendingLinks`]), as is this launch's own.
    pub fn attach<R: Runtime>(&self, app: &AppHandle<R>) {
        app.manage(crate::ipc::links::PendingLinks::default());
        if let Some(link) = &self.link {
            crate::ipc::links::deliver(app, link.clone());
        }
        let app = app.clone();
        let show = move |link: Option<String>| {
            if let Some(link) = link {
                crate::ipc::links::deliver(&app, link);
            }
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
        // A line cut off by the cap has no newline: refused whole, never half-read.
        if reader.read_line(&mut line).is_err() || !line.ends_with('\n') {
            continue;
        }
        let link = match line.trim_end_matches('\n') {
            "show" => None,
            l => match l.strip_prefix("open ") {
                Some(link) if link.len() <= LINK_MAX_BYTES => Some(link.to_owned()),
                _ => continue,
            },
        };
        let answer = if shared.closing.load(Ordering::SeqCst) {
            "closing\n"
        } else {
            tracing::info!("another launch on this data directory asked for the window");
            if link.is_some() {
                tracing::info!("it passed a link; the window will show what it proposes");
            }
            if let Some(show) = shared
                .show
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
            {
                show(link);
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

/// Sends `line` (`show`, or `open <link>`) to the app on `data_dir`; `None` when it cannot be
/// reached.
fn ring(data_dir: &Path, line: &str) -> Option<Answer> {
    let stream = UnixStream::connect(data_dir.join("app.sock")).ok()?;
    stream.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(IO_TIMEOUT)).ok()?;
    (&stream).write_all(line.as_bytes()).ok()?;
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
        match start_with(dir, None).unwrap() {
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
        *first.shared.show.lock().unwrap() = Some(Box::new(move |link| {
            assert_eq!(link, None);
            flag.store(true, Ordering::SeqCst);
        }));
        assert!(matches!(
            start_with(dir.path(), None).unwrap(),
            Start::HandedOver
        ));
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
        let next = std::thread::spawn(move || matches!(start_with(&path, None), Ok(Start::Run(_))));
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

    /// The links a first app received, in order.
    fn listening(first: &Primary) -> Arc<Mutex<Vec<Option<String>>>> {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        *first.shared.show.lock().unwrap() = Some(Box::new(move |link| {
            sink.lock().unwrap().push(link);
        }));
        got
    }

    #[test]
    fn a_second_launch_passes_its_link_whole() {
        let dir = tempfile::tempdir().unwrap();
        let first = claimed(dir.path());
        let got = listening(&first);
        // As long as the cap allows, with everything a URL may hold kept literal.
        let link = format!(
            "switchboard://add?config={}",
            "A".repeat(LINK_MAX_BYTES - 25)
        );
        assert_eq!(link.len(), LINK_MAX_BYTES);
        for l in [link.as_str(), "switchboard://add?config=e30;$(id)`x`&a=b"] {
            let second = start_with(dir.path(), Some(l.to_owned())).unwrap();
            assert!(matches!(second, Start::HandedOver));
        }
        // Over the cap, or with a line break: not passed on, the window still comes up.
        let long = format!("{link}A");
        assert!(matches!(
            start_with(dir.path(), Some(long)).unwrap(),
            Start::HandedOver
        ));
        assert!(matches!(
            start_with(dir.path(), Some("switchboard://add\nshow".into())).unwrap(),
            Start::HandedOver
        ));
        let got = got.lock().unwrap().clone();
        assert_eq!(
            got,
            vec![
                Some(link.clone()),
                Some("switchboard://add?config=e30;$(id)`x`&a=b".into()),
                None,
                None
            ]
        );
        // The first launch keeps its own link for its window.
        let other = tempfile::tempdir().unwrap();
        match start_with(other.path(), Some(link.clone())).unwrap() {
            Start::Run(p) => assert_eq!(p.link, Some(link)),
            Start::HandedOver => panic!("handed over with nobody there"),
        }
    }

    #[test]
    fn the_doorbell_refuses_over_long_and_unknown_lines() {
        let dir = tempfile::tempdir().unwrap();
        let first = claimed(dir.path());
        let got = listening(&first);
        let raw = |line: &[u8]| {
            let stream = UnixStream::connect(dir.path().join("app.sock")).unwrap();
            stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
            let _ = (&stream).write_all(line);
            let _ = stream.shutdown(std::net::Shutdown::Write);
            let mut answer = String::new();
            let _ = (&stream).read_to_string(&mut answer);
            answer
        };
        let huge = format!("open switchboard://add?config={}\n", "A".repeat(1 << 20));
        assert_eq!(raw(huge.as_bytes()), "");
        assert_eq!(raw(b"open switchboard://add"), "", "no newline: cut off");
        assert_eq!(raw(b"launch-missiles\n"), "");
        assert_eq!(raw(b"show\n"), "shown\n");
        assert_eq!(*got.lock().unwrap(), vec![None]);
    }

    #[test]
    fn the_link_argument_is_found_among_others() {
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(
            link_argument(
                args(&["--x", "SwitchBoard://add?config=e30", "switchboard://b"]).into_iter()
            ),
            Some("SwitchBoard://add?config=e30".into())
        );
        assert_eq!(
            link_argument(args(&["https://add", "switch"]).into_iter()),
            None
        );
    }
}
