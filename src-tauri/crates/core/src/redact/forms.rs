//! The forms a secret value takes on its way into a trace or a log, so [`super::Redactor`] can
//! find each of them (SE-06).
//!
//! A secret rarely appears as its plain bytes alone: inside a JSON-RPC message it is
//! JSON-escaped (quotes and backslashes escaped, other encoders add `\u` escapes, `\/` or HTML
//! escapes, and a JSON string inside JSON is escaped twice); in a `Debug`-formatted log field it
//! is Rust-escaped; in a URL it is percent-encoded (three common flavours, either hex case); in an
//! `Authorization: Basic` header it is base64 of `user:secret`, where the user is unknown. For
//! base64 the secret's encoding depends on where it starts modulo three bytes, so each of the
//! three alignments contributes the run of characters that depends on the secret alone (a couple
//! of characters at each edge mix with their neighbours and cannot be known). A credential seen
//! in a header context (`Authorization: Basic …`, `… Bearer …`) is masked whole by
//! [`mask_auth`] whatever it is, since the user part of a Basic credential is unknown.
//!
//! Everything here is pure and allocation-bounded by the secret's length.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// The shortest base64 run worth matching: shorter runs of a secret's encoding could occur by
/// chance in unrelated base64.
const MIN_BASE64_RUN: usize = 6;

const B64_STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Every form of `secret` worth looking for (the plain value first), duplicates included.
pub(super) fn all(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_owned()];
    out.extend(text_forms(secret));
    out.extend(base64_runs(secret.as_bytes()));
    out
}

/// Values hidden inside a credential: the token of `Bearer TOKEN` / `Token TOKEN`, and for
/// `Basic B64` the decoded `user:password` and the password, each a secret of its own.
pub(super) fn inner_secrets(secret: &str) -> Vec<String> {
    let Some((scheme, rest)) = secret.trim().split_once(char::is_whitespace) else {
        return Vec::new();
    };
    let token = rest.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Vec::new();
    }
    match scheme.to_ascii_lowercase().as_str() {
        "bearer" | "token" => vec![token.to_owned()],
        "basic" => match b64_decode(token).and_then(|b| String::from_utf8(b).ok()) {
            Some(pair) => {
                let mut out = vec![token.to_owned()];
                if let Some((_, password)) = pair.split_once(':') {
                    out.push(password.to_owned());
                }
                out.push(pair);
                out
            }
            None => vec![token.to_owned()],
        },
        _ => Vec::new(),
    }
}

/// JSON-, Rust-`Debug`- and percent-encoded forms.
fn text_forms(s: &str) -> Vec<String> {
    let once = json(s, JsonStyle::Serde);
    let mut out = vec![
        json(s, JsonStyle::AsciiLower),
        json(s, JsonStyle::AsciiUpper),
        json(s, JsonStyle::Html),
        once.replace('/', "\\/"),
        json(&once, JsonStyle::Serde),
        rust_debug(s),
        once,
    ];
    for flavour in [Percent::Strict, Percent::Component, Percent::Form] {
        for upper in [true, false] {
            out.push(percent(s, flavour, upper));
        }
    }
    out
}

/// How a JSON encoder escapes a string's characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum JsonStyle {
    /// serde_json, JavaScript: only `"`, `\` and controls.
    Serde,
    /// Python's default (`ensure_ascii`): every non-ASCII character as `\uxxxx`.
    AsciiLower,
    /// The same with upper-case hex, as some encoders write it.
    AsciiUpper,
    /// Go's `encoding/json`: `<`, `>`, `&`, U+2028 and U+2029 as `\u00xx` too.
    Html,
}

