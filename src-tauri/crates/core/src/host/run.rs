//! The governed seam (AP-01, AP-03, AP-09): every request with an effect that a shell, a model
//! or a person makes of a server passes through here, and only through here.
//!
//! A tool call goes through named phases, in this order:
//! 1. **check** — hard denies before anything is decided or asked: unknown or switched-off
//!    tools, tools held since they changed (TD-02), arguments the schema refuses (TD-07);
//! 2. **decide** — the policy ([`crate::approval::decide`]) under the host's policy lock, so
//!    limits count parallel calls; deny rules and limits apply to a person's own calls too;
//! 3. **ask** — when the policy asks, the call waits for a shell to answer its nonce;
//!    arguments the person edits are checked and *decided again* (a deny rule still stops an
//!    edited call);
//! 4. **start** — what precedes the call is on disk in the audit log before it goes out; a
//!    call the policy allows has one awaited append (proposal, decision, start) that also
//!    confirms the in-memory policy it was decided from (`host::policy`);
//! 5. **call** — sent to the server, cancellable through its run;
//! 6. **review** — a result a person wants to see before a model does (AP-05);
//! 7. **note the flow** — what the result brought into a conversation (AP-04).
//!
//! Resource reads, prompt gets and argument completions take the same path without the tool
//! specifics: check (server running, prompt not held), decide (they are policy targets like
//! tools; a person's own default to allowed, a model's ask), ask, audit, and for requests
//! that bring something into a conversation, the flow once the message carrying it is sent.
//! Completions are sent per keystroke: they obey holds and deny rules, and only refusals are
//! audited.
//!
//! Every request has one [`Trail`]: the audit context its entries share and the entries not
//! yet written. A request's entries are written in order, in as few transactions as the
//! phases allow (see `host::audit`).
//!
//! The ungoverned primitives (`Host::call_tool`, a server's connection, the secret store) are
//! crate-private: a shell cannot reach a server except through these methods.

use std::collections::HashMap;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Host, HostError};
use crate::approval::audit::{Actor, AuditEvent, Verdict};
use crate::approval::{
    Answer, ApprovalRequest, Ask, Call, Claims, Decision, Origin, RequestKind, Scope,
};
use crate::error::DeniedBy;
use crate::ids::{RunId, ServerId, ToolRef};
use crate::mcp::catalog::{Arguments, Progress, PromptResult, ResourceContents, ToolInfo};
use crate::mcp::McpError;
use crate::store::MetricKind;

/// Options for a request made through the host.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// The run it belongs to ([`Host::open_run`]); [`Host::cancel_run`] stops it. Without one
    /// the request cannot be stopped from outside.
    pub run: Option<RunId>,
    /// Receives progress as it arrives (also published as `HostEvent::Progress`).
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// Fired by [`Host::run_tool`] once the call is allowed, just before it is sent; dropped
    /// unfired when it is refused.
    pub started: Option<oneshot::Sender<Started>>,
    /// The cancellation of a caller inside the core (a chat turn's).
    pub(crate) cancel: Option<CancellationToken>,
    /// This very call (tool and arguments) as a person approved it with its pipeline: the
    /// policy's default question is not asked again for it when it does not write.
    pub(crate) preapproved: Option<crate::pipelines::Preapproved>,
    /// Why a person must be asked even where the policy allows the call: an agent profile's
    /// `ask` tightening (issue 15). It only ever turns an allow into a question.
    pub(crate) ask: Option<String>,
}

impl CallOptions {
    /// Runs as part of `run`.
    pub fn run(mut self, run: RunId) -> Self {
        self.run = Some(run);
        self
    }

    /// Sends progress to `tx`.
    pub fn progress(mut self, tx: mpsc::UnboundedSender<Progress>) -> Self {
        self.progress = Some(tx);
        self
    }

    /// Tells `tx` when the call is allowed and sent.
    pub fn started(mut self, tx: oneshot::Sender<Started>) -> Self {
        self.started = Some(tx);
        self
    }
}

/// What [`Host::run_tool`] tells its caller when the call passed approval and is sent. Defined
/// by `chat` (below `host`), whose tool seam reports it to a turn.
pub use crate::chat::Started;

