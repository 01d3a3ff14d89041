//! Pending approval requests: a call that must be asked about waits here until a shell answers
//! it by its nonce, or until the caller gives up (the mechanism is [`super::waitlist`]).
//!
//! The nonce is 128 random bits, made in Rust and never derivable from the request: a web view
//! that was tricked into calling IPC commands still cannot release a call it was not shown
//! (AP-03). Dropping the [`Ticket`] withdraws the request, so a cancelled turn never leaves a
//! stale dialog behind. The map is touched only to insert, take or list, never across an
//! `.await`.

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use super::policy::{Origin, RequestKind};
pub use super::waitlist::Nonce;
use super::waitlist::{now_ms, Waiting, Waitlist};
use crate::events::HostEvent;
use crate::ids::ServerId;

/// A call waiting for the user: everything a dialog must show, untruncated (AP-01).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Answer with this.
    pub nonce: Nonce,
    /// The server.
    pub server: ServerId,
    /// A tool call, a resource read or a prompt get.
    pub kind: RequestKind,
    /// The tool or prompt, as the server names it, or the resource's URI.
    pub tool: String,
    /// The exact arguments that will be sent.
    pub arguments: serde_json::Value,
    /// Who asks.
    pub origin: Origin,
    /// Hints the server claims for the tool (shown, never trusted).
    pub hints: Vec<String>,
    /// Why it is asked (the policy's reason).
    pub reason: String,
    /// A warning to show prominently (the lethal-trifecta guard, AP-04).
    pub warning: Option<String>,
    /// When it was asked, milliseconds since the Unix epoch.
    pub requested_at_ms: u64,
}

/// How far an "allow" reaches (AP-02).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// This call only.
    #[default]
    Once,
    /// Calls of this tool in this conversation (a grant).
    Conversation,
    /// Calls of this tool anywhere, until revoked or the tool changes (a grant).
    Always,
}

/// A person's answer to one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Run it; with `arguments` when the person edited them (the call then runs with those).
    Allow {
        /// The edited arguments, replacing the requested ones.
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        /// Whether later calls of the tool are allowed too.
        scope: Scope,
        /// For a grant: conditions later calls must meet to be allowed by it ("always, with
        /// these arguments"); empty = any arguments. See [`super::suggest`].
        constraints: Vec<super::rules::Condition>,
    },
    /// Don't run it; `reason` is passed on to whoever asked (the model, in a chat).
    Deny {
        /// Why, in the person's words.
        reason: Option<String>,
    },
}

impl Answer {
    /// A plain yes.
    pub const ALLOW: Self = Self::Allow {
        arguments: None,
        scope: Scope::Once,
        constraints: Vec::new(),
    };
    /// A plain no.
    pub const DENY: Self = Self::Deny { reason: None };

    /// Whether the call may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }
}

/// Characters of a deny reason kept; the rest is cut.
pub const REASON_MAX: usize = 2_000;

/// Why an answer was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApprovalError {
    /// No request with that nonce is pending (answered, withdrawn, or never asked).
    #[error("no approval request with that id is pending; it was answered or withdrawn")]
    UnknownNonce,
}

/// The pending requests of one host. Cheap to clone.
#[derive(Clone, Debug)]
pub struct PendingApprovals {
    list: Waitlist<ApprovalRequest, Answer>,
}

/// A caller's claim on one pending request. Dropping it withdraws the request.
#[derive(Debug)]
pub struct Ticket(Waiting<ApprovalRequest, Answer>);

impl Ticket {
    /// The request's nonce.
    pub fn nonce(&self) -> &Nonce {
        self.0.nonce()
    }

    /// Waits for the answer; a request withdrawn without one is a plain no.
    pub async fn answer(self) -> Answer {
        self.0.answer().await.unwrap_or(Answer::DENY)
    }
}

/// What to ask about.
#[derive(Clone, Debug)]
pub struct Ask {
    /// The server.
    pub server: ServerId,
    /// A tool call, a resource read or a prompt get.
    pub kind: RequestKind,
    /// The tool or prompt, or the resource's URI.
    pub tool: String,
    /// The arguments.
    pub arguments: serde_json::Value,
    /// Who asks.
    pub origin: Origin,
    /// Claimed hints.
    pub hints: Vec<String>,
    /// Why it is asked.
    pub reason: String,
    /// A warning to show prominently.
    pub warning: Option<String>,
}

