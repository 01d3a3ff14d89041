//! The audit log's row vocabulary (OB-01): what kind of entry a row is ([`AuditKind`]), who or
//! which rule it is attributed to ([`Actor`]), and what it is about ([`AuditContext`], linked by
//! a [`CallRef`]), each with the text it is stored as.
//!
//! A leaf of plain data because two modules need it and must not need each other: `store`
//! keeps these in the hash-chained audit table and hashes their stored text, and `approval`
//! turns what happened into rows (`approval::audit`, which re-exports everything here, decides
//! what a row says: redaction, caps, the constructors that read a request's origin). It used
//! to live in `approval::audit`, which made `store` and `approval` import each other.
//!
//! The stored forms (`as_str`, `to_stored`, the serde names) are part of the chain's hashed
//! input: changing one breaks every existing log's verification.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ids::{ConversationId, ServerId, ToolRef};

/// Identifiers inside the actor (rule and grant ids, model names) are cut to this many
/// characters.
const ACTOR_DETAIL_MAX: usize = 200;

/// What kind of entry a row is; stored as its snake-case name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// A model or a person asked for a call.
    Proposed,
    /// The policy, a grant or a person allowed, denied or sent it to a prompt.
    Decided,
    /// A person changed the arguments before allowing it.
    Edited,
    /// It was sent to the server.
    Started,
    /// The server answered, or the call failed.
    Finished,
    /// A person answered a server's elicitation request.
    Elicitation,
    /// A person answered a server's sampling request.
    Sampling,
    /// A grant was made or revoked.
    Grant,
    /// The policy's rules changed.
    Policy,
    /// A tool's pinned definition was recorded, changed or re-approved.
    Pin,
    /// A setting that governs what servers may do or use changed: servers, trust, tags,
    /// result review, tool switches, roots, imports, providers, secrets (by name only).
    Config,
}

impl AuditKind {
    /// Every kind.
    pub const ALL: [Self; 11] = [
        Self::Proposed,
        Self::Decided,
        Self::Edited,
        Self::Started,
        Self::Finished,
        Self::Elicitation,
        Self::Sampling,
        Self::Grant,
        Self::Policy,
        Self::Pin,
        Self::Config,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Proposed => "proposed",
            Self::Decided => "decided",
            Self::Edited => "edited",
            Self::Started => "started",
            Self::Finished => "finished",
            Self::Elicitation => "elicitation",
            Self::Sampling => "sampling",
            Self::Grant => "grant",
            Self::Policy => "policy",
            Self::Pin => "pin",
            Self::Config => "config",
        }
    }

    /// Reads a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for AuditKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who did it, or which rule decided. Stored as text: `user`, `model`, `system`, `policy`,
/// `policy:<rule id>`, `grant:<grant id>`, `model:<name>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Actor {
    /// A person, at a prompt, in the GUI or on the command line.
    User,
    /// A model in a conversation (an agent, later), by name when known.
    Model {
        /// The model or agent name.
        name: Option<String>,
    },
    /// The policy, by the rule that decided when one did (none: its default).
    Policy {
        /// The rule's id.
        rule: Option<String>,
    },
    /// A standing grant ("this conversation", "always").
    Grant {
        /// The grant's id.
        grant_id: String,
    },
    /// Switchboard itself (sending a call, recording its result, noticing a changed tool).
    System,
    /// An MCP App, from its frame (AP-10): its server and `ui://` document.
    App {
        /// `<server> <ui:// uri>`.
        app: String,
    },
}

impl Actor {
    /// The stored text.
    pub fn to_stored(&self) -> String {
        let with = |word: &str, detail: &str| {
            let clean: String = detail
                .chars()
                .filter(|c| !c.is_control())
                .take(ACTOR_DETAIL_MAX)
                .collect();
            if clean.is_empty() {
                word.to_owned()
            } else {
                format!("{word}:{clean}")
            }
        };
        match self {
            Self::User => "user".into(),
            Self::System => "system".into(),
            Self::Model { name } => with("model", name.as_deref().unwrap_or("")),
            Self::Policy { rule } => with("policy", rule.as_deref().unwrap_or("")),
            // A grant always has an id; an empty one still records that a grant decided.
            Self::Grant { grant_id } if grant_id.is_empty() => "grant:?".into(),
            Self::Grant { grant_id } => with("grant", grant_id),
            Self::App { app } => with("app", app),
        }
    }

    /// Reads stored text.
    pub fn parse(s: &str) -> Option<Self> {
        let (word, detail) = match s.split_once(':') {
            Some((w, d)) => (w, Some(d.to_owned())),
            None => (s, None),
        };
        Some(match (word, detail) {
            ("user", None) => Self::User,
            ("system", None) => Self::System,
            ("model", name) => Self::Model { name },
            ("policy", rule) => Self::Policy { rule },
            ("grant", Some(grant_id)) => Self::Grant { grant_id },
            ("app", Some(app)) => Self::App { app },
            _ => return None,
        })
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_stored())
    }
}

/// Links the entries of one tool call. Random, so it is unique across restarts and data
/// directories; a caller that has a durable id (a stored tool call) may use that instead.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallRef(Arc<str>);

impl CallRef {
    /// A fresh reference: 128 bits as 32 hex digits, the first 48 the time in ms and the other
    /// 80 random (the layout of a UUIDv7). Time first because the audit table indexes
    /// `call_ref`: references that grow with time land on the index's last page, so a group
    /// commit of many calls dirties (and syncs) one or two index pages instead of one per call.
    /// 80 random bits keep references made in the same millisecond apart.
    pub fn random() -> Self {
        let ms = u64::try_from(crate::clock::now_ms()).unwrap_or(0) & 0xffff_ffff_ffff;
        let mut bytes = [0u8; 16];
        bytes[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
        bytes[6..].copy_from_slice(&rand::random::<[u8; 10]>());
        Self(Arc::from(hex::encode(bytes)))
    }

    /// The reference of a call recorded in the conversation store (`tc-<row id>`).
    pub fn tool_call(id: crate::ids::ToolCallRecordId) -> Self {
        Self(Arc::from(format!("tc-{id}")))
    }

    /// The reference as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CallRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for CallRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// Which server, tool, conversation and call an entry is about. Every field is optional: a
/// policy change has no tool, a manual run has no conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditContext {
    /// The server.
    pub server: Option<ServerId>,
    /// The tool, as the server names it.
    pub tool: Option<Arc<str>>,
    /// The conversation, for calls a model asked for.
    pub conversation: Option<ConversationId>,
    /// The call the entry belongs to.
    pub call_ref: Option<CallRef>,
}

impl AuditContext {
    /// The context of something about a tool but no call (a grant, a pin).
    pub fn for_tool(tool: &ToolRef) -> Self {
        Self {
            server: Some(tool.server.clone()),
            tool: Some(tool.tool.clone()),
            ..Self::default()
        }
    }
}
