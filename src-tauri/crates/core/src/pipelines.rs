//! Tool pipelines (issue 15, point 6): stored definitions, their check against the live
//! catalog, and runs.
//!
//! A feature of its own (issue 26): [`Pipelines`] owns the pipeline tables
//! (`pipelines/store.rs`) and everything a run decides (the inputs' check, the plan, the
//! question it is approved by, each step's arguments and whether its result can be used, the
//! run's record, the tool a model is offered). What only the host can do (start a server, read
//! the live catalogs, claim a run, decide a step as the seam would, ask a person, send a call
//! through the governed seam) it asks through [`PipelineHost`], which the host implements in
//! `host/pipelines.rs`; it never sees the host itself.
//!
//! A run is checked as a whole before its first step: the servers it uses are started, every
//! step's tool must be offered (running, switched on, not held for review), every mapping
//! must pass `pipeline_data::check` against the tools' schemas, and the person's policy must
//! not refuse any step ([`PipelineHost::preview`]: decided as the seam would, an argument
//! mapped from an earlier step counting as unknown, so a rule that could refuse refuses). Only
//! then is the person asked about the run as a whole, and only then does step 1 run. A step
//! whose tool's definition changed since the run was checked is not sent (TD-02).
//! Each step is an ordinary tool call through the one governed seam
//! ([`PipelineHost::run_tool`]): argument validation, holds, the policy (a step that writes
//! still asks unless a rule allows it), the audit log. A step's `structuredContent` is
//! validated against its tool's `outputSchema` before anything maps from it; a result that
//! does not match, a tool error or a refusal stops the run there. Every step is recorded with
//! its arguments and result, so a run can be shown, and replayed with the same inputs on the
//! same version.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::approval::audit::Recorder;
use crate::approval::{Ask, Origin};
use crate::catalog::{CatalogSnapshot, ToolResult};
use crate::error::HostError;
use crate::ids::{RunId, ServerId, ToolRef};
use crate::pipeline_data::{MappingError, Pipeline, PipelineName, Plan};
use crate::store::{Store, StoreError};

mod plan;
mod preview;
mod run;
mod store;
mod tools;

pub use preview::{Preview, StepAsks, StepRefusal};
pub use store::{PipelineRun, PipelineStepRecord, RunStatus, StoredPipeline};
pub use tools::{
    agent_refusal, input_schema, is_pipeline_tool_name, name_pipelines, pipeline_in_scope,
    pipeline_spec, OfferedPipeline, PipelineAgent, PIPELINE_TOOL_PREFIX,
};

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

