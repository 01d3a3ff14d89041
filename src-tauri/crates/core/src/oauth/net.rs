//! The one HTTP client every sign-in request goes through (AU-09, AU-10): metadata, client ID
//! documents, registration, token and revocation requests all reach servers the MCP server
//! named, so each is treated as a possible SSRF:
//!
//! - `https` only; plain `http` only to a loopback address, and only when the MCP server itself
//!   is on this machine (a local development server).
//! - Addresses are vetted after DNS resolution, by our own resolver, so the connection goes to
//!   the address that was checked: link-local (cloud metadata at 169.254.169.254), unspecified,
//!   multicast, broadcast and reserved addresses never; loopback only when the MCP server is
//!   loopback; private ranges (RFC 1918, CGNAT, ULA) only when the MCP server is itself on a
//!   loopback or private address. IPv4-mapped and embedded IPv6 forms are judged as the IPv4
//!   address they carry, and literal addresses in URLs are checked before any connection.
//! - Redirects: none for token, registration and revocation requests (rmcp asks for that);
//!   discovery may follow at most [`MAX_REDIRECTS`] hops on the same host, each hop re-vetted.
//! - At most [`MAX_BODY`] bytes of any answer, and [`TIMEOUT`] for the whole request.
//! - No proxy from the environment: a proxy would resolve names we never vetted.
//!
//! rmcp ships a resolver of its own, but it cannot be combined with a scheme rule, so this file
//! implements rmcp's [`OAuthHttpClient`] seam instead.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
};
use url::{Host, Url};

/// The largest answer read from any sign-in endpoint.
pub const MAX_BODY: usize = 1024 * 1024;
/// The limit for one sign-in request, connection included.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// Redirect hops discovery may follow (same host only).
pub const MAX_REDIRECTS: usize = 5;

/// What an address is, for the rules above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressClass {
    /// Reachable on the internet.
    Public,
    /// This machine.
    Loopback,
    /// A private network (RFC 1918, CGNAT 100.64/10, IPv6 ULA fc00::/7).
    Private,
    /// Never contacted: link-local (cloud metadata), unspecified, multicast, broadcast,
    /// documentation and other reserved ranges.
    Blocked,
}

impl AddressClass {
    /// Classifies an address; IPv6 forms that carry an IPv4 address are judged by it.
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self::of_v4(v4),
            IpAddr::V6(v6) => match embedded_v4(v6) {
                Some(v4) => Self::of_v4(v4),
                None => Self::of_v6(v6),
            },
        }
    }

    fn of_v4(ip: Ipv4Addr) -> Self {
        let [a, b, c, _] = ip.octets();
        if ip.is_loopback() {
            Self::Loopback
        } else if ip.is_private() || (a == 100 && (64..=127).contains(&b)) {
            Self::Private
        } else if ip.is_link_local()
            || ip.is_unspecified()
            || ip.is_broadcast()
            || ip.is_multicast()
            || ip.is_documentation()
            || a == 0
            || a >= 240
            || (a == 192 && b == 0 && c == 0)
            || (a == 198 && (b == 18 || b == 19))
        {
            Self::Blocked
        } else {
            Self::Public
        }
    }

    fn of_v6(ip: Ipv6Addr) -> Self {
        let first = ip.segments()[0];
        if ip.is_loopback() {
            Self::Loopback
        } else if first & 0xfe00 == 0xfc00 {
            Self::Private
        } else if ip.is_unspecified()
            || ip.is_multicast()
            || first & 0xffc0 == 0xfe80
            || first == 0x2001 && ip.segments()[1] == 0x0db8
        {
            Self::Blocked
        } else {
            Self::Public
        }
    }
}

/// The IPv4 address an IPv6 address carries: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(tail(s[6], s[7]));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4] {
        return Some(tail(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(tail(s[1], s[2]));
    }
    None
}

/// Which addresses and schemes sign-in requests for one MCP server may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressPolicy {
    /// The MCP server is on this machine: loopback (and plain http to it) is allowed.
    pub loopback: bool,
    /// The MCP server is on a private network (or this machine): private ranges are allowed.
    pub private: bool,
    /// The person turned on "allow insecure (development)" for this server (AU-10): plain
    /// http is allowed to any address the other rules allow.
    pub insecure_http: bool,
}

