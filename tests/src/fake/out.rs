//! Output side: newline-delimited JSON-RPC on stdout (one lock acquisition and one flush per
//! message, so concurrent workers never interleave lines), optional garbage lines between
//! messages, streaming writers for the giant-line behaviours, and best-effort stderr logging
//! that never panics (unlike `eprintln!`) when stderr is closed.

use std::io::{StdoutLock, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

/// Writes one formatted line to stderr, ignoring errors.
macro_rules! elog {
    ($($arg:tt)*) => {
        $crate::fake::out::stderr_line(format_args!($($arg)*))
    };
}
pub(crate) use elog;

/// Backend of [`elog!`].
pub fn stderr_line(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
}

/// Garbage lines cycled through by `--mode garbage-stdout` (each ends with a newline).
pub const GARBAGE_LINES: [&[u8]; 3] = [
    b"banner text\n",
    b"{not json\n",
    b"\xff\xfe\x00\x01binary\x80\x81\x1b[0m\n",
];

/// One MiB, the chunk size of the giant-line writers.
pub const MIB: usize = 1024 * 1024;

/// The stdout writer shared by every thread.
pub struct Out {
    garbage: bool,
    next_garbage: AtomicUsize,
}

impl Out {
    pub fn new(garbage: bool) -> Self {
        Self {
            garbage,
            next_garbage: AtomicUsize::new(0),
        }
    }

    /// Locks stdout, first writing a garbage line if `garbage-stdout` is on.
    pub fn lock(&self) -> StdoutLock<'static> {
        let mut w = std::io::stdout().lock();
        if self.garbage {
            let i = self.next_garbage.fetch_add(1, Ordering::Relaxed) % GARBAGE_LINES.len();
            let _ = w.write_all(GARBAGE_LINES[i]);
        }
        w
    }

    /// Writes raw bytes (which must end with a newline) as one unit and flushes.
    pub fn write_line(&self, bytes: &[u8]) {
        let mut w = self.lock();
        let _ = w.write_all(bytes);
        let _ = w.flush();
    }

    /// Serialises `msg` as one line.
    pub fn send(&self, msg: &Value) {
        let mut buf = Vec::with_capacity(256);
        if serde_json::to_writer(&mut buf, msg).is_ok() {
            buf.push(b'\n');
            self.write_line(&buf);
        }
    }

    /// Sends a successful response.
    pub fn result(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Sends an error response.
    pub fn error(&self, id: &Value, code: i64, message: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": id,
                          "error": {"code": code, "message": message}}));
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Option<Value>) {
        match params {
            Some(p) => self.send(&json!({"jsonrpc": "2.0", "method": method, "params": p})),
            None => self.send(&json!({"jsonrpc": "2.0", "method": method})),
        }
    }

    /// Writes a valid tools/call response whose single text block is `mb` MiB of `x`, streaming
    /// it in 1 MiB chunks with the newline only at the very end.
    pub fn write_huge_result(&self, id: &Value, mb: u64) {
        let chunk = vec![b'x'; MIB];
        let mut w = self.lock();
        let prefix = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
        );
        if w.write_all(prefix.as_bytes()).is_err() {
            return;
        }
        for _ in 0..mb {
            if w.write_all(&chunk).and_then(|()| w.flush()).is_err() {
                return;
            }
        }
        let _ = w.write_all(b"\"}]}}\n");
        let _ = w.flush();
    }

    /// Answers `id` with one line whose result is nested `depth` arrays deep, with the id last
    /// when `id_last` (a reader must scan past the nesting to find whom it answers).
    pub fn write_deep_result(&self, id: &Value, depth: u64, id_last: bool) {
        let depth = usize::try_from(depth).unwrap_or(usize::MAX).min(50_000_000);
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let line = if id_last {
            format!(r#"{{"jsonrpc":"2.0","result":{{"content":{nested}}},"id":{id}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{nested}}}}}"#)
        };
        let mut w = self.lock();
        let _ = w.write_all(line.as_bytes());
        let _ = w.write_all(b"\n");
        let _ = w.flush();
    }

    /// Starts a response to `id` and never finishes the line: writes 1 MiB chunks without a
    /// newline until stdout fails. Holds the stdout lock forever, like a wedged server.
    pub fn write_endless_line(&self, id: &Value) {
        let chunk = vec![b'a'; MIB];
        let mut w = self.lock();
        let prefix = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[],"padding":""#);
        if w.write_all(prefix.as_bytes()).is_err() {
            return;
        }
        while w.write_all(&chunk).and_then(|()| w.flush()).is_ok() {}
        elog!("huge-line: stdout closed, endless line stopped");
    }
}