mod tool;
mod trail;

use trail::{actor_of, Trail};

/// What a server claims about a tool, from its annotations struct.
fn claims(info: Option<&ToolInfo>) -> Claims {
    let a = info.and_then(|t| t.annotations.as_ref());
    Claims {
        read_only: a.and_then(|a| a.read_only_hint) == Some(true),
        open_world: a.and_then(|a| a.open_world_hint) == Some(true),
    }
}

/// What the person said when asked.
enum Asked {
    Allow {
        edited: Option<Arguments>,
        scope: Scope,
        constraints: Vec<crate::approval::Condition>,
    },
    Deny(HostError),
}

impl Host {
    /// Decides a request: the policy under the lock that makes deciding and counting one
    /// step, so parallel calls cannot all slip under a limit.
    async fn decide(
        &self,
        call: &Call<'_>,
        info: Option<&ToolInfo>,
    ) -> Result<Decision, HostError> {
        let _one_at_a_time = self.inner.seam.policy_lock.lock().await;
        let (decision, limited) = self.decide_call(call, info).await?;
        // Hits are counted only for limits; an unlimited rule costs no disk sync.
        if let (Decision::Allow { by }, true) = (&decision, limited) {
            if let Some(rule) = by.id() {
                self.rule_hit(rule, call.origin).await;
            }
        }
        Ok(decision)
    }

    /// Parks a request for a person and waits for the answer, or for the run to be stopped.
    async fn ask_person(
        &self,
        trail: &mut Trail<'_>,
        ask: Ask,
        cancel: &CancellationToken,
    ) -> Result<Answer, HostError> {
        trail.commit().await;
        let ticket = self.inner.seam.approvals.ask(ask);
        tokio::select! {
            answer = ticket.answer() => Ok(answer),
            () = cancel.cancelled() => {
                trail.decided(
                    Verdict::Deny,
                    Actor::System,
                    Some("withdrawn: the run was cancelled".into()),
                );
                trail.commit().await;
                Err(McpError::Cancelled.into())
            }
        }
    }

    /// Asks a person about a request approved as a whole before its parts run (a pipeline):
    /// always asked, whatever the rules say about its parts, and audited as proposed and
    /// decided. `Err(reason)` inside: the person said no.
    pub(super) async fn ask_whole(
        &self,
        ask: Ask,
        cancel: &CancellationToken,
    ) -> Result<Result<(), Option<String>>, HostError> {
        let mut trail = Trail::new(self, &ask.server, &ask.tool, &ask.origin);
        let arguments = ask.arguments.as_object().cloned().unwrap_or_default();
        trail.note(AuditEvent::proposed(ask.kind, &arguments, &ask.origin));
        trail.decided(Verdict::Ask, Actor::System, Some(ask.reason.clone()));
        let answer = self.ask_person(&mut trail, ask, cancel).await?;
        let out = match answer {
            Answer::Allow { .. } => {
                trail.decided(Verdict::Allow, Actor::User, None);
                Ok(())
            }
            Answer::Deny { reason } => {
                trail.decided(Verdict::Deny, Actor::User, reason.clone());
                Err(reason)
            }
        };
        trail.commit().await;
        Ok(out)
    }

    /// The person's answer to a parked tool call, recorded on the trail.
    async fn answer_of(
        &self,
        tool: &ToolRef,
        trail: &mut Trail<'_>,
        ask: Ask,
        cancel: &CancellationToken,
    ) -> Result<Asked, HostError> {
        Ok(match self.ask_person(trail, ask, cancel).await? {
            Answer::Allow {
                arguments,
                scope,
                constraints,
            } => {
                trail.decided(Verdict::Allow, Actor::User, None);
                Asked::Allow {
                    edited: arguments,
                    scope,
                    constraints,
                }
            }
            Answer::Deny { reason } => {
                trail.decided(Verdict::Deny, Actor::User, reason.clone());
                Asked::Deny(denied(
                    tool,
                    DeniedBy::Person,
                    match reason {
                        Some(r) => format!("the user said no: {r}"),
                        None => "the user said no".into(),
                    },
                ))
            }
        })
    }

