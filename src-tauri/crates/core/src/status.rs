//! What the shells see of a server's life: [`ServerStatus`], the typed [`Reason`] a server is
//! down or a session ended, and a request's [`Progress`].
//!
//! A leaf, like [`crate::events`] which publishes these: the supervisor, the connection, the
//! CLI and the desktop all depend on it and it depends on nothing but `ids`-level leaves
//! (`clock`, `escape`). It used to live in `mcp::supervisor`, which made `events` and
//! the supervisor import each other.
//!
//! Reasons are data, not sentences, because the shells act on them: an [`Reason::AuthRequired`]
//! gets a "Sign in" action, a [`Reason::MessageTooLarge`] names the cap, a
//! [`Reason::NeedsApproval`] opens the review. [`std::fmt::Display`] gives the sentence for
//! people; words that came from the server are escaped there ([`ServerText`]), so a shell can
//! print it as is.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::escape::ServerText;

/// Progress of a running request, from `notifications/progress`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// A message from the server (untrusted text).
    pub message: Option<String>,
}

/// Facts about a connected server from its handshake.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// The protocol version both sides settled on.
    pub protocol_version: String,
    /// The server's self-reported name (display only, never used for naming or policy).
    pub server_name: String,
    /// The server's self-reported version.
    pub server_version: String,
    /// Whether it offers tools, resources, prompts, logging, completions.
    pub capabilities: Capabilities,
}

/// The capability flags we act on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// `tools`.
    pub tools: bool,
    /// `resources`.
    pub resources: bool,
    /// `prompts`.
    pub prompts: bool,
    /// `logging`.
    pub logging: bool,
    /// `completions`.
    pub completions: bool,
}

/// What an HTTP server said when it refused us (401 or 403).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthChallenge {
    /// The HTTP status, when known (401 needs credentials, 403 needs more of them).
    pub status: Option<u16>,
    /// The `resource_metadata` URL of the `WWW-Authenticate` challenge (RFC 9728), where an
    /// OAuth client would start; untrusted text.
    pub resource_metadata: Option<String>,
    /// The whole `WWW-Authenticate` value, untrusted text.
    pub challenge: Option<String>,
}

impl AuthChallenge {
    /// Reads a `WWW-Authenticate` value.
    pub fn from_header(status: Option<u16>, header: Option<&str>) -> Self {
        let resource_metadata = header.and_then(|h| auth_param(h, "resource_metadata"));
        Self {
            status,
            resource_metadata,
            challenge: header.map(|h| h.chars().take(CHALLENGE_MAX).collect()),
        }
    }
}

/// The most of a `WWW-Authenticate` value kept.
const CHALLENGE_MAX: usize = 1024;

/// The value of `name=value` or `name="value"` in a challenge, if present.
fn auth_param(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(name) {
        let start = from + at;
        from = start + name.len();
        let before = lower[..start].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = header[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default(),
            None => rest.split([',', ' ']).next().unwrap_or_default(),
        };
        return (!value.is_empty()).then(|| value.chars().take(CHALLENGE_MAX).collect());
    }
    None
}

/// Why a server is not running, or why its session ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// Switchboard stopped it (a stop, a restart, the host shutting down).
    Stopped,
    /// The process ended.
    ProcessExited {
        /// How, as the OS said ("exited with status 1", "was killed by signal 9").
        how: String,
    },
    /// The server closed its output (stdio) or ended the HTTP session.
    OutputClosed,
    /// A message was larger than the cap: a stdio line, an HTTP body or an SSE event.
    MessageTooLarge {
        /// The cap in bytes.
        cap: u64,
    },
    /// A message was nested deeper than the JSON reader accepts.
    TooDeep {
        /// The deepest nesting accepted.
        limit: u32,
    },
    /// What the server sent is not JSON-RPC (not JSON, or not a message).
    InvalidJson {
        /// What the reader said.
        detail: String,
    },
    /// An HTTP server wants credentials (401) or more of them (403).
    AuthRequired(AuthChallenge),
    /// Its launch plan is not approved, or changed since it was (SP-01, SP-03).
    NeedsApproval {
        /// What to do.
        detail: String,
    },
    /// The `initialize` handshake did not finish in time.
    HandshakeTimeout {
        /// The limit in seconds.
        secs: u64,
    },
    /// The `initialize` handshake failed.
    HandshakeFailed {
        /// Why (may quote the server).
        detail: String,
    },
    /// The server speaks a protocol version we do not.
    UnsupportedProtocol {
        /// The version it answered with (untrusted text).
        version: String,
    },
    /// The server could not be reached or the transport failed (connection refused, an HTTP
    /// error status, a broken pipe).
    Unreachable {
        /// Why.
        detail: String,
    },
    /// It could not be started at all (executable missing, a secret not in the keyring, a
    /// header value that HTTP cannot carry).
    CannotStart {
        /// Why.
        detail: String,
    },
    /// It started but could not list its tools, resources or prompts.
    CatalogFailed {
        /// Why.
        detail: String,
    },
    /// It ended too often in a short time; restarts stopped until someone acts.
    CrashLoop {
        /// How many ends.
        ends: u32,
        /// Within how many seconds.
        window_secs: u64,
        /// The last of them.
        last: Box<Reason>,
    },
    /// A one-shot start failed before the server ever ran, and was not retried.
    DidNotStart {
        /// Why.
        last: Box<Reason>,
    },
    /// Anything else.
    Other {
        /// Why.
        detail: String,
    },
}