fn join(errors: &[MappingError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<StoreError> for PipelineError {
    fn from(e: StoreError) -> Self {
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

/// One step's call as its pipeline was approved (the tool and the arguments the plan computed
/// for it), carried to the governed seam so it asks only what the approval does not cover.
#[derive(Clone, Debug)]
pub struct Preapproved {
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

/// How one step is sent through the seam besides its tool, arguments and origin.
#[derive(Debug)]
pub struct StepCall {
    /// The run's cancellation: stopping the run stops the step under way.
    pub cancel: CancellationToken,
    /// Why a person must be asked even where the policy allows the step (an agent's `ask`).
    pub ask: Option<String>,
    /// The step as its pipeline was approved.
    pub preapproved: Preapproved,
}

/// One server's tools as a pipeline is checked against them.
#[derive(Clone, Debug)]
pub struct Listed {
    /// The server.
    pub server: ServerId,
    /// What it offers (or offered when it last ran).
    pub catalog: CatalogSnapshot,
    /// Tools switched off or held for review.
    pub disabled_tools: Vec<String>,
    /// Whether it runs now (else `catalog` holds its last-known tools).
    pub live: bool,
}

/// A run claimed for the operation under way: `cancel` fires when it is stopped; the claim is
/// given back when this is dropped.
pub struct ClaimedRun<'a> {
    /// Fires when the run is cancelled.
    pub cancel: CancellationToken,
    _claim: Box<dyn Send + 'a>,
}

impl<'a> ClaimedRun<'a> {
    /// A claim held by `claim` (dropped when the run ends) and cancelled by `cancel`.
    pub fn new(cancel: CancellationToken, claim: impl Send + 'a) -> Self {
        Self {
            cancel,
            _claim: Box::new(claim),
        }
    }
}

/// What a pipeline needs from the host: the servers and their catalogs, the run registry, the
/// seam's decision and question, and the governed call. Nothing else of the host is in reach.
#[async_trait]
pub trait PipelineHost: Send + Sync {
    /// Every server's catalog with its switched-off and held tools: the running ones live, the
    /// others as they last listed them.
    async fn catalogs(&self) -> Result<Vec<Listed>, HostError>;

    /// The catalog a started server lists now; `None` when it is not started.
    fn listed(&self, server: &ServerId) -> Option<CatalogSnapshot>;

    /// Starts `server` when it is not running.
    async fn ensure_started(&self, server: &ServerId) -> Result<(), HostError>;

    /// Claims the run `run` (opened by a shell) for this pipeline; without one the pipeline
    /// runs privately, cancelled through `cancel` (a chat turn's) or never.
    fn claim_run(
        &self,
        run: Option<&RunId>,
        cancel: Option<CancellationToken>,
    ) -> Result<ClaimedRun<'_>, HostError>;

    /// What the person's policy says of `p`'s steps (checked into `plan`) when run as
    /// `origin` with `inputs`, its caller asking about the steps in `tightened`. Sends nothing.
    async fn preview(
        &self,
        p: &Pipeline,
        plan: &Plan,
        inputs: &Map<String, Value>,
        origin: &Origin,
        tightened: &std::collections::HashMap<String, String>,
    ) -> Result<Preview, HostError>;

    /// Asks a person about the run as a whole (always, whatever the rules say about its
    /// steps), audited; `Err(reason)` inside: the person said no.
    async fn ask_whole(
        &self,
        ask: Ask,
        cancel: &CancellationToken,
    ) -> Result<Result<(), Option<String>>, HostError>;

    /// One step through the governed seam.
    async fn run_tool(
        &self,
        tool: &ToolRef,
        arguments: Map<String, Value>,
        origin: Origin,
        call: StepCall,
    ) -> Result<ToolResult, HostError>;
}

/// How a run is driven besides its inputs and origin.
#[derive(Debug, Default)]
pub(crate) struct Driven {
    /// The run (opened by a shell) that stops it when cancelled.
    pub(crate) run: Option<RunId>,
    /// The caller's cancellation (a chat turn's), when there is no run.
    pub(crate) cancel: Option<CancellationToken>,
    /// Per step id, why a person must be asked about that step even where the policy (or the
    /// pipeline's approval) would allow it: an agent profile's `ask` tightening.
    pub(crate) asks: std::collections::HashMap<String, String>,
}

/// The pipelines feature: the stored definitions and runs, and running them.
#[derive(Clone)]
pub struct Pipelines {
    store: Store,
    audit: Arc<dyn Recorder>,
}

impl std::fmt::Debug for Pipelines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipelines").finish_non_exhaustive()
    }
}

impl Pipelines {
    /// The feature over the host's store and audit log.
    pub(crate) fn new(store: Store, audit: Arc<dyn Recorder>) -> Self {
        Self { store, audit }
    }

    /// Stores a definition: as version 1, or the next version when it differs from the newest
    /// one of its name (the same definition again changes nothing). Returns it as stored and
    /// whether it was new.
    pub async fn add(&self, p: &Pipeline) -> Result<(StoredPipeline, bool), PipelineError> {
        crate::pipeline_data::validate(p)
            .map_err(crate::pipeline_data::DefinitionError::Invalid)?;
        let (version, added) = self.store.add_pipeline(p).await?;
        let stored = self.get(&p.name, Some(version)).await?;
        Ok((stored, added))
    }

    /// The newest version of every pipeline.
    pub async fn list(&self) -> Result<Vec<StoredPipeline>, PipelineError> {
        Ok(self.store.pipelines().await?)
    }

    /// One version of a pipeline, the newest when `version` is `None`.
    pub async fn get(
        &self,
        name: &PipelineName,
        version: Option<u32>,
    ) -> Result<StoredPipeline, PipelineError> {
        self.store.pipeline(name, version).await?.ok_or_else(|| {
            PipelineError::NotFound(match version {
                Some(v) => format!("{name} version {v}"),
                None => name.to_string(),
            })
        })
    }

    /// Runs a stored pipeline with `inputs`, each step through the governed seam as `origin`.
    /// `run` (opened by a shell) lets the shell stop it. Mistakes found before the first step
    /// are errors and record nothing; once a step ran, the outcome says how the run ended (a
    /// failed step ends it as failed).
    pub async fn run(
        &self,
        host: &dyn PipelineHost,
        name: &PipelineName,
        version: Option<u32>,
        inputs: Map<String, Value>,
        origin: Origin,
        run: Option<RunId>,
    ) -> Result<PipelineOutcome, PipelineError> {
        let stored = self.get(name, version).await?;
        let how = Driven {
            run,
            ..Driven::default()
        };
        self.run_stored(host, &stored.pipeline, inputs, origin, how, None)
            .await
    }

    /// Runs the pipeline version of a past run again with the same inputs.
    pub async fn replay(
        &self,
        host: &dyn PipelineHost,
        run_id: &str,
        origin: Origin,
        run: Option<RunId>,
    ) -> Result<PipelineOutcome, PipelineError> {
        let (past, _) = self
            .store
            .pipeline_run(run_id)
            .await?
            .ok_or_else(|| PipelineError::NoRun(run_id.to_owned()))?;
        let name = PipelineName::new(&past.name)
            .map_err(|e| PipelineError::NotFound(format!("{:?}: {e}", past.name)))?;
        let stored = self.get(&name, Some(past.version)).await?;
        let Value::Object(inputs) = past.inputs else {
            return Err(PipelineError::Inputs(
                "the stored inputs of that run are not an object".into(),
            ));
        };
        let how = Driven {
            run,
            ..Driven::default()
        };
        self.run_stored(host, &stored.pipeline, inputs, origin, how, Some(run_id))
            .await
    }

    /// Past runs, newest first (of one pipeline when `name` is given).
    pub async fn runs(
        &self,
        name: Option<&PipelineName>,
    ) -> Result<Vec<PipelineRun>, PipelineError> {
        Ok(self.store.pipeline_runs(name, RUNS_LISTED).await?)
    }

    /// One past run with its steps.
    pub async fn past_run(&self, run_id: &str) -> Result<PipelineOutcome, PipelineError> {
        let (run, steps) = self
            .store
            .pipeline_run(run_id)
            .await?
            .ok_or_else(|| PipelineError::NoRun(run_id.to_owned()))?;
        Ok(PipelineOutcome { run, steps })
    }
}
