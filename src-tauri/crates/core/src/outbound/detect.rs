//! The detectors: where in a text a secret or a piece of personal data sits, and of which kind.
//!
//! Each detector is a regular expression, some with a check the expression cannot make (a card
//! number must pass Luhn; a phone number must have a plausible count of digits and must not
//! continue a longer word or number). They are deliberately conservative: a false positive
//! costs the model a word it needed (it sees a placeholder), a false negative costs what the
//! feature is for, so the shapes matched are the ones that are almost never anything else
//! (known token prefixes, JWT headers, PEM armour, `user:pass@` in URLs) and personal data in
//! the formats people write it in. Plain numbers, dates, times, UUIDs and version strings are
//! not matched (unit tests below).
//!
//! Overlaps are settled by order: the detectors run in [`Kind`] order (private keys first,
//! custom patterns last) and a later match overlapping an earlier one is dropped, so the URL
//! password in `https://me:pw@example.com` is one finding, not also an e-mail address.

use std::sync::LazyLock;

use regex::Regex;

use super::Kind;

/// One finding: the byte range of the value in the text, and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// Where the value starts.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
    /// What it is.
    pub kind: Kind,
}

/// A built-in pattern: its kind, and the capture group holding the value (0 = the whole match).
struct Builtin {
    kind: Kind,
    re: Regex,
    group: usize,
}

/// Compiles a constant pattern; `None` only if it is broken, which a unit test rules out.
fn builtin(kind: Kind, pattern: &str, group: usize) -> Option<Builtin> {
    Regex::new(pattern)
        .ok()
        .map(|re| Builtin { kind, re, group })
}

/// The built-in detectors, in priority order.
static BUILTINS: LazyLock<Vec<Option<Builtin>>> = LazyLock::new(|| {
    vec![
        builtin(
            Kind::PrivateKey,
            r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----",
            0,
        ),
        builtin(
            Kind::Jwt,
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
            0,
        ),
        // The prefixes `redact::value_looks_secret` knows, with enough of a body to be a key.
        builtin(
            Kind::ApiKey,
            r"\b(?:sk-|sk_|pk_live_|rk_live_|ghp_|gho_|ghs_|ghu_|ghr_|github_pat_|glpat-|xoxb-|xoxp-|xoxa-|xapp-|AKIA|ASIA|AIza|ya29\.|npm_|hf_|pplx-|gsk_|shpat_|sq0atp-)[A-Za-z0-9_\-.]{12,}",
            0,
        ),
        builtin(
            Kind::ApiKey,
            r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)",
            1,
        ),
        builtin(
            Kind::UrlPassword,
            r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:([^/\s@]+)@",
            1,
        ),
        builtin(
            Kind::Email,
            r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b",
            0,
        ),
        builtin(Kind::Card, r"\b[2-6]\d{3}(?:[ \-]?\d{3,4}){2,4}\b", 0),
        // International: a `+`, a country code and groups of digits.
        builtin(Kind::Phone, r"\+\d{1,3}(?:[ .\-]?\(?\d{1,4}\)?){2,5}\b", 0),
        // North American: (555) 123-4567, 555-123-4567, 555.123.4567.
        builtin(
            Kind::Phone,
            r"(?:\(\d{3}\)\s?|\b\d{3}[\-.])\d{3}[\-.]\d{4}\b",
            0,
        ),
        // Trunk-prefixed national numbers in groups: 020 7946 0958, 030-1234-5678.
        builtin(Kind::Phone, r"\b0\d{1,4}[ \-]\d{3,4}[ \-]\d{3,4}\b", 0),
    ]
});

/// Whether every built-in pattern compiled (a unit test asserts it).
#[cfg(test)]
pub(super) fn all_compile() -> bool {
    BUILTINS.iter().all(Option::is_some)
}

/// Whether `digits` (ASCII digits only) pass the Luhn check.
pub fn luhn(digits: &str) -> bool {
    let mut sum = 0u32;
    for (i, c) in digits.bytes().rev().enumerate() {
        let mut d = u32::from(c - b'0');
        if i % 2 == 1 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    sum.is_multiple_of(10)
}

/// The check a match must also pass, beyond its pattern.
fn plausible(kind: Kind, text: &str, start: usize, end: usize) -> bool {
    let digits: String = text[start..end]
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    // Not the middle of a longer number, identifier or version string; a sentence's full stop
    // or comma after it is fine, a decimal point is not.
    let before = text[..start]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || "-_./+".contains(c));
    let mut rest = text[end..].chars();
    let after = match (rest.next(), rest.next()) {
        (Some(c), _) if c.is_alphanumeric() || "-_/+".contains(c) => true,
        (Some('.' | ','), Some(d)) => d.is_ascii_digit(),
        _ => false,
    };
    let alone = !before && !after;
    match kind {
        Kind::Card => alone && (13..=19).contains(&digits.len()) && luhn(&digits),
        // A phone number is 7 to 15 digits (E.164).
        Kind::Phone => alone && (7..=15).contains(&digits.len()),
        _ => true,
    }
}

