//! [`ServerSpec`]: one configured MCP server, validated.
//!
//! A spec never holds a secret value. An env var or header either has a plain value, names a
//! secret of the server's own namespace ([`ValueSource::Secret`]), or carries a [`Binding`] to
//! a secret of another namespace (a provider key, another server's secret). Bindings exist only
//! because the person made them while approving the server; the add form, `server add` and
//! import refuse them (SE-04).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::{ProviderName, SecretName, ServerId};
use crate::sandbox::{SandboxError, SandboxSpec};

/// Everything needed to connect to one MCP server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSpec {
    /// The server's unique name.
    pub id: ServerId,
    /// How to reach it.
    pub transport: TransportSpec,
    /// Whether the host should keep it running.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Per-server time limits.
    #[serde(default)]
    pub timeouts: Timeouts,
}

fn default_true() -> bool {
    true
}

/// The transport of a server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TransportSpec {
    /// A local child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio(StdioSpec),
    /// A remote server over Streamable HTTP.
    Http(HttpSpec),
}

/// A local server started as a child process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdioSpec {
    /// The command as the user wrote it (a bare name such as `npx`, or a path).
    pub command: String,
    /// Arguments, passed without a shell.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for the child, on top of the safe allowlist.
    #[serde(default)]
    pub env: Vec<NamedValue>,
    /// The working directory; the data dir when unset.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The sandbox it runs in (SP-07); off unless the person turned it on. Old specs, stored
    /// before sandboxes existed, read as off.
    #[serde(default, skip_serializing_if = "SandboxSpec::is_unset")]
    pub sandbox: SandboxSpec,
}

/// A remote server over Streamable HTTP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpSpec {
    /// The MCP endpoint, `http` or `https`.
    pub url: String,
    /// Extra request headers (for example `Authorization`).
    #[serde(default)]
    pub headers: Vec<NamedValue>,
    /// OAuth settings beyond the defaults (browser sign-in with automatic registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<HttpAuth>,
    /// "Allow insecure (development)" (AU-10): sign-in and its tokens may use plain http to a
    /// server on another machine. Off by default, visible wherever the server is shown, and
    /// part of what the person approves. Configured secret headers stay refused over http
    /// whatever this says (SP-10).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_insecure: bool,
}

/// How Switchboard gets OAuth tokens for a remote server, when the person configured it. The
/// secret parts (a client secret, a signing key) live in the keyring under the server's sign-in
/// namespace (`signin:<server>:client-secret|client-key`), never here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HttpAuth {
    /// Sign in in the browser with a client the person registered with the authorization server
    /// (instead of Switchboard registering itself); its secret, if any, is in the keyring.
    SignIn {
        /// The client id.
        client_id: String,
    },
    /// Machine to machine (OAuth client credentials, SEP-1046): no person, no browser. With a
    /// client secret in the keyring, or a signed assertion (RFC 7523) with a private key there.
    ClientCredentials {
        /// The client id.
        client_id: String,
        /// The signing algorithm when a private key signs an assertion (RS256, RS384, RS512,
        /// ES256, ES384); `None` means a client secret.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signing_algorithm: Option<String>,
        /// Scopes to ask for.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        scopes: Vec<String>,
    },
}

/// An environment variable or header: a name and where its value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedValue {
    /// The variable or header name.
    pub name: String,
    /// Its value, literal or a keyring reference.
    pub value: ValueSource,
}

/// Where a configured value comes from. Secrets are only ever referenced by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// A literal, non-secret value stored in the config.
    Plain(String),
    /// A secret of this server's own namespace in the OS keyring.
    Secret(SecretName),
    /// A secret of another namespace, bound explicitly by the person when they approved the
    /// server (part of the approved fingerprint).
    Bound(Binding),
}

/// A secret outside a server's own namespace that the person let the server use.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Binding {
    /// The API key of a model provider.
    Provider(ProviderName),
    /// A secret of another server.
    Server {
        /// The server that owns it.
        server: ServerId,
        /// Its name in that server's namespace.
        name: SecretName,
    },
}

impl Binding {
    /// Parses the form the CLI and messages use: `provider:NAME` or `server:SERVER/NAME`.
    pub fn parse(s: &str) -> Result<Self, SpecError> {
        let bad = || SpecError::BadBinding(crate::escape::short_for_display(s, 80));
        if let Some(p) = s.strip_prefix("provider:") {
            return ProviderName::new(p).map(Self::Provider).map_err(|_| bad());
        }
        if let Some(rest) = s.strip_prefix("server:") {
            let (server, name) = rest.split_once('/').ok_or_else(bad)?;
            return Ok(Self::Server {
                server: ServerId::new(server).map_err(|_| bad())?,
                name: SecretName::new(name).map_err(|_| bad())?,
            });
        }
        Err(bad())
    }
}

