//! Using running servers: tools, resources, prompts.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{Host, HostError};
use crate::approval::audit::{
    arguments_digest, Actor, AuditContext, AuditEvent, CallRef, GrantChange, Verdict,
};
use crate::approval::{Answer, ApprovalRequest, Ask, Call, Decision, Origin, Scope};
use crate::events::HostEvent;
use crate::ids::{ServerId, ToolRef};
use crate::mcp::catalog::{
    Arguments, CatalogSnapshot, Progress, PromptResult, ResourceContents, ToolResult,
};
use crate::mcp::connection::{Connection, ProgressSink, RequestOptions};
use crate::mcp::naming::ToolNames;
use crate::mcp::McpError;

/// Options for a tool call made through the host.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Cancels the call (the server is sent `notifications/cancelled`).
    pub cancel: Option<CancellationToken>,
    /// Receives progress as it arrives (also published as [`HostEvent::Progress`]).
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// Fired by [`Host::run_tool`] once the call is allowed, just before it is sent; dropped
    /// unfired when it is refused.
    pub started: Option<tokio::sync::oneshot::Sender<Started>>,
}

/// What [`Host::run_tool`] tells its caller when the call passed approval and is sent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Started {
    /// The arguments the person edited before approving; the call runs with these instead of
    /// the requested ones.
    pub edited: Option<Arguments>,
    /// The rule or grant that allowed it without asking; `None` when a person approved it.
    pub allowed_by: Option<String>,
    /// The grant the person made while approving ("this conversation" / "always").
    pub granted: Option<String>,
}

/// One server's catalog with its tool switches.
#[derive(Clone, Debug, Serialize)]
pub struct ServerCatalog {
    /// The server.
    pub server: ServerId,
    /// What it offers.
    pub catalog: CatalogSnapshot,
    /// Tools the user switched off.
    pub disabled_tools: Vec<String>,
}

/// What [`Host::check_call`] hands on: the catalog and connection it looked at, and the
/// arguments it validated.
struct Checked {
    catalog: CatalogSnapshot,
    conn: Result<Arc<Connection>, McpError>,
    arguments: Arguments,
}

impl Host {
    fn running(&self, id: &ServerId) -> Result<crate::mcp::supervisor::ServerHandle, HostError> {
        self.handle(id).ok_or_else(|| {
            HostError::Mcp(McpError::NotRunning {
                server: id.clone(),
                status: "not started".into(),
            })
        })
    }

    /// The tools of a server that are not offered: those the user switched off, and those held
    /// for review because they are new or changed since approved (TD-02, see `host::pins`).
    async fn disabled_tools(&self, id: &ServerId) -> Result<Arc<HashSet<String>>, HostError> {
        let off = self.switched_off(id).await?;
        self.with_held(id, off).await
    }