impl AddressPolicy {
    /// The policy for sign-in to the MCP server at `server`: it may lead us where it is itself.
    pub fn for_server(server: &Url) -> Self {
        let class = match server.host() {
            Some(Host::Ipv4(a)) => AddressClass::of(IpAddr::V4(a)),
            Some(Host::Ipv6(a)) => AddressClass::of(IpAddr::V6(a)),
            Some(Host::Domain(d)) if is_localhost(d) => AddressClass::Loopback,
            _ => AddressClass::Public,
        };
        Self {
            loopback: class == AddressClass::Loopback,
            private: matches!(class, AddressClass::Loopback | AddressClass::Private),
            insecure_http: false,
        }
    }

    /// Whether a resolved address may be contacted.
    pub fn allows(&self, ip: IpAddr) -> bool {
        match AddressClass::of(ip) {
            AddressClass::Public => true,
            AddressClass::Loopback => self.loopback,
            AddressClass::Private => self.private,
            AddressClass::Blocked => false,
        }
    }

    /// Checks a URL before anything is sent: its scheme, and its host when it is a literal
    /// address (names are checked by the resolver, after resolution).
    pub fn check_url(&self, url: &Url) -> Result<(), Refused> {
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refused::Credentials(url.clone()));
        }
        let literal = match url.host() {
            Some(Host::Ipv4(a)) => Some(IpAddr::V4(a)),
            Some(Host::Ipv6(a)) => Some(IpAddr::V6(a)),
            Some(Host::Domain(_)) => None,
            None => return Err(Refused::Address(url.clone())),
        };
        let local = literal.is_some_and(|ip| AddressClass::of(ip) == AddressClass::Loopback)
            || url.host_str().is_some_and(is_localhost);
        match url.scheme() {
            "https" => {}
            "http" if (local && self.loopback) || self.insecure_http => {}
            _ => return Err(Refused::Scheme(url.clone())),
        }
        if let Some(ip) = literal {
            if !self.allows(ip) {
                return Err(Refused::Address(url.clone()));
            }
        }
        Ok(())
    }
}

fn is_localhost(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost" || h.ends_with(".localhost")
}

/// Why a sign-in request was not sent.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Not https (or http to a local server).
    #[error("refused to contact {0}: sign-in endpoints must use https (plain http only when the server itself runs on this computer)")]
    Scheme(Url),
    /// A private, link-local or reserved address, or no host.
    #[error("refused to contact {0}: it is (or resolves to) an address on this computer, a private network or a cloud metadata service, which a remote server may not send us to")]
    Address(Url),
    /// `user:password@` in the URL.
    #[error("refused to contact {0}: it carries a user name or password")]
    Credentials(Url),
    /// A redirect to another host, or too many.
    #[error("refused to follow a redirect from {from} to {to}: sign-in requests follow redirects only on the same host, at most {MAX_REDIRECTS}")]
    Redirect {
        /// Where the request went.
        from: Url,
        /// Where it was sent on to.
        to: String,
    },
    /// The answer was larger than [`MAX_BODY`].
    #[error("the answer from {0} is larger than {kib} KiB; refused to read more", kib = MAX_BODY / 1024)]
    TooLarge(Url),
    /// No answer within [`TIMEOUT`].
    #[error("{0} did not answer within {secs} s", secs = TIMEOUT.as_secs())]
    Timeout(Url),
}

