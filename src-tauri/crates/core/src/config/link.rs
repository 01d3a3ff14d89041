//! `switchboard://` install links: a web page's "Add to Switchboard" button proposes a server.
//!
//! A link is hostile input (SECURITY.md): anyone can put one on a page, and a click hands it to
//! the app. So a link can only *propose*: [`parse_link`] turns it into a [`LinkProposal`], a
//! spec the person then sees in the trust dialog with the exact command, and nothing is stored
//! or started before they approve it (SP-01). Parsing is strict rather than lenient:
//!
//! - the whole link is at most [`LINK_MAX_BYTES`]; anything longer is refused before decoding;
//! - one form only, `switchboard://add?config=<base64url JSON>`: another host, a path, a
//!   fragment, a port, credentials, an unknown or repeated parameter are refused;
//! - the JSON is one object of a known shape; an unknown field anywhere is refused, so a field a
//!   newer Switchboard might act on is never silently dropped by this one;
//! - no secret travels in a link: an env var or header is either a plain value that does not
//!   look like a credential, or `"ask": true`, which the app asks the person for. A value that
//!   looks like a credential (by its name or its shape) is refused, not moved to the keyring:
//!   a page that knows a person's token has no business sending it to them this way;
//! - no working directory, sandbox, timeouts, OAuth settings or "allow insecure": those are
//!   the person's to choose, and a link setting them would be one more thing to read in the
//!   dialog. The server starts from the defaults.
//!
//! - arguments and the URL's query are checked the same way (LK-01): a credential there is
//!   refused; a `${secret:NAME}` placeholder there (see `placeholders`) is asked for by `NAME`.
//!
//! [`make_link`] goes the other way for `switchboard server link NAME`: secrets (own or bound)
//! become "ask" and placeholders stay placeholders; a plain value that looks like a credential,
//! in an argument, the URL's query, an env var or a header, makes it refuse, naming each
//! (LK-01): stripping it would make a link that does not work, and sending it would hand the
//! sender's key to whoever opens the link. What a link cannot carry is listed so the CLI can
//! say so. Pure: no keyring, no store, no process.

use base64::alphabet::URL_SAFE;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::credentials::{
    credential_arg, credential_query, looks_like_credential, own_name, plain_credentials,
};
use super::import::names::Taken;
use super::placeholders::spec_refs;
use super::{
    HttpSpec, NamedValue, ServerSpec, SpecError, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use crate::escape::short_for_display;
use crate::ids::ServerId;
use crate::sandbox::SandboxSpec;

/// The URL scheme.
pub const SCHEME: &str = "switchboard";
/// The longest link accepted or made, in bytes: room for a long command line, small enough
/// that a link never costs the app anything to look at.
pub const LINK_MAX_BYTES: usize = 8 * 1024;
/// The most arguments, or env vars / headers, one link may carry.
pub const MAX_ITEMS: usize = 64;

/// base64url, padding optional (some encoders add it, the URL-safe alphabet does not need it).
const B64: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a link was refused or could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// Over [`LINK_MAX_BYTES`].
    #[error(
        "the link is {0} bytes long; Switchboard accepts links of at most {LINK_MAX_BYTES} bytes"
    )]
    TooLong(usize),
    /// Not a `switchboard://add?config=...` link.
    #[error("this is not a Switchboard install link: {0}")]
    NotALink(String),
    /// The `config` parameter is not base64url or not the JSON of a server.
    #[error("the server in the link is malformed: {0}")]
    BadConfig(String),
    /// A value that looks like a credential is in the link.
    #[error("the link carries a value for {0:?} that looks like a secret; links never carry secrets (the link should mark it \"ask\")")]
    SecretInLink(String),
    /// The server to make a link of holds plain values that look like credentials (LK-01), in
    /// words ("argument 2", "header Authorization").
    #[error("the link would carry what looks like a credential in {}; a link never carries a secret. Keep it in the keyring instead (re-add the server with `--move-credentials`, or bind the field with `switchboard server trust NAME --bind FIELD=own`), and the link asks whoever installs it for the value", .0.join(", "))]
    CredentialsInServer(Vec<String>),
    /// The proposed server is not a valid spec.
    #[error("the proposed server is invalid: {0}")]
    Spec(#[from] SpecError),
}