    /// The catalogs of every started server.
    pub async fn catalogs(&self) -> Result<Vec<ServerCatalog>, HostError> {
        let handles: Vec<_> = self.inner.servers().values().cloned().collect();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(ServerCatalog {
                server: h.id().clone(),
                catalog: h.catalog(),
                disabled_tools: self.disabled_tools(h.id()).await?.iter().cloned().collect(),
            });
        }
        Ok(out)
    }

    /// The LLM-facing names of every enabled tool of every started server.
    pub async fn tool_names(&self) -> Result<ToolNames, HostError> {
        let mut refs = Vec::new();
        for c in self.catalogs().await? {
            for t in &c.catalog.tools {
                if !c.disabled_tools.contains(&t.name) {
                    refs.push(ToolRef {
                        server: c.server.clone(),
                        tool: t.name.as_str().into(),
                    });
                }
            }
        }
        Ok(ToolNames::build(refs))
    }

    /// Switches a tool on or off.
    pub async fn set_tool_enabled(&self, tool: &ToolRef, enabled: bool) -> Result<(), HostError> {
        self.server(&tool.server).await?;
        self.inner
            .store
            .set_tool_enabled(&tool.server, &tool.tool, enabled)
            .await?;
        self.inner.disabled().remove(&tool.server);
        let _ = self.inner.events.send(HostEvent::CatalogChanged {
            server: tool.server.clone(),
        });
        Ok(())
    }

    /// Refuses, before anything is sent or asked, a call to an unknown or disabled tool or
    /// with arguments its schema rejects (TD-07). Returns the catalog and connection to use.
    async fn check_call(&self, tool: &ToolRef, arguments: Arguments) -> Result<Checked, HostError> {
        // Take what the call needs under the map's lock instead of cloning the whole handle.
        let (catalog, conn) = {
            let map = self.inner.servers();
            let handle = map.get(&tool.server).ok_or_else(|| McpError::NotRunning {
                server: tool.server.clone(),
                status: "not started".into(),
            })?;
            (handle.catalog(), handle.connection())
        };
        let Some(validator) = catalog.validators.0.get(&*tool.tool) else {
            return Err(McpError::UnknownTool {
                server: tool.server.clone(),
                tool: tool.tool.to_string(),
            }
            .into());
        };
        // TD-02: assessed against this very catalog, so a tool changed a moment ago is held.
        if let Some(reason) = self.held_tool(&tool.server, &catalog, &tool.tool).await? {
            return Err(HostError::Held {
                server: tool.server.clone(),
                tool: tool.tool.to_string(),
                reason,
            });
        }
        if self.switched_off(&tool.server).await?.contains(&*tool.tool) {
            return Err(McpError::ToolDisabled {
                server: tool.server.clone(),
                tool: tool.tool.to_string(),
            }
            .into());
        }
        // Moved into a Value and back: validation must not copy the arguments.
        let as_value = serde_json::Value::Object(arguments);
        if let Err(errors) = validator.check(&as_value) {
            return Err(McpError::InvalidArguments {
                tool: tool.tool.to_string(),
                errors,
            }
            .into());
        }
        let serde_json::Value::Object(arguments) = as_value else {
            return Err(
                McpError::Protocol("internal: arguments stopped being an object".into()).into(),
            );
        };
        Ok(Checked {
            catalog,
            conn,
            arguments,
        })
    }

    /// Runs a tool call through the approval seam (AP-01, AP-03): checked first, then decided
    /// by the policy; when the policy asks, the call waits until a shell answers its nonce (or
    /// `opts.cancel` fires, which withdraws the request). Shells run tools only through this.
    pub async fn run_tool(
        &self,
        tool: &ToolRef,
        arguments: Arguments,
        origin: Origin,
        mut opts: CallOptions,
    ) -> Result<ToolResult, HostError> {
        let Checked {
            catalog,
            mut arguments,
            ..
        } = self.check_call(tool, arguments).await?;
        let info = catalog.tools.iter().find(|t| t.name == *tool.tool);
        let hints = info.map(|t| t.claimed_hints()).unwrap_or_default();
        let call = Call {
            tool,
            origin: &origin,
            arguments: &arguments,
            claims_read_only: hints.iter().any(|h| h == "read-only"),
        };
        let mut started = Started::default();
        // Every step of the call goes to the audit log (OB-01); the log never fails the call.
        let audit = AuditContext::for_call(tool, &origin, CallRef::random());
        let mut entries = vec![(AuditEvent::proposed(&arguments, &origin), audit.clone())];
        // Deciding and counting are one step, so parallel calls cannot all slip under a limit.
        let decision = {
            let _one_at_a_time = self.inner.policy_lock.lock().await;
            let (d, limited) = self.decide_call(&call, info).await?;
            // Hits are counted only for limits; an unlimited rule costs no disk sync.
            if let (Decision::Allow { rule }, true) = (&d, limited) {
                self.rule_hit(rule, &origin).await;
            }
            d
        };
        let decided = |decision, by, reason| {
            (
                AuditEvent::Decided {
                    decision,
                    by,
                    reason,
                },
                audit.clone(),
            )
        };
        match decision {
            Decision::Allow { rule } => {
                let by = if rule.starts_with("grant-") {
                    Actor::Grant {
                        grant_id: rule.clone(),
                    }
                } else {
                    Actor::Policy {
                        rule: Some(rule.clone()),
                    }
                };
                entries.push(decided(Verdict::Allow, by, None));
                started.allowed_by = Some(rule);
            }
            Decision::Deny { reason, rule } => {
                entries.push(decided(
                    Verdict::Deny,
                    Actor::Policy { rule },
                    Some(reason.clone()),
                ));
                self.audit_all(entries).await;
                return Err(HostError::Denied {
                    server: tool.server.clone(),
                    tool: tool.tool.to_string(),
                    reason,
                });
            }
            Decision::Ask {
                reason,
                warning,
                rule,
            } => {
                entries.push(decided(
                    Verdict::Ask,
                    Actor::Policy { rule },
                    Some(match &warning {
                        Some(w) => format!("{reason}; {w}"),
                        None => reason.clone(),
                    }),
                ));
                self.audit_all(std::mem::take(&mut entries)).await;
                let ticket = self.inner.approvals.ask(Ask {
                    server: tool.server.clone(),
                    tool: tool.tool.to_string(),
                    arguments: serde_json::Value::Object(arguments.clone()),
                    origin: origin.clone(),
                    hints,
                    reason,
                    warning,
                });
                let cancel = opts.cancel.clone().unwrap_or_default();
                let answer = tokio::select! {
                    answer = ticket.answer() => answer,
                    () = cancel.cancelled() => {
                        self.audit(
                            AuditEvent::Decided {
                                decision: Verdict::Deny,
                                by: Actor::System,
                                reason: Some("withdrawn: the run was cancelled".into()),
                            },
                            audit.clone(),
                        )
                        .await;
                        return Err(McpError::Cancelled.into());
                    }
                };
                match answer {
                    Answer::Allow {
                        arguments: edited,
                        scope,
                        constraints,
                    } => {
                        entries.push(decided(Verdict::Allow, Actor::User, None));
                        if let Some(edited) = edited {
                            entries.push((
                                AuditEvent::Edited {
                                    before_digest: arguments_digest(&serde_json::Value::Object(
                                        arguments.clone(),
                                    )),
                                    after: serde_json::Value::Object(edited.clone()),
                                },
                                audit.clone(),
                            ));
                            // Checked again by `call_tool`; the answer was checked when given.
                            arguments = edited.clone();
                            started.edited = Some(edited);
                        }
                        started.granted =
                            self.grant(tool, info, scope, constraints, &origin).await?;
                        if let Some(id) = &started.granted {
                            entries.push((
                                AuditEvent::Grant {
                                    change: GrantChange::Created,
                                    grant_id: Some(id.clone()),
                                    scope: Some(
                                        match scope {
                                            Scope::Conversation => "conversation",
                                            _ => "always",
                                        }
                                        .into(),
                                    ),
                                    by: Actor::User,
                                },
                                audit.clone(),
                            ));
                        }
                    }
                    Answer::Deny { reason } => {
                        entries.push(decided(Verdict::Deny, Actor::User, reason.clone()));
                        self.audit_all(entries).await;
                        return Err(HostError::Denied {
                            server: tool.server.clone(),
                            tool: tool.tool.to_string(),
                            reason: match reason {
                                Some(r) => format!("the user said no: {r}"),
                                None => "the user said no".into(),
                            },
                        });
                    }
                }
            }
        }
        entries.push((AuditEvent::Started, audit.clone()));
        self.audit_all(entries).await;
        if let Some(tx) = opts.started.take() {
            let _ = tx.send(started);
        }
        let began = std::time::Instant::now();
        let cancel = opts.cancel.clone();
        let result = self.call_tool(tool, arguments, opts).await;
        let finished = match &result {
            Ok(r) => AuditEvent::finished(r, r.is_error, began.elapsed()),
            Err(e) => AuditEvent::failed(e, began.elapsed()),
        };
        // After the fact: queued, not waited for (readers flush first).
        self.audit_later(finished, audit.clone());
        let result = match result {
            // AP-05: the person may read it before the model does.
            Ok(r) => {
                self.review_result(tool, info, &origin, r, &audit, cancel)
                    .await
            }
            Err(e) => Err(e),
        };
        if let (Ok(r), Origin::Model { conversation }) = (&result, &origin) {
            if !r.is_error {
                self.note_flow(conversation, &tool.server).await;
            }
        }
        result
    }

    /// Tool calls waiting for the user, oldest first.
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        self.inner.approvals.list()
    }

    /// Answers a pending request by its nonce; anything else is refused (AP-03). Edited
    /// arguments are checked against the tool's input schema first (TD-07): invalid ones are
    /// refused and the request stays pending, so the person can fix them.
    pub async fn answer_approval(&self, nonce: &str, answer: Answer) -> Result<(), HostError> {
        if let Answer::Allow {
            arguments: Some(edited),
            ..
        } = &answer
        {
            let request = self
                .inner
                .approvals
                .get(nonce)
                .ok_or(crate::approval::ApprovalError::UnknownNonce)?;
            let tool = ToolRef {
                server: request.server,
                tool: request.tool.as_str().into(),
            };
            self.check_call(&tool, edited.clone()).await?;
        }
        Ok(self.inner.approvals.answer(nonce, answer)?)
    }

    /// Calls a tool of a running server without asking anyone: for the CLI's `call` (the
    /// person typed the call) and for runs already approved through [`Host::run_tool`].
    /// Unknown and disabled tools and invalid arguments are refused before anything is sent.
    pub async fn call_tool(
        &self,
        tool: &ToolRef,
        arguments: Arguments,
        opts: CallOptions,
    ) -> Result<ToolResult, HostError> {
        let Checked {
            conn, arguments, ..
        } = self.check_call(tool, arguments).await?;
        let conn = conn?;
        let call_id = self.inner.next_call.fetch_add(1, Ordering::Relaxed);
        let span =
            tracing::info_span!("tool_call", server = %tool.server, tool = %tool.tool, call_id);
        // Progress goes to the caller and out as a host event, straight from the reader task:
        // no channel or task per call on the hot path.
        let events = self.inner.events.clone();
        let caller = opts.progress;
        let what = tool.clone();
        let sink: ProgressSink = Arc::new(move |p: Progress| {
            if let Some(c) = &caller {
                let _ = c.send(p.clone());
            }
            let _ = events.send(HostEvent::Progress {
                server: what.server.clone(),
                tool: what.tool.to_string(),
                call_id,
                progress: p,
            });
        });
        let result = conn
            .call_tool(
                &tool.tool,
                arguments,
                RequestOptions {
                    timeout: None,
                    cancel: opts.cancel,
                    progress: Some(sink),
                },
            )
            .instrument(span)
            .await;
        Ok(result?)
    }

    /// Reads a resource from a running server. Nothing is fetched by the host itself (RN-03).
    pub async fn read_resource(
        &self,
        server: &ServerId,
        uri: &str,
    ) -> Result<Vec<ResourceContents>, HostError> {
        let conn = self.running(server)?.connection()?;
        Ok(conn.read_resource(uri).await?)
    }

    /// Expands a prompt.
    pub async fn get_prompt(
        &self,
        server: &ServerId,
        name: &str,
        arguments: &HashMap<String, String>,
    ) -> Result<PromptResult, HostError> {
        let conn = self.running(server)?.connection()?;
        Ok(conn.get_prompt(name, arguments).await?)
    }

    /// Completion values for a prompt argument.
    pub async fn complete_prompt_argument(
        &self,
        server: &ServerId,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, HostError> {
        let conn = self.running(server)?.connection()?;
        Ok(conn
            .complete_prompt_argument(prompt, argument, value)
            .await?)
    }
}