/// Looks up a host name's addresses (the system resolver, or a table in tests).
pub type Lookup =
    Arc<dyn Fn(String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> + Send + Sync>;

/// How sign-in requests reach the network: the resolver, and whether the person allowed plain
/// http to another machine for this server (AU-10, off unless they turned it on).
#[derive(Clone)]
pub struct Network {
    /// Resolves host names.
    pub lookup: Lookup,
    /// "Allow insecure (development)".
    pub allow_insecure: bool,
}

impl Network {
    /// The system resolver, https only (http only to a server on this computer).
    pub fn system() -> Self {
        Self {
            lookup: Arc::new(|host: String| {
                Box::pin(async move {
                    Ok(tokio::net::lookup_host((host.as_str(), 0))
                        .await?
                        .map(|a| a.ip())
                        .collect())
                })
            }),
            allow_insecure: false,
        }
    }

    /// This network, with plain http to other machines allowed or not.
    pub fn insecure(mut self, allow: bool) -> Self {
        self.allow_insecure = allow;
        self
    }
}

/// reqwest's resolver hook: resolves, then keeps only the addresses the policy allows.
struct Vetted {
    policy: AddressPolicy,
    lookup: Lookup,
}

impl Resolve for Vetted {
    fn resolve(&self, name: Name) -> Resolving {
        let (policy, lookup) = (self.policy, self.lookup.clone());
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found = lookup(host.clone()).await?;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|ip| policy.allows(*ip))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if allowed.is_empty() {
                return Err(format!(
                    "{host} resolves only to addresses a remote server may not send us to"
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The guarded client (see the module docs).
pub struct GuardedClient {
    policy: AddressPolicy,
    client: reqwest::Client,
}

impl GuardedClient {
    /// A client for sign-in to the MCP server at `server`.
    pub fn new(server: &Url, net: Network) -> Result<Self, reqwest::Error> {
        let policy = AddressPolicy {
            insecure_http: net.allow_insecure,
            ..AddressPolicy::for_server(server)
        };
        let lookup = net.lookup;
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .timeout(TIMEOUT)
            .dns_resolver(Arc::new(Vetted { policy, lookup }))
            .build()?;
        Ok(Self { policy, client })
    }

    /// POSTs a form with client authentication (HTTP Basic with a secret, else `client_id` in
    /// the body), following no redirect; returns the status.
    pub(super) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client_id: &str,
        secret: Option<&str>,
    ) -> Result<u16, Box<dyn std::error::Error + Send + Sync>> {
        // Built in a block: the serializer is not Send and must not live across an await.
        let mut pairs: Vec<(&str, &str)> = form.to_vec();
        let mut req = http::Request::builder()
            .method(http::Method::POST)
            .uri(url)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
        match secret {
            Some(s) => {
                use base64::Engine as _;
                let enc = |v: &str| {
                    url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
                };
                let basic = base64::engine::general_purpose::STANDARD.encode(format!(
                    "{}:{}",
                    enc(client_id),
                    enc(s)
                ));
                req = req.header(http::header::AUTHORIZATION, format!("Basic {basic}"));
            }
            None => pairs.push(("client_id", client_id)),
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        let request = req.body(body.into_bytes())?;
        Ok(self.send(request, false).await?.status().as_u16())
    }

    /// GETs `url`, following same-host redirects as discovery does.
    pub(super) async fn get(
        &self,
        url: &str,
    ) -> Result<http::Response<Vec<u8>>, Box<dyn std::error::Error + Send + Sync>> {
        let request = http::Request::builder()
            .method(http::Method::GET)
            .uri(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())?;
        self.send(request, true).await
    }

    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        follow: bool,
    ) -> Result<http::Response<Vec<u8>>, Box<dyn std::error::Error + Send + Sync>> {
        let (parts, body) = request.into_parts();
        register_sent(&parts, &body);
        let post = parts.method == http::Method::POST;
        let mut url = Url::parse(&parts.uri.to_string())?;
        let mut hops = 0;
        loop {
            self.policy.check_url(&url)?;
            let mut req = self.client.request(parts.method.clone(), url.clone());
            for (name, value) in &parts.headers {
                req = req.header(name, value);
            }
            let response = req.body(body.clone()).send().await.map_err(|e| {
                if e.is_timeout() {
                    Box::new(Refused::Timeout(url.clone()))
                        as Box<dyn std::error::Error + Send + Sync>
                } else {
                    Box::new(e)
                }
            })?;
            let status = response.status();
            if follow && status.is_redirection() {
                let to = response
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let next = url.join(&to).ok();
                let same_host = next
                    .as_ref()
                    .is_some_and(|n| n.host_str() == url.host_str() && n.scheme() == url.scheme());
                hops += 1;
                match next {
                    Some(n) if same_host && hops <= MAX_REDIRECTS => {
                        url = n;
                        continue;
                    }
                    _ => return Err(Box::new(Refused::Redirect { from: url, to })),
                }
            }
            let mut builder = http::Response::builder().status(status);
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|e| {
                    if e.is_timeout() {
                        Box::new(Refused::Timeout(url.clone()))
                            as Box<dyn std::error::Error + Send + Sync>
                    } else {
                        Box::new(e)
                    }
                })?;
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(Box::new(Refused::TooLarge(url)));
                }
                body.extend_from_slice(&chunk);
            }
            if post {
                register_received(&body);
            }
            return Ok(builder.body(body)?);
        }
    }
}

/// Form and JSON fields of sign-in requests and answers that carry a credential.
const SECRET_FIELDS: [&str; 9] = [
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "client_assertion",
    "registration_access_token",
    "token",
    "code",
    "code_verifier",
];

/// Registers the credentials a sign-in request carries (client authentication, a signed
/// assertion, the token being revoked or refreshed) with the log redactor before it is sent:
/// rmcp builds these requests, and this is the one place every one of them passes (SE-06).
fn register_sent(parts: &http::request::Parts, body: &[u8]) {
    if let Some(v) = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        crate::redact::register_for_logs(&crate::redact::Secret::new(v));
    }
    let form = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    if form {
        for (k, v) in url::form_urlencoded::parse(body) {
            if SECRET_FIELDS.contains(&k.as_ref()) {
                crate::redact::register_for_logs(&crate::redact::Secret::new(v.into_owned()));
            }
        }
    }
}