impl std::fmt::Display for Binding {
    /// The parseable form (`provider:openai`, `server:github/token`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Provider(p) => write!(f, "provider:{p}"),
            Self::Server { server, name } => write!(f, "server:{server}/{name}"),
        }
    }
}

impl ValueSource {
    /// Parses the CLI form: `secret:NAME` references a keyring secret, anything else is literal.
    pub fn parse_cli(s: &str) -> Result<Self, SpecError> {
        match s.strip_prefix("secret:") {
            Some(name) => Ok(Self::Secret(
                SecretName::new(name).map_err(|e| SpecError::BadSecretName(name.into(), e))?,
            )),
            None => Ok(Self::Plain(s.to_owned())),
        }
    }
}

/// The limits of one server: time per request and at start-up, and the size of one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeouts {
    /// The limit for one request (tool call, list, read), in seconds.
    pub request_secs: u64,
    /// The limit for start-up and the initialize handshake, in seconds (npx downloads are slow).
    pub init_secs: u64,
    /// The largest message the host reads from it, in MiB: one stdio line, one HTTP body or
    /// one SSE event. A larger one fails its request (or ends the session) with the cap named,
    /// and `switchboard server limits NAME --max-message-mb N` raises it.
    #[serde(default = "default_max_message_mib")]
    pub max_message_mib: u32,
}

/// The default message cap, in MiB.
pub const DEFAULT_MAX_MESSAGE_MIB: u32 = 16;
/// The highest message cap a server may be given, in MiB: enough for any real answer, and a
/// bound on what one message can make the host hold in memory.
pub const MAX_MESSAGE_MIB_LIMIT: u32 = 1024;

fn default_max_message_mib() -> u32 {
    DEFAULT_MAX_MESSAGE_MIB
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            request_secs: 60,
            init_secs: 60,
            max_message_mib: DEFAULT_MAX_MESSAGE_MIB,
        }
    }
}

impl Timeouts {
    /// The per-request limit.
    pub fn request(&self) -> Duration {
        Duration::from_secs(self.request_secs.max(1))
    }
    /// The start-up limit.
    pub fn init(&self) -> Duration {
        Duration::from_secs(self.init_secs.max(1))
    }
    /// The message cap in bytes.
    pub fn max_message(&self) -> usize {
        (self.max_message_mib.clamp(1, MAX_MESSAGE_MIB_LIMIT) as usize) * 1024 * 1024
    }
}

/// Why a spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The command is empty.
    #[error("the command is empty")]
    EmptyCommand,
    /// An environment variable name is not a portable identifier.
    #[error("{0:?} is not a valid environment variable name (letters, digits and '_', not starting with a digit)")]
    BadEnvName(String),
    /// A header name is not an HTTP token.
    #[error("{0:?} is not a valid HTTP header name")]
    BadHeaderName(String),
    /// A value contains a newline or NUL, which would let it smuggle headers or variables.
    #[error("the value of {0:?} contains a line break or NUL")]
    BadValue(String),
    /// The same name appears twice.
    #[error("{0:?} is set twice")]
    Duplicate(String),
    /// The URL does not parse or is not http(s).
    #[error("{url:?} is not a usable server URL: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `secret:` reference names an invalid secret.
    #[error("secret name {0:?} is invalid: {1}")]
    BadSecretName(String, crate::ids::InvalidName),
    /// A timeout is zero or absurd.
    #[error("timeouts must be between 1 and 86400 seconds")]
    BadTimeout,
    /// The message cap is zero or beyond [`MAX_MESSAGE_MIB_LIMIT`].
    #[error("the message cap must be between 1 and {MAX_MESSAGE_MIB_LIMIT} MiB")]
    BadMessageCap,
    /// A header whose value is a secret would travel unencrypted to another machine.
    #[error("header {header:?} carries a secret, and {url:?} is plain http to a host that is not this machine; use https (plain http is allowed only to localhost)")]
    CleartextSecret {
        /// The header.
        header: String,
        /// The URL, escaped.
        url: String,
    },
    /// A binding is not `provider:NAME` or `server:SERVER/NAME`.
    #[error("{0:?} is not a secret binding; use provider:NAME or server:SERVER/NAME")]
    BadBinding(String),
    /// The sandbox setting is unusable.
    #[error("the sandbox setting is invalid: {0}")]
    Sandbox(#[from] SandboxError),
}

