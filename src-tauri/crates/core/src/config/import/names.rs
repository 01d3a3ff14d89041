//! Foreign names made into ours, and foreign JSON made parseable.
//!
//! Server and input names in peer files are free text ("Brave Search", "my server (prod)");
//! ours are [`crate::ids`] names. [`sanitize`] maps one to the other and [`Taken`] hands out
//! unique names (`-2`, `-3` suffixes) so two entries never share a server or a secret.
//! [`strip_jsonc`] accepts what VS Code accepts (comments, trailing commas) without a JSONC
//! dependency.

use std::collections::HashSet;

/// Makes `raw` fit the `ids` name rules: characters outside `[A-Za-z0-9._-]` become `-` (runs
/// collapsed), the result starts with a letter or digit and has at most `max` characters.
/// Falls back to `fallback` when nothing usable is left (a name made only of emoji).
///
/// Callers only sanitize names that fail validation, so a valid name is never rewritten.
pub(crate) fn sanitize(raw: &str, max: usize, fallback: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let start = out.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    // Only ASCII is left, so characters and bytes agree.
    let cut: String = start.chars().take(max).collect();
    let trimmed = cut.trim_end_matches('-');
    if trimmed.is_empty() {
        fallback.to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Names already in use, compared case-insensitively: `GitHub` and `github` would be confusing
/// as two servers and collide as keyring entries on case-insensitive stores.
#[derive(Debug, Default)]
pub(crate) struct Taken {
    lower: HashSet<String>,
}

impl Taken {
    /// A set seeded with names that exist already (in the host, or reserved by the file).
    pub(crate) fn new(existing: impl IntoIterator<Item = String>) -> Self {
        Self {
            lower: existing
                .into_iter()
                .map(|s| s.to_ascii_lowercase())
                .collect(),
        }
    }

    /// Marks `name` as used without checking.
    pub(crate) fn reserve(&mut self, name: &str) {
        self.lower.insert(name.to_ascii_lowercase());
    }

    /// Returns `base`, or else the first free `base-2`, `base-3`... (shortening `base` so the
    /// result has at most `max` characters), and marks it used. `base` must be ASCII.
    pub(crate) fn claim(&mut self, base: &str, max: usize) -> String {
        if self.lower.insert(base.to_ascii_lowercase()) {
            return base.to_owned();
        }
        let mut n: u64 = 2;
        loop {
            let suffix = format!("-{n}");
            let keep = max.saturating_sub(suffix.len());
            let stem: String = base.chars().take(keep).collect();
            let candidate = format!("{}{suffix}", stem.trim_end_matches('-'));
            if self.lower.insert(candidate.to_ascii_lowercase()) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// Turns JSON with comments (`//`, `/* */`) and trailing commas into plain JSON. Comments and
/// dropped commas become spaces (newlines are kept), so serde_json's line and column numbers
/// still point into the user's file. Text inside strings is never touched.
pub(super) fn strip_jsonc(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let no_comments = strip_comments(text);
    strip_trailing_commas(&no_comments)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                    out.push(' ');
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut prev = ' ';
                for n in chars.by_ref() {
                    out.push(if n == '\n' { '\n' } else { ' ' });
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn strip_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        let trailing = c == ','
            && chars[i + 1..]
                .iter()
                .find(|n| !n.is_whitespace())
                .is_some_and(|n| matches!(n, '}' | ']'));
        out.push(if trailing { ' ' } else { c });
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn sanitizes_to_id_rules() {
        assert_eq!(sanitize("Brave Search", 64, "server"), "Brave-Search");
        assert_eq!(sanitize("my server (prod)", 64, "server"), "my-server-prod");
        assert_eq!(sanitize("--x", 64, "server"), "x");
        assert_eq!(sanitize("a/b\\c", 64, "server"), "a-b-c");
        assert_eq!(sanitize("café", 64, "server"), "caf");
        assert_eq!(sanitize("🚀", 64, "server"), "server");
        assert_eq!(sanitize(&"y".repeat(100), 64, "server").len(), 64);
        assert_eq!(
            sanitize(&format!("{}  z", "y".repeat(63)), 64, "s"),
            "y".repeat(63)
        );
    }

    #[test]
    fn claims_unique_names_case_insensitively() {
        let mut t = Taken::new(["github".to_owned()]);
        assert_eq!(t.claim("GitHub", 64), "GitHub-2");
        assert_eq!(t.claim("github", 64), "github-3");
        assert_eq!(t.claim("fs", 64), "fs");
        let long = "x".repeat(64);
        assert_eq!(t.claim(&long, 64), long);
        let second = t.claim(&long, 64);
        assert_eq!(second, format!("{}-2", "x".repeat(62)));
        t.reserve("kept");
        assert_eq!(t.claim("KEPT", 64), "KEPT-2");
    }

    #[test]
    fn strips_comments_and_trailing_commas_outside_strings() {
        let text = "\u{feff}{\n  // a comment\n  \"url\": \"http://x/*y*/\", /* block\n */\n  \"a\": [1, 2,],\n  \"s\": \"q\\\" ,}\",\n}";
        let clean = strip_jsonc(text);
        let v: serde_json::Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(v["url"], "http://x/*y*/");
        assert_eq!(v["a"], serde_json::json!([1, 2]));
        assert_eq!(v["s"], "q\" ,}");
        assert_eq!(clean.lines().count(), text.lines().count());
    }
}
