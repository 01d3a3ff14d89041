//! A pipeline's check against the catalogs and its run: checked, approved as a whole, then
//! step by step through the governed seam, each step recorded (see the module docs of
//! [`crate::pipelines`]).

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::plan::{arguments_of, check_inputs, result_problem, say_asks, whole_ask};
use super::{
    Driven, PipelineError, PipelineHost, PipelineOutcome, Pipelines, Preapproved, RunStatus,
    StepCall, StepRefusal,
};
use crate::approval::audit::{Actor, AuditContext, AuditEvent, CallRef, Verdict};
use crate::approval::{Ask, Origin};
use crate::ids::{RunId, ServerId, ToolRef};
use crate::pipeline_data::{check, MappingError, Pipeline, Plan, PlannedStep, Step, ToolSchemas};

/// Where a step runs: its run, the label approvals show, the run's cancel, the origin and how
/// the run is driven.
struct StepAt<'a> {
    run: &'a str,
    label: &'a str,
    cancel: &'a CancellationToken,
    origin: &'a Origin,
    how: &'a Driven,
}

impl Pipelines {
    /// Checks a pipeline against the catalogs as they are (a stopped server's last-known
    /// tools count; it starts when the pipeline runs). `Ok(Err(..))` lists the mistakes.
    pub async fn check(
        &self,
        host: &dyn PipelineHost,
        p: &Pipeline,
    ) -> Result<Result<Plan, Vec<MappingError>>, PipelineError> {
        let catalogs = host.catalogs().await?;
        let lookup = |server: &ServerId, tool: &str| -> Result<ToolSchemas, String> {
            let Some(c) = catalogs.iter().find(|c| &c.server == server) else {
                return Err(format!(
                    "the server {server} is not running and has never listed its tools"
                ));
            };
            let Some(t) = c.catalog.tools.iter().find(|t| t.name == tool) else {
                return Err(format!("{server} offers no tool of that name"));
            };
            if c.disabled_tools.iter().any(|d| d == tool) {
                return Err(format!(
                    "it is switched off, or held for review since it changed (`switchboard server review {server}`)"
                ));
            }
            Ok(ToolSchemas {
                input: t.input_schema.clone(),
                output: t.output_schema.clone(),
            })
        };
        Ok(check(p, &lookup))
    }

    /// Checks a pipeline against the live catalogs: the servers it uses are started first (as
    /// a run does), so a stopped server's tools are known. `Ok(Err(..))` lists the mistakes.
    pub async fn check_live(
        &self,
        host: &dyn PipelineHost,
        p: &Pipeline,
    ) -> Result<Result<Plan, Vec<MappingError>>, PipelineError> {
        for step in &p.steps {
            let (server, _) = step
                .tool_ref()
                .map_err(crate::pipeline_data::DefinitionError::Invalid)?;
            if host.listed(&server).is_none() {
                host.ensure_started(&server).await?;
            }
        }
        self.check(host, p).await
    }