impl Reason {
    /// A short, stable name of the kind, for logs and machine output.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stopped => "stopped",
            Self::ProcessExited { .. } => "process_exited",
            Self::OutputClosed => "output_closed",
            Self::MessageTooLarge { .. } => "message_too_large",
            Self::TooDeep { .. } => "too_deep",
            Self::InvalidJson { .. } => "invalid_json",
            Self::AuthRequired(_) => "auth_required",
            Self::NeedsApproval { .. } => "needs_approval",
            Self::HandshakeTimeout { .. } => "handshake_timeout",
            Self::HandshakeFailed { .. } => "handshake_failed",
            Self::UnsupportedProtocol { .. } => "unsupported_protocol",
            Self::Unreachable { .. } => "unreachable",
            Self::CannotStart { .. } => "cannot_start",
            Self::CatalogFailed { .. } => "catalog_failed",
            Self::CrashLoop { .. } => "crash_loop",
            Self::DidNotStart { .. } => "did_not_start",
            Self::Other { .. } => "other",
        }
    }

    /// The reason at the root: the last end of a crash loop or failed start, else itself. Shells branch on
    /// this (a crash loop of 401s still wants a "Sign in").
    pub fn root(&self) -> &Reason {
        match self {
            Self::CrashLoop { last, .. } | Self::DidNotStart { last } => last.root(),
            other => other,
        }
    }

    /// Whether a retry cannot help until a person acts (credentials, approval).
    pub fn needs_person(&self) -> bool {
        matches!(
            self.root(),
            Self::AuthRequired(_) | Self::NeedsApproval { .. }
        )
    }

    /// This reason, told that the process ended `how`: an end of output becomes the exit,
    /// which says more; any other reason stays (it is why the process was stopped).
    pub fn with_exit(self, how: Option<String>) -> Self {
        match (self, how) {
            (Self::OutputClosed | Self::Other { .. }, Some(how)) => Self::ProcessExited { how },
            (other, _) => other,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stopped => f.write_str("stopped by Switchboard"),
            Self::ProcessExited { how } => write!(f, "the process {}", ServerText(how)),
            Self::OutputClosed => f.write_str("the server closed its output or ended the session"),
            Self::MessageTooLarge { cap } => write!(
                f,
                "the server sent a message larger than the {} cap; the connection was closed to \
                 protect memory (raise the server's message cap if its answers are really this large)",
                bytes(*cap)
            ),
            Self::TooDeep { limit } => write!(
                f,
                "the server sent a message nested deeper than {limit} levels (the JSON reader's recursion limit)"
            ),
            Self::InvalidJson { detail } => write!(
                f,
                "the server sent something that is not a JSON-RPC message ({})",
                ServerText(detail)
            ),
            Self::AuthRequired(c) => {
                if c.status == Some(403) {
                    f.write_str("the server wants more permissions than this sign-in has (HTTP 403)")?;
                } else {
                    f.write_str("the server requires sign-in")?;
                    if let Some(s) = c.status {
                        write!(f, " (HTTP {s})")?;
                    }
                }
                f.write_str(
                    "; sign in to it with the Sign in button on its card, or `switchboard auth login` \
                     (a static token can go in a header instead: Authorization=secret:NAME)",
                )
            }
            Self::NeedsApproval { detail } => write!(f, "needs approval: {detail}"),
            Self::HandshakeTimeout { secs } => write!(
                f,
                "the server did not finish the initialize handshake within {secs}s"
            ),
            Self::HandshakeFailed { detail } => {
                write!(f, "the initialize handshake failed: {}", ServerText(detail))
            }
            Self::UnsupportedProtocol { version } => write!(
                f,
                "the server answered with protocol version {}, which Switchboard does not speak",
                ServerText(version)
            ),
            Self::Unreachable { detail } => write!(f, "{}", ServerText(detail)),
            Self::CannotStart { detail } => write!(f, "could not start: {}", ServerText(detail)),
            Self::CatalogFailed { detail } => {
                write!(f, "listing its catalog failed: {}", ServerText(detail))
            }
            Self::CrashLoop {
                ends,
                window_secs,
                last,
            } => write!(
                f,
                "it ended {ends} times within {window_secs}s (crash loop); last: {last}"
            ),
            Self::DidNotStart { last } => write!(f, "it did not start: {last}"),
            Self::Other { detail } => write!(f, "{}", ServerText(detail)),
        }
    }
}

