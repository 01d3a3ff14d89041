//! The desktop app's logs: stderr (coloured only on a terminal) and its own file,
//! `<data dir>/logs/switchboard.log`, capped in size and rotated.
//!
//! Both go through the process-wide secret redaction (`switchboard_core::redact`): one event
//! is collected whole, scrubbed, then written, so a secret can be neither in a line nor split
//! across two writes. The file is rotated by size, not by day (`tracing-appender` rotates only
//! by time, which lets one busy day fill a disk): when the next event would take it past the
//! cap, `switchboard.log` becomes `.1`, `.1` becomes `.2`, and so on, and the oldest is
//! deleted, so at most `1 + keep` files of at most `cap` bytes each exist. Rotation happens
//! between events, so a line is never cut in two.
//!
//! The level can change while the app runs (the Settings page, [`set_level`]): each layer's
//! filter sits in a `tracing_subscriber::reload` slot whose handle is kept here, once, for the
//! process; the subscriber itself is process-wide anyway.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{reload, EnvFilter, Layer as _};

/// Swaps one layer's filter for the one a spec describes.
type Reloader = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// The reload handles of the stderr and file layers, set by [`init`].
static RELOAD: OnceLock<Vec<Reloader>> = OnceLock::new();

fn reloader<S: 'static>(handle: reload::Handle<EnvFilter, S>) -> Reloader {
    Box::new(move |spec| {
        let f = EnvFilter::try_new(spec).map_err(|e| e.to_string())?;
        handle.reload(f).map_err(|e| e.to_string())
    })
}

/// Whether the environment chose the log filter (`SWITCHBOARD_LOG` or `RUST_LOG`): then the
/// level saved in the settings does not replace it at start-up.
pub fn env_override() -> bool {
    ["SWITCHBOARD_LOG", "RUST_LOG"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|s| !s.trim().is_empty()))
}

/// Sets Switchboard's own log level (`error` ... `trace`; libraries stay at warn) while the
/// app runs. Returns whether it was applied (not before [`init`], nor for a bad level).
pub fn set_level(level: &str) -> bool {
    let Some(reloaders) = RELOAD.get() else {
        return false;
    };
    let spec = directives(level);
    let mut ok = true;
    for r in reloaders {
        if let Err(e) = r(&spec) {
            tracing::warn!(error = %e, "could not change the log level");
            ok = false;
        }
    }
    if ok {
        tracing::info!(level, "log level set");
    }
    ok
}

/// The size at which the log file is rotated.
pub const LOG_CAP_BYTES: u64 = 5 * 1024 * 1024;
/// How many rotated files are kept besides the current one.
pub const LOG_KEEP: usize = 3;

/// With nothing asked: our own events from info up, libraries' (rmcp, sqlx, hyper, reqwest,
/// tao, wry, ...) only from warn: at info rmcp logs whole notification payloads.
const DEFAULT_FILTER: &str = "warn,switchboard=info";

/// Installs the subscriber. `SWITCHBOARD_LOG` (a level for our own targets, libraries kept at
/// warn, or a full filter) wins over `RUST_LOG` (a filter used as written). When the file
/// cannot be opened the app still starts, logging to stderr, and says why.
pub fn init(data_dir: &Path) {
    let filter = || {
        let spec = match std::env::var("SWITCHBOARD_LOG")
            .ok()
            .filter(|s| !s.trim().is_empty())
        {
            Some(asked) => directives(asked.trim()),
            None => std::env::var("RUST_LOG")
                .ok()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_FILTER.to_owned()),
        };
        EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER))
    };
    let ansi = io::IsTerminal::is_terminal(&io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut reloaders = Vec::new();
    let (stderr_filter, handle) = reload::Layer::new(filter());
    reloaders.push(reloader(handle));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(switchboard_core::redact::RedactingStderr::default)
        .with_ansi(ansi)
        .log_internal_errors(false)
        .with_filter(stderr_filter);
    let path = data_dir.join("logs").join("switchboard.log");
    let (file, failed) = match RotatingFile::open(&path, LOG_CAP_BYTES, LOG_KEEP) {
        Ok(f) => {
            let shared = Arc::new(Mutex::new(f));
            let (file_filter, handle) = reload::Layer::new(filter());
            reloaders.push(reloader(handle));
            let layer = tracing_subscriber::fmt::layer()
                .with_writer(move || RedactingFile::new(Arc::clone(&shared)))
                .with_ansi(false)
                .log_internal_errors(false)
                .with_filter(file_filter);
            (Some(layer), None)
        }
        Err(e) => (None, Some(e)),
    };
    tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .init();
    let _ = RELOAD.set(reloaders);
    match failed {
        None => tracing::info!(path = %path.display(), "logging to file"),
        Some(e) => {
            tracing::warn!(path = %path.display(), error = %e, "no log file; logging to stderr only")
        }
    }
}

/// A level is about Switchboard's own targets (every `switchboard*` crate); libraries stay at
/// warn, or quieter when a quieter level was asked for. Anything else is a filter as written.
fn directives(asked: &str) -> String {
    match asked.parse::<LevelFilter>() {
        Ok(level) => format!("{},switchboard={level}", level.min(LevelFilter::WARN)),
        Err(_) => asked.to_owned(),
    }
}