impl PendingApprovals {
    /// An empty set that announces changes on `events`.
    pub fn new(events: broadcast::Sender<HostEvent>) -> Self {
        Self {
            list: Waitlist::new(events, HostEvent::ApprovalsChanged),
        }
    }

    /// Registers a request and announces it.
    pub fn ask(&self, ask: Ask) -> Ticket {
        let requested_at_ms = now_ms();
        Ticket(self.list.insert(|nonce| ApprovalRequest {
            nonce,
            server: ask.server,
            kind: ask.kind,
            tool: ask.tool,
            arguments: ask.arguments,
            origin: ask.origin,
            hints: ask.hints,
            reason: ask.reason,
            warning: ask.warning,
            requested_at_ms,
        }))
    }

    /// The pending request named by `nonce`.
    pub fn get(&self, nonce: &str) -> Option<ApprovalRequest> {
        self.list.get(nonce)
    }

    /// Answers the request named by `nonce`. A deny reason is trimmed and cut to
    /// [`REASON_MAX`] characters; an empty one is none.
    pub fn answer(&self, nonce: &str, answer: Answer) -> Result<(), ApprovalError> {
        let answer = match answer {
            Answer::Deny { reason } => Answer::Deny {
                reason: clean_reason(reason),
            },
            allow => allow,
        };
        if self.list.answer(nonce, answer) {
            Ok(())
        } else {
            Err(ApprovalError::UnknownNonce)
        }
    }

    /// Every pending request, oldest first.
    pub fn list(&self) -> Vec<ApprovalRequest> {
        let mut out = self.list.list();
        out.sort_by(|a, b| {
            a.requested_at_ms
                .cmp(&b.requested_at_ms)
                .then_with(|| a.nonce.as_str().cmp(b.nonce.as_str()))
        });
        out
    }
}

/// A person's reason, trimmed and cut to [`REASON_MAX`] characters; an empty one is none.
pub fn clean_reason(reason: Option<String>) -> Option<String> {
    reason
        .map(|r| r.trim().chars().take(REASON_MAX).collect::<String>())
        .filter(|r| !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> Ask {
        Ask {
            server: ServerId::new("s").unwrap(),
            kind: RequestKind::Tool,
            tool: "t".into(),
            arguments: serde_json::json!({"a": 1}),
            origin: Origin::Manual,
            hints: vec![],
            reason: "asked".into(),
            warning: None,
        }
    }

    fn pending() -> (PendingApprovals, broadcast::Receiver<HostEvent>) {
        let (tx, rx) = broadcast::channel(16);
        (PendingApprovals::new(tx), rx)
    }

    #[tokio::test]
    async fn only_the_right_nonce_releases_the_call() {
        let (p, _rx) = pending();
        let ticket = p.ask(ask());
        let nonce = ticket.nonce().to_string();
        assert_eq!(nonce.len(), 32);
        assert_eq!(
            p.answer("0".repeat(32).as_str(), Answer::ALLOW),
            Err(ApprovalError::UnknownNonce)
        );
        assert_eq!(p.list().len(), 1);
        p.answer(&nonce, Answer::ALLOW).unwrap();
        assert_eq!(ticket.answer().await, Answer::ALLOW);
        assert_eq!(
            p.answer(&nonce, Answer::ALLOW),
            Err(ApprovalError::UnknownNonce),
            "answered twice"
        );
        assert!(p.list().is_empty());
    }

    #[tokio::test]
    async fn deny_and_withdrawal() {
        let (p, mut rx) = pending();
        let denied = p.ask(ask());
        p.answer(
            &denied.nonce().to_string(),
            Answer::Deny {
                reason: Some(format!("  too {}  ", "x".repeat(3_000))),
            },
        )
        .unwrap();
        match denied.answer().await {
            Answer::Deny { reason: Some(r) } => {
                assert!(r.starts_with("too x"), "trimmed: {r:?}");
                assert_eq!(r.chars().count(), REASON_MAX, "cut");
            }
            other => panic!("expected a deny with a reason, got {other:?}"),
        }

        let withdrawn = p.ask(ask());
        let nonce = withdrawn.nonce().to_string();
        drop(withdrawn);
        assert!(
            p.list().is_empty(),
            "a dropped ticket withdraws its request"
        );
        assert_eq!(
            p.answer(&nonce, Answer::ALLOW),
            Err(ApprovalError::UnknownNonce)
        );
        let mut changes = 0;
        while rx.try_recv().is_ok() {
            changes += 1;
        }
        assert_eq!(changes, 4, "ask, answer, ask, withdraw");
    }
}
