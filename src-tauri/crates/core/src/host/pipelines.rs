//! Tool pipelines (issue 15, point 6): stored definitions, their check against the live
//! catalog, and runs.
//!
//! A run is checked as a whole before its first step: the servers it uses are started, every
//! step's tool must be offered (running, switched on, not held for review), every mapping
//! must pass `pipeline_data::check` against the tools' schemas, and the person's policy must
//! not refuse any step (`pipelines_policy`: decided as the seam would, an argument mapped from
//! an earlier step counting as unknown, so a rule that could refuse refuses). Only then is the
//! person asked about the run as a whole, and only then does step 1 run. A step whose tool's
//! definition changed since the run was checked is not sent (TD-02).
//! Each step is an ordinary tool call through [`Host::run_tool`], the one governed seam:
//! argument validation, holds, the policy (a step that writes still asks unless a rule allows
//! it), the audit log. A step's `structuredContent` is validated against its tool's
//! `outputSchema` before anything maps from it; a result that does not match, a tool error or
//! a refusal stops the run there. Every step is recorded with its arguments and result, so a
//! run can be shown, and replayed with the same inputs on the same version.

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{CallOptions, Host, HostError};
use crate::approval::Origin;
use crate::ids::{RunId, ServerId, ToolRef};
use crate::pipeline_data::{
    check, MappingError, Pipeline, PipelineName, Plan, PlannedStep, Step, ToolSchemas,
};
use crate::pipelines::{PipelineRun, PipelineStepRecord, RunStatus, StoredPipeline};

mod plan;
mod policy;

use plan::{arguments_of, check_inputs, result_problem, say_asks, whole_ask};
pub use policy::StepRefusal;

/// The most runs listed at once.
pub const RUNS_LISTED: u32 = 200;