/// One event, collected and then written redacted to the shared file (see the module docs).
struct RedactingFile {
    buf: Vec<u8>,
    file: Arc<Mutex<RotatingFile>>,
}

impl RedactingFile {
    fn new(file: Arc<Mutex<RotatingFile>>) -> Self {
        Self {
            buf: Vec::new(),
            file,
        }
    }
}

impl Write for RedactingFile {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let text = switchboard_core::redact::redact_for_logs(&String::from_utf8_lossy(&self.buf));
        self.buf.clear();
        // A panic elsewhere while holding the lock leaves a file that is still fine to append to.
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_event(text.as_bytes())
    }
}

impl Drop for RedactingFile {
    fn drop(&mut self) {
        // Logging must never take the app down; a failed write loses one line.
        let _ = self.flush();
    }
}

/// An append-only file rotated by size (see the module docs).
pub struct RotatingFile {
    path: PathBuf,
    cap: u64,
    keep: usize,
    file: File,
    len: u64,
}

impl RotatingFile {
    /// Opens (creating it and its folder) the file at `path` for appending.
    pub fn open(path: &Path, cap: u64, keep: usize) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(Self {
            path: path.to_owned(),
            cap,
            keep,
            file,
            len,
        })
    }

    /// Appends one whole event, rotating first when it would take the file past the cap.
    pub fn write_event(&mut self, event: &[u8]) -> io::Result<()> {
        if self.len > 0 && self.len + event.len() as u64 > self.cap {
            self.rotate()?;
        }
        self.file.write_all(event)?;
        self.len += event.len() as u64;
        Ok(())
    }

    /// `path.N` for the Nth older file.
    fn numbered(&self, n: usize) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        if self.keep == 0 {
            self.file = File::create(&self.path)?;
        } else {
            // The oldest goes; a file that is not there is fine (fewer rotations so far).
            match std::fs::remove_file(self.numbered(self.keep)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            for n in (1..self.keep).rev() {
                match std::fs::rename(self.numbered(n), self.numbered(n + 1)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
            std::fs::rename(&self.path, self.numbered(1))?;
            self.file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
        }
        self.len = 0;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code: a panic is a failed test
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<(String, u64)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn rotates_at_the_cap_and_keeps_at_most_n_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs").join("switchboard.log");
        let mut f = RotatingFile::open(&path, 100, 2).unwrap();
        let line = [b'x'; 39];
        let mut event = line.to_vec();
        event.push(b'\n');
        // Two 40-byte events fit in 100 bytes; the third rotates.
        f.write_event(&event).unwrap();
        f.write_event(&event).unwrap();
        assert_eq!(
            files(path.parent().unwrap()),
            [("switchboard.log".into(), 80)]
        );
        f.write_event(&event).unwrap();
        assert_eq!(
            files(path.parent().unwrap()),
            [
                ("switchboard.log".into(), 40),
                ("switchboard.log.1".into(), 80)
            ]
        );
        for _ in 0..20 {
            f.write_event(&event).unwrap();
        }
        let after = files(path.parent().unwrap());
        assert_eq!(
            after.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["switchboard.log", "switchboard.log.1", "switchboard.log.2"]
        );
        assert!(after.iter().all(|(_, len)| *len <= 100), "{after:?}");
        // Whole lines only: every file is a sequence of complete events.
        for (name, len) in &after {
            let text = std::fs::read_to_string(path.parent().unwrap().join(name)).unwrap();
            assert_eq!(text.len() as u64, *len);
            assert!(text.lines().all(|l| l.len() == 39), "{name}");
        }
    }

    #[test]
    fn reopening_continues_the_size_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("switchboard.log");
        RotatingFile::open(&path, 100, 1)
            .unwrap()
            .write_event(&[b'a'; 90])
            .unwrap();
        let mut f = RotatingFile::open(&path, 100, 1).unwrap();
        f.write_event(&[b'b'; 20]).unwrap();
        assert_eq!(
            files(dir.path()),
            [
                ("switchboard.log".into(), 20),
                ("switchboard.log.1".into(), 90)
            ]
        );
    }

    #[test]
    fn an_event_larger_than_the_cap_is_written_whole_in_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("switchboard.log");
        let mut f = RotatingFile::open(&path, 10, 1).unwrap();
        f.write_event(b"short\n").unwrap();
        f.write_event(&[b'z'; 50]).unwrap();
        assert_eq!(
            files(dir.path()),
            [
                ("switchboard.log".into(), 50),
                ("switchboard.log.1".into(), 6)
            ]
        );
    }

    #[test]
    fn the_log_file_is_redacted() {
        let secret = switchboard_core::redact::Secret::new("canary-desktop-log-secret-42");
        switchboard_core::redact::register_for_logs(&secret);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("switchboard.log");
        let shared = Arc::new(Mutex::new(RotatingFile::open(&path, 1000, 1).unwrap()));
        {
            let mut w = RedactingFile::new(Arc::clone(&shared));
            w.write_all(b"token=canary-desktop-log-secret-42\n")
                .unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("canary-desktop"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }

    #[test]
    fn a_bare_level_keeps_libraries_at_warn() {
        assert_eq!(directives("debug"), "warn,switchboard=debug");
        assert_eq!(directives("error"), "error,switchboard=error");
        assert_eq!(directives("rmcp=info"), "rmcp=info");
    }
}