/// Every finding in `text`: the built-ins, then `custom` patterns (their group 1 when they have
/// one, else the whole match), overlaps settled by that order, sorted by position.
pub fn find(text: &str, custom: &[Regex]) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let mut add = |kind: Kind, start: usize, end: usize| {
        if start < end && !out.iter().any(|s| start < s.end && s.start < end) {
            out.push(Span { start, end, kind });
        }
    };
    for b in BUILTINS.iter().flatten() {
        for c in b.re.captures_iter(text) {
            let Some(m) = c.get(b.group) else { continue };
            if plausible(b.kind, text, m.start(), m.end()) {
                add(b.kind, m.start(), m.end());
            }
        }
    }
    for re in custom {
        for c in re.captures_iter(text) {
            let Some(m) = c.get(1).or_else(|| c.get(0)) else {
                continue;
            };
            add(Kind::Custom, m.start(), m.end());
        }
    }
    out.sort_by_key(|s| s.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, String)> {
        find(text, &[])
            .into_iter()
            .map(|s| (s.kind, text[s.start..s.end].to_owned()))
            .collect()
    }

    #[test]
    fn the_patterns_compile() {
        assert!(all_compile());
    }

    #[test]
    fn luhn_accepts_valid_and_refuses_invalid_numbers() {
        assert!(luhn("4111111111111111"));
        assert!(luhn("5555555555554444"));
        assert!(luhn("378282246310005"));
        assert!(!luhn("4111111111111112"));
        assert!(!luhn("1234567812345678"));
    }

    #[test]
    fn cards_need_luhn() {
        assert_eq!(
            kinds("pay with 4111 1111 1111 1111 today"),
            [(Kind::Card, "4111 1111 1111 1111".to_owned())]
        );
        assert_eq!(
            kinds("card 5555-5555-5555-4444."),
            [(Kind::Card, "5555-5555-5555-4444".to_owned())]
        );
        assert!(kinds("order 4111 1111 1111 1112 shipped").is_empty());
    }

    #[test]
    fn phones_in_common_formats() {
        for (text, want) in [
            ("call +1 415 555 0132 now", "+1 415 555 0132"),
            ("call +44 20 7946 0958.", "+44 20 7946 0958"),
            ("call +4915112345678", "+4915112345678"),
            ("or (415) 555-0132", "(415) 555-0132"),
            ("or 415-555-0132", "415-555-0132"),
            ("london 020 7946 0958", "020 7946 0958"),
        ] {
            assert_eq!(kinds(text), [(Kind::Phone, want.to_owned())], "{text}");
        }
    }

    #[test]
    fn no_false_positives_on_plain_numbers_dates_ids() {
        for text in [
            "the answer is 42 and 1234567890123",
            "on 2024-01-15 at 12:30:45",
            "15.01.2024 and 01/15/2024 and 2024-01-15T12:30:45Z",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "uuid 550e8400-e29b-41d4-a716-446655440000 done",
            "version 1.2.3 build 20240115.1",
            "total 1,234,567.89 EUR, port 8080, pid 31337",
            "commit 3f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f",
            "ISBN 978-3-16-148410-0",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "basic information about bearer tokens",
            "see https://example.com/path?q=1 and user@ (no domain)",
        ] {
            assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
        }
    }

    #[test]
    fn secrets_of_every_kind() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----";
        let text = format!(
            "key sk-proj-abcdefghijklmnop1234 jwt {jwt} url https://bob:hunter2@db.example.com/x \
             mail jane.doe@example.org pem {pem} end"
        );
        let found = kinds(&text);
        assert_eq!(
            found,
            [
                (Kind::ApiKey, "sk-proj-abcdefghijklmnop1234".to_owned()),
                (Kind::Jwt, jwt.to_owned()),
                (Kind::UrlPassword, "hunter2".to_owned()),
                (Kind::Email, "jane.doe@example.org".to_owned()),
                (Kind::PrivateKey, pem.to_owned()),
            ]
        );
        assert_eq!(
            kinds("Authorization: Bearer abcdef0123456789xyz"),
            [(Kind::ApiKey, "abcdef0123456789xyz".to_owned())]
        );
    }

    #[test]
    fn custom_patterns_use_their_first_group() {
        let custom = [
            Regex::new(r"ACME-(\d{6})").unwrap(),
            Regex::new(r"Project Falcon").unwrap(),
        ];
        let text = "ticket ACME-123456 for Project Falcon";
        let found: Vec<_> = find(text, &custom)
            .into_iter()
            .map(|s| (s.kind, &text[s.start..s.end]))
            .collect();
        assert_eq!(
            found,
            [(Kind::Custom, "123456"), (Kind::Custom, "Project Falcon")]
        );
    }
}
