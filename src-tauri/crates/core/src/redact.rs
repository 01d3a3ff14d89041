//! Secret values and redaction (SE-06).
//!
//! A secret travels as [`Secret`], whose `Debug` and `Display` never show the value, so a stray
//! `?secret` in a `tracing` field cannot leak it. [`Redactor`] scrubs known secret values out of
//! free text (server stderr, error strings, protocol traces) before it is stored or shown, in
//! every form a value takes there (escaped, encoded, inside a Basic credential), and always
//! before the text is cut to size: half a secret is no longer recognisable as one. A cut itself
//! ([`Redactor::cut`]) never lands inside a secret: what ends with the beginning of a known
//! secret is cut before it, so a secret straddling a size cap leaves no piece behind.

use std::fmt;

mod forms;

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

/// What a secret is replaced with.
const REDACTED: &str = "[redacted]";

/// Replaces every occurrence of known secret values in text with `[redacted]`, in each form
/// the value takes in traces and logs (plain, JSON-escaped, `Debug`-escaped, percent-encoded,
/// inside base64 of `user:secret`; see [`forms`]), and masks the credential of every
/// `Authorization: Basic|Bearer …` whole.
///
/// Redact before cutting text to size: a secret cut in half is no longer recognisable.
#[derive(Clone, Default)]
pub struct Redactor {
    /// The secret values themselves (and the values found inside credentials).
    secrets: Vec<String>,
    /// Every form of every secret, longest first, so a form that contains another is replaced
    /// whole.
    forms: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} values)", self.secrets.len())
    }
}

/// Values shorter than this are not scrubbed: replacing "1" everywhere would destroy logs and
/// such values are not secrets worth the name.
const MIN_REDACT_LEN: usize = 4;

impl Redactor {
    /// A redactor for the given secrets.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        let mut r = Self::default();
        for s in secrets {
            r.insert(&s.0);
        }
        r.rebuild();
        r
    }

    /// Adds one more secret value (ignored when too short to be one).
    pub fn add(&mut self, secret: &Secret) {
        if self.insert(&secret.0) {
            self.rebuild();
        }
    }

    /// Records a value and the values inside it; whether anything was new.
    fn insert(&mut self, value: &str) -> bool {
        if value.len() < MIN_REDACT_LEN || self.secrets.iter().any(|v| v == value) {
            return false;
        }
        self.secrets.push(value.to_owned());
        for inner in forms::inner_secrets(value) {
            self.insert(&inner);
        }
        true
    }

    fn rebuild(&mut self) {
        let mut all: Vec<String> = self
            .secrets
            .iter()
            .flat_map(|s| forms::all(s))
            .filter(|f| f.len() >= MIN_REDACT_LEN)
            .collect();
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        self.forms = all;
    }

    /// Whether no secret value is known (credentials in `Authorization` headers are still
    /// masked by [`Redactor::redact`]).
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The longest form of a known secret, in bytes: text cut to `n` bytes is redacted safely by
    /// redacting its first `n + longest_form()` bytes and then cutting.
    pub fn longest_form(&self) -> usize {
        self.forms.first().map_or(0, String::len)
    }

    /// The text with every known secret, in every form, replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for v in &self.forms {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), REDACTED);
            }
        }
        forms::mask_auth(&out).unwrap_or(out)
    }

    /// The text redacted, then cut to at most `max` bytes at a character boundary with the
    /// bytes left out noted. Only the part that can reach the result is redacted, so a
    /// megabyte-long message costs no more than a short one.
    pub fn redact_then_cut(&self, text: &str, max: usize) -> String {
        // A secret (or credential) overlapping the first `max` bytes ends within this window;
        // the slack covers a masked Authorization token running past it.
        let window = max.saturating_add(self.longest_form()).saturating_add(256);
        let mut end = window.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let redacted = self.redact(&text[..end]);
        let unseen = text.len() - end;
        if redacted.len() <= max && unseen == 0 {
            return redacted;
        }
        let kept = self.cut(&redacted, max);
        format!(
            "{kept}… [{} more bytes]",
            redacted.len() - kept.len() + unseen
        )
    }

    /// The start of `text` that fits in `max` bytes, cut at a character boundary and never
    /// inside a secret (SE-06): when the kept part ends with the beginning of any form of a
    /// known secret, the cut moves back before it. Whole secrets must be redacted first; this
    /// covers the secret that straddles the cut (or that an earlier cut already split), which
    /// redaction cannot recognise any more. It may drop a few innocent bytes that merely look
    /// like a secret's first characters; it never keeps a piece of one.
    pub fn cut<'a>(&self, text: &'a str, max: usize) -> &'a str {
        let mut end = max.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut end = end - self.partial_tail(&text.as_bytes()[..end]);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        &text[..end]
    }

    /// `text` without the piece of a known secret it may end with: the same rule as
    /// [`Redactor::cut`] for text that was already cut elsewhere (a read that stopped at a cap).
    pub fn trim_partial<'a>(&self, text: &'a str) -> &'a str {
        self.cut(text, text.len())
    }

    /// The length of the longest end of `kept` that is the beginning (not the whole) of a form
    /// of a known secret; 0 when none is. Costs at most the sum of the forms' lengths in
    /// comparisons, each at most as long as its form.
    fn partial_tail(&self, kept: &[u8]) -> usize {
        let mut longest = 0;
        for form in &self.forms {
            let form = form.as_bytes();
            let most = (form.len() - 1).min(kept.len());
            if most <= longest {
                continue;
            }
            if let Some(k) = (longest + 1..=most)
                .rev()
                .find(|&k| kept.ends_with(&form[..k]))
            {
                longest = k;
            }
        }
        longest
    }
}

