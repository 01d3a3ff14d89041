//! Secret values and redaction (SE-06).
//!
//! A secret travels as [`Secret`], whose `Debug` and `Display` never show the value, so a stray
//! `?secret` in a `tracing` field cannot leak it. [`Redactor`] scrubs known secret values out of
//! free text (server stderr, error strings, protocol traces) before it is stored or shown.

use std::fmt;

/// A secret string. Read it with [`Secret::expose`] at the one place that needs the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The value itself. Call this only where the value leaves for its destination (a child
    /// environment, an HTTP header, the keyring).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(\"[redacted]\")")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Replaces every occurrence of known secret values in text with `[redacted]`.
#[derive(Clone, Default)]
pub struct Redactor {
    values: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} values)", self.values.len())
    }
}

/// Values shorter than this are not scrubbed: replacing "1" everywhere would destroy logs and
/// such values are not secrets worth the name.
const MIN_REDACT_LEN: usize = 4;

impl Redactor {
    /// A redactor for the given secrets.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        let mut values: Vec<String> = secrets
            .into_iter()
            .map(|s| s.0.clone())
            .filter(|v| v.len() >= MIN_REDACT_LEN)
            .collect();
        // Longest first, so a secret that contains another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Self { values }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The text with every known secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), "[redacted]");
            }
        }
        out
    }
}

/// Whether a variable or header name suggests its value is a credential.
pub fn name_looks_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "passwd",
        "api_key",
        "apikey",
        "api-key",
        "access_key",
        "private_key",
        "authorization",
        "cookie",
        "credential",
        "auth",
        "pat",
    ]
    .iter()
    .any(|k| {
        n == *k
            || n.ends_with(&format!("_{k}"))
            || n.ends_with(&format!("-{k}"))
            || n.starts_with(&format!("{k}_"))
            || n.contains(k) && k.len() > 4
    }) || n.ends_with("_key")
        || n.ends_with("-key")
}

/// Whether a value looks like a credential regardless of its name (well-known token prefixes,
/// bearer values, long high-entropy strings).
pub fn value_looks_secret(value: &str) -> bool {
    let v = value.trim();
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_",
        "pk_live_",
        "rk_",
        "ghp_",
        "gho_",
        "ghs_",
        "ghu_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xapp-",
        "AKIA",
        "AIza",
        "ya29.",
        "Bearer ",
        "bearer ",
        "Basic ",
        "eyJ",
        "npm_",
        "hf_",
        "pplx-",
        "gsk_",
    ];
    if PREFIXES
        .iter()
        .any(|p| v.starts_with(p) && v.len() > p.len() + 6)
    {
        return true;
    }
    // A long token with no spaces, mixing letters and digits, and not a path or URL.
    v.len() >= 24
        && !v.contains([' ', '/', '\\'])
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.=+".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_value() {
        let s = Secret::new("hunter2-canary");
        assert!(!format!("{s:?} {s}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2-canary");
    }

    #[test]
    fn redactor_replaces_longest_first() {
        let r = Redactor::new(&[Secret::new("abcd"), Secret::new("abcdef")]);
        assert_eq!(r.redact("x abcdef y abcd"), "x [redacted] y [redacted]");
        assert_eq!(Redactor::new(&[Secret::new("ab")]).redact("ab"), "ab");
    }

    #[test]
    fn secret_names() {
        for n in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "Authorization",
            "X-Api-Key",
            "DB_PASSWORD",
        ] {
            assert!(name_looks_secret(n), "{n}");
        }
        for n in ["PATH", "HOME", "LOG_LEVEL", "DEBUG", "PORT"] {
            assert!(!name_looks_secret(n), "{n}");
        }
    }

    #[test]
    fn secret_values() {
        assert!(value_looks_secret("sk-abcdefghijklmnop"));
        assert!(value_looks_secret("ghp_0123456789abcdefABCDEF"));
        assert!(value_looks_secret("Bearer abc.def.ghi123"));
        assert!(!value_looks_secret("/usr/local/bin"));
        assert!(!value_looks_secret("info"));
        assert!(!value_looks_secret(
            "https://example.com/a1b2c3d4e5f6g7h8i9j0k1"
        ));
    }
}
