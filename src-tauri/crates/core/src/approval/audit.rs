//! The audit log's vocabulary (OB-01): what happened to a tool call (proposed, decided, edited,
//! started, finished), the answers a person gave to elicitation and sampling requests, and
//! changes to grants, the policy and tool pins, each as a typed [`AuditEvent`].
//!
//! An event becomes a stored row through [`AuditEvent::into_entry`], which is where the log's
//! two promises about content are kept:
//! - **Secrets are redacted.** Every string goes through the process redactor (each secret this
//!   process read from the keyring, see [`crate::redact::redact_for_logs`]); the value of any
//!   object key that names a credential (`password`, `token`, `api_key`, `authorization`, ...)
//!   is masked whole; a string that on its own looks like a credential (a well-known token
//!   prefix, a long random token) is masked too. UUIDs are kept: they are identifiers.
//! - **Rows are bounded.** Arguments are kept up to [`ARGUMENTS_MAX`] bytes of JSON, free text
//!   up to [`TEXT_MAX`]; larger values keep a truncated preview. Tool results are never stored,
//!   only their SHA-256 digest and size: the conversation store holds results, the audit log
//!   proves what they were.
//!
//! Arguments are always recorded by digest as well: SHA-256 over their canonical JSON (object
//! keys sorted, whatever `serde_json` features the build has), computed before redaction, so the
//! digest identifies exactly what was sent even when the stored copy is masked or cut. The
//! digest of a low-entropy secret inside otherwise-known arguments could be guessed by brute
//! force; OB-01 asks for the digest, and the log is local to the user's machine.
//!
//! The hash chain over rows is a storage property and lives in `store::audit`. This module has
//! no I/O.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{Origin, RequestKind};
pub use crate::audit_data::{Actor, AuditContext, AuditKind, CallRef};
use crate::ids::{ServerId, ToolRef};
use crate::store::NewAuditEntry;

mod content;
mod recorder;

use content::text;
pub use content::{
    arguments_digest, canonical_json, capped, digest_and_size, redact_value, summarize,
};
pub use recorder::Recorder;

/// Arguments (and edited arguments, elicitation content) are stored up to this many bytes of
/// JSON; 16 KiB shows any realistic call whole while keeping one row small.
pub const ARGUMENTS_MAX: usize = 16 * 1024;
/// Free text (reasons, errors, messages, URLs, sampling responses) is kept up to this many
/// bytes.
pub const TEXT_MAX: usize = 4 * 1024;
/// What replaces a masked value.
pub const REDACTED: &str = "[redacted]";

impl Actor {
    /// Who proposes a call with this origin: the model for a conversation, the app for an MCP
    /// App, else a person.
    pub fn from_origin(origin: &Origin) -> Self {
        match origin {
            Origin::Manual | Origin::Attach { .. } => Self::User,
            Origin::Model { agent, .. } => Self::Model {
                name: agent.as_ref().map(|a| a.agent.to_string()),
            },
            Origin::App { app, .. } => Self::App {
                app: app.actor_name(),
            },
        }
    }
}

// The row types live in the `audit_data` leaf (store keeps them); the constructors that read a
// request's `Origin` stay here, next to the policy that defines it.
impl AuditContext {
    /// The context of one call of `tool` with this origin.
    pub fn for_call(tool: &ToolRef, origin: &Origin, call_ref: CallRef) -> Self {
        Self::for_request(&tool.server, &tool.tool, origin, call_ref)
    }

    /// The context of one request to `server` about `name` (a tool, a prompt, a resource's
    /// URI) with this origin.
    pub fn for_request(server: &ServerId, name: &str, origin: &Origin, call_ref: CallRef) -> Self {
        Self {
            server: Some(server.clone()),
            tool: Some(Arc::from(name)),
            conversation: origin.conversation().cloned(),
            call_ref: Some(call_ref),
        }
    }
}

/// What was decided about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It may run.
    Allow,
    /// It may not.
    Deny,
    /// A person is asked (the policy's answer before the person's).
    Ask,
}

/// How an elicitation request was presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationMode {
    /// A form the person filled in.
    Form,
    /// A URL the person was asked to open.
    Url,
}

/// A person's answer to an elicitation or sampling request (the protocol's three actions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// Accepted (for sampling: the response was sent back).
    Accept,
    /// Declined.
    Decline,
    /// Dismissed without an answer.
    Cancel,
}

/// What happened to a grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantChange {
    /// Made from an approval prompt.
    Created,
    /// Revoked one by one.
    Revoked,
    /// Every grant revoked ("reset all").
    ResetAll,
    /// Voided because the tool it was bound to changed.
    Voided,
}