    /// Runs `p` (a stored version) with `inputs`: checked, approved as a whole, then step by
    /// step through the governed seam as `origin`, stopped and tightened as `how` says.
    pub(crate) async fn run_stored(
        &self,
        host: &dyn PipelineHost,
        p: &Pipeline,
        inputs: Map<String, Value>,
        origin: Origin,
        how: Driven,
        replay_of: Option<&str>,
    ) -> Result<PipelineOutcome, PipelineError> {
        check_inputs(p, &inputs)?;
        // The run is claimed here, once, for every step: stopping it stops the step under way
        // and no later step starts.
        let claimed = host.claim_run(how.run.as_ref(), how.cancel.clone())?;
        let cancel = claimed.cancel.clone();
        let plan = self
            .check_live(host, p)
            .await?
            .map_err(PipelineError::Mapping)?;
        // The definitions the plan was checked and shown with (TD-02): a step whose tool
        // changed since, even with the change reviewed and accepted, is not sent under it.
        let approved = definitions(host, &plan);
        let id = RunId::random().to_string();
        let inputs_value = Value::Object(inputs.clone());
        let whole = Whole {
            p,
            plan: &plan,
            inputs: &inputs,
            origin: &origin,
            how: &how,
            replay_of,
        };
        self.approve_whole(host, &whole, &cancel).await?;
        let label = format!("{}@{} (run {id})", p.name, p.version);
        self.store
            .start_pipeline_run(&id, p, &inputs_value, replay_of)
            .await?;
        let mut structured: Vec<Option<Value>> = Vec::with_capacity(plan.steps.len());
        let mut failure = None;
        for ((step, planned), digest) in p.steps.iter().zip(&plan.steps).zip(&approved) {
            let at = StepAt {
                run: &id,
                label: &label,
                cancel: &cancel,
                origin: &origin,
                how: &how,
            };
            let ran = self
                .run_step(host, &at, p, step, planned, digest, &inputs, &structured)
                .await?;
            match ran {
                Ok(out) => structured.push(out),
                Err(why) => {
                    failure = Some(why);
                    break;
                }
            }
        }
        let status = if failure.is_some() {
            RunStatus::Failed
        } else {
            RunStatus::Succeeded
        };
        self.store
            .end_pipeline_run(&id, status, failure.as_deref())
            .await?;
        drop(claimed);
        self.past_run(&id).await
    }

    /// Asks the person to approve the run as a whole, every step and what flows where shown,
    /// before anything is recorded or sent; a step the policy would refuse refuses the run
    /// before the question (else the steps before it would run, and perhaps write).
    async fn approve_whole(
        &self,
        host: &dyn PipelineHost,
        w: &Whole<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), PipelineError> {
        let inputs_value = Value::Object(w.inputs.clone());
        let mut ask = whole_ask(w.p, w.plan, &inputs_value, w.origin, w.replay_of)?;
        let preview = host
            .preview(w.p, w.plan, w.inputs, w.origin, &w.how.asks)
            .await?;
        if let Some(refusal) = preview.refusal {
            self.audit_refusal(&ask, &refusal).await;
            return Err(PipelineError::Refused(Box::new(refusal)));
        }
        // The question says which steps will still ask when they run.
        say_asks(&mut ask, &preview.asks);
        if let Err(reason) = host.ask_whole(ask, cancel).await? {
            return Err(PipelineError::Declined(reason));
        }
        Ok(())
    }

    /// Records a run refused by the policy preview as the pipeline's question would have
    /// been (`ask`): proposed, and denied by the policy rule, with the refusal's words.
    async fn audit_refusal(&self, ask: &Ask, refusal: &StepRefusal) {
        let ctx = AuditContext::for_request(&ask.server, &ask.tool, &ask.origin, CallRef::random());
        let arguments = ask.arguments.as_object().cloned().unwrap_or_default();
        let events = vec![
            AuditEvent::proposed(ask.kind, &arguments, &ask.origin),
            AuditEvent::Decided {
                decision: Verdict::Deny,
                by: Actor::Policy {
                    rule: refusal.rule.clone(),
                },
                reason: Some(format!("the pipeline was not run: {refusal}")),
            },
        ];
        self.audit
            .record(events.into_iter().map(|e| (e, ctx.clone())).collect())
            .await;
    }

