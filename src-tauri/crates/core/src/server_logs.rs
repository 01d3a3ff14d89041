//! Per-server logs: the stderr ring buffer (RL-02, RL-13) and the JSON-RPC protocol trace.
//!
//! Both are bounded in memory whatever the server does: stderr keeps the newest
//! [`STDERR_BUDGET`] bytes of lines (each line capped at [`MAX_LINE`]), the trace keeps the
//! newest [`TRACE_ENTRIES`] messages with bodies cut at [`TRACE_BODY`] bytes.
//!
//! Redaction (SE-06) applies to what is kept and shown, never to a piece of a secret:
//! - stderr is kept raw and redacted where it leaves ([`stderr`]): the drain must keep up with
//!   hundreds of megabytes a second (RL-13), and only the tail someone reads, or the file
//!   written when the connection ends, pays for the redactor;
//! - a trace message passes the server's [`Redactor`] before it is kept: redacted first and cut
//!   after ([`Redactor::redact_then_cut`]), and the cut never keeps the beginning of a secret
//!   ([`Redactor::cut`]). Only the part that can be kept is redacted, so a huge message costs
//!   no more than a short one.
//!
//! Text is kept as received; escaping for display happens where it is shown (RN-04).
//!
//! A CLI process lives shorter than the server it talks to, so when a connection ends the logs
//! are also written to `<data>/logs/<server>/{stderr.log,trace.jsonl}`, replacing the previous
//! run's files; `switchboard server logs` reads them.

pub mod stderr;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::redact::Redactor;

/// Bytes of stderr kept per server.
pub const STDERR_BUDGET: usize = 1024 * 1024;
/// Longest stderr line kept; longer lines are cut and marked.
pub const MAX_LINE: usize = 8 * 1024;
/// Protocol messages kept per server.
pub const TRACE_ENTRIES: usize = 2000;
/// Longest message body kept in the trace.
pub const TRACE_BODY: usize = 4 * 1024;

/// Which way a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Host to server.
    Out,
    /// Server to host.
    In,
    /// Something the host noticed (a skipped non-JSON line, a closed stream).
    Note,
}

/// One protocol trace entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// Direction.
    pub direction: Direction,
    /// The JSON-RPC method, for requests and notifications.
    pub method: Option<String>,
    /// The JSON-RPC id, for requests and responses.
    pub id: Option<String>,
    /// For responses: milliseconds since the matching request went out.
    pub duration_ms: Option<f64>,
    /// Whether this is an error response.
    pub is_error: bool,
    /// The message, redacted and possibly cut.
    pub body: String,
}

/// A trace entry as recorded on the hot path: a timestamp and the (cut, redacted) text. Ids,
/// methods and durations are worked out only when someone reads the trace, so recording costs
/// one copy of at most [`TRACE_BODY`] bytes per message.
#[derive(Debug)]
struct Raw {
    at_ms: i64,
    at: Instant,
    direction: Direction,
    body: String,
    /// Parsed up front only for messages too long to parse from the cut body.
    peek: Option<Peeked>,
}

#[derive(Debug, Clone, Default)]
struct Peeked {
    id: Option<String>,
    method: Option<String>,
    is_error: bool,
}

#[derive(Debug, Default)]
struct Inner {
    stderr: stderr::StderrRing,
    trace: VecDeque<Raw>,
    skipped_lines: u64,
}

