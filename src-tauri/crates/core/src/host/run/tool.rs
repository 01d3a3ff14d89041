//! A tool call through the seam, phase by phase (the phases are `run.rs`'s module docs):
//! [`Host::run_tool`] reads as the list of them, each phase a method of its own.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::putback::{self, Crossing};
use super::trail::{decided, Trail};
use super::{denied, tightened, tool_call, Asked, CallOptions, Started};
use crate::approval::audit::{arguments_digest, Actor, AuditEvent, GrantChange, Verdict};
use crate::approval::{Ask, Decision, Origin, RequestKind, Scope};
use crate::error::DeniedBy;
use crate::host::{Host, HostError};
use crate::ids::ToolRef;
use crate::mcp::catalog::{Arguments, Progress, ToolInfo, ToolResult};
use crate::pipelines::Preapproved;
use crate::store::MetricKind;

/// What every phase of one call reads: the tool, who asks, and what its catalog says of it.
struct Target<'a> {
    tool: &'a ToolRef,
    origin: &'a Origin,
    info: Option<&'a ToolInfo>,
}

impl Host {
    /// Runs a tool call through the seam (see the module docs for the phases). Shells run
    /// tools only through this.
    pub async fn run_tool(
        &self,
        tool: &ToolRef,
        arguments: Arguments,
        origin: Origin,
        mut opts: CallOptions,
    ) -> Result<ToolResult, HostError> {
        let run = self.claim_run(opts.run.as_ref(), opts.cancel.take())?;
        // 0. a server that starts when needed is needed now (`host::demand`)
        if !self.inner.servers().contains_key(&tool.server) {
            self.ensure_started(&tool.server).await?;
        }
        // 1. check
        let checked = self.check_call(tool, arguments).await?;
        let at = Target {
            tool,
            origin: &origin,
            info: checked.catalog.tools.iter().find(|t| t.name == *tool.tool),
        };
        let arguments = checked.arguments;
        let mut trail = Trail::new(self, &tool.server, &tool.tool, &origin);
        let audited = putback::as_audited(&arguments);
        trail.note(AuditEvent::proposed(RequestKind::Tool, &audited, &origin));
        // RD-01: values put back from elsewhere than this server: asked, audited (`putback`).
        let crossing = Crossing::in_this_call(&tool.server, &arguments);
        if let Some(c) = &crossing {
            trail.note(c.event());
        }
        // 2. decide
        let decision = self
            .decide_tool(
                &at,
                &arguments,
                opts.ask.as_deref(),
                crossing.as_ref(),
                &mut trail,
            )
            .await?;
        // 3a. approved with its pipeline: only the policy's default question (no rule asked, no
        // warning) about a call that does not write is answered by that approval.
        let preapproved = opts
            .preapproved
            .take()
            .filter(|_| opts.ask.is_none() && crossing.is_none());
        // 3. ask, 4. start
        let (arguments, started, mut trail) = self
            .settle(&at, decision, arguments, preapproved, trail, &run.cancel)
            .await?;
        if let Some(tx) = opts.started.take() {
            let _ = tx.send(started);
        }
        // 5. call, 6. review, 7. note the flow
        self.call_reviewed(
            &at,
            arguments,
            &mut trail,
            &run.cancel,
            opts.progress.take(),
        )
        .await
    }

    /// Phase 2, decide: from the policy in memory, confirmed by the one append that puts
    /// the decision on disk (with the start, when allowed: one sync before the call leaves);
    /// when the policy changed or could not be checked, again from the store. An agent's
    /// `ask` and a crossing put-back tighten what the policy says.
    async fn decide_tool(
        &self,
        at: &Target<'_>,
        arguments: &Arguments,
        ask: Option<&str>,
        crossing: Option<&Crossing>,
        trail: &mut Trail<'_>,
    ) -> Result<Decision, HostError> {
        let call = tool_call(at.tool, at.origin, arguments, at.info);
        let mut from_memory = true;
        loop {
            let cached = if from_memory {
                self.decide_cached(&call, at.info).await?
            } else {
                None
            };
            let (decision, generation) = match cached {
                Some((d, g)) => (d, Some(g)),
                None => (self.decide(&call, at.info).await?, None),
            };
            let decision = tightened(decision, ask);
            let decision = putback::tightened(decision, crossing);
            let (verdict, by, reason) = decided(&decision);
            trail.decided(verdict, by, reason);
            if matches!(decision, Decision::Allow { .. }) {
                trail.note(AuditEvent::Started);
            }
            if trail.commit_decided(generation).await {
                return Ok(decision);
            }
            from_memory = false;
        }
    }

