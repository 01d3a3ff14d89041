//! [`HostEvent`]: what the host tells its shells (CLI, desktop) as things happen.
//!
//! Published on a `tokio::sync::broadcast` channel; a slow subscriber loses old events rather
//! than slowing the host (it can re-read current state from the host at any time).
//!
//! A leaf: what it carries is defined in [`crate::status`] (also a leaf), so publishing an
//! event never ties a module to the supervisor that produced it.

use serde::{Deserialize, Serialize};

use crate::ids::{ConversationId, ServerId};
use crate::status::{Progress, ServerStatus};

/// Something that happened in the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum HostEvent {
    /// A server's status changed.
    ServerStatus {
        /// The server.
        server: ServerId,
        /// Its new status.
        status: ServerStatus,
    },
    /// A server's tools, resources or prompts were re-listed.
    CatalogChanged {
        /// The server.
        server: ServerId,
    },
    /// A server sent a log message (`notifications/message`).
    ServerLog {
        /// The server.
        server: ServerId,
        /// Severity as the server gave it.
        level: String,
        /// Logger name.
        logger: Option<String>,
        /// The message (untrusted text).
        message: String,
    },
    /// A running call reported progress.
    Progress {
        /// The server.
        server: ServerId,
        /// The tool.
        tool: String,
        /// The host's id of the call.
        call_id: u64,
        /// The progress.
        progress: Progress,
    },
    /// The server list changed (added, removed, edited, trusted).
    ServersChanged,
    /// The agent profiles changed (added, edited, removed, imported).
    AgentsChanged,
    /// A node of a run tree of agents started or ended (issue 15): the app redraws the tree.
    AgentRunChanged {
        /// The run (the tree), as text: a shell reads it, never mints one.
        run: String,
        /// The conversation it works for.
        conversation: ConversationId,
    },
    /// A tool call started or stopped waiting for the user's approval.
    ApprovalsChanged,
    /// A question for the person (a server's form, URL or sampling request, a tool result held
    /// for review) was asked or answered.
    QuestionsChanged,
    /// What of a server's surface waits for review changed (TD-02): new or changed tools and
    /// instructions held back, or an approval of them.
    PinReview {
        /// The server.
        server: ServerId,
        /// How many items wait now.
        pending: usize,
    },
}