/// The logs of one server. Cheap to clone; all clones share the buffers.
#[derive(Clone, Debug)]
pub struct ServerLogs {
    // std Mutex: every critical section is a push/pop on a deque; nothing awaits under it.
    inner: Arc<Mutex<Inner>>,
    redactor: Arc<Mutex<Redactor>>,
    dir: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

fn peek(raw: &str) -> Peeked {
    match serde_json::from_str::<Peek>(raw) {
        Ok(p) => Peeked {
            id: p.id.map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            }),
            method: p.method,
            is_error: p.error.is_some(),
        },
        Err(_) => Peeked::default(),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ServerLogs {
    /// Logs persisted under `dir` when [`ServerLogs::persist`] is called; `None` keeps them in
    /// memory only.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            inner: Arc::default(),
            redactor: Arc::default(),
            dir,
        }
    }

    /// Sets the secret values to scrub from everything recorded from now on.
    pub fn set_redactor(&self, r: Redactor) {
        *lock(&self.redactor) = r;
    }

    /// Adds a secret value to scrub from everything recorded from now on (a credential a
    /// person typed into a server's form, say), keeping those set before.
    pub fn add_secret(&self, secret: &crate::redact::Secret) {
        lock(&self.redactor).add(secret);
    }

    /// `s` with the secrets known to this server's logs (and credentials) redacted, for server
    /// text that goes elsewhere (log notifications shown live).
    pub fn redact(&self, s: &str) -> String {
        lock(&self.redactor).redact(s)
    }

    /// `s` redacted, then cut to `max` bytes.
    fn redact_then_cut(&self, s: &str, max: usize) -> String {
        lock(&self.redactor).redact_then_cut(s, max)
    }

    /// Records one stderr line and returns it as kept (redacted and cut).
    pub fn push_stderr(&self, line: &str) -> String {
        let raw = {
            let mut g = lock(&self.inner);
            g.stderr.push(line.as_bytes());
            g.stderr.push(b"\n");
            g.stderr.tail_raw(1)
        };
        stderr::StderrRing::render(&raw, &lock(&self.redactor))
            .pop()
            .unwrap_or_default()
    }

    /// Takes in a chunk of stderr as read from the pipe, lines split anywhere (the drain's hot
    /// path: no decoding, no redaction, one lock per chunk).
    pub fn push_stderr_bytes(&self, chunk: &[u8]) {
        lock(&self.inner).stderr.push(chunk);
    }

    /// Ends the stderr line still open when the stream closed.
    pub fn finish_stderr(&self) {
        lock(&self.inner).stderr.finish();
    }

    /// `s` redacted and cut to at most `max` bytes, never inside a secret, with a mark where it
    /// was cut: the excerpt of server text that a note or an error quotes.
    pub fn excerpt(&self, s: &str, max: usize) -> String {
        self.redact_then_cut(s, max)
    }

    /// Records a protocol message as it went over the wire.
    pub fn record(&self, direction: Direction, raw: &str) {
        let peek = (raw.len() > TRACE_BODY).then(|| peek(raw));
        let body = self.redact_then_cut(raw, TRACE_BODY);
        self.push(Raw {
            at_ms: crate::clock::now_ms(),
            at: Instant::now(),
            direction,
            body,
            peek,
        });
    }

    fn push(&self, raw: Raw) {
        let mut g = lock(&self.inner);
        g.trace.push_back(raw);
        if g.trace.len() > TRACE_ENTRIES {
            g.trace.pop_front();
        }
    }

    /// Records something the host noticed about the stream.
    pub fn note(&self, text: &str) {
        if text.starts_with("skipped") {
            lock(&self.inner).skipped_lines += 1;
        }
        self.push(Raw {
            at_ms: crate::clock::now_ms(),
            at: Instant::now(),
            direction: Direction::Note,
            body: self.redact_then_cut(text, TRACE_BODY),
            peek: Some(Peeked::default()),
        });
    }

    /// The newest `n` stderr lines, redacted.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        let raw = lock(&self.inner).stderr.tail_raw(n);
        stderr::StderrRing::render(&raw, &lock(&self.redactor))
    }

    /// The whole protocol trace kept, with request/response pairs timed.
    pub fn trace(&self) -> Vec<TraceEntry> {
        let g = lock(&self.inner);
        let mut sent: HashMap<(Direction, String), Instant> = HashMap::new();
        let mut out = Vec::with_capacity(g.trace.len());
        for r in &g.trace {
            let p = r.peek.clone().unwrap_or_else(|| peek(&r.body));
            let mut duration_ms = None;
            if let Some(id) = &p.id {
                if p.method.is_some() {
                    sent.insert((r.direction, id.clone()), r.at);
                } else {
                    let asked_by = match r.direction {
                        Direction::In => Direction::Out,
                        _ => Direction::In,
                    };
                    duration_ms = sent
                        .remove(&(asked_by, id.clone()))
                        .map(|t| r.at.duration_since(t).as_secs_f64() * 1000.0);
                }
            }
            out.push(TraceEntry {
                at_ms: r.at_ms,
                direction: r.direction,
                method: p.method,
                id: p.id,
                duration_ms,
                is_error: p.is_error,
                body: r.body.clone(),
            });
        }
        out
    }

    /// Bytes of stderr currently held (bounded by [`STDERR_BUDGET`]).
    pub fn stderr_bytes(&self) -> usize {
        lock(&self.inner).stderr.bytes()
    }

    /// Stderr lines seen in total, kept or not.
    pub fn stderr_total_lines(&self) -> u64 {
        lock(&self.inner).stderr.total_lines()
    }

    /// Non-JSON stdout lines skipped so far.
    pub fn skipped_lines(&self) -> u64 {
        lock(&self.inner).skipped_lines
    }

    /// Writes the current logs to the server's log folder, replacing the previous run's.
    pub fn persist(&self) {
        let Some(dir) = &self.dir else {
            return;
        };
        let stderr = self.stderr_tail(usize::MAX);
        let trace = self.trace();
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut s = stderr.join("\n");
            if !s.is_empty() {
                s.push('\n');
            }
            replace_file(&dir.join("stderr.log"), s.as_bytes())?;
            let mut t = String::new();
            for e in &trace {
                if let Ok(line) = serde_json::to_string(e) {
                    t.push_str(&line);
                    t.push('\n');
                }
            }
            replace_file(&dir.join("trace.jsonl"), t.as_bytes())
        };
        if let Err(e) = write() {
            tracing::warn!(dir = %dir.display(), error = %e, "could not save server logs");
        }
    }

    /// Records what the handshake of this run settled on (`peer.json`), so a later process
    /// (`switchboard server show`) can say which protocol revision the server speaks.
    pub fn persist_peer(&self, peer: &crate::status::PeerInfo) {
        let Some(dir) = &self.dir else {
            return;
        };
        let saved = LastPeer {
            peer: peer.clone(),
            at_ms: crate::clock::now_ms(),
        };
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            replace_file(&dir.join("peer.json"), &serde_json::to_vec(&saved)?)
        };
        if let Err(e) = write() {
            tracing::warn!(dir = %dir.display(), error = %e, "could not save the handshake's outcome");
        }
    }

    /// What the last successful handshake saved in `dir`, if any (a damaged file is none).
    pub fn load_peer(dir: &std::path::Path) -> Option<LastPeer> {
        let bytes = std::fs::read(dir.join("peer.json")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Reads logs a previous process saved in `dir`. A file is read whole as one run wrote it:
    /// see [`replace_file`].
    pub fn load_persisted(dir: &std::path::Path) -> (Vec<String>, Vec<TraceEntry>) {
        let stderr = std::fs::read_to_string(dir.join("stderr.log"))
            .map(|s| s.lines().map(str::to_owned).collect())
            .unwrap_or_default();
        let trace = std::fs::read_to_string(dir.join("trace.jsonl"))
            .map(|s| {
                s.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default();
        (stderr, trace)
    }
}

/// The outcome of a server's last successful handshake, saved beside its logs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LastPeer {
    /// What both sides settled on.
    pub peer: crate::status::PeerInfo,
    /// When (Unix milliseconds).
    pub at_ms: i64,
}

/// Writes `path` whole or not at all: a temporary file beside it, then a rename. The app and a
/// CLI on one data dir may both save the same server's logs; a reader then sees one run's
/// file, never two interleaved or one cut short.
fn replace_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Secret;

    #[test]
    fn stderr_is_bounded_and_redacted() {
        let logs = ServerLogs::new(None);
        logs.set_redactor(Redactor::new(&[Secret::new("tok-canary-123")]));
        logs.push_stderr("using tok-canary-123 now");
        assert_eq!(logs.stderr_tail(1), ["using [redacted] now"]);
        let big = "y".repeat(100_000);
        for _ in 0..200 {
            logs.push_stderr(&big);
        }
        assert!(logs.stderr_bytes() <= STDERR_BUDGET);
        assert!(logs.stderr_tail(1)[0].len() < MAX_LINE + 64);
        assert_eq!(logs.stderr_total_lines(), 201);
    }

    #[test]
    fn secrets_are_redacted_in_every_form_before_the_cut() {
        // Quotes and a backslash: JSON-escaped in the trace, so a plain match would miss it.
        let secret = r#"tr"ace\canary-42"#;
        let escaped = serde_json::to_string(secret).unwrap();
        let logs = ServerLogs::new(None);
        logs.set_redactor(Redactor::new(&[Secret::new(secret)]));
        let msg = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"echo": secret}});
        logs.record(Direction::In, &msg.to_string());
        // A secret straddling the cut: cut first, its head would be kept and never match.
        logs.record(
            Direction::Out,
            &format!("{}{escaped}", "p".repeat(TRACE_BODY - 5)),
        );
        logs.push_stderr(&format!("{}{secret}", "s".repeat(MAX_LINE - 5)));
        logs.note("Authorization: Basic dXNlcjpwYXNz");
        let trace = logs.trace();
        assert!(!trace[0].body.contains("ace"), "{}", trace[0].body);
        assert!(trace[0].body.contains("[redacted]"), "{}", trace[0].body);
        assert!(!trace[1].body.contains("tr"), "{}", &trace[1].body[4000..]);
        assert!(trace[1].body.ends_with("more bytes]"));
        let line = &logs.stderr_tail(1)[0];
        assert!(!line.contains("tr"), "{}", &line[8000..]);
        assert_eq!(trace[2].body, "Authorization: Basic [redacted]");
    }

    #[test]
    fn trace_pairs_requests_with_responses() {
        let logs = ServerLogs::new(None);
        logs.record(
            Direction::Out,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
        );
        logs.record(Direction::In, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        logs.record(
            Direction::In,
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"x"}}"#,
        );
        let t = logs.trace();
        assert_eq!(t[0].method.as_deref(), Some("tools/list"));
        assert_eq!(t[1].id.as_deref(), Some("7"));
        assert!(t[1].duration_ms.is_some());
        assert!(t[2].is_error);
        for _ in 0..(TRACE_ENTRIES + 10) {
            logs.note("skipped a line");
        }
        assert_eq!(logs.trace().len(), TRACE_ENTRIES);
    }

    #[test]
    fn persists_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let logs = ServerLogs::new(Some(dir.path().to_path_buf()));
        logs.push_stderr("hello");
        logs.record(Direction::Out, r#"{"jsonrpc":"2.0","method":"x"}"#);
        logs.persist();
        let (s, t) = ServerLogs::load_persisted(dir.path());
        assert_eq!(s, ["hello"]);
        assert_eq!(t.len(), 1);
        // Written through a temporary file that is renamed into place, none left behind.
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["stderr.log", "trace.jsonl"]);
    }
}