    /// One step through the governed seam, recorded: its structured output, or why the run
    /// stops here (`Ok(Err(..))`); `Err` only when the store fails.
    #[allow(clippy::too_many_arguments)] // the step, its plan and what earlier steps gave
    async fn run_step(
        &self,
        host: &dyn PipelineHost,
        at: &StepAt<'_>,
        p: &Pipeline,
        step: &Step,
        planned: &PlannedStep,
        digest: &Option<String>,
        inputs: &Map<String, Value>,
        structured: &[Option<Value>],
    ) -> Result<Result<Option<Value>, String>, PipelineError> {
        let index = u32::try_from(planned.index).unwrap_or(u32::MAX);
        let tool = ToolRef {
            server: planned.server.clone(),
            tool: planned.tool.as_str().into(),
        };
        if let Err(why) = unchanged(host, &tool, digest.as_deref()).await {
            return Ok(Err(format!(
                "step {index} ({:?}, {}): {why}",
                step.id, step.tool
            )));
        }
        let arguments = match arguments_of(step, inputs, &p.steps, structured) {
            Ok(a) => a,
            Err(why) => return Ok(Err(format!("step {index} ({:?}): {why}", step.id))),
        };
        self.store
            .start_pipeline_step(
                at.run,
                index,
                &step.id,
                &step.tool,
                &Value::Object(arguments.clone()),
            )
            .await?;
        let call = StepCall {
            cancel: at.cancel.clone(),
            ask: at.how.asks.get(&step.id).cloned(),
            preapproved: Preapproved {
                label: at.label.to_owned(),
                tool: tool.clone(),
                arguments: arguments.clone(),
                digest: digest.clone(),
            },
        };
        let called = host
            .run_tool(&tool, arguments, at.origin.clone(), call)
            .await;
        let (result, error) = match called {
            Err(e) => (None, Some(e.to_string())),
            Ok(r) => {
                let error = result_problem(output_schema(host, &tool).as_ref(), &r);
                (Some(r), error)
            }
        };
        let result_value = result.as_ref().and_then(|r| serde_json::to_value(r).ok());
        let status = if error.is_some() {
            RunStatus::Failed
        } else {
            RunStatus::Succeeded
        };
        self.store
            .end_pipeline_step(
                at.run,
                index,
                status,
                result_value.as_ref(),
                error.as_deref(),
            )
            .await?;
        Ok(match error {
            Some(why) => Err(format!(
                "step {index} ({:?}, {}): {why}",
                step.id, step.tool
            )),
            None => Ok(result.and_then(|r| r.structured_content)),
        })
    }
}

/// The run's parts the whole-pipeline question is made of.
struct Whole<'a> {
    p: &'a Pipeline,
    plan: &'a Plan,
    inputs: &'a Map<String, Value>,
    origin: &'a Origin,
    how: &'a Driven,
    replay_of: Option<&'a str>,
}

/// Whether `tool` is still defined as when its pipeline was approved (`approved`, from
/// [`definition_digest`]); a server stopped meanwhile (idle) is started first, as the seam
/// would. `Err` says why not, for the run's record.
async fn unchanged(
    host: &dyn PipelineHost,
    tool: &ToolRef,
    approved: Option<&str>,
) -> Result<(), String> {
    if host.listed(&tool.server).is_none() {
        host.ensure_started(&tool.server)
            .await
            .map_err(|e| e.to_string())?;
    }
    if definition_digest(host, tool).as_deref() == approved {
        return Ok(());
    }
    Err(
        "its tool changed since the pipeline was approved (or is no longer listed), so \
         it was not sent; run the pipeline again to approve it as it is now"
            .into(),
    )
}

/// The digests of the definitions of `plan`'s tools, step by step, as listed now.
fn definitions(host: &dyn PipelineHost, plan: &Plan) -> Vec<Option<String>> {
    plan.steps
        .iter()
        .map(|s| {
            definition_digest(
                host,
                &ToolRef {
                    server: s.server.clone(),
                    tool: s.tool.as_str().into(),
                },
            )
        })
        .collect()
}

/// `tool`'s `outputSchema` as its running server lists it now.
fn output_schema(host: &dyn PipelineHost, tool: &ToolRef) -> Option<Value> {
    let catalog = host.listed(&tool.server)?;
    let info = catalog.tools.iter().find(|t| t.name == *tool.tool)?;
    info.output_schema.clone()
}

/// The digest of `tool`'s definition as the running server lists it now (TD-02), `None`
/// when it is not listed.
fn definition_digest(host: &dyn PipelineHost, tool: &ToolRef) -> Option<String> {
    let catalog = host.listed(&tool.server)?;
    let info = catalog.tools.iter().find(|t| t.name == *tool.tool)?;
    Some(crate::approval::pins::tool_digest(info))
}