/// What happened to a tool's pinned definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinChange {
    /// First seen and pinned.
    Pinned,
    /// The server now describes it differently; calls are blocked until re-approved.
    Changed,
    /// A person approved the new definition.
    Approved,
}

/// Which governance setting changed (AP-09). The details that go with it are names and
/// settings, never secret values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigChange {
    /// A server was added (by hand or through the form).
    ServerAdded,
    /// A server's configuration was replaced.
    ServerUpdated,
    /// A server was removed.
    ServerRemoved,
    /// A server was enabled or disabled.
    ServerEnabled,
    /// A person approved what a server runs or where it connects.
    Trusted,
    /// A person withdrew that approval.
    TrustRevoked,
    /// A server's tags changed (they drive the trifecta guard and read-only claims).
    Tags,
    /// A server's result review setting changed.
    ResultReview,
    /// A tool was switched on or off.
    ToolSwitch,
    /// A server's roots changed.
    Roots,
    /// A config file was imported (what was added).
    Imported,
    /// A model provider was added or changed.
    ProviderSaved,
    /// A model provider was removed.
    ProviderRemoved,
    /// A secret was stored (its name, never its value).
    SecretSet,
    /// A secret was deleted (its name).
    SecretDeleted,
    /// An agent profile was added.
    AgentAdded,
    /// An agent profile was changed.
    AgentChanged,
    /// An agent profile was removed.
    AgentRemoved,
    /// Agent profiles were imported from a TOML file.
    AgentsImported,
}

/// One thing worth recording. `#[non_exhaustive]`: more kinds may come with agents.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AuditEvent {
    /// A call was asked for, with these arguments.
    Proposed {
        /// A tool call, a resource read, a prompt get or a completion.
        request: RequestKind,
        /// The arguments as asked.
        arguments: Value,
        /// Who asked: the model or a person.
        by: Actor,
    },
    /// The policy, a grant or a person decided.
    Decided {
        /// Allow, deny or ask.
        decision: Verdict,
        /// Who or which rule.
        by: Actor,
        /// Why, when given.
        reason: Option<String>,
    },
    /// A person edited the arguments before allowing the call.
    Edited {
        /// The digest of the arguments before ([`arguments_digest`]).
        before_digest: String,
        /// The arguments the call runs with.
        after: Value,
    },
    /// The call was sent to the server.
    Started,
    /// The call ended. Results are recorded by digest and size only.
    Finished {
        /// SHA-256 of the result's canonical JSON; `None` when there was no result.
        result_digest: Option<String>,
        /// The result's size in bytes of JSON.
        result_bytes: u64,
        /// From sending to the answer.
        duration_ms: u64,
        /// Whether the tool reported failure, or the call failed.
        is_error: bool,
        /// The failure, when the call failed without a result.
        error: Option<String>,
    },
    /// A person answered a server's elicitation request (AP-07).
    Elicitation {
        /// Form or URL.
        mode: ElicitationMode,
        /// The server's message.
        message: String,
        /// The URL shown, in URL mode.
        url: Option<String>,
        /// What the person did.
        reply: Reply,
        /// What the form sent back, when accepted.
        content: Option<Value>,
    },
    /// A person answered a server's sampling request (AP-08).
    Sampling {
        /// What the person did.
        reply: Reply,
        /// The model that answered.
        model: Option<String>,
        /// SHA-256 of the request as the server sent it.
        request_digest: String,
        /// Whether the person edited the prompt first.
        edited: bool,
        /// The response returned to the server, when accepted.
        response: Option<String>,
    },
    /// A grant was made or revoked.
    Grant {
        /// What happened.
        change: GrantChange,
        /// The grant, when one.
        grant_id: Option<String>,
        /// `conversation` or `always`, for a new grant.
        scope: Option<String>,
        /// Who: a person, or the system voiding it.
        by: Actor,
    },
    /// The policy's rules changed.
    Policy {
        /// What changed, in a few words (`rule added`, `rules imported`).
        change: String,
        /// The rule, when one.
        rule_id: Option<String>,
        /// The rule as JSON, when one.
        rule: Option<Value>,
    },
    /// A tool's pinned definition.
    Pin {
        /// What happened.
        change: PinChange,
        /// The definition's digest now.
        digest: String,
        /// The digest it had, for a change.
        previous: Option<String>,
    },
    /// A governance setting changed (AP-09). The server, when there is one, goes in the
    /// context.
    Config {
        /// What changed.
        change: ConfigChange,
        /// The new setting or what was affected, as names and values that are not secret
        /// (still redacted on the way in, like every detail).
        detail: Value,
    },
    /// An agent or a person wrote to a run's shared state (issue 15): which key or note and
    /// how large, never the value or the note's text. Recorded under [`AuditKind::Config`]
    /// until the log has a kind of its own for it.
    StateWritten {
        /// Who wrote it: the agent (as a model, by name) or a person.
        by: Actor,
        /// The run whose state it is.
        run: String,
        /// The key, for a value; `None` for a note.
        key: Option<String>,
        /// The version written, or the note's place in the log.
        version: u32,
        /// The value's size in bytes of JSON, or the note's in bytes of text.
        bytes: u64,
    },
    /// An agent handed work to another (issue 15): a sub-task it delegated, or the
    /// conversation it handed over. The task or note by digest and size, never its text (it is
    /// in the run tree and the conversation). Recorded under [`AuditKind::Config`], like
    /// `StateWritten`.
    Delegated {
        /// The agent that handed the work on (as a model, by name).
        by: Actor,
        /// The agent that got it.
        to: String,
        /// The run.
        run: String,
        /// `true` for a hand-over of the conversation, `false` for a delegated sub-task.
        hand_over: bool,
        /// SHA-256 of the task's (or note's) text.
        text_digest: String,
        /// Its size in bytes.
        bytes: u64,
    },
    /// Secrets and personal data were replaced by placeholders in what a turn sent to a
    /// cloud model (issue 16, point 5): kinds and counts of distinct values, never the values.
    /// Recorded under [`AuditKind::Config`], like `StateWritten`.
    Redacted {
        /// The provider profile the requests went to.
        provider: String,
        /// Distinct values replaced, by kind id (`email`, `api_key`, ...).
        counts: std::collections::BTreeMap<String, u32>,
    },
    /// Values outbound redaction had replaced were put back into a call to a server they did
    /// not come from (RD-01), so the call is asked about (unless a rule refuses it anyway):
    /// kinds, digests and origins, never the values. Recorded in the call's trail, before its
    /// decision.
    PutBack {
        /// The server the call goes to.
        to: String,
        /// Each value put back.
        values: Vec<PutBackValue>,
    },
}