    /// Phase 3, acting on the decision: a refusal ends the call (and its trail); a question
    /// is answered by the pipeline's approval when it covers the call, else by a person.
    /// Returns the arguments the call runs with (the person may have edited them), what its
    /// start tells, and the trail for the call's phases.
    async fn settle<'t>(
        &self,
        at: &Target<'_>,
        decision: Decision,
        arguments: Arguments,
        preapproved: Option<Preapproved>,
        mut trail: Trail<'t>,
        cancel: &CancellationToken,
    ) -> Result<(Arguments, Started, Trail<'t>), HostError> {
        let approved_with = match (&decision, preapproved) {
            (
                Decision::Ask {
                    rule: None,
                    warning: None,
                    ..
                },
                Some(p),
            ) => self.approved_with(p, at.tool, &arguments, at.info).await?,
            _ => None,
        };
        match decision {
            Decision::Allow { by } => Ok((
                arguments,
                Started {
                    allowed_by: Some(by),
                    ..Started::default()
                },
                trail,
            )),
            Decision::Deny { reason, .. } => {
                self.record_refusal(at.tool);
                Err(trail
                    .refuse(denied(at.tool, DeniedBy::Policy, reason))
                    .await)
            }
            Decision::Ask { .. } if approved_with.is_some() => {
                trail.decided(Verdict::Allow, Actor::User, approved_with);
                trail.note(AuditEvent::Started);
                trail.commit().await;
                Ok((arguments, Started::default(), trail))
            }
            Decision::Ask {
                reason, warning, ..
            } => {
                let ask = Ask {
                    server: at.tool.server.clone(),
                    kind: RequestKind::Tool,
                    tool: at.tool.tool.to_string(),
                    arguments: Value::Object(arguments.clone()),
                    origin: at.origin.clone(),
                    hints: at.info.map(ToolInfo::claimed_hints).unwrap_or_default(),
                    // Issue 16: say which placeholders the model wrote were put back.
                    reason: crate::outbound::with_restored_note(reason),
                    warning,
                };
                let (arguments, started, mut trail) =
                    self.ask_for(at, ask, arguments, trail, cancel).await?;
                // 4. start (an allowed call's start went to disk with its decision)
                trail.note(AuditEvent::Started);
                trail.commit().await;
                Ok((arguments, started, trail))
            }
        }
    }

    /// Phase 3, ask a person: a refusal ends the call; an edit is checked and decided again;
    /// a grant the person makes while approving is kept and audited.
    async fn ask_for<'t>(
        &self,
        at: &Target<'_>,
        ask: Ask,
        arguments: Arguments,
        mut trail: Trail<'t>,
        cancel: &CancellationToken,
    ) -> Result<(Arguments, Started, Trail<'t>), HostError> {
        let answer = self.answer_of(at.tool, &mut trail, ask, cancel).await?;
        let (edited, scope, constraints) = match answer {
            Asked::Deny(e) => {
                self.record_refusal(at.tool);
                return Err(trail.refuse(e).await);
            }
            Asked::Allow {
                edited,
                scope,
                constraints,
            } => (edited, scope, constraints),
        };
        let mut started = Started::default();
        let mut arguments = arguments;
        if let Some(edited) = edited {
            trail.note(AuditEvent::Edited {
                before_digest: arguments_digest(&Value::Object(arguments.clone())),
                after: Value::Object(edited.clone()),
            });
            arguments = self
                .redecide(at.tool, edited, at.origin, at.info, &mut trail)
                .await?;
            started.edited = Some(arguments.clone());
        }
        started.granted = self
            .grant(at.tool, at.info, scope, constraints, at.origin)
            .await?;
        if let Some(id) = &started.granted {
            trail.note(AuditEvent::Grant {
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
            });
        }
        Ok((arguments, started, trail))
    }

    /// Phases 5 to 7: calls the server, metered and audited; has the result reviewed when a
    /// person wants to see it first; notes what a model's or an app's result brought into
    /// its conversation (AP-10).
    async fn call_reviewed(
        &self,
        at: &Target<'_>,
        arguments: Arguments,
        trail: &mut Trail<'_>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<ToolResult, HostError> {
        let (tool, origin) = (at.tool, at.origin);
        let began = std::time::Instant::now();
        let meter = self.meter(&tool.server, MetricKind::Tool, &tool.tool, &arguments);
        let result = self
            .call_tool(tool, arguments, cancel.clone(), progress)
            .await;
        self.metered_tool(meter, &result);
        trail.later(match &result {
            Ok(r) => AuditEvent::finished(r, r.is_error, began.elapsed()),
            Err(e) => AuditEvent::failed(e, began.elapsed()),
        });
        let result = self
            .review_result(
                tool,
                at.info,
                origin,
                result?,
                &trail.ctx,
                Some(cancel.clone()),
            )
            .await?;
        // A model's result, and an app's in the conversation that shows it (AP-10), count.
        if let (false, Origin::Model { .. } | Origin::App { .. }) = (result.is_error, origin) {
            if let Some(conversation) = origin.conversation() {
                self.note_flow(conversation, &tool.server).await;
            }
        }
        Ok(result)
    }

    /// Why a call the policy asks about by default is already approved: it is the call its
    /// pipeline's approval computed (same tool, same arguments) and it does not write.
    async fn approved_with(
        &self,
        p: Preapproved,
        tool: &ToolRef,
        arguments: &Arguments,
        info: Option<&ToolInfo>,
    ) -> Result<Option<String>, HostError> {
        if p.tool != *tool
            || p.arguments != *arguments
            || p.digest != info.map(crate::approval::pins::tool_digest)
        {
            return Ok(None);
        }
        Ok((!self.may_write(tool, info).await?)
            .then(|| format!("approved with the pipeline {}", p.label)))
    }
}
