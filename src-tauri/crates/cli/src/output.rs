//! Printing: text for people, JSON for scripts, and errors as one sentence plus causes.

use std::io::{IsTerminal, Write};

use serde::Serialize;
use switchboard_core::config::escape::{escape_for_display, strip_ansi};
use switchboard_core::mcp::catalog::{Content, Progress, ResourceContents};

/// Prints a value as pretty JSON on stdout.
pub fn json<T: Serialize>(v: &T) -> anyhow::Result<()> {
    let s = serde_json::to_string_pretty(v)?;
    println!("{s}");
    Ok(())
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

/// Untrusted server text shown inline: ANSI removed, other hidden characters made visible.
pub fn inert(s: &str) -> String {
    s.split('\n').map(strip_ansi).collect::<Vec<_>>().join("\n")
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