/// One value of an [`AuditEvent::PutBack`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PutBackValue {
    /// The kind id (`email`, `api_key`, ...).
    pub kind: String,
    /// The SHA-256 of the value, in hex.
    pub sha256: String,
    /// Where it came from, for a person ("a result of server notes").
    pub from: Vec<String>,
}

impl AuditEvent {
    /// `by` handed `text` (a task, or a hand-over's note) to agent `to` in `run`.
    pub fn delegated(by: &str, to: &str, run: &str, hand_over: bool, text: &str) -> Self {
        use sha2::Digest;
        Self::Delegated {
            by: Actor::Model {
                name: Some(by.to_owned()),
            },
            to: to.to_owned(),
            run: run.to_owned(),
            hand_over,
            text_digest: hex::encode(sha2::Sha256::digest(text.as_bytes())),
            bytes: u64::try_from(text.len()).unwrap_or(u64::MAX),
        }
    }

    /// A request of `request` kind asked for with `arguments` from `origin`.
    pub fn proposed(request: RequestKind, arguments: &Map<String, Value>, origin: &Origin) -> Self {
        Self::Proposed {
            request,
            arguments: Value::Object(arguments.clone()),
            by: Actor::from_origin(origin),
        }
    }

    /// A call that ended with `result` (anything serializable: the tool result).
    pub fn finished(result: &impl Serialize, is_error: bool, duration: Duration) -> Self {
        let (digest, bytes) = digest_and_size(result);
        Self::Finished {
            result_digest: Some(digest),
            result_bytes: bytes,
            duration_ms: millis(duration),
            is_error,
            error: None,
        }
    }

    /// A call that failed without a result.
    pub fn failed(error: &dyn fmt::Display, duration: Duration) -> Self {
        Self::Finished {
            result_digest: None,
            result_bytes: 0,
            duration_ms: millis(duration),
            is_error: true,
            error: Some(error.to_string()),
        }
    }

    /// The kind of row it becomes.
    pub fn kind(&self) -> AuditKind {
        match self {
            Self::Proposed { .. } => AuditKind::Proposed,
            Self::Decided { .. } => AuditKind::Decided,
            Self::Edited { .. } => AuditKind::Edited,
            Self::Started => AuditKind::Started,
            Self::Finished { .. } => AuditKind::Finished,
            Self::Elicitation { .. } => AuditKind::Elicitation,
            Self::Sampling { .. } => AuditKind::Sampling,
            Self::Grant { .. } => AuditKind::Grant,
            Self::Policy { .. } => AuditKind::Policy,
            Self::Pin { .. } => AuditKind::Pin,
            Self::Config { .. }
            | Self::StateWritten { .. }
            | Self::Delegated { .. }
            | Self::Redacted { .. }
            | Self::PutBack { .. } => AuditKind::Config,
        }
    }