impl ServerSpec {
    /// Checks every field; a spec is only stored or started after this passes.
    pub fn validate(&self) -> Result<(), SpecError> {
        for t in [self.timeouts.request_secs, self.timeouts.init_secs] {
            if !(1..=86_400).contains(&t) {
                return Err(SpecError::BadTimeout);
            }
        }
        if !(1..=MAX_MESSAGE_MIB_LIMIT).contains(&self.timeouts.max_message_mib) {
            return Err(SpecError::BadMessageCap);
        }
        match &self.transport {
            TransportSpec::Stdio(s) => {
                if s.command.trim().is_empty() {
                    return Err(SpecError::EmptyCommand);
                }
                check_values(&s.env, is_env_name, SpecError::BadEnvName)?;
                for a in &s.args {
                    if a.contains('\0') {
                        return Err(SpecError::BadValue("argument".into()));
                    }
                }
                s.sandbox.validate()?;
            }
            TransportSpec::Http(h) => {
                let url = validate_url(&h.url)?;
                check_values(&h.headers, is_header_name, SpecError::BadHeaderName)?;
                // SP-10: a secret never crosses the network in clear text.
                if url.scheme() == "http" && !is_loopback(&url) {
                    if let Some(v) = h
                        .headers
                        .iter()
                        .find(|v| !matches!(v.value, ValueSource::Plain(_)))
                    {
                        return Err(SpecError::CleartextSecret {
                            header: v.name.clone(),
                            url: escape::escape_for_display(&h.url),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// The env vars (stdio) or headers (HTTP).
    pub fn values(&self) -> &[NamedValue] {
        match &self.transport {
            TransportSpec::Stdio(s) => &s.env,
            TransportSpec::Http(h) => &h.headers,
        }
    }

    /// The env vars (stdio) or headers (HTTP), to change.
    pub fn values_mut(&mut self) -> &mut Vec<NamedValue> {
        match &mut self.transport {
            TransportSpec::Stdio(s) => &mut s.env,
            TransportSpec::Http(h) => &mut h.headers,
        }
    }

    /// The secrets of the server's own namespace this spec refers to.
    pub fn secret_refs(&self) -> Vec<&SecretName> {
        self.values()
            .iter()
            .filter_map(|v| match &v.value {
                ValueSource::Secret(n) => Some(n),
                ValueSource::Plain(_) | ValueSource::Bound(_) => None,
            })
            .collect()
    }

    /// The secrets of other namespaces the person bound, by field.
    pub fn bindings(&self) -> Vec<(&str, &Binding)> {
        self.values()
            .iter()
            .filter_map(|v| match &v.value {
                ValueSource::Bound(b) => Some((v.name.as_str(), b)),
                _ => None,
            })
            .collect()
    }

    /// A short human description of the transport, for lists.
    pub fn summary(&self) -> String {
        match &self.transport {
            TransportSpec::Stdio(s) => {
                let mut out = escape::escape_for_display(&s.command);
                for a in &s.args {
                    out.push(' ');
                    out.push_str(&escape::quote_arg(a));
                }
                out
            }
            TransportSpec::Http(h) => escape::escape_for_display(&h.url),
        }
    }
}

use crate::escape;

fn check_values(
    values: &[NamedValue],
    valid_name: fn(&str) -> bool,
    bad_name: fn(String) -> SpecError,
) -> Result<(), SpecError> {
    let mut seen = std::collections::HashSet::new();
    for v in values {
        if !valid_name(&v.name) {
            return Err(bad_name(v.name.clone()));
        }
        if !seen.insert(v.name.to_ascii_lowercase()) {
            return Err(SpecError::Duplicate(v.name.clone()));
        }
        if let ValueSource::Plain(p) = &v.value {
            if p.contains(['\r', '\n', '\0']) {
                return Err(SpecError::BadValue(v.name.clone()));
            }
        }
    }
    Ok(())
}

/// Whether `s` is a portable environment variable name.
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `s` is an HTTP header name (an RFC 9110 token).
pub fn is_header_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether a URL's host is this machine (`localhost`, 127.0.0.0/8, `::1`): the only place a
/// secret may go over plain http.
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Checks that `url` is an absolute http(s) URL with a host.
pub fn validate_url(url: &str) -> Result<url::Url, SpecError> {
    let bad = |reason: &str| SpecError::BadUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("only http and https are supported"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad(
            "credentials in the URL are not allowed; use a header with a secret",
        ));
    }
    Ok(parsed)
}

/// Specs for unit tests across the crate.
#[cfg(test)]
impl ServerSpec {
    /// A stdio server `id` running `command` with `env`.
    pub(crate) fn test_stdio(id: &str, command: &str, env: &[(&str, ValueSource)]) -> Self {
        Self {
            id: ServerId::new(id).unwrap_or_else(|e| panic!("test id {id}: {e}")),
            transport: TransportSpec::Stdio(StdioSpec {
                command: command.into(),
                args: vec![],
                env: env
                    .iter()
                    .map(|(n, v)| NamedValue {
                        name: (*n).into(),
                        value: v.clone(),
                    })
                    .collect(),
                cwd: None,
                sandbox: SandboxSpec::default(),
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(env: Vec<NamedValue>) -> ServerSpec {
        ServerSpec {
            id: ServerId::new("s").unwrap(),
            transport: TransportSpec::Stdio(StdioSpec {
                command: "npx".into(),
                args: vec!["-y".into(), "pkg".into()],
                env,
                cwd: None,
                sandbox: SandboxSpec::default(),
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        }
    }

    fn nv(name: &str, v: &str) -> NamedValue {
        NamedValue {
            name: name.into(),
            value: ValueSource::parse_cli(v).unwrap(),
        }
    }

    #[test]
    fn valid_spec_passes_and_lists_secret_refs() {
        let s = stdio(vec![nv("A", "1"), nv("TOKEN", "secret:gh-token")]);
        s.validate().unwrap();
        assert_eq!(s.secret_refs().len(), 1);
        assert_eq!(s.secret_refs()[0].as_str(), "gh-token");
    }

    #[test]
    fn rejects_bad_env() {
        assert_eq!(
            stdio(vec![nv("1A", "x")]).validate(),
            Err(SpecError::BadEnvName("1A".into()))
        );
        assert_eq!(
            stdio(vec![nv("A", "x\ny")]).validate(),
            Err(SpecError::BadValue("A".into()))
        );
        assert_eq!(
            stdio(vec![nv("A", "x"), nv("A", "y")]).validate(),
            Err(SpecError::Duplicate("A".into()))
        );
    }

    #[test]
    fn urls() {
        assert!(validate_url("https://example.com/mcp").is_ok());
        assert!(validate_url("http://127.0.0.1:3000/mcp").is_ok());
        assert!(validate_url("file:///etc/passwd").is_err());
        assert!(validate_url("javascript:alert(1)").is_err());
        assert!(validate_url("https://user:pw@example.com/").is_err());
        assert!(validate_url("not a url").is_err());
    }

    fn http(url: &str, value: &str) -> ServerSpec {
        ServerSpec {
            id: ServerId::new("r").unwrap(),
            transport: TransportSpec::Http(HttpSpec {
                url: url.into(),
                headers: vec![nv("Authorization", value)],
                auth: None,
                allow_insecure: false,
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        }
    }

    #[test]
    fn secret_headers_never_go_over_cleartext_except_to_loopback() {
        for ok in [
            "https://example.com/mcp",
            "http://127.0.0.1:9/mcp",
            "http://127.8.0.1/mcp",
            "http://localhost:3000/mcp",
            "http://[::1]:3000/mcp",
        ] {
            assert_eq!(http(ok, "secret:t").validate(), Ok(()), "{ok}");
        }
        for bad in [
            "http://example.com/mcp",
            "http://10.0.0.5/mcp",
            "http://localhost.evil.com/",
        ] {
            assert!(
                matches!(
                    http(bad, "secret:t").validate(),
                    Err(SpecError::CleartextSecret { .. })
                ),
                "{bad}"
            );
            assert_eq!(http(bad, "plain").validate(), Ok(()), "{bad}");
        }
        let mut bound = http("http://example.com/", "x");
        bound.values_mut()[0].value =
            ValueSource::Bound(Binding::parse("provider:openai").unwrap());
        assert!(bound.validate().is_err());
    }

    #[test]
    fn bindings_parse_and_print() {
        for s in ["provider:openai", "server:github/token"] {
            assert_eq!(Binding::parse(s).unwrap().to_string(), s);
        }
        for bad in [
            "openai",
            "provider:",
            "server:x",
            "server:x/y/z",
            "secret:x",
            "provider:a:b",
        ] {
            assert!(Binding::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn header_names() {
        assert!(is_header_name("Authorization"));
        assert!(is_header_name("X-Api-Key"));
        assert!(!is_header_name("X Evil"));
        assert!(!is_header_name("X\r\nEvil"));
    }

    #[test]
    fn roundtrips_json() {
        let s = stdio(vec![nv("TOKEN", "secret:t")]);
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<ServerSpec>(&j).unwrap(), s);
    }
}