/// A byte count as people say it: "16 MiB", "1500 bytes".
pub fn bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    const KIB: u64 = 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// What the UI and CLI see of a server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerStatus {
    /// Not running (disabled, stopped, or never started).
    Stopped,
    /// The launch spec is not approved, or changed since it was approved (SP-01, SP-03).
    NeedsTrust {
        /// Why.
        reason: Reason,
    },
    /// Connecting and handshaking.
    Starting {
        /// Which attempt this is since the last success or manual start (1-based).
        attempt: u32,
    },
    /// Connected.
    Running {
        /// The process id of a stdio server.
        pid: Option<u32>,
        /// The handshake facts.
        peer: PeerInfo,
        /// How many tools it offers.
        tools: usize,
    },
    /// Waiting before the next start after a failure.
    Backoff {
        /// The attempt that failed.
        attempt: u32,
        /// When the next attempt starts, in milliseconds since the Unix epoch.
        retry_at_ms: i64,
        /// Why the last attempt ended.
        last_error: Reason,
    },
    /// Given up until the user acts.
    Failed {
        /// Why.
        reason: Reason,
        /// The newest stderr lines.
        stderr_tail: Vec<String>,
    },
}

impl ServerStatus {
    /// Why it is not running, when it says.
    pub fn reason(&self) -> Option<&Reason> {
        match self {
            Self::NeedsTrust { reason } | Self::Failed { reason, .. } => Some(reason),
            Self::Backoff { last_error, .. } => Some(last_error),
            _ => None,
        }
    }
}

impl fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stopped => f.write_str("stopped"),
            Self::NeedsTrust { reason } => write!(f, "{reason}"),
            Self::Starting { attempt } => write!(f, "starting (attempt {attempt})"),
            Self::Running { tools, peer, .. } => {
                let noun = if *tools == 1 { "tool" } else { "tools" };
                write!(
                    f,
                    "running, {tools} {noun}, protocol {}",
                    peer.protocol_version
                )
            }
            Self::Backoff {
                attempt,
                retry_at_ms,
                last_error,
            } => {
                let secs = (*retry_at_ms - crate::clock::now_ms()).max(0) as f64 / 1000.0;
                write!(
                    f,
                    "restarting in {secs:.1}s after attempt {attempt} failed: {last_error}"
                )
            }
            Self::Failed { reason, .. } => write!(f, "failed: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_resource_metadata_from_a_challenge() {
        let c = AuthChallenge::from_header(
            Some(401),
            Some(
                r#"Bearer realm="x", resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="r""#,
            ),
        );
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource")
        );
        let bare = AuthChallenge::from_header(
            Some(401),
            Some("Bearer resource_metadata=https://b/m, x=1"),
        );
        assert_eq!(bare.resource_metadata.as_deref(), Some("https://b/m"));
        // A parameter that only ends in the name is not it.
        let other = AuthChallenge::from_header(None, Some(r#"Bearer x_resource_metadata="no""#));
        assert_eq!(other.resource_metadata, None);
        assert_eq!(
            AuthChallenge::from_header(None, None),
            AuthChallenge::default()
        );
    }

    #[test]
    fn reasons_serialize_by_kind_and_read_for_people() {
        let r = Reason::MessageTooLarge {
            cap: 16 * 1024 * 1024,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind": "message_too_large", "cap": 16777216})
        );
        assert_eq!(serde_json::from_value::<Reason>(v).unwrap(), r);
        assert!(r.to_string().contains("16 MiB cap"), "{r}");
        let auth = Reason::AuthRequired(AuthChallenge::from_header(Some(401), None));
        assert_eq!(auth.kind(), "auth_required");
        let looped = Reason::CrashLoop {
            ends: 5,
            window_secs: 120,
            last: Box::new(auth.clone()),
        };
        assert_eq!(looped.root(), &auth);
        assert!(looped.needs_person());
        assert!(!Reason::OutputClosed.needs_person());
    }

    #[test]
    fn a_servers_words_in_a_reason_cannot_act_on_a_terminal() {
        let hostile = "x\n\x1b[2Kforged\u{202E}";
        for r in [
            Reason::InvalidJson {
                detail: hostile.into(),
            },
            Reason::UnsupportedProtocol {
                version: hostile.into(),
            },
            Reason::AuthRequired(AuthChallenge {
                status: Some(401),
                resource_metadata: Some(hostile.into()),
                challenge: None,
            }),
        ] {
            let shown = r.to_string();
            assert!(!shown.contains(['\n', '\x1b', '\u{202E}']), "{shown:?}");
        }
    }

    #[test]
    fn an_end_of_output_becomes_the_exit() {
        assert_eq!(
            Reason::OutputClosed.with_exit(Some("exited with status 3".into())),
            Reason::ProcessExited {
                how: "exited with status 3".into()
            }
        );
        let cap = Reason::MessageTooLarge { cap: 10 };
        assert_eq!(cap.clone().with_exit(Some("x".into())), cap);
    }
}