    /// Who the entry is attributed to.
    pub fn actor(&self) -> Actor {
        match self {
            Self::Proposed { by, .. }
            | Self::Decided { by, .. }
            | Self::Grant { by, .. }
            | Self::StateWritten { by, .. }
            | Self::Delegated { by, .. } => by.clone(),
            Self::Edited { .. }
            | Self::Elicitation { .. }
            | Self::Sampling { .. }
            | Self::Policy { .. }
            | Self::Config { .. } => Actor::User,
            Self::Started
            | Self::Finished { .. }
            | Self::Pin { .. }
            | Self::Redacted { .. }
            | Self::PutBack { .. } => Actor::System,
        }
    }

    /// The event's details as stored: redacted and bounded (see the module docs).
    #[allow(clippy::too_many_lines)] // one arm per event kind, the stored shapes side by side
    pub fn detail(&self) -> Value {
        match self {
            Self::Proposed {
                request, arguments, ..
            } => {
                let (digest, bytes) = digest_and_size(arguments);
                json!({
                    "request": request,
                    "arguments_sha256": digest,
                    "arguments_bytes": bytes,
                    "arguments": capped(redact_value(arguments), ARGUMENTS_MAX),
                })
            }
            Self::Decided {
                decision, reason, ..
            } => json!({ "decision": decision, "reason": reason.as_deref().map(text) }),
            Self::Edited {
                before_digest,
                after,
            } => {
                let (digest, bytes) = digest_and_size(after);
                json!({
                    "before_sha256": before_digest,
                    "after_sha256": digest,
                    "after_bytes": bytes,
                    "after": capped(redact_value(after), ARGUMENTS_MAX),
                })
            }
            Self::Started => json!({}),
            Self::Finished {
                result_digest,
                result_bytes,
                duration_ms,
                is_error,
                error,
            } => json!({
                "result_sha256": result_digest,
                "result_bytes": result_bytes,
                "duration_ms": duration_ms,
                "is_error": is_error,
                "error": error.as_deref().map(text),
            }),
            Self::Elicitation {
                mode,
                message,
                url,
                reply,
                content,
            } => json!({
                "mode": mode,
                "message": text(message),
                "url": url.as_deref().map(text),
                "reply": reply,
                "content": content.as_ref().map(|c| capped(redact_value(c), ARGUMENTS_MAX)),
            }),
            Self::Sampling {
                reply,
                model,
                request_digest,
                edited,
                response,
            } => json!({
                "reply": reply,
                "model": model.as_deref().map(text),
                "request_sha256": request_digest,
                "edited": edited,
                "response": response.as_deref().map(text),
            }),
            Self::Grant {
                change,
                grant_id,
                scope,
                ..
            } => json!({ "change": change, "grant_id": grant_id, "scope": scope }),
            Self::Policy {
                change,
                rule_id,
                rule,
            } => json!({
                "change": text(change),
                "rule_id": rule_id,
                "rule": rule.as_ref().map(|r| capped(redact_value(r), ARGUMENTS_MAX)),
            }),
            Self::Pin {
                change,
                digest,
                previous,
            } => json!({ "change": change, "sha256": digest, "previous_sha256": previous }),
            Self::Config { change, detail } => json!({
                "change": change,
                "detail": capped(redact_value(detail), ARGUMENTS_MAX),
            }),
            Self::Delegated {
                to,
                run,
                hand_over,
                text_digest,
                bytes,
                ..
            } => json!({
                "change": if *hand_over { "handed_over" } else { "delegated" },
                "detail": {
                    "to": to,
                    "run": run,
                    "text_digest": text_digest,
                    "bytes": bytes,
                },
            }),
            Self::Redacted { provider, counts } => json!({
                "change": "redacted",
                "detail": { "provider": text(provider), "counts": counts },
            }),
            Self::PutBack { to, values } => json!({
                "change": "put_back",
                "detail": {
                    "to": text(to),
                    "values": values.iter().map(|v| json!({
                        "kind": v.kind,
                        "sha256": v.sha256,
                        "from": v.from.iter().map(|f| text(f)).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                },
            }),
            Self::StateWritten {
                run,
                key,
                version,
                bytes,
                ..
            } => json!({
                // Shaped like `Config`'s, so summaries and filters read it the same way.
                "change": if key.is_some() { "state_written" } else { "state_note_added" },
                "detail": {
                    "run": run,
                    "key": key.as_ref().map(|k| redact_value(&json!(k))),
                    "version": version,
                    "bytes": bytes,
                },
            }),
        }
    }

    /// The row to append for this event in `ctx` at `at_ms`.
    pub fn into_entry(self, ctx: AuditContext, at_ms: i64) -> NewAuditEntry {
        NewAuditEntry {
            at_ms,
            kind: self.kind(),
            actor: self.actor(),
            detail: self.detail(),
            context: ctx,
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
