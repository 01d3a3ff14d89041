//! What may be opened in the browser (RN-02): [`check`] decides whether a URL a server sent
//! (an elicitation URL, AP-07; links and OAuth later) may be shown as openable at all.
//!
//! A URL from a server is hostile until shown otherwise, so [`check`] runs before anything is
//! displayed as openable: only `https`, or `http` to a loopback address; no credentials in the
//! authority (`https://bank.com@evil.example` reads as the bank); no control characters,
//! spaces (which the URL parser would silently drop) or invisible ones (bidi overrides, the
//! classes of [`Hidden`]); at most [`MAX_URL`] characters. What it returns carries the
//! registrable domain (from the Public Suffix List, via the `psl` crate), so a dialog can
//! highlight the part that says who you are talking to, and warnings for punycode and bare IP
//! addresses. Nothing is fetched here, ever (no prefetch, no favicon).
//!
//! Kept apart from `opener` (which launches the browser and re-exports this) as a pure leaf:
//! `approval` checks elicitation URLs when a request arrives and must not depend on a module
//! that starts programs.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::escape::Hidden;

/// The longest URL that may be opened, in characters.
pub const MAX_URL: usize = 4096;

/// A URL that passed [`check`], with what a dialog must show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckedUrl {
    /// The URL as it will be opened (normalised by the parser).
    pub url: String,
    /// The host as the URL names it (ASCII; punycode stays punycode).
    pub host: String,
    /// The host as a person reads it (Unicode for internationalised names).
    pub host_unicode: String,
    /// The registrable domain ("example.co.uk" of "login.example.co.uk"), or the host for IP
    /// addresses and names the suffix list does not know.
    pub domain: String,
    /// Things a person should know before opening it.
    pub warnings: Vec<String>,
}

/// Why a URL will not be opened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    /// Longer than [`MAX_URL`].
    #[error("the address is {0} characters long; Switchboard opens at most {MAX_URL}")]
    TooLong(usize),
    /// Control characters, spaces or invisible characters (bidi overrides, zero-width).
    #[error("the address contains spaces, control or invisible characters")]
    Invisible,
    /// Not a URL.
    #[error("the address is not a valid URL: {0}")]
    Unparsable(String),
    /// A scheme other than https (or http to this machine).
    #[error("only https addresses are opened (http only to this machine); this one is {0}:")]
    Scheme(String),
    /// `user:password@` in the authority.
    #[error("the address carries a user name or password before its host, a common disguise")]
    Credentials,
    /// No host at all.
    #[error("the address has no host")]
    NoHost,
}

/// Checks `text` for opening (see the module docs).
pub fn check(text: &str) -> Result<CheckedUrl, UrlRefusal> {
    let len = text.chars().count();
    if len > MAX_URL {
        return Err(UrlRefusal::TooLong(len));
    }
    let hidden = |c: char| c.is_control() || c.is_whitespace() || Hidden::of(c).is_some();
    if text.chars().any(hidden) {
        return Err(UrlRefusal::Invisible);
    }
    let url = url::Url::parse(text).map_err(|e| UrlRefusal::Unparsable(e.to_string()))?;
    let host = url.host_str().ok_or(UrlRefusal::NoHost)?.to_owned();
    let ip = url.host().and_then(|h| match h {
        url::Host::Ipv4(a) => Some(IpAddr::V4(a)),
        url::Host::Ipv6(a) => Some(IpAddr::V6(a)),
        url::Host::Domain(_) => None,
    });
    let loopback = host == "localhost" || ip.is_some_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        other => return Err(UrlRefusal::Scheme(other.to_owned())),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefusal::Credentials);
    }
    let mut warnings = Vec::new();
    let (host_unicode, idna) = idna::domain_to_unicode(&host);
    let punycode = host.split('.').any(|label| label.starts_with("xn--"));
    if punycode {
        warnings.push(if idna.is_ok() {
            format!(
                "the domain is written in punycode ({host}) and reads as {host_unicode}: \
                 look-alike letters can imitate another site"
            )
        } else {
            format!("the domain is written in punycode ({host}) that does not decode cleanly")
        });
    }
    if ip.is_some() && !loopback {
        warnings.push("the address is a bare IP address, not a name".to_owned());
    }
    if loopback {
        warnings.push("the address points at this computer".to_owned());
    }
    let domain = match ip {
        Some(_) => host.clone(),
        None => psl::domain_str(&host)
            .map(str::to_owned)
            .unwrap_or_else(|| host.clone()),
    };
    Ok(CheckedUrl {
        url: url.to_string(),
        host,
        host_unicode: if punycode {
            host_unicode
        } else {
            url.host_str().unwrap_or_default().to_owned()
        },
        domain,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_addresses_are_refused() {
        let refused = [
            ("javascript:alert(1)", "scheme"),
            ("file:///etc/passwd", "scheme"),
            ("data:text/html,<script>x</script>", "scheme"),
            ("ms-msdt:/id PCWDiagnostic", "spaces"),
            ("smb://server/share", "scheme"),
            ("vbscript:msgbox", "scheme"),
            ("http://example.com/login", "scheme"),
            ("https://bank.example@evil.example/", "credentials"),
            ("https://user:pw@evil.example/", "credentials"),
            ("https://x/\u{202e}gpj.exe", "invisible"),
            ("https://x/a b", "spaces"),
            ("https://x/\nsecond", "invisible"),
            ("not a url", "spaces"),
            ("https://", "unparsable"),
        ];
        for (url, why) in refused {
            assert!(check(url).is_err(), "{url} should be refused ({why})");
        }
        let long = format!("https://example.com/{}", "a".repeat(10_000));
        assert_eq!(check(&long), Err(UrlRefusal::TooLong(long.chars().count())));
    }

    #[test]
    fn the_registrable_domain_is_found() {
        let c = check("https://login.accounts.example.co.uk/path?q=1").unwrap();
        assert_eq!(c.domain, "example.co.uk");
        assert_eq!(c.host, "login.accounts.example.co.uk");
        assert!(c.warnings.is_empty());
        let c = check("https://github.io.evil.example/x").unwrap();
        assert_eq!(c.domain, "evil.example");
        // Odd but harmless: these open as the parser normalises them.
        let c = check("https://x/$(id)").unwrap();
        assert!(
            c.url.contains("$(id)"),
            "passed as one argument, never to a shell"
        );
        assert!(check("https://x/&calc").is_ok());
    }

    #[test]
    fn punycode_ip_and_loopback_are_warned_about() {
        let c = check("https://xn--pple-43d.com/").unwrap();
        assert_eq!(c.host_unicode, "аpple.com");
        assert!(c.warnings.iter().any(|w| w.contains("punycode")), "{c:?}");
        let c = check("https://203.0.113.9/").unwrap();
        assert!(c.warnings.iter().any(|w| w.contains("IP address")));
        let c = check("http://127.0.0.1:8080/cb").unwrap();
        assert!(c.warnings.iter().any(|w| w.contains("this computer")));
        assert!(check("http://localhost/cb").is_ok());
    }
}
