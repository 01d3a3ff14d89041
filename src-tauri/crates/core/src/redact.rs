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

    /// Adds one more secret value (ignored when too short to be one).
    pub fn add(&mut self, secret: &Secret) {
        if secret.0.len() >= MIN_REDACT_LEN && !self.values.contains(&secret.0) {
            self.values.push(secret.0.clone());
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
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

/// Secret values this process has read, for scrubbing log output. Logging is process-wide by
/// nature (one subscriber, one stderr), so this is the one piece of global state in the core;
/// it is only ever added to, by [`crate::secrets::Secrets::get`], and only read by
/// [`RedactingStderr`].
static GLOBAL: std::sync::RwLock<Option<Redactor>> = std::sync::RwLock::new(None);

/// Adds a secret to the process-wide log redaction set.
pub fn register_for_logs(secret: &Secret) {
    if secret.0.len() < MIN_REDACT_LEN {
        return;
    }
    let mut g = GLOBAL
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let r = g.get_or_insert_with(Redactor::default);
    if !r.values.contains(&secret.0) {
        r.values.push(secret.0.clone());
        r.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }
}

/// Scrubs every registered secret from `text`.
pub fn redact_for_logs(text: &str) -> String {
    let g = GLOBAL
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match &*g {
        Some(r) => r.redact(text),
        None => text.to_owned(),
    }
}

/// A log writer for `tracing_subscriber::fmt().with_writer(RedactingStderr::default)`: it
/// collects one formatted event and writes it to stderr with every registered secret replaced
/// (SE-06). Whatever a library logs (rmcp at trace level logs whole messages), no secret value
/// this process has read reaches the log.
#[derive(Default)]
pub struct RedactingStderr {
    buf: Vec<u8>,
}

impl std::io::Write for RedactingStderr {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let text = redact_for_logs(&String::from_utf8_lossy(&self.buf));
        self.buf.clear();
        std::io::stderr().write_all(text.as_bytes())
    }
}

impl Drop for RedactingStderr {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
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
    fn log_writer_redacts_registered_secrets() {
        register_for_logs(&Secret::new("global-canary-9876"));
        assert_eq!(redact_for_logs("x global-canary-9876 y"), "x [redacted] y");
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
