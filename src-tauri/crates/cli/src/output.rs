//! Printing: text for people, JSON for scripts, and errors as one sentence plus causes.
//!
//! Server text (names, titles, descriptions, messages, results) reaches the terminal only
//! through [`inert`], [`name`] or [`escape_for_display`], so no escape sequence a server chose
//! can move the cursor, clear a line or recolour what follows, and hidden characters show up as
//! markers (RN-04). JSON output escapes them too: serde_json leaves C1 controls, DEL and bidi
//! overrides raw inside strings, and a script's output often ends up on a terminal.

use std::io::{IsTerminal, Write};

use serde::Serialize;
use switchboard_core::config::escape::{escape_for_display, is_suspicious};
use switchboard_core::mcp::catalog::{Content, Progress, ResourceContents};
use switchboard_core::mcp::hygiene::{name_outside_spec, reveal};

/// Prints a value as pretty JSON on stdout.
pub fn json<T: Serialize>(v: &T) -> anyhow::Result<()> {
    let s = serde_json::to_string_pretty(v)?;
    println!("{}", json_inert(&s));
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

/// Prints an error and its causes on stderr.
pub fn print_error(e: &anyhow::Error) {
    let mut msg = format!("error: {e}");
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(&format!("\n  caused by: {c}"));
        }
    }
    eprintln!("{}", escape_multiline(&msg));
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
            Content::Text { text } => println!("{}", inert(text)),
            Content::Image { mime_type, data } => {
                println!("[image {}, {} bytes base64]", inert(mime_type), data.len())
            }
            Content::Audio { mime_type, data } => {
                println!("[audio {}, {} bytes base64]", inert(mime_type), data.len())
            }
            Content::ResourceLink { uri, name, .. } => {
                println!(
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
                println!("--- {} ({})", escape_for_display(&r.uri), inert(mime));
                println!("{}", inert(t));
            }
            (None, Some(b)) => println!(
                "--- {} ({}): {} bytes base64 (binary, not shown)",
                escape_for_display(&r.uri),
                inert(mime),
                b.len()
            ),
            (None, None) => println!("--- {} (empty)", escape_for_display(&r.uri)),
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