/// A server a link proposes: unapproved, unsaved, nothing started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkProposal {
    /// The spec; every "ask" field refers to a secret of the server's own namespace.
    pub spec: ServerSpec,
    /// The env vars or headers whose values the person is asked for, in link order.
    pub asked: Vec<String>,
}

/// A link made for a configured server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MadeLink {
    /// The `switchboard://` link.
    pub url: String,
    /// What the link does not carry (working directory, sandbox, ...), one sentence each.
    pub left_out: Vec<String>,
}

/// The JSON inside a link.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum LinkServer {
    Stdio {
        name: String,
        command: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        env: Vec<LinkValue>,
    },
    Http {
        name: String,
        url: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headers: Vec<LinkValue>,
    },
}

/// An env var or header: a plain value, or `ask` (the person types it; it goes to the keyring).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkValue {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    ask: bool,
}

/// Reads a `switchboard://add?config=...` link into a proposed server. See the module docs for
/// what is refused.
pub fn parse_link(link: &str) -> Result<LinkProposal, LinkError> {
    if link.len() > LINK_MAX_BYTES {
        return Err(LinkError::TooLong(link.len()));
    }
    let config = config_param(link)?;
    let json = B64
        .decode(config.as_bytes())
        .map_err(|e| LinkError::BadConfig(format!("config is not base64url: {e}")))?;
    let server: LinkServer = serde_json::from_slice(&json)
        .map_err(|e| LinkError::BadConfig(short_for_display(&e.to_string(), 200)))?;
    proposal(server)
}

/// The one `config` parameter of a well-formed link.
fn config_param(link: &str) -> Result<String, LinkError> {
    let not = |why: &str| LinkError::NotALink(why.to_owned());
    let url = url::Url::parse(link).map_err(|e| not(&e.to_string()))?;
    if url.scheme() != SCHEME {
        return Err(not("the scheme is not switchboard:"));
    }
    if url.host_str() != Some("add") {
        return Err(not("the only action is switchboard://add"));
    }
    if !matches!(url.path(), "" | "/")
        || url.fragment().is_some()
        || url.port().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(not("it has parts an install link does not have"));
    }
    let mut config = None;
    for (k, v) in url.query_pairs() {
        match k.as_ref() {
            "config" if config.is_none() => config = Some(v.into_owned()),
            "config" => return Err(not("config is given twice")),
            other => {
                return Err(not(&format!(
                    "unknown parameter {}",
                    short_for_display(other, 40)
                )))
            }
        }
    }
    config.ok_or_else(|| not("it has no config parameter"))
}

fn proposal(server: LinkServer) -> Result<LinkProposal, LinkError> {
    let (name, transport, values) = match server {
        LinkServer::Stdio {
            name,
            command,
            args,
            env,
        } => {
            if args.len() > MAX_ITEMS {
                return Err(LinkError::BadConfig(format!(
                    "more than {MAX_ITEMS} arguments"
                )));
            }
            if command.contains('\0') {
                return Err(SpecError::BadValue("command".into()).into());
            }
            let t = TransportSpec::Stdio(StdioSpec {
                command,
                args,
                env: vec![],
                cwd: None,
                sandbox: SandboxSpec::default(),
            });
            (name, t, env)
        }
        LinkServer::Http { name, url, headers } => {
            let t = TransportSpec::Http(HttpSpec {
                url,
                headers: vec![],
                auth: None,
                allow_insecure: false,
            });
            (name, t, headers)
        }
    };
    if values.len() > MAX_ITEMS {
        return Err(LinkError::BadConfig(format!(
            "more than {MAX_ITEMS} environment variables or headers"
        )));
    }
    let id = ServerId::new(&name).map_err(|e| {
        LinkError::BadConfig(format!(
            "{} is not a server name: {e}",
            short_for_display(&name, 64)
        ))
    })?;
    let mut spec = ServerSpec {
        id,
        transport,
        enabled: true,
        timeouts: Timeouts::default(),
    };
    refuse_credential_text(&spec)?;
    let (named, mut asked) = values_of(values)?;
    *spec.values_mut() = named;
    // `${secret:NAME}` in an argument or the URL: the person is asked for NAME (LK-01).
    for name in spec_refs(&spec) {
        if spec.values().iter().any(|v| v.name == name.as_str())
            || asked.iter().any(|a| a == name.as_str())
        {
            return Err(LinkError::BadConfig(format!(
                "secret {name} is asked for twice"
            )));
        }
        asked.push(name.to_string());
    }
    spec.validate()?;
    Ok(LinkProposal { spec, asked })
}

