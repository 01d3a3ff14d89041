//! The URL checks: `opener::check` (RN-02: what may be opened in the browser, from a server's
//! elicitation or a link) and `config::validate_url` (a remote server's endpoint).
//!
//! URLs are built from parts known to confuse parsers and people: odd scheme spellings,
//! credentials, loopback written five ways, punycode, IPv6, ports, percent escapes, and hidden
//! characters anywhere. The properties, for those and for arbitrary text:
//! - nothing panics;
//! - whatever the opener accepts is `https`, or `http` to a loopback address, has no user name
//!   or password, and neither the URL nor the host names shown to a person contain control,
//!   whitespace or invisible characters;
//! - whatever the opener accepts, it accepts again in its normalised form (what is opened is
//!   what was checked);
//! - `validate_url` accepts only http(s) URLs with a host and no credentials.

use std::net::IpAddr;

use proptest::prelude::*;
use switchboard_core::config::validate_url;
use switchboard_core::hygiene::Hidden;
use switchboard_core::opener::{check, MAX_URL};

use crate::hostile_text;

fn shown_safely(s: &str) -> bool {
    !s.chars()
        .any(|c| c.is_control() || c.is_whitespace() || Hidden::of(c).is_some())
}

fn is_loopback(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(a)) => IpAddr::V4(a).is_loopback(),
        Some(url::Host::Ipv6(a)) => IpAddr::V6(a).is_loopback(),
        None => false,
    }
}

/// URL-shaped text from hostile parts, weighted so that about half of it passes the opener
/// (the accepting path is the one with something to check).
fn url_like() -> impl Strategy<Value = String> {
    let pick = |v: Vec<&'static str>| prop::sample::select(v).prop_map(str::to_owned);
    let scheme = prop_oneof![
        4 => Just("https://".to_owned()),
        2 => Just("http://".to_owned()),
        3 => pick(vec![
            "HTTPS://", "hTTp://", "https:", "https:/", "https:///", "javascript:", "file://",
            "data:", "ftp://", "", "//", "https:\\\\", " https://",
        ]),
    ];
    let userinfo = prop_oneof![
        6 => Just(String::new()),
        1 => pick(vec!["user@", "user:pw@", ":@", "bank.example@", "%40@", "a%3Ab@", "@"]),
    ];
    let host = prop_oneof![
        4 => pick(vec![
            "localhost", "LOCALHOST", "localhost.", "127.0.0.1", "127.1", "0x7f.1", "2130706433",
            "[::1]", "[::ffff:127.0.0.1]", "[0:0:0:0:0:0:0:1]", "0.0.0.0", "example.com",
            "login.example.co.uk", "xn--pple-43d.com", "xn--80ak6aa92e.com", "xn--zz.com",
            "xn--ls8h.la", "аpple.com", "bücher.de", "exa\u{200b}mple.com", "EXAMPLE.com",
            "203.0.113.9", "[fe80::1%25eth0]", "", "a..b", "-x.com", "com", "github.io",
        ]),
        1 => "[a-z0-9.-]{1,12}",
    ];
    let port = pick(vec![
        "", "", "", ":443", ":0", ":65535", ":65536", ":x", ":",
    ]);
    let tail = prop_oneof![
        6 => "([/?#][a-zA-Z0-9%._~=&@:/-]{0,15})?",
        1 => hostile_text(4),
    ];
    let inject = prop_oneof![5 => Just(None), 1 => hostile_text(2).prop_map(Some)];
    (scheme, userinfo, host, port, tail, inject).prop_map(|(s, u, h, p, t, inject)| {
        let mut url = format!("{s}{u}{h}{p}{t}");
        // Sometimes a hostile piece goes somewhere in the middle.
        if let Some(bad) = inject {
            let at = url
                .char_indices()
                .map(|(i, _)| i)
                .nth(url.chars().count() / 2)
                .unwrap_or(url.len());
            url.insert_str(at, &bad);
        }
        url
    })
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn what_the_opener_accepts_is_safe_to_open_and_show(
        text in prop_oneof![3 => url_like(), 1 => hostile_text(16)],
    ) {
        let Ok(c) = check(&text) else {
            return Ok(());
        };
        let parsed = url::Url::parse(&c.url);
        prop_assert!(parsed.is_ok(), "{:?} accepted as {:?}", text, c.url);
        let u = parsed.unwrap_or_else(|_| unreachable!());
        match u.scheme() {
            "https" => {}
            "http" => prop_assert!(is_loopback(&u), "plain http to {:?}", u.host_str()),
            other => prop_assert!(false, "scheme {other} accepted from {text:?}"),
        }
        prop_assert!(u.username().is_empty() && u.password().is_none(), "{}", c.url);
        prop_assert!(shown_safely(&c.url), "{:?}", c.url);
        prop_assert!(shown_safely(&c.host), "{:?}", c.host);
        prop_assert!(shown_safely(&c.host_unicode), "{:?} shows as {:?}", c.host, c.host_unicode);
        prop_assert!(shown_safely(&c.domain), "{:?}", c.domain);
        prop_assert_eq!(Some(c.host.as_str()), u.host_str());
        for w in &c.warnings {
            prop_assert!(!w.chars().any(|c| c.is_control() || Hidden::of(c).is_some()), "{:?}", w);
        }
        if c.url.chars().count() <= MAX_URL {
            let again = check(&c.url);
            prop_assert_eq!(again.as_ref().map(|a| &a.url), Ok(&c.url));
        }
    }

    #[test]
    fn validate_url_accepts_only_http_with_a_host_and_no_credentials(
        text in prop_oneof![3 => url_like(), 1 => hostile_text(16)],
    ) {
        if let Ok(u) = validate_url(&text) {
            prop_assert!(matches!(u.scheme(), "http" | "https"), "{}", u);
            prop_assert!(u.host_str().is_some_and(|h| !h.is_empty()), "{}", u);
            prop_assert!(u.username().is_empty() && u.password().is_none(), "{}", u);
        }
    }
}
