//! Per-domain allow and deny lists of a sandboxed server's network (SP-13).
//!
//! A user-mode network stack sees addresses, not names, so a list of domains can only be kept
//! by a proxy that is told the name: with a list, the server's only way out is the host's
//! filtering proxy (`sandbox::proxy`), which asks [`DomainLists::decide`] about each
//! `CONNECT host:port` and each absolute-URI request.
//!
//! The patterns are VS Code's (`network.allowedDomains` / `deniedDomains`): `example.com` is
//! that host only, `*.example.com` any name below it (not `example.com` itself). A deny wins
//! over an allow. An empty allow list with a deny list means "anything but the denied";
//! otherwise only allowed names pass. IP literals are patterns too (`127.0.0.1`), matched
//! exactly: that is how a person lets a server reach a loopback service on purpose.

use serde::Serialize;

use super::SandboxError;
use crate::escape::escape_for_display;

/// The most domains one list may hold.
pub const MAX_DOMAINS: usize = 256;

/// What the lists say about one host name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It may be reached, and it was named exactly (not by a wildcard): a loopback or
    /// link-local address it resolves to is then the person's own choice.
    AllowedByName,
    /// It may be reached (by a wildcard, or because only a deny list is set).
    Allowed,
    /// A deny pattern matches it.
    Denied,
    /// An allow list is set and nothing in it matches.
    NotAllowed,
}

impl Verdict {
    /// Whether the proxy lets the connection through.
    pub fn passes(self) -> bool {
        matches!(self, Self::AllowedByName | Self::Allowed)
    }
}

/// A server's two lists, normalized.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainLists {
    /// Patterns that may be reached (empty: any not denied).
    pub allow: Vec<String>,
    /// Patterns that may never be reached.
    pub deny: Vec<String>,
}

impl DomainLists {
    /// What the lists say about `host` (a name or an IP literal, as the client sent it).
    pub fn decide(&self, host: &str) -> Verdict {
        let host = host_key(host);
        if self.deny.iter().any(|p| matches(p, &host)) {
            return Verdict::Denied;
        }
        if self.allow.contains(&host) {
            return Verdict::AllowedByName;
        }
        if self.allow.is_empty() || self.allow.iter().any(|p| matches(p, &host)) {
            return Verdict::Allowed;
        }
        Verdict::NotAllowed
    }
}

/// `host` as the lists compare it: lower case, without a trailing dot or IPv6 brackets.
pub fn host_key(host: &str) -> String {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    match h.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(inner) => inner.to_owned(),
        None => h,
    }
}

fn matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(base) => host
            .strip_suffix(base)
            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
        None => pattern == host,
    }
}

/// Checks and normalizes one pattern: a host name (letters, digits, `-`, `_`, labels of at
/// most 63), optionally behind `*.`, or an IP literal.
pub fn pattern(raw: &str) -> Result<String, SandboxError> {
    let bad = || SandboxError::BadDomain(escape_for_display(raw));
    let key = host_key(raw);
    if key.parse::<std::net::IpAddr>().is_ok() {
        return Ok(key);
    }
    let name = key.strip_prefix("*.").unwrap_or(&key);
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(bad());
    }
    Ok(key)
}

/// Normalizes a list: each pattern checked, sorted, without duplicates.
pub fn normalize(list: &[String]) -> Result<Vec<String>, SandboxError> {
    if list.len() > MAX_DOMAINS {
        return Err(SandboxError::TooMany(MAX_DOMAINS));
    }
    let mut out = list
        .iter()
        .map(|d| pattern(d))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lists(allow: &[&str], deny: &[&str]) -> DomainLists {
        DomainLists {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// SP-13: VS Code's patterns; a deny wins; only exact names count as "by name".
    #[test]
    fn patterns_match_as_vs_code_and_deny_wins() {
        let l = lists(
            &["*.example.com", "api.test", "127.0.0.1"],
            &["bad.example.com"],
        );
        assert_eq!(l.decide("a.example.com"), Verdict::Allowed);
        assert_eq!(l.decide("A.Example.COM."), Verdict::Allowed);
        assert_eq!(l.decide("example.com"), Verdict::NotAllowed);
        assert_eq!(l.decide("evilexample.com"), Verdict::NotAllowed);
        assert_eq!(l.decide("bad.example.com"), Verdict::Denied);
        assert_eq!(l.decide("api.test"), Verdict::AllowedByName);
        assert_eq!(l.decide("127.0.0.1"), Verdict::AllowedByName);
        assert_eq!(l.decide("localhost"), Verdict::NotAllowed);
        let deny_only = lists(&[], &["*.ads.test"]);
        assert_eq!(deny_only.decide("x.ads.test"), Verdict::Denied);
        assert_eq!(deny_only.decide("news.test"), Verdict::Allowed);
        assert!(!Verdict::Denied.passes() && Verdict::Allowed.passes());
    }

    #[test]
    fn patterns_are_checked_and_normalized() {
        assert_eq!(pattern("Example.COM.").unwrap(), "example.com");
        assert_eq!(pattern("*.x.test").unwrap(), "*.x.test");
        assert_eq!(pattern("[::1]").unwrap(), "::1");
        for bad in [
            "",
            "*",
            "a..b",
            "a b",
            "*.*.x",
            "x/y",
            "a:80",
            "ex\u{202E}.com",
        ] {
            assert!(pattern(bad).is_err(), "{bad:?}");
        }
        let n = normalize(&["b.test".into(), "A.test".into(), "b.test".into()]).unwrap();
        assert_eq!(n, vec!["a.test", "b.test"]);
    }
}