    /// Arguments a person edited while approving: checked against the schema and the holds
    /// again, and decided again, so a deny rule stops an edited call as it stops any other.
    /// The person's approval answers an ask; only a deny overrides it.
    async fn redecide(
        &self,
        tool: &ToolRef,
        edited: Arguments,
        origin: &Origin,
        info: Option<&ToolInfo>,
        trail: &mut Trail<'_>,
    ) -> Result<Arguments, HostError> {
        let edited = match self.check_call(tool, edited).await {
            Ok(c) => c.arguments,
            Err(e) => {
                trail.decided(Verdict::Deny, Actor::System, Some(e.to_string()));
                trail.commit().await;
                return Err(e);
            }
        };
        let again = self
            .decide_call(&tool_call(tool, origin, &edited, info), info)
            .await?
            .0;
        if let Decision::Deny { reason, rule } = again {
            let reason = format!("the edited arguments: {reason}");
            trail.decided(Verdict::Deny, Actor::Policy { rule }, Some(reason.clone()));
            trail.commit().await;
            return Err(denied(tool, DeniedBy::Policy, reason));
        }
        Ok(edited)
    }

    /// Requests waiting for the user, oldest first.
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        self.inner.seam.approvals.list()
    }

    /// Answers a pending request by its nonce; anything else is refused (AP-03). Edited
    /// arguments are checked against the tool's input schema (TD-07) and the policy's deny
    /// rules first: refused ones leave the request pending, so the person can fix them. Only
    /// tool calls take edited arguments.
    pub async fn answer_approval(&self, nonce: &str, answer: Answer) -> Result<(), HostError> {
        if let Answer::Allow {
            arguments: Some(edited),
            ..
        } = &answer
        {
            let request = self
                .inner
                .seam
                .approvals
                .get(nonce)
                .ok_or(crate::approval::ApprovalError::UnknownNonce)?;
            if request.kind != RequestKind::Tool {
                return Err(HostError::Invalid(format!(
                    "only a tool call's arguments can be edited, not a {}'s",
                    request.kind.as_str()
                )));
            }
            let tool = ToolRef {
                server: request.server,
                tool: request.tool.as_str().into(),
            };
            let checked = self.check_call(&tool, edited.clone()).await?;
            // Refused while the person can still fix it; `run_tool` decides again anyway,
            // since the policy may change in between.
            let info = checked.catalog.tools.iter().find(|t| t.name == *tool.tool);
            let call = tool_call(&tool, &request.origin, &checked.arguments, info);
            if let Decision::Deny { reason, .. } = self.decide_call(&call, info).await?.0 {
                return Err(denied(
                    &tool,
                    DeniedBy::Policy,
                    format!("the edited arguments: {reason}"),
                ));
            }
        }
        Ok(self.inner.seam.approvals.answer(nonce, answer)?)
    }

    /// Takes a request other than a tool call through check, decide and ask. Returns its trail
    /// with the decision noted, ready for the request to start.
    async fn govern<'h>(
        &'h self,
        server: &ServerId,
        kind: RequestKind,
        name: &str,
        arguments: &Map<String, Value>,
        origin: &Origin,
        run: &CancellationToken,
    ) -> Result<Trail<'h>, HostError> {
        // Hard denies first: the server runs, and a prompt changed since approved is held.
        let catalog = self.running(server)?.catalog();
        if matches!(kind, RequestKind::Prompt | RequestKind::Completion) {
            if let Some(reason) = self.held_prompt(server, &catalog, name).await? {
                return Err(HostError::HeldPrompt {
                    server: server.clone(),
                    prompt: name.to_owned(),
                    reason,
                });
            }
        }
        // Completions are per keystroke: only refusals reach the audit log.
        let audited = kind != RequestKind::Completion;
        let mut trail = Trail::new(self, server, name, origin);
        trail.note(AuditEvent::proposed(kind, arguments, origin));
        let call = Call {
            server,
            kind,
            name,
            origin,
            arguments,
            claims: Claims::default(),
        };
        match self.decide(&call, None).await? {
            Decision::Allow { by } => {
                trail.decided(Verdict::Allow, actor_of(&by), None);
                if !audited {
                    trail.pending.clear();
                }
                Ok(trail)
            }
            Decision::Deny { reason, rule } => {
                trail.decided(Verdict::Deny, Actor::Policy { rule }, Some(reason.clone()));
                Err(trail
                    .refuse(HostError::Denied {
                        server: server.clone(),
                        tool: name.to_owned(),
                        by: DeniedBy::Policy,
                        reason,
                    })
                    .await)
            }
            // A completion is never worth a prompt: what the person types is not sent.
            Decision::Ask { reason, .. } if !audited => Err(trail
                .refuse(HostError::Denied {
                    server: server.clone(),
                    tool: name.to_owned(),
                    by: DeniedBy::Policy,
                    reason,
                })
                .await),
            Decision::Ask {
                reason,
                warning,
                rule,
            } => {
                trail.decided(Verdict::Ask, Actor::Policy { rule }, Some(reason.clone()));
                let ask = Ask {
                    server: server.clone(),
                    kind,
                    tool: name.to_owned(),
                    arguments: Value::Object(arguments.clone()),
                    origin: origin.clone(),
                    hints: Vec::new(),
                    reason,
                    warning,
                };
                match self.ask_person(&mut trail, ask, run).await? {
                    Answer::Allow { .. } => {
                        trail.decided(Verdict::Allow, Actor::User, None);
                        Ok(trail)
                    }
                    Answer::Deny { reason } => {
                        trail.decided(Verdict::Deny, Actor::User, reason.clone());
                        Err(trail
                            .refuse(HostError::Denied {
                                server: server.clone(),
                                tool: name.to_owned(),
                                by: DeniedBy::Person,
                                reason: match reason {
                                    Some(r) => format!("the user said no: {r}"),
                                    None => "the user said no".into(),
                                },
                            })
                            .await)
                    }
                }
            }
        }
    }

    /// Reads a resource through the seam. Nothing is fetched by the host itself (RN-03).
    /// `origin` says who asks and whether the contents go into a conversation.
    pub async fn read_resource(
        &self,
        server: &ServerId,
        uri: &str,
        origin: Origin,
        opts: CallOptions,
    ) -> Result<Vec<ResourceContents>, HostError> {
        let mut arguments = Map::new();
        arguments.insert("uri".into(), Value::String(uri.to_owned()));
        let request = (server, RequestKind::Resource, uri, &arguments);
        self.send_governed(request, &origin, opts, |conn| async move {
            conn.read_resource(uri).await
        })
        .await
    }

    /// Expands a prompt through the seam.
    pub async fn get_prompt(
        &self,
        server: &ServerId,
        name: &str,
        arguments: &HashMap<String, String>,
        origin: Origin,
        opts: CallOptions,
    ) -> Result<PromptResult, HostError> {
        let as_map: Map<String, Value> = arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let request = (server, RequestKind::Prompt, name, &as_map);
        self.send_governed(request, &origin, opts, |conn| async move {
            conn.get_prompt(name, arguments).await
        })
        .await
    }

    /// A read or a prompt get: governed, started on the record, sent (stopped with its run),
    /// and its end queued on the record.
    async fn send_governed<T, F, Fut>(
        &self,
        (server, kind, name, arguments): (&ServerId, RequestKind, &str, &Map<String, Value>),
        origin: &Origin,
        opts: CallOptions,
        send: F,
    ) -> Result<T, HostError>
    where
        T: serde::Serialize,
        F: FnOnce(std::sync::Arc<crate::mcp::connection::Connection>) -> Fut,
        Fut: std::future::Future<Output = Result<T, McpError>>,
    {
        let run = self.claim_run(opts.run.as_ref(), opts.cancel)?;
        let mut trail = self
            .govern(server, kind, name, arguments, origin, &run.cancel)
            .await?;
        trail.note(AuditEvent::Started);
        trail.commit().await;
        let began = std::time::Instant::now();
        let meter = match kind {
            RequestKind::Resource => (MetricKind::Resource, super::RESOURCE_READS),
            _ => (MetricKind::Prompt, name),
        };
        let meter = self.meter(server, meter.0, meter.1, arguments);
        let conn = self.running(server)?.connection()?;
        let result = tokio::select! {
            r = send(conn) => r.map_err(HostError::from),
            () = run.cancel.cancelled() => Err(McpError::Cancelled.into()),
        };
        self.metered(meter, &result);
        trail.later(match &result {
            Ok(r) => AuditEvent::finished(r, false, began.elapsed()),
            Err(e) => AuditEvent::failed(e, began.elapsed()),
        });
        result
    }

    /// Completion values for a prompt argument, through the seam: holds and deny rules apply
    /// (a prompt rule covers its completions); only refusals are audited.
    pub async fn complete_prompt_argument(
        &self,
        server: &ServerId,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, HostError> {
        let mut arguments = Map::new();
        arguments.insert(argument.to_owned(), Value::String(value.to_owned()));
        let never = CancellationToken::new();
        self.govern(
            server,
            RequestKind::Completion,
            prompt,
            &arguments,
            &Origin::Manual,
            &never,
        )
        .await?;
        let conn = self.running(server)?.connection()?;
        Ok(conn
            .complete_prompt_argument(prompt, argument, value)
            .await?)
    }
}