/// `s` as the inside of a JSON string literal, in the given style.
fn json(s: &str, style: JsonStyle) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let hex = |out: &mut String, unit: u16| {
        if style == JsonStyle::AsciiUpper {
            out.push_str(&format!("\\u{unit:04X}"));
        } else {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    };
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => hex(&mut out, c as u16),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if style == JsonStyle::Html => {
                hex(&mut out, c as u16)
            }
            c if !c.is_ascii()
                && matches!(style, JsonStyle::AsciiLower | JsonStyle::AsciiUpper) =>
            {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    hex(&mut out, *unit);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as `format!("{s:?}")` shows it, without the quotes.
fn rust_debug(s: &str) -> String {
    let d = format!("{s:?}");
    d.get(1..d.len().saturating_sub(1))
        .unwrap_or_default()
        .to_owned()
}

/// Which bytes a percent-encoder leaves alone.
#[derive(Clone, Copy)]
enum Percent {
    /// RFC 3986 unreserved only: `A-Z a-z 0-9 - . _ ~`.
    Strict,
    /// JavaScript's `encodeURIComponent`: also `! ' ( ) *`.
    Component,
    /// `application/x-www-form-urlencoded`: `A-Z a-z 0-9 * - . _`, space as `+`.
    Form,
}

fn percent(s: &str, flavour: Percent, upper: bool) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || match flavour {
                Percent::Strict => matches!(b, b'-' | b'.' | b'_' | b'~'),
                Percent::Component => {
                    matches!(
                        b,
                        b'-' | b'.' | b'_' | b'~' | b'!' | b'\'' | b'(' | b')' | b'*'
                    )
                }
                Percent::Form => matches!(b, b'*' | b'-' | b'.' | b'_'),
            };
        if keep {
            out.push(char::from(b));
        } else if b == b' ' && matches!(flavour, Percent::Form) {
            out.push('+');
        } else if upper {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}

/// For each alignment (the secret starting 0, 1 or 2 bytes into a base64 group) and both
/// alphabets, the characters of the encoding that depend on the secret's bytes alone.
fn base64_runs(secret: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret);
        // Character i covers bits [6i, 6i+6); keep those inside the secret's bits.
        let first = (8 * offset).div_ceil(6);
        let end = 8 * bytes.len() / 6;
        if end <= first || end - first < MIN_BASE64_RUN {
            continue;
        }
        for alphabet in [B64_STD, B64_URL] {
            let enc = b64_encode(&bytes, alphabet);
            if let Some(run) = enc.get(first..end) {
                out.push(run.to_owned());
            }
        }
    }
    out
}

/// Base64 without padding.
fn b64_encode(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            let idx = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(alphabet[idx as usize]));
        }
    }
    out
}

/// Decodes standard or URL-safe base64, padded or not; `None` if it is not base64.
pub(super) fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    // A lone trailing character (6 bits) cannot end valid base64.
    (bits < 6).then_some(out)
}

/// `Basic`/`Bearer` credentials, optionally right after an `Authorization` header name (plain,
/// quoted or JSON-escaped). `None` only if the constant pattern failed to compile, which a unit
/// test rules out.
static AUTH: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(authorization\\?["']?\s*[:=]\s*\\?["']?\s*)?\b(basic|bearer)(\s+)([A-Za-z0-9+/._~-]{4,}=*)"#,
    )
    .ok()
});

/// Whether a Basic token seen outside a header context still is one: it decodes to printable
/// `user:password`.
fn decodes_to_credential(token: &str) -> bool {
    b64_decode(token)
        .and_then(|b| String::from_utf8(b).ok())
        .is_some_and(|pair| {
            pair.chars().count() >= 3
                && !pair.chars().any(char::is_control)
                && pair
                    .split_once(':')
                    .is_some_and(|(u, p)| !u.is_empty() || !p.is_empty())
        })
}

/// Whether a Bearer token seen outside a header context looks like a credential rather than
/// a word ("bearer tokens").
fn looks_like_token(token: &str) -> bool {
    token.len() >= 12
        && token.chars().any(|c| c.is_ascii_digit())
        && token.chars().any(|c| c.is_ascii_alphabetic())
}

