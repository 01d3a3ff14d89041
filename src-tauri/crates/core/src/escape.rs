//! Escaping untrusted text for display (SP-01, RN-04).
//!
//! A launch command, a server's stderr, a tool name or an error string may carry ANSI escapes,
//! C0/C1 control characters, bidi overrides, zero-width or Unicode tag characters that make what
//! a person reads differ from what runs, or that move the cursor and rewrite what a terminal
//! already shows. Everything shown to a person passes through [`escape_for_display`] (or, in a
//! `format!`/`tracing` field, its allocation-free twin [`ServerText`]), which makes each such
//! character visible as `\u{..}` (or `\n`, `\t`, `\e`) instead of hiding it. The `tracing`
//! formatter escapes ESC itself but not line breaks, carriage returns or bidi controls, so a
//! server text in a log line needs [`ServerText`] too: a name with `\n` in it must not be able to
//! forge a log line of its own.
//!
//! A leaf of its own (it was `config::escape`; issue 26) because modules below `config` show
//! server text too: the sandbox, whose types `config` holds, must not import `config` back.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether `c` can change how surrounding text is displayed or hide content.
pub fn is_suspicious(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}'               // soft hyphen (invisible unless at a line end)
            | '\u{061C}'             // Arabic letter mark (bidi)
            | '\u{180E}'             // Mongolian vowel separator (zero-width)
            | '\u{200B}'..='\u{200F}' // zero-width space/joiners, LRM, RLM
            | '\u{2028}'..='\u{2029}' // line and paragraph separators
            | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
            | '\u{2066}'..='\u{2069}' // bidi isolates
            | '\u{FEFF}'              // zero-width no-break space
            | '\u{E0000}'..='\u{E007F}' // tag characters
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotations
        )
}

/// A class of character that changes how text displays or hides content: the classes tool
/// hygiene names in its findings (`hygiene`) and the URL check refuses (`url_check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hidden {
    /// An ANSI escape sequence (ESC).
    Ansi,
    /// A C0 or C1 control character other than newline and tab.
    Control,
    /// A bidirectional override, embedding, isolate or mark.
    Bidi,
    /// A zero-width or otherwise invisible character.
    ZeroWidth,
    /// A Unicode tag character (U+E0000–U+E007F).
    Tag,
}

impl Hidden {
    /// The class of `c`, if it is one that hides.
    pub fn of(c: char) -> Option<Self> {
        match c {
            '\x1b' => Some(Self::Ansi),
            '\n' | '\t' => None,
            c if c.is_control() => Some(Self::Control),
            '\u{061C}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}' => Some(Self::Bidi),
            '\u{00AD}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'..='\u{2064}'
            | '\u{FEFF}' => Some(Self::ZeroWidth),
            '\u{E0000}'..='\u{E007F}' => Some(Self::Tag),
            _ => None,
        }
    }
}

/// Writes `s` escaped (see [`escape_for_display`]) into `out`.
fn write_escaped(out: &mut impl fmt::Write, s: &str) -> fmt::Result {
    for c in s.chars() {
        match c {
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            '\x1b' => out.write_str("\\e")?,
            c if is_suspicious(c) => write!(out, "\\u{{{:X}}}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    Ok(())
}

/// Escapes every suspicious character so the result shows exactly what the input contains.
/// Backslashes are doubled so an escaped form cannot be forged by the input itself.
pub fn escape_for_display(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Writing to a String cannot fail.
    let _ = write_escaped(&mut out, s);
    out
}

/// Text a server chose (a tool name, a status message, an error), displayed escaped exactly as
/// [`escape_for_display`] would, without allocating: for `format!` arguments, error messages
/// and `tracing` fields (`tool = %ServerText(&name)`).
#[derive(Clone, Copy, Debug)]
pub struct ServerText<'a>(pub &'a str);

impl fmt::Display for ServerText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, self.0)
    }
}

/// A name taken from a request, fit to quote in an error: escaped, and cut to `max` characters
/// with the full length noted, so a hostile 100 KB input does not come back in the message.
pub fn short_for_display(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return escape_for_display(s);
    }
    let head: String = s.chars().take(max).collect();
    format!("{}… ({count} characters)", escape_for_display(&head))
}

/// Escapes and, when needed, quotes one argument so a list of arguments reads unambiguously.
pub fn quote_arg(s: &str) -> String {
    let escaped = escape_for_display(s);
    let plain = !escaped.is_empty()
        && escaped
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain {
        escaped
    } else {
        format!("'{}'", escaped.replace('\'', "'\\''"))
    }
}

/// Removes ANSI escape sequences and other controls from a log line (keeping tabs), for
/// displays where the escaped form would be noise. Suspicious characters are still escaped.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ params final-byte; OSC: ESC ] ... BEL or ESC \ ; others: ESC + one char.
            match chars.peek() {
                Some('[') => {
                    chars.next();
                    for n in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(n) = chars.next() {
                        if n == '\x07' {
                            break;
                        }
                        if n == '\x1b' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            }
            continue;
        }
        if c == '\t' {
            out.push(c);
        } else if is_suspicious(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_bidi_and_tags() {
        assert_eq!(escape_for_display("a\x1b[31mb"), "a\\e[31mb");
        assert_eq!(escape_for_display("x\u{202E}y"), "x\\u{202E}y");
        assert_eq!(escape_for_display("\u{E0041}"), "\\u{E0041}");
        assert_eq!(escape_for_display("z\u{200B}w"), "z\\u{200B}w");
        assert_eq!(escape_for_display("a\\u{202E}"), "a\\\\u{202E}");
        assert_eq!(escape_for_display("plain text"), "plain text");
        assert_eq!(escape_for_display("a\nb\rc"), "a\\nb\\rc");
        assert_eq!(escape_for_display("\u{9B}2J"), "\\u{9B}2J", "C1 CSI");
        assert_eq!(escape_for_display("soft\u{AD}"), "soft\\u{AD}");
    }

    #[test]
    fn server_text_displays_like_escape_for_display() {
        for s in [
            "plain",
            "a\x1b[2J\x1b[1Ab",
            "x\u{202E}y\nz",
            "back\\slash",
            "",
        ] {
            assert_eq!(ServerText(s).to_string(), escape_for_display(s));
        }
        assert_eq!(format!("[{}]", ServerText("\x1b[31mred")), "[\\e[31mred]");
    }

    #[test]
    fn short_names_are_cut_and_escaped() {
        assert_eq!(short_for_display("abc", 5), "abc");
        assert_eq!(short_for_display("x\u{202E}y", 5), "x\\u{202E}y");
        assert_eq!(
            short_for_display(&"a".repeat(10), 3),
            "aaa… (10 characters)"
        );
        assert_eq!(
            short_for_display("\u{202E}\u{202E}\u{202E}", 2),
            "\\u{202E}\\u{202E}… (3 characters)"
        );
    }

    #[test]
    fn quotes_args() {
        assert_eq!(quote_arg("-y"), "-y");
        assert_eq!(quote_arg("a b"), "'a b'");
        assert_eq!(quote_arg(""), "''");
        assert_eq!(quote_arg("it's"), "'it'\\''s'");
    }

    #[test]
    fn strips_ansi() {
        assert_eq!(strip_ansi("\x1b[2J\x1b[31mred\x1b[0m"), "red");
        assert_eq!(strip_ansi("\x1b]0;title\x07ok"), "ok");
        assert_eq!(strip_ansi("a\u{202E}b"), "a\\u{202E}b");
    }
}