/// The policy's view of a call of `tool`.
fn tool_call<'a>(
    tool: &'a ToolRef,
    origin: &'a Origin,
    arguments: &'a Map<String, Value>,
    info: Option<&ToolInfo>,
) -> Call<'a> {
    Call {
        server: &tool.server,
        kind: RequestKind::Tool,
        name: &tool.tool,
        origin,
        arguments,
        claims: claims(info),
    }
}

/// `decision` under an agent's `ask` tightening: an allow becomes a question with `ask` as its
/// reason; a question or a refusal stays what it is (a tightening never loosens).
fn tightened(decision: Decision, ask: Option<&str>) -> Decision {
    match (decision, ask) {
        (Decision::Allow { .. }, Some(why)) => Decision::Ask {
            reason: why.to_owned(),
            warning: None,
            rule: None,
        },
        (d, _) => d,
    }
}

fn denied(tool: &ToolRef, by: DeniedBy, reason: String) -> HostError {
    HostError::Denied {
        server: tool.server.clone(),
        tool: tool.tool.to_string(),
        by,
        reason,
    }
}

#[cfg(test)]
mod tests {
    //! An agent's `ask` tightening can only take away (issue 15, point 3): it turns an allow
    //! (by a rule, a grant the person gave, or a default) into a question, and leaves a
    //! question or a refusal as it was.
    use super::tightened;
    use crate::approval::{AllowedBy, Decision};