/// Registers the credentials an answer to a POST (token, registration) carries the moment it
/// arrives, before rmcp parses or logs it (SE-06).
fn register_received(body: &[u8]) {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice(body) else {
        return;
    };
    for name in SECRET_FIELDS {
        if let Some(serde_json::Value::String(v)) = fields.get(name) {
            crate::redact::register_for_logs(&crate::redact::Secret::new(v.clone()));
        }
    }
}

impl OAuthHttpClient for GuardedClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let follow = request.redirect_policy == OAuthHttpRedirectPolicy::Follow;
        Box::pin(self.send(request.request, follow))
    }
}

/// An OAuth client that refuses everything: for a manager that must exist but never fetches.
pub(super) struct NoNetwork;

impl OAuthHttpClient for NoNetwork {
    fn execute(&self, _: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async { Err("no network for this placeholder".into()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote() -> AddressPolicy {
        AddressPolicy::for_server(&Url::parse("https://mcp.example.com/mcp").unwrap())
    }

    /// Whether `policy` lets a sign-in request go to `url`.
    fn allowed(policy: &AddressPolicy, url: &str) -> bool {
        policy.check_url(&Url::parse(url).unwrap()).is_ok()
    }

    #[test]
    fn metadata_and_internal_addresses_are_refused_for_a_remote_server() {
        let p = remote();
        for url in [
            "https://169.254.169.254/latest/meta-data/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://0x7f000001/",
            "https://2130706433/",
            "https://127.0.0.1/",
            "https://[::1]/",
            "https://10.0.0.5/",
            "https://192.168.1.1/",
            "https://100.64.0.1/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://0.0.0.0/",
            "https://[::]/",
            "https://224.0.0.1/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "http://auth.example.com/token",
            "http://localhost./x",
            "ftp://example.com/",
            "https://user:pw@example.com/",
        ] {
            assert!(!allowed(&p, url), "{url} must be refused");
        }
        assert!(allowed(&p, "https://auth.example.com/x"));
        assert!(allowed(&p, "https://8.8.8.8/x"));
    }

    #[test]
    fn a_local_server_may_lead_to_loopback_over_http_but_never_to_metadata() {
        let p = AddressPolicy::for_server(&Url::parse("http://127.0.0.1:3000/mcp").unwrap());
        for (url, ok) in [
            ("http://127.0.0.1:4000/token", true),
            ("http://localhost:4000/token", true),
            ("http://10.0.0.5/", false), // http only to loopback
            ("https://10.0.0.5/", true),
            ("http://169.254.169.254/", false),
            ("https://169.254.169.254/", false),
        ] {
            assert_eq!(allowed(&p, url), ok, "{url}");
        }
        assert!(!p.allows("169.254.169.254".parse().unwrap()));
    }

    #[test]
    fn allow_insecure_permits_plain_http_but_never_the_metadata_service() {
        let p = AddressPolicy {
            insecure_http: true,
            ..remote()
        };
        assert!(allowed(&p, "http://auth.example.com/token"));
        assert!(!allowed(&p, "http://169.254.169.254/"));
        assert!(!allowed(&p, "http://10.0.0.5/"), "private stays private");
        assert!(!allowed(&remote(), "http://auth.example.com/token"));
    }

    #[tokio::test]
    async fn names_are_vetted_after_resolution() {
        // A name that resolves to a private address is refused for a remote server.
        let lookup: Lookup = Arc::new(|host: String| {
            Box::pin(async move {
                Ok(match host.as_str() {
                    "internal.example" => vec!["10.0.0.5".parse().unwrap()],
                    "meta.example" => vec!["169.254.169.254".parse().unwrap()],
                    _ => vec![],
                })
            })
        });
        let net = Network {
            lookup,
            allow_insecure: false,
        };
        let client =
            GuardedClient::new(&Url::parse("https://mcp.example.com/").unwrap(), net).unwrap();
        for host in ["internal.example", "meta.example"] {
            let req = http::Request::builder()
                .uri(format!(
                    "https://{host}/.well-known/oauth-authorization-server"
                ))
                .body(Vec::new())
                .unwrap();
            let err = client.send(req, true).await.unwrap_err();
            let chain = format!("{err:?}");
            assert!(chain.contains("may not send us to"), "{host}: {chain}");
        }
    }
}