/// A credential in an argument or a query value of a link: refused, named (LK-01).
fn refuse_credential_text(spec: &ServerSpec) -> Result<(), LinkError> {
    match &spec.transport {
        TransportSpec::Stdio(s) => {
            match (0..s.args.len()).find(|&i| credential_arg(&s.args, i).is_some()) {
                Some(i) => Err(LinkError::SecretInLink(format!("argument {}", i + 1))),
                None => Ok(()),
            }
        }
        TransportSpec::Http(h) => match credential_query(&h.url).first() {
            Some(f) => Err(LinkError::SecretInLink(format!(
                "the URL's query parameter {}",
                shown(&f.name)
            ))),
            None => Ok(()),
        },
    }
}

/// The spec's values: plain ones checked for credentials, "ask" ones made references to the
/// server's own secrets (named after the field, as the add form does).
fn values_of(values: Vec<LinkValue>) -> Result<(Vec<NamedValue>, Vec<String>), LinkError> {
    let mut taken = Taken::default();
    let mut named = Vec::with_capacity(values.len());
    let mut asked = Vec::new();
    for v in values {
        let value = match (v.value, v.ask) {
            (Some(_), true) => return Err(LinkError::SecretInLink(shown(&v.name))),
            (None, false) => {
                return Err(LinkError::BadConfig(format!(
                    "{} has neither a value nor \"ask\"",
                    shown(&v.name)
                )))
            }
            (Some(p), false) if looks_like_credential(&v.name, &p) => {
                return Err(LinkError::SecretInLink(shown(&v.name)))
            }
            (Some(p), false) => ValueSource::Plain(p),
            (None, true) => {
                let secret = own_name(&v.name, &mut taken).ok_or_else(|| {
                    LinkError::BadConfig(format!("no secret name fits {}", shown(&v.name)))
                })?;
                asked.push(v.name.clone());
                ValueSource::Secret(secret)
            }
        };
        named.push(NamedValue {
            name: v.name,
            value,
        });
    }
    Ok((named, asked))
}

fn shown(name: &str) -> String {
    short_for_display(name, 64)
}

/// The link that proposes `spec`: no secret in it (secrets become "ask"; a plain value that
/// looks like a credential refuses the link, LK-01), and what it leaves out listed.
pub fn make_link(spec: &ServerSpec) -> Result<MadeLink, LinkError> {
    let found = plain_credentials(spec);
    if !found.is_empty() {
        return Err(LinkError::CredentialsInServer(found));
    }
    let mut left_out = Vec::new();
    let name = spec.id.to_string();
    let server = match &spec.transport {
        TransportSpec::Stdio(s) => {
            if s.cwd.is_some() {
                left_out.push(
                    "the working directory (the server will run in the data directory)".into(),
                );
            }
            if !s.sandbox.is_unset() {
                left_out.push("the sandbox setting".into());
            }
            LinkServer::Stdio {
                name,
                command: s.command.clone(),
                args: s.args.clone(),
                env: s.env.iter().map(link_value).collect(),
            }
        }
        TransportSpec::Http(h) => {
            if h.auth.is_some() {
                left_out.push("the OAuth client settings".into());
            }
            if h.allow_insecure {
                left_out.push("\"allow insecure\"".into());
            }
            LinkServer::Http {
                name,
                url: h.url.clone(),
                headers: h.headers.iter().map(link_value).collect(),
            }
        }
    };
    if spec.timeouts != Timeouts::default() {
        left_out.push("the time limits and message cap".into());
    }
    if !spec.enabled {
        left_out.push("\"disabled\" (an added server is enabled)".into());
    }
    let json = serde_json::to_vec(&server).map_err(|e| LinkError::BadConfig(e.to_string()))?;
    let url = format!("{SCHEME}://add?config={}", B64.encode(json));
    if url.len() > LINK_MAX_BYTES {
        return Err(LinkError::TooLong(url.len()));
    }
    Ok(MadeLink { url, left_out })
}

fn link_value(v: &NamedValue) -> LinkValue {
    let plain = match &v.value {
        ValueSource::Plain(p) if !looks_like_credential(&v.name, p) => Some(p.clone()),
        _ => None,
    };
    LinkValue {
        name: v.name.clone(),
        ask: plain.is_none(),
        value: plain,
    }
}

#[cfg(test)]
mod tests;