    const WHY: &str = "Agent coder's profile asks a person before every call of fs/echo.";

    fn asks(reason: &str) -> Decision {
        Decision::Ask {
            reason: reason.into(),
            warning: None,
            rule: None,
        }
    }

    #[test]
    fn every_kind_of_allow_becomes_a_question_with_the_agents_reason() {
        for by in [
            AllowedBy::Rule("allow-echo".into()),
            AllowedBy::Grant("grant-1".into()),
            AllowedBy::Default,
        ] {
            assert_eq!(tightened(Decision::Allow { by }, Some(WHY)), asks(WHY));
        }
    }

    #[test]
    fn a_question_or_a_refusal_stays_what_it_is() {
        let question = Decision::Ask {
            reason: "rule ask-writes".into(),
            warning: Some("the trifecta".into()),
            rule: Some("ask-writes".into()),
        };
        assert_eq!(tightened(question.clone(), Some(WHY)), question);
        let refusal = Decision::Deny {
            reason: "rule no-echo".into(),
            rule: Some("no-echo".into()),
        };
        assert_eq!(tightened(refusal.clone(), Some(WHY)), refusal);
    }

    #[test]
    fn without_a_tightening_nothing_changes() {
        let allow = Decision::Allow {
            by: AllowedBy::Grant("grant-1".into()),
        };
        assert_eq!(tightened(allow.clone(), None), allow);
        assert_eq!(tightened(asks("policy"), None), asks("policy"));
    }
}