/// Why a pipeline operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The host failed (storage, a server that would not start, ...).
    #[error(transparent)]
    Host(#[from] HostError),
    /// No pipeline (or version) of that name.
    #[error("there is no pipeline {0}; `switchboard pipeline list` shows them")]
    NotFound(String),
    /// No run with that id.
    #[error("there is no pipeline run {0}; `switchboard pipeline runs` lists them")]
    NoRun(String),
    /// The definition is invalid.
    #[error(transparent)]
    Definition(#[from] crate::pipeline_data::DefinitionError),
    /// The mappings do not fit the tools; nothing ran.
    #[error("the pipeline was not run, nothing was called: {}", join(.0))]
    Mapping(Vec<MappingError>),
    /// The inputs given do not fit the declared ones; nothing ran.
    #[error("the pipeline was not run, nothing was called: {0}")]
    Inputs(String),
    /// The person's policy would refuse a step (or could, depending on an earlier step's
    /// result): found before the whole-pipeline question, so nothing was asked, sent or
    /// recorded as a run; the refusal is in the audit log.
    #[error("the pipeline was not run, nothing was called: {0}")]
    Refused(Box<StepRefusal>),
    /// The person said no to the pipeline as a whole; nothing ran or was recorded.
    #[error("the pipeline was not run, nothing was called: the user said no{}", .0.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Declined(Option<String>),
}

/// One step's call as its pipeline was approved (the tool and the arguments the plan computed
/// for it), carried to [`Host::run_tool`] in `CallOptions::preapproved`.
#[derive(Clone, Debug)]
pub(crate) struct Preapproved {
    /// `name@version` and the run, for the audit log.
    pub(crate) label: String,
    /// The step's tool.
    pub(crate) tool: ToolRef,
    /// The step's arguments.
    pub(crate) arguments: Map<String, Value>,
    /// The digest of the tool's definition when the run was approved: a different definition
    /// at call time is not covered by the approval (TD-02).
    pub(crate) digest: Option<String>,
}

/// How a run is driven besides its inputs and origin.
#[derive(Debug, Default)]
pub(crate) struct Driven {
    /// The run ([`Host::open_run`]) that [`Host::cancel_run`] stops it by.
    pub(crate) run: Option<RunId>,
    /// The caller's cancellation (a chat turn's), when there is no run.
    pub(crate) cancel: Option<tokio_util::sync::CancellationToken>,
    /// Per step id, why a person must be asked about that step even where the policy (or the
    /// pipeline's approval) would allow it: an agent profile's `ask` tightening.
    pub(crate) asks: std::collections::HashMap<String, String>,
}

fn join(errors: &[MappingError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<crate::store::StoreError> for PipelineError {
    fn from(e: crate::store::StoreError) -> Self {
        Self::Host(e.into())
    }
}

/// A run as it ended: its record and its steps.
#[derive(Clone, Debug, Serialize)]
pub struct PipelineOutcome {
    /// The run.
    pub run: PipelineRun,
    /// Its steps, in order, as far as it got.
    pub steps: Vec<PipelineStepRecord>,
}

impl Host {
    /// Stores a definition: as version 1, or the next version when it differs from the newest
    /// one of its name (the same definition again changes nothing). Returns it as stored and
    /// whether it was new.
    pub async fn add_pipeline(
        &self,
        p: &Pipeline,
    ) -> Result<(StoredPipeline, bool), PipelineError> {
        crate::pipeline_data::validate(p)
            .map_err(crate::pipeline_data::DefinitionError::Invalid)?;
        let (version, added) = self.inner.store.add_pipeline(p).await?;
        let stored = self.pipeline(&p.name, Some(version)).await?;
        Ok((stored, added))
    }

    /// The newest version of every pipeline.
    pub async fn list_pipelines(&self) -> Result<Vec<StoredPipeline>, PipelineError> {
        Ok(self.inner.store.pipelines().await?)
    }

    /// One version of a pipeline, the newest when `version` is `None`.
    pub async fn pipeline(
        &self,
        name: &PipelineName,
        version: Option<u32>,
    ) -> Result<StoredPipeline, PipelineError> {
        self.inner
            .store
            .pipeline(name, version)
            .await?
            .ok_or_else(|| {
                PipelineError::NotFound(match version {
                    Some(v) => format!("{name} version {v}"),
                    None => name.to_string(),
                })
            })
    }

    /// Checks a pipeline against the catalogs as they are (a stopped server's last-known
    /// tools count; it starts when the pipeline runs). `Ok(Err(..))` lists the mistakes.
    pub async fn check_pipeline(
        &self,
        p: &Pipeline,
    ) -> Result<Result<Plan, Vec<MappingError>>, PipelineError> {
        let catalogs = self.catalogs().await?;
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
        p: &Pipeline,
    ) -> Result<Result<Plan, Vec<MappingError>>, PipelineError> {
        for step in &p.steps {
            let (server, _) = step
                .tool_ref()
                .map_err(crate::pipeline_data::DefinitionError::Invalid)?;
            if self.handle(&server).is_none() {
                self.ensure_started(&server).await?;
            }
        }
        self.check_pipeline(p).await
    }

    /// Runs a stored pipeline with `inputs`, each step through the governed seam as `origin`.
    /// `run` (from [`Host::open_run`]) lets [`Host::cancel_run`] stop it. Mistakes found
    /// before the first step are errors and record nothing; once a step ran, the outcome says
    /// how the run ended (a failed step ends it as failed).
    pub async fn run_pipeline(
        &self,
        name: &PipelineName,
        version: Option<u32>,
        inputs: Map<String, Value>,
        origin: Origin,
        run: Option<RunId>,
    ) -> Result<PipelineOutcome, PipelineError> {
        let stored = self.pipeline(name, version).await?;
        let how = Driven {
            run,
            ..Driven::default()
        };
        self.run_stored(&stored.pipeline, inputs, origin, how, None)
            .await
    }

    /// Runs the pipeline version of a past run again with the same inputs.
    pub async fn replay_pipeline_run(
        &self,
        run_id: &str,
        origin: Origin,
        run: Option<RunId>,
    ) -> Result<PipelineOutcome, PipelineError> {
        let (past, _) = self
            .inner
            .store
            .pipeline_run(run_id)
            .await?
            .ok_or_else(|| PipelineError::NoRun(run_id.to_owned()))?;
        let name = PipelineName::new(&past.name)
            .map_err(|e| PipelineError::NotFound(format!("{:?}: {e}", past.name)))?;
        let stored = self.pipeline(&name, Some(past.version)).await?;
        let Value::Object(inputs) = past.inputs else {
            return Err(PipelineError::Inputs(
                "the stored inputs of that run are not an object".into(),
            ));
        };
        let how = Driven {
            run,
            ..Driven::default()
        };
        self.run_stored(&stored.pipeline, inputs, origin, how, Some(run_id))
            .await
    }

    /// Past runs, newest first (of one pipeline when `name` is given).
    pub async fn pipeline_runs(
        &self,
        name: Option<&PipelineName>,
    ) -> Result<Vec<PipelineRun>, PipelineError> {
        Ok(self.inner.store.pipeline_runs(name, RUNS_LISTED).await?)
    }

    /// One past run with its steps.
    pub async fn pipeline_run(&self, run_id: &str) -> Result<PipelineOutcome, PipelineError> {
        let (run, steps) = self
            .inner
            .store
            .pipeline_run(run_id)
            .await?
            .ok_or_else(|| PipelineError::NoRun(run_id.to_owned()))?;
        Ok(PipelineOutcome { run, steps })
    }

    /// Runs `p` (a stored version) with `inputs`: checked, approved as a whole, then step by
    /// step through the governed seam as `origin`, stopped and tightened as `how` says.
    pub(crate) async fn run_stored(
        &self,
        p: &Pipeline,
        inputs: Map<String, Value>,
        origin: Origin,
        how: Driven,
        replay_of: Option<&str>,
    ) -> Result<PipelineOutcome, PipelineError> {
        check_inputs(p, &inputs)?;
        // The run is claimed here, once, for every step: stopping it stops the step under way
        // and no later step starts.
        let claimed = self.claim_run(how.run.as_ref(), how.cancel.clone())?;
        let cancel = claimed.cancel.clone();
        let plan = self.check_live(p).await?.map_err(PipelineError::Mapping)?;
        // The definitions the plan was checked and shown with (TD-02): a step whose tool
        // changed since, even with the change reviewed and accepted, is not sent under it.
        let approved = self.definitions(&plan);
        let id = RunId::random().to_string();
        let inputs_value = Value::Object(inputs.clone());
        self.approve_whole(p, &plan, &inputs, &origin, &how, replay_of, &cancel)
            .await?;
        let label = format!("{}@{} (run {id})", p.name, p.version);
        self.inner
            .store
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
                .run_step(&at, p, step, planned, digest, &inputs, &structured)
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
        self.inner
            .store
            .end_pipeline_run(&id, status, failure.as_deref())
            .await?;
        drop(claimed);
        self.pipeline_run(&id).await
    }

    /// Asks the person to approve the run as a whole, every step and what flows where shown,
    /// before anything is recorded or sent; a step the policy would refuse refuses the run
    /// before the question (else the steps before it would run, and perhaps write).
    #[allow(clippy::too_many_arguments)] // the run's parts, each read once; a struct would only rename them
    async fn approve_whole(
        &self,
        p: &Pipeline,
        plan: &Plan,
        inputs: &Map<String, Value>,
        origin: &Origin,
        how: &Driven,
        replay_of: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(), PipelineError> {
        let inputs_value = Value::Object(inputs.clone());
        let mut ask = whole_ask(p, plan, &inputs_value, origin, replay_of)?;
        let preview = self
            .policy_preview(p, plan, inputs, origin, &how.asks)
            .await?;
        if let Some(refusal) = preview.refusal {
            self.audit_refusal(&ask, &refusal).await;
            return Err(PipelineError::Refused(Box::new(refusal)));
        }
        // The question says which steps will still ask when they run.
        say_asks(&mut ask, &preview.asks);
        if let Err(reason) = self.ask_whole(ask, cancel).await? {
            return Err(PipelineError::Declined(reason));
        }
        Ok(())
    }

    /// One step through the governed seam, recorded: its structured output, or why the run
    /// stops here (`Ok(Err(..))`); `Err` only when the store fails.
    #[allow(clippy::too_many_arguments)] // the step, its plan and what earlier steps gave
    async fn run_step(
        &self,
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
        if let Err(why) = self.unchanged(&tool, digest.as_deref()).await {
            return Ok(Err(format!(
                "step {index} ({:?}, {}): {why}",
                step.id, step.tool
            )));
        }
        let arguments = match arguments_of(step, inputs, &p.steps, structured) {
            Ok(a) => a,
            Err(why) => return Ok(Err(format!("step {index} ({:?}): {why}", step.id))),
        };
        self.inner
            .store
            .start_pipeline_step(
                at.run,
                index,
                &step.id,
                &step.tool,
                &Value::Object(arguments.clone()),
            )
            .await?;
        let opts = CallOptions {
            cancel: Some(at.cancel.clone()),
            ask: at.how.asks.get(&step.id).cloned(),
            preapproved: Some(Preapproved {
                label: at.label.to_owned(),
                tool: tool.clone(),
                arguments: arguments.clone(),
                digest: digest.clone(),
            }),
            ..CallOptions::default()
        };
        let called = self
            .run_tool(&tool, arguments, at.origin.clone(), opts)
            .await;
        let (result, error) = match called {
            Err(e) => (None, Some(e.to_string())),
            Ok(r) => {
                let error = result_problem(self.output_schema(&tool).as_ref(), &r);
                (Some(r), error)
            }
        };
        let result_value = result.as_ref().and_then(|r| serde_json::to_value(r).ok());
        let status = if error.is_some() {
            RunStatus::Failed
        } else {
            RunStatus::Succeeded
        };
        self.inner
            .store
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

/// Where a step runs: its run, the label approvals show, the run's cancel, the origin and how
/// the run is driven.
struct StepAt<'a> {
    run: &'a str,
    label: &'a str,
    cancel: &'a CancellationToken,
    origin: &'a Origin,
    how: &'a Driven,
}
