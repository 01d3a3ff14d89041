//! The one error the core's facade returns ([`HostError`]): the host, the governed seam and
//! every feature module below the host (metrics, models, skills, sign-in, ...) answer with it, so
//! the shells map one type to their own (the CLI's message, the IPC's kind) and a feature moving
//! out of `host` changes no shell. Each variant reads as one clear sentence with its cause.

use std::sync::Arc;

use crate::approval::ApprovalError;
use crate::escape::ServerText;
use crate::ids::ServerId;
use crate::mcp::McpError;
use crate::secrets::SecretError;
use crate::store::StoreError;

/// Why a host operation failed. Each variant reads as one clear sentence with its cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The secret store failed.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// An MCP operation failed.
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// Signing in failed.
    #[error(transparent)]
    SignIn(Arc<crate::oauth::SignInError>),
    /// The spec is invalid.
    #[error("the server configuration is invalid: {0}")]
    Spec(#[from] crate::config::SpecError),
    /// No such server.
    #[error("there is no server named {0}; `switchboard server list` shows the configured ones")]
    UnknownServer(String),
    /// A server with that name exists.
    #[error("a server named {0} already exists")]
    ServerExists(ServerId),
    /// The server is disabled.
    #[error("{0} is disabled; enable it with `switchboard server enable {0}`")]
    Disabled(ServerId),
    /// The launch cannot be resolved.
    #[error("{server} cannot be started: {reason}")]
    Launch {
        /// The server.
        server: ServerId,
        /// Why.
        reason: String,
    },
    /// What the user approved is no longer what would run.
    #[error("the launch spec of {0} changed while it was being approved; review it again")]
    TrustRace(ServerId),
    /// A sign-in was asked for a server the person has not approved, or that changed since
    /// they did (SP-11): nothing was sent to it or to its authorization server.
    #[error("{server} {}, so nothing was sent to it or to its authorization server; approve it first with `switchboard server trust {server}` (or Review on the Servers page), then sign in", if *.changed { "changed since you approved it" } else { "is not approved yet" })]
    NotApproved {
        /// The server.
        server: ServerId,
        /// Approved once, but what would be contacted differs now.
        changed: bool,
    },
    /// A tool is new or changed since the person approved the server's tools (TD-02); it is
    /// not offered or run until they review it.
    #[error("the tool {} of {server} {}; review it with `switchboard server review {server}` or on the Servers page", ServerText(.tool), held_what(*.reason))]
    Held {
        /// The server.
        server: ServerId,
        /// The tool.
        tool: String,
        /// New or changed.
        reason: crate::approval::pins::HoldReason,
    },
    /// The surface a person approved is no longer what the server offers.
    #[error("the tools of {0} changed while they were being reviewed; review them again")]
    PinRace(ServerId),
    /// An import file could not be read.
    #[error(transparent)]
    Import(#[from] crate::config::import::ImportError),
    /// A secret is already stored where an add, an import or `secret set` would write; nothing
    /// was changed (SE-04: nothing overwrites a secret without the person confirming).
    #[error("{0} is already stored, and nothing was changed; replace it only if you mean to (`--replace-secrets` for add and import, `--replace` for `secret set`, or confirm in the app)")]
    SecretExists(crate::secrets::SecretKey),
    /// A server config refers to a secret outside the server's own namespace (SE-04).
    #[error("{field} of {server} refers to {binding}, which is not {server}'s own secret; a server may only use another secret if you bind it when you approve the server: `switchboard server trust {server} --bind {field}={binding}`")]
    CrossReference {
        /// The server.
        server: ServerId,
        /// The env var or header.
        field: String,
        /// What it refers to.
        binding: crate::config::Binding,
    },
    /// An approval answer was refused.
    #[error(transparent)]
    Approval(#[from] ApprovalError),
    /// A prompt is new or changed since the person approved the server's surface (TD-02):
    /// it is not expanded, nor its arguments completed, until they review it.
    #[error("the prompt {} of {server} {}; review it with `switchboard server review {server}` or on the Servers page", ServerText(.prompt), held_what(*.reason))]
    HeldPrompt {
        /// The server.
        server: ServerId,
        /// The prompt.
        prompt: String,
        /// New or changed.
        reason: crate::approval::pins::HoldReason,
    },
    /// The user or the policy refused a request (a tool call, a read, a prompt).
    #[error("the request for {} on {server} was denied: {reason}", ServerText(.tool))]
    Denied {
        /// The server.
        server: ServerId,
        /// The tool or prompt, or the resource's URI.
        tool: String,
        /// Who refused: the person or the policy (read as a value, never from `reason`).
        by: DeniedBy,
        /// Why, as a sentence (the person's own words follow "the user said no: ").
        reason: String,
    },
    /// A model provider is misconfigured or unknown.
    #[error("provider {name}: {reason}")]
    Provider {
        /// The provider (or the kind asked for).
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A request that cannot be carried out as asked (an empty message, an edit of a message
    /// the person did not write, ...).
    #[error("{0}")]
    Invalid(String),
    /// File-system trouble.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Who refused a request: a decision, not an error of the server or of the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeniedBy {
    /// The person answered no.
    Person,
    /// A rule, a default or a tightening refused it without asking.
    Policy,
}

fn held_what(r: crate::approval::pins::HoldReason) -> &'static str {
    match r {
        crate::approval::pins::HoldReason::New => "is new and not approved yet",
        crate::approval::pins::HoldReason::Changed => "changed since you approved it",
    }
}
