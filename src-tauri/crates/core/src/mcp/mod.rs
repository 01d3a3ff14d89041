//! MCP servers: the connection to one, its framing and requests, and tool naming.
//!
//! The supervisor, the child process, the logs, hygiene and skill types were moved out into
//! modules of their own (`supervisor`, `server_process`, `server_logs`, `hygiene`,
//! `skill_data`; issue 26), so this module is what wraps `rmcp`.
//!
//! - [`connection`] is the only module that uses `rmcp` (a test there checks); it speaks stdio
//!   and Streamable HTTP, holding both to the same caps.
//! - [`naming`] maps (server, tool) to names a model can use, and back.
//! - [`framing`] caps stdio lines.
//! - [`catalog`] (what servers offer) and [`schema`] (their compiled input schemas) are leaves
//!   of their own, re-exported here: `approval` uses them and must not depend on `mcp`.

pub use crate::catalog;
pub mod connection;
pub mod framing;
pub mod naming;
mod recover;
pub mod requests;
pub use crate::schema;

use std::time::Duration;

use crate::escape::ServerText;
use crate::ids::ServerId;
use crate::status::{AuthChallenge, Reason};

/// Why an MCP operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's configuration cannot be turned into a connection.
    #[error("the server configuration is not usable: {0}")]
    Config(String),
    /// The process could not be started.
    #[error("could not start {program}: {reason}")]
    Spawn {
        /// The executable.
        program: String,
        /// The OS error.
        reason: String,
    },
    /// The handshake failed.
    #[error("the initialize handshake failed: {}", ServerText(.0))]
    Handshake(String),
    /// The server wants authorization (HTTP 401/403). OAuth sign-in arrives with the
    /// credentials work; a static `Authorization` header with a keyring secret works today.
    #[error("{}", Reason::AuthRequired(.0.clone()))]
    AuthRequired(AuthChallenge),
    /// The handshake did not finish in time.
    #[error("the server did not finish the initialize handshake within {}s", .0.as_secs())]
    HandshakeTimeout(Duration),
    /// A request got no answer in time; the server was told to cancel it.
    #[error("the server did not answer within {}s; the request was cancelled", .0.as_secs())]
    Timeout(Duration),
    /// The connection ended (the reason escapes the server's words itself).
    #[error("the connection to the server ended: {0}")]
    Disconnected(Reason),
    /// The host refused the server's answer to this request (too large, too deep, not
    /// JSON-RPC); the connection is still usable.
    #[error("Switchboard refused the server's answer: {reason}")]
    Refused {
        /// Why.
        reason: Reason,
    },
    /// The request was cancelled by the user.
    #[error("the request was cancelled")]
    Cancelled,
    /// The server answered with a JSON-RPC error.
    #[error("the server returned error {code}: {}", ServerText(.message))]
    Server {
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message (untrusted text).
        message: String,
    },
    /// The server broke the protocol.
    #[error("protocol error: {}", ServerText(.0))]
    Protocol(String),
    /// The server is not running.
    #[error("{server} is not running ({status})")]
    NotRunning {
        /// The server.
        server: ServerId,
        /// Its status, described.
        status: String,
    },
    /// The server has no such tool.
    #[error("{server} has no tool named {tool:?}")]
    UnknownTool {
        /// The server.
        server: ServerId,
        /// The tool name asked for.
        tool: String,
    },
    /// The arguments do not match the tool's input schema; nothing was sent.
    #[error("the arguments do not match the input schema of {tool:?}: {}", .errors.join("; "))]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// What is wrong, with JSON pointers.
        errors: Vec<String>,
    },
    /// The user switched the tool off.
    #[error("the tool {tool:?} of {server} is disabled")]
    ToolDisabled {
        /// The server.
        server: ServerId,
        /// The tool.
        tool: String,
    },
}

impl McpError {
    /// Why, as the typed reason the shells branch on.
    pub fn reason(&self) -> Reason {
        match self {
            Self::Disconnected(r) | Self::Refused { reason: r } => r.clone(),
            Self::AuthRequired(c) => Reason::AuthRequired(c.clone()),
            Self::HandshakeTimeout(d) => Reason::HandshakeTimeout { secs: d.as_secs() },
            Self::Handshake(detail) => Reason::HandshakeFailed {
                detail: detail.clone(),
            },
            Self::Config(detail) => Reason::CannotStart {
                detail: detail.clone(),
            },
            Self::Spawn { program, reason } => Reason::CannotStart {
                detail: format!("{program}: {reason}"),
            },
            // Raw server words: the reason escapes them when shown (no double escaping).
            Self::Protocol(detail) => Reason::Other {
                detail: format!("protocol error: {detail}"),
            },
            Self::Server { code, message } => Reason::Other {
                detail: format!("the server returned error {code}: {message}"),
            },
            other => Reason::Other {
                detail: other.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_words_in_an_error_cannot_act_on_a_terminal_or_forge_a_line() {
        let hostile = "failed\n\x1b[1A\x1b[2KSwitchboard: the call succeeded\u{202E}";
        for e in [
            McpError::Server {
                code: -32000,
                message: hostile.into(),
            },
            McpError::Protocol(hostile.into()),
            McpError::Handshake(hostile.into()),
            McpError::Disconnected(Reason::Unreachable {
                detail: hostile.into(),
            }),
        ] {
            let shown = e.to_string();
            assert!(!shown.contains(['\n', '\x1b', '\u{202E}']), "{shown:?}");
            assert!(shown.contains(r"failed\n\e[1A\e[2KSwitchboard"), "{shown}");
        }
    }
}
