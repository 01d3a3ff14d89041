//! Where a provider's base URL points: this machine, an address the person marked local, or
//! anywhere else (RD-02, RD-03).
//!
//! Two decisions read it: whether plain `http` may carry a key and a conversation (only to a
//! local address, [`super::construct`]), and whether a local runtime's requests skip outbound
//! redaction (`outbound::config`). Both follow the endpoint, never the vendor's name: an
//! `ollama` provider pointed at another machine is that machine's model.
//!
//! # What "loopback" means here
//! Only what cannot leave the machine without anyone's help: a literal loopback address
//! (`127.0.0.0/8`, `::1`, an IPv4-mapped loopback) or the name `localhost`, which every resolver
//! we run on answers from the hosts file. Any other name is remote, even one that resolves to
//! 127.0.0.1 today: a name's answer can change between the check and the request, an address
//! cannot. A person who runs a model on another machine of their own marks its address local
//! (a host name or an IP, compared case-insensitively, without the port).

use std::net::IpAddr;

/// Where a URL points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locality {
    /// A loopback address or `localhost`.
    Loopback,
    /// An address the person marked local.
    Marked,
    /// Anywhere else (or a URL that does not parse).
    Remote,
}

impl Locality {
    /// Whether requests stay on this machine or on an address the person vouched for.
    pub fn is_local(self) -> bool {
        !matches!(self, Locality::Remote)
    }
}

/// A marked address as it is compared: trimmed, lower case, without a trailing dot or the
/// brackets of an IPv6 literal.
pub fn normalize_host(host: &str) -> String {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    h.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map(str::to_owned)
        .unwrap_or(h)
}

/// The host of `url`, normalized ([`normalize_host`]), when it has one.
pub fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    parsed.host_str().map(normalize_host)
}

/// Where `url` points, given the addresses the person marked local.
pub fn locality(url: &str, marked: &[String]) -> Locality {
    let Some(host) = host_of(url) else {
        return Locality::Remote;
    };
    let loopback = match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => host == "localhost",
    };
    if loopback {
        Locality::Loopback
    } else if marked.iter().any(|m| normalize_host(m) == host) {
        Locality::Marked
    } else {
        Locality::Remote
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RD-02, RD-03: the endpoint decides, by address; a name that merely looks local is not.
    #[test]
    fn loopback_marked_and_remote() {
        let marked = vec!["GPU-Box.lan".to_owned(), "10.0.0.7".to_owned()];
        for (url, want) in [
            ("http://127.0.0.1:11434/v1", Locality::Loopback),
            ("http://127.8.9.10/v1", Locality::Loopback),
            ("http://[::1]:1234/v1", Locality::Loopback),
            ("http://[::ffff:127.0.0.1]:1234/v1", Locality::Loopback),
            ("http://localhost:11434/v1", Locality::Loopback),
            ("http://LOCALHOST./v1", Locality::Loopback),
            ("http://gpu-box.lan:11434/v1", Locality::Marked),
            ("https://10.0.0.7/v1", Locality::Marked),
            ("http://10.0.0.8/v1", Locality::Remote),
            ("http://localhost.example.com/v1", Locality::Remote),
            ("http://127.0.0.1.nip.io/v1", Locality::Remote),
            ("https://ollama.example.com/v1", Locality::Remote),
            ("http://0.0.0.0:11434/v1", Locality::Remote),
            ("not a url", Locality::Remote),
        ] {
            assert_eq!(locality(url, &marked), want, "{url}");
        }
        assert!(Locality::Marked.is_local() && !Locality::Remote.is_local());
        assert_eq!(normalize_host(" [::1] "), "::1");
    }
}
