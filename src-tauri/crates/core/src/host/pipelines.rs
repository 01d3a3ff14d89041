//! The host's side of the pipelines feature ([`crate::pipelines`]): the [`PipelineHost`]
//! handle it runs through (catalogs, starting servers, the run registry, the policy preview,
//! the whole-pipeline question and the governed call), and the methods the shells already
//! call, each one line over the feature.
//!
//! The policy preview (`pipelines/policy.rs`) stays here: it is the seam's own decision
//! (`decide_call_counting`, the rules, the server tags, the limits' counts) taken for every
//! step of a pipeline, and moving it out would hand the feature the seam's internals.

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{CallOptions, Host, HostError, ServerCatalog};
use crate::approval::{Ask, Origin};
use crate::catalog::{CatalogSnapshot, ToolResult};
use crate::ids::{ConversationId, RunId, ServerId, ToolRef};
use crate::pipeline_data::{MappingError, Pipeline, PipelineName, Plan};
use crate::pipelines::{
    ClaimedRun, Listed, OfferedPipeline, PipelineAgent, PipelineError, PipelineHost,
    PipelineOutcome, PipelineRun, Pipelines, Preview, StepCall, StoredPipeline,
};

mod policy;

fn listed(c: &ServerCatalog) -> Listed {
    Listed {
        server: c.server.clone(),
        catalog: c.catalog.clone(),
        disabled_tools: c.disabled_tools.clone(),
        live: c.last_known_ms.is_none(),
    }
}

#[async_trait]
impl PipelineHost for Host {
    async fn catalogs(&self) -> Result<Vec<Listed>, HostError> {
        Ok(Host::catalogs(self).await?.iter().map(listed).collect())
    }

    fn listed(&self, server: &ServerId) -> Option<CatalogSnapshot> {
        self.handle(server).map(|h| h.catalog())
    }

    async fn ensure_started(&self, server: &ServerId) -> Result<(), HostError> {
        Host::ensure_started(self, server).await.map(drop)
    }

    fn claim_run(
        &self,
        run: Option<&RunId>,
        cancel: Option<CancellationToken>,
    ) -> Result<ClaimedRun<'_>, HostError> {
        let claimed = Host::claim_run(self, run, cancel)?;
        Ok(ClaimedRun::new(claimed.cancel.clone(), claimed))
    }

    async fn preview(
        &self,
        p: &Pipeline,
        plan: &Plan,
        inputs: &Map<String, Value>,
        origin: &Origin,
        tightened: &std::collections::HashMap<String, String>,
    ) -> Result<Preview, HostError> {
        self.policy_preview(p, plan, inputs, origin, tightened)
            .await
    }

    async fn ask_whole(
        &self,
        ask: Ask,
        cancel: &CancellationToken,
    ) -> Result<Result<(), Option<String>>, HostError> {
        Host::ask_whole(self, ask, cancel).await
    }

    async fn run_tool(
        &self,
        tool: &ToolRef,
        arguments: Map<String, Value>,
        origin: Origin,
        call: StepCall,
    ) -> Result<ToolResult, HostError> {
        let opts = CallOptions {
            cancel: Some(call.cancel),
            ask: call.ask,
            preapproved: Some(call.preapproved),
            ..CallOptions::default()
        };
        Host::run_tool(self, tool, arguments, origin, opts).await
    }
}

impl Host {
    /// The pipelines feature.
    pub fn pipelines(&self) -> &Pipelines {
        &self.inner.features.pipelines
    }

    /// Stores a definition ([`Pipelines::add`]).
    pub async fn add_pipeline(
        &self,
        p: &Pipeline,
    ) -> Result<(StoredPipeline, bool), PipelineError> {
        self.pipelines().add(p).await
    }

    /// The newest version of every pipeline.
    pub async fn list_pipelines(&self) -> Result<Vec<StoredPipeline>, PipelineError> {
        self.pipelines().list().await
    }

    /// One version of a pipeline, the newest when `version` is `None`.
    pub async fn pipeline(
        &self,
        name: &PipelineName,
        version: Option<u32>,
    ) -> Result<StoredPipeline, PipelineError> {
        self.pipelines().get(name, version).await
    }

    /// Checks a pipeline against the catalogs as they are ([`Pipelines::check`]).
    pub async fn check_pipeline(
        &self,
        p: &Pipeline,
    ) -> Result<Result<Plan, Vec<MappingError>>, PipelineError> {
        self.pipelines().check(self, p).await
    }

    /// Checks a pipeline against the live catalogs ([`Pipelines::check_live`]).
    pub async fn check_live(
        &self,
        p: &Pipeline,
    ) -> Result<Result<Plan, Vec<MappingError>>, PipelineError> {
        self.pipelines().check_live(self, p).await
    }

    /// Runs a stored pipeline ([`Pipelines::run`]); `run` (from [`Host::open_run`]) lets
    /// [`Host::cancel_run`] stop it.
    pub async fn run_pipeline(
        &self,
        name: &PipelineName,
        version: Option<u32>,
        inputs: Map<String, Value>,
        origin: Origin,
        run: Option<RunId>,
    ) -> Result<PipelineOutcome, PipelineError> {
        self.pipelines()
            .run(self, name, version, inputs, origin, run)
            .await
    }

    /// Runs the pipeline version of a past run again with the same inputs.
    pub async fn replay_pipeline_run(
        &self,
        run_id: &str,
        origin: Origin,
        run: Option<RunId>,
    ) -> Result<PipelineOutcome, PipelineError> {
        self.pipelines().replay(self, run_id, origin, run).await
    }

    /// Past runs, newest first (of one pipeline when `name` is given).
    pub async fn pipeline_runs(
        &self,
        name: Option<&PipelineName>,
    ) -> Result<Vec<PipelineRun>, PipelineError> {
        self.pipelines().runs(name).await
    }

    /// One past run with its steps.
    pub async fn pipeline_run(&self, run_id: &str) -> Result<PipelineOutcome, PipelineError> {
        self.pipelines().past_run(run_id).await
    }

    /// The pipelines offered to models now, given the turn's `catalogs`
    /// ([`Pipelines::offered`]).
    pub async fn offered_pipelines(
        &self,
        catalogs: &[ServerCatalog],
    ) -> Result<Vec<OfferedPipeline>, HostError> {
        let listed: Vec<Listed> = catalogs.iter().map(listed).collect();
        self.pipelines().offered(&listed).await
    }

    /// Runs an offered pipeline for a model of `conversation` (as `agent` when one asks).
    /// `Err` is a sentence for the model.
    pub async fn run_offered_pipeline(
        &self,
        offered: &OfferedPipeline,
        arguments: Map<String, Value>,
        conversation: &ConversationId,
        agent: Option<PipelineAgent<'_>>,
        cancel: CancellationToken,
    ) -> Result<ToolResult, String> {
        self.pipelines()
            .run_offered(self, offered, arguments, conversation, agent, cancel)
            .await
    }
}