/// Secret values this process has read, for scrubbing log output. Logging is process-wide by
/// nature (one subscriber, one stderr), so this is the one piece of global state in the core;
/// it is only ever added to, by [`crate::secrets::Secrets::get`] and by the answers a person
/// types into fields a server's form marks as credentials, and only read by
/// [`redact_for_logs`].
static GLOBAL: std::sync::RwLock<Option<Redactor>> = std::sync::RwLock::new(None);

/// Adds a secret to the process-wide log redaction set.
pub fn register_for_logs(secret: &Secret) {
    if secret.0.len() < MIN_REDACT_LEN {
        return;
    }
    let mut g = GLOBAL
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    g.get_or_insert_with(Redactor::default).add(secret);
}

/// Scrubs every registered secret, in every form, from `text`, and masks `Authorization`
/// credentials.
pub fn redact_for_logs(text: &str) -> String {
    let g = GLOBAL
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match &*g {
        Some(r) => r.redact(text),
        None => forms::mask_auth(text).unwrap_or_else(|| text.to_owned()),
    }
}

/// `text` cut to at most `max` bytes, never inside a registered secret (see [`Redactor::cut`]);
/// `text` itself should already have gone through [`redact_for_logs`].
pub fn cut_for_logs(text: &str, max: usize) -> &str {
    let g = GLOBAL
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match &*g {
        Some(r) => r.cut(text, max),
        None => Redactor::default().cut(text, max),
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
    fn every_form_of_a_secret_is_redacted() {
        let secret = r#"p@ss"w\ord/é 9"#;
        let r = Redactor::new(&[Secret::new(secret)]);
        let basic = |user: &str| {
            let pair = format!("{user}:{secret}");
            // The test's own encoder: std base64 with padding.
            let b = pair.as_bytes();
            let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut out = String::new();
            for c in b.chunks(3) {
                let n = (u32::from(c[0]) << 16)
                    | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*c.get(2).unwrap_or(&0));
                for i in 0..4 {
                    if i <= c.len() {
                        out.push(char::from(table[((n >> (18 - 6 * i)) & 63) as usize]));
                    } else {
                        out.push('=');
                    }
                }
            }
            out
        };
        let json = serde_json::to_string(&serde_json::json!({ "k": secret })).unwrap();
        let twice = serde_json::to_string(&serde_json::json!({ "args": json })).unwrap();
        let cases = [
            format!("plain {secret} here"),
            json.clone(),
            twice,
            format!("{secret:?}"),
            format!("GET /x?token={}", "p%40ss%22w%5Cord%2F%C3%A9%209"),
            format!("form token={}", "p%40ss%22w%5Cord%2F%C3%A9+9"),
            format!("log: basic {} sent", basic("alice")),
            format!("x-other: {}", basic("bob")),
            format!("x-other: {}", basic("carol1")),
        ];
        for text in cases {
            let out = r.redact(&text);
            assert!(out.contains("[redacted]"), "{text} -> {out}");
            for leak in ["ss\"w", "ss\\\"w", "%22w", "\\ord"] {
                assert!(!out.contains(leak), "{text} -> {out}");
            }
        }
    }

    #[test]
    fn authorization_credentials_are_masked_without_knowing_them() {
        let r = Redactor::default();
        assert_eq!(
            r.redact("Authorization: Basic dXNlcjpwYXNz"),
            "Authorization: Basic [redacted]"
        );
        assert_eq!(r.redact("plain words"), "plain words");
    }

    #[test]
    fn redaction_happens_before_cutting() {
        let r = Redactor::new(&[Secret::new("cut-canary-0123456789")]);
        let text = format!(
            "{}cut-canary-0123456789{}",
            "x".repeat(95),
            "y".repeat(1000)
        );
        let kept = r.redact_then_cut(&text, 100);
        assert!(kept.starts_with(&"x".repeat(95)), "{kept}");
        assert!(!kept.contains("cut-can"), "half a secret survived: {kept}");
        assert!(kept.ends_with("more bytes]"), "{kept}");
        assert_eq!(r.redact_then_cut("short", 100), "short");
    }

    /// SE-06: a registered secret placed across the cut, at every offset and in its escaped
    /// form too, leaves not one of its characters in what is kept.
    #[test]
    fn no_piece_of_a_secret_survives_a_cut() {
        let secret = r#"cut"canary-0123456789-abcdefghij-XYZ"#;
        let r = Redactor::new(&[Secret::new(secret)]);
        let escaped = serde_json::to_string(secret).unwrap();
        let escaped = &escaped[1..escaped.len() - 1];
        for form in [secret, escaped] {
            for k in 1..form.len() {
                let text = format!("{}{form}{}", "x".repeat(100 - k), "y".repeat(50));
                assert_eq!(r.cut(&text, 100), "x".repeat(100 - k), "offset {k}");
                let kept = r.redact_then_cut(&text, 100);
                assert!(kept.starts_with(&"x".repeat(100 - k)), "{kept}");
                assert!(
                    kept.contains("[redacted]") || !kept.contains("cut"),
                    "{kept}"
                );
                // Text that an earlier cut already split: the piece at its end goes too.
                let split = format!("{}{}", "x".repeat(10), &form[..k]);
                assert_eq!(r.trim_partial(&split), "x".repeat(10));
            }
        }
        // Text with no secret at its edge is cut where asked.
        assert_eq!(r.cut("hello world", 5), "hello");
        assert_eq!(r.cut("héllo", 2), "h");
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
