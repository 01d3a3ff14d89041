//! Printing: text for people, JSON for scripts, and errors as one sentence plus causes.
//!
//! Server text (names, titles, descriptions, messages, results) reaches the terminal only
//! through [`inert`], [`name`] or [`escape_for_display`], so no escape sequence a server chose
//! can move the cursor, clear a line or recolour what follows, and hidden characters show up as
//! markers (RN-04). JSON output escapes them too: serde_json leaves C1 controls, DEL and bidi
//! overrides raw inside strings, and a script's output often ends up on a terminal.
//!
//! Everything goes out through [`outln!`], [`out!`], [`errln!`] and [`err!`], never `println!`:
//! those panic when the reader has gone away (`switchboard server list | head -0`), and a
//! closed pipe is how a pipeline says "enough", not a crash. Once a stream fails, the rest of
//! what would go to it is dropped and the command finishes its work (so its servers are still
//! stopped); `main` then ends quietly on a closed pipe and reports any other write failure.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU8, Ordering};

use serde::Serialize;
use switchboard_core::escape::{escape_for_display, is_suspicious};
use switchboard_core::hygiene::{name_outside_spec, reveal};
use switchboard_core::mcp::catalog::{Content, Progress, ResourceContents};

/// `println!` on stdout that never panics (see the module docs).
macro_rules! outln {
    () => { $crate::output::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` on stdout that never panics.
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write_out(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::output::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::output::write_err(format_args!($($arg)*)) };
}

/// How stdout fared: still open, closed by the reader, or failed otherwise.
const OPEN: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;
static STDOUT: AtomicU8 = AtomicU8::new(OPEN);
static STDERR: AtomicU8 = AtomicU8::new(OPEN);

/// What happened to stdout, for `main` to decide how the command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdoutState {
    /// Everything was written.
    Open,
    /// The reader went away (a closed pipe): the rest was dropped, on purpose.
    Closed,
    /// Writing failed for another reason (a full disk, ...).
    Failed,
}

/// See [`StdoutState`].
pub fn stdout_state() -> StdoutState {
    match STDOUT.load(Ordering::Relaxed) {
        OPEN => StdoutState::Open,
        CLOSED => StdoutState::Closed,
        _ => StdoutState::Failed,
    }
}

fn write_to(state: &AtomicU8, w: &mut dyn Write, args: std::fmt::Arguments<'_>) {
    if state.load(Ordering::Relaxed) != OPEN {
        return;
    }
    if let Err(e) = w.write_fmt(args).and_then(|()| w.flush()) {
        let now = if e.kind() == std::io::ErrorKind::BrokenPipe {
            CLOSED
        } else {
            FAILED
        };
        state.store(now, Ordering::Relaxed);
    }
}

/// What [`outln!`] and [`out!`] call.
pub fn write_out(args: std::fmt::Arguments<'_>) {
    write_to(&STDOUT, &mut std::io::stdout().lock(), args);
}

/// What [`errln!`] and [`err!`] call.
pub fn write_err(args: std::fmt::Arguments<'_>) {
    write_to(&STDERR, &mut std::io::stderr().lock(), args);
}

/// Stdout as a `Write` for code that streams into one (the audit export), with the same rule:
/// a closed pipe ends the output quietly (the bytes are accepted and dropped).
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match STDOUT.load(Ordering::Relaxed) {
            OPEN => {}
            CLOSED => return Ok(buf.len()),
            _ => return Err(std::io::Error::other("stdout failed earlier")),
        }
        match std::io::stdout().lock().write_all(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                STDOUT.store(CLOSED, Ordering::Relaxed);
                Ok(buf.len())
            }
            Err(e) => {
                STDOUT.store(FAILED, Ordering::Relaxed);
                Err(e)
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                STDOUT.store(CLOSED, Ordering::Relaxed);
                Ok(())
            }
            other => other,
        }
    }
}

/// How much of a server's text an error message quotes: a message is for reading, and one
/// 64 KB header must not become 64 KB (or, repeated, 700 KB) of terminal output.
pub const QUOTE_MAX: usize = 1024;

/// `text` cut to at most `max` bytes at a character boundary, with what was left out counted.
pub fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}… ({} more)",
        &text[..cut],
        count(text.len() - cut, "byte", "bytes")
    )
}

/// An enum's value as a word for a sentence ("not approved"), from its serialized form: Rust's
/// `Debug` spelling (`NotApproved`) is for developers.
pub fn word<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s.replace('_', " "),
        _ => "?".to_owned(),
    }
}

/// How long ago a Unix-milliseconds time was, in words ("3 min ago").
pub fn ago(at_ms: i64) -> String {
    let secs = (switchboard_core::clock::now_ms() - at_ms).max(0) / 1000;
    match secs {
        0..=59 => format!("{secs} s ago"),
        60..=3599 => format!("{} min ago", secs / 60),
        3600..=86_399 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

/// "1 tool", "2 tools", "0 tools".
pub fn count(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let n = n.to_string();
    if n == "1" {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Prints a value as pretty JSON on stdout.
pub fn json<T: Serialize>(v: &T) -> anyhow::Result<()> {
    let s = serde_json::to_string_pretty(v)?;
    outln!("{}", json_inert(&s));
    Ok(())
}

/// `json` with every character that could act on a terminal written as a `\u` escape. The
/// same JSON value: such a character can only occur inside a string (structure is ASCII), and
/// any character may be escaped there.
pub fn json_inert(json: &str) -> String {
    if !json.chars().any(|c| c != '\n' && is_suspicious(c)) {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c != '\n' && is_suspicious(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes untrusted text for a terminal while keeping its line breaks.
pub fn escape_multiline(s: &str) -> String {
    s.split('\n')
        .map(escape_for_display)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Untrusted server text shown as text to read: line breaks kept (a CRLF counts as one), every
/// escape sequence and hidden character made a visible marker (`⟨ESC⟩[2J`, `⟨U+202E⟩`), so it
/// can neither act on the terminal nor hide from the reader.
pub fn inert(s: &str) -> String {
    if s.contains("\r\n") {
        reveal(&s.replace("\r\n", "\n"))
    } else {
        reveal(s)
    }
}

/// A name a server chose (a tool's, a prompt's), fit to stand inside Switchboard's own
/// sentences: as is when it keeps to the characters MCP recommends, else escaped, quoted and
/// flagged, so `echo on demo with` cannot pass for part of the question around it.
pub fn name(n: &str) -> String {
    match name_outside_spec(n) {
        None => n.to_owned(),
        Some(_) => format!("\"{}\" (an unusual name)", escape_for_display(n)),
    }
}

/// What is unusual about a server-chosen name, for a flag line; `None` when nothing is.
pub fn name_flag(n: &str) -> Option<String> {
    name_outside_spec(n).map(|why| {
        format!("WARNING: this name is outside the characters MCP recommends for tool names: {why}")
    })
}

/// Prints tool or prompt content for a person.
pub fn content(items: &[Content]) {
    for c in items {
        match c {
            Content::Text { text } => outln!("{}", inert(text)),
            Content::Image { mime_type, data } => {
                outln!("[image {}, {} bytes base64]", inert(mime_type), data.len())
            }
            Content::Audio { mime_type, data } => {
                outln!("[audio {}, {} bytes base64]", inert(mime_type), data.len())
            }
            Content::ResourceLink { uri, name, .. } => {
                outln!(
                    "[resource link] {} {}",
                    inert(name),
                    escape_for_display(uri)
                )
            }
            Content::Resource { resource } => resource_contents(std::slice::from_ref(resource)),
        }
    }
}

/// Prints resource contents for a person.
pub fn resource_contents(items: &[ResourceContents]) {
    for r in items {
        let mime = r.mime_type.as_deref().unwrap_or("unknown type");
        match (&r.text, &r.blob) {
            (Some(t), _) => {
                outln!("--- {} ({})", escape_for_display(&r.uri), inert(mime));
                outln!("{}", inert(t));
            }
            (None, Some(b)) => outln!(
                "--- {} ({}): {} bytes base64 (binary, not shown)",
                escape_for_display(&r.uri),
                inert(mime),
                b.len()
            ),
            (None, None) => outln!("--- {} (empty)", escape_for_display(&r.uri)),
        }
    }
}

/// Draws progress on stderr: a redrawn bar on a terminal, one line per update otherwise.
pub fn progress(p: &Progress) {
    let mut err = std::io::stderr();
    let msg = p.message.as_deref().map(inert).unwrap_or_default();
    let line = match p.total {
        Some(total) if total > 0.0 => {
            let frac = (p.progress / total).clamp(0.0, 1.0);
            let filled = (frac * 30.0).round() as usize;
            format!(
                "[{}{}] {:>3.0}% {}/{} {}",
                "#".repeat(filled),
                ".".repeat(30 - filled),
                frac * 100.0,
                p.progress,
                total,
                msg
            )
        }
        _ => format!("[progress {}] {}", p.progress, msg),
    };
    if err.is_terminal() {
        let _ = write!(err, "\r\x1b[2K{line}");
    } else {
        let _ = writeln!(err, "{line}");
    }
    let _ = err.flush();
}

/// Ends a progress bar line.
pub fn progress_done() {
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = writeln!(err);
    }
}