/// `text` with the credential of every `Authorization: Basic|Bearer …` masked whole, and of a
/// bare `Basic …`/`Bearer …` when it decodes to `user:password` or looks like a token.
pub(super) fn mask_auth(text: &str) -> Option<String> {
    let re = AUTH.as_ref()?;
    if !re.is_match(text) {
        return None;
    }
    let mut changed = false;
    let out = re.replace_all(text, |c: &Captures<'_>| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let (scheme, token) = (
            c.get(2).map_or("", |m| m.as_str()),
            c.get(4).map_or("", |m| m.as_str()),
        );
        let header = c.get(1).is_some();
        let mask = header
            || if scheme.eq_ignore_ascii_case("basic") {
                decodes_to_credential(token)
            } else {
                looks_like_token(token)
            };
        if !mask {
            return whole.to_owned();
        }
        changed = true;
        format!(
            "{}{scheme}{}{}",
            c.get(1).map_or("", |m| m.as_str()),
            c.get(3).map_or("", |m| m.as_str()),
            super::REDACTED
        )
    });
    changed.then(|| out.into_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn std_b64(s: &str) -> String {
        let mut e = b64_encode(s.as_bytes(), B64_STD);
        while !e.len().is_multiple_of(4) {
            e.push('=');
        }
        e
    }

    #[test]
    fn the_pattern_compiles() {
        assert!(AUTH.is_some());
    }

    #[test]
    fn base64_round_trips() {
        assert_eq!(std_b64("user:pass"), "dXNlcjpwYXNz");
        assert_eq!(std_b64("a"), "YQ==");
        assert_eq!(b64_decode("YQ==").unwrap(), b"a");
        assert_eq!(b64_decode("dXNlcjpwYXNz").unwrap(), b"user:pass");
        assert!(b64_decode("not base64!").is_none());
    }

    #[test]
    fn a_secret_is_found_in_base64_whatever_comes_before_it() {
        let secret = "s3cr\"et\\pass";
        let runs = base64_runs(secret.as_bytes());
        for user in ["", "u", "us", "use", "user", "alice", "a-much-longer-user"] {
            let header = std_b64(&format!("{user}:{secret}"));
            assert!(
                runs.iter().any(|r| header.contains(r.as_str())),
                "{user}: {header} {runs:?}"
            );
        }
    }

    #[test]
    fn json_and_percent_forms() {
        let forms = all("a\"b\\c/d é<");
        for want in [
            r#"a\"b\\c/d é<"#,
            r#"a\"b\\c\/d é<"#,
            r#"a\"b\\c/d \u00e9<"#,
            r#"a\"b\\c/d \u00E9<"#,
            r#"a\"b\\c/d é\u003c"#,
            r#"a\\\"b\\\\c/d é<"#,
            "a%22b%5Cc%2Fd%20%C3%A9%3C",
            "a%22b%5cc%2fd+%c3%a9%3c",
        ] {
            assert!(forms.iter().any(|f| f == want), "{want} not in {forms:?}");
        }
    }

    #[test]
    fn credentials_inside_auth_values_are_secrets_too() {
        assert_eq!(inner_secrets("Bearer abc123xyz"), ["abc123xyz"]);
        let basic = format!("Basic {}", std_b64("me:hunter22"));
        let inner = inner_secrets(&basic);
        assert!(
            inner.contains(&"hunter22".to_owned()) && inner.contains(&"me:hunter22".to_owned())
        );
        assert!(inner_secrets("plain-token-value").is_empty());
    }

    #[test]
    fn auth_headers_are_masked_whole() {
        let token = std_b64("someone:pa55word");
        for (text, masked) in [
            (format!("Authorization: Basic {token}"), true),
            (format!(r#"{{"authorization":"Basic {token}"}}"#), true),
            (format!(r#"{{\"Authorization\": \"basic {token}\"}}"#), true),
            (format!("sent Basic {token} along"), true),
            ("authorization: Bearer anything.at.all".to_owned(), true),
            ("use Bearer eyJhbGciOi1234567 here".to_owned(), true),
            ("basic information about bearer tokens".to_owned(), false),
            ("Basic examples follow".to_owned(), false),
        ] {
            let out = mask_auth(&text);
            assert_eq!(out.is_some(), masked, "{text} -> {out:?}");
            if let Some(out) = out {
                assert!(out.contains("[redacted]") && !out.contains(&token), "{out}");
                assert!(
                    !out.contains("anything.at") && !out.contains("eyJ"),
                    "{out}"
                );
            }
        }
    }
}
