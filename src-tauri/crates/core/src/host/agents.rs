//! The host's side of the agents feature ([`crate::agents`]): the facade shells use, and the
//! two handles the feature gets: [`AgentHost`] (is a provider configured; run a delegated
//! task, composed in `delegation.rs`) and [`BaseTools`] for the host's tools of a turn.

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Host, HostError, HostTools};
use crate::agent_data::{AgentDataError, AgentName, AgentProfile};
use crate::agents::{
    AgentHost, AgentImportReport, AgentRunNode, Agents, AsAgent, BaseTools, Lineage, RunStateError,
    StateAuthor, StateEntry, StateKey, StateNote, TaskOutcome,
};
use crate::approval::Acting;
use crate::chat::{ToolCall, ToolError};
use crate::ids::{ConversationId, ProviderName, RunId};
use crate::llm::ToolSpec;
use crate::mcp::catalog::ToolResult;
use crate::pipelines::PipelineAgent;

#[async_trait::async_trait]
impl AgentHost for Host {
    fn agents(&self) -> &Agents {
        &self.inner.features.agents
    }

    async fn provider_exists(&self, name: &ProviderName) -> Result<bool, HostError> {
        self.inner.features.models.exists(name).await
    }

    fn run_task(
        &self,
        lineage: Lineage,
        agent: AgentName,
        task: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<TaskOutcome, HostError>> {
        self.run_agent_task(lineage, agent, task, cancel)
    }
}

impl BaseTools for HostTools {
    fn run_as(
        &self,
        call: ToolCall,
        agent: AsAgent,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        HostTools::run_as(self, call, Some(agent))
    }

    fn pipeline_specs_for(&self, profile: &AgentProfile) -> Vec<ToolSpec> {
        HostTools::pipeline_specs_for(self, profile)
    }

    fn offers_pipeline(&self, llm_name: &str) -> bool {
        HostTools::offers_pipeline(self, llm_name)
    }

    fn run_pipeline_as<'a>(
        &'a self,
        llm_name: &'a str,
        arguments: Map<String, Value>,
        acting: &'a Acting,
        profile: &'a AgentProfile,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ToolResult, String>> {
        let agent = PipelineAgent { acting, profile };
        Box::pin(HostTools::run_pipeline_as(
            self,
            llm_name,
            arguments,
            Some(agent),
            cancel,
        ))
    }
}

impl Host {
    /// The agents feature: profiles, run trees, run state.
    pub fn agents(&self) -> &Agents {
        &self.inner.features.agents
    }

    /// An agent name from user input.
    pub fn agent_name(name: &str) -> Result<AgentName, HostError> {
        AgentName::new(name).map_err(|e: AgentDataError| HostError::Invalid(e.to_string()))
    }

    /// Every agent profile, by name.
    pub async fn list_agents(&self) -> Result<Vec<AgentProfile>, HostError> {
        self.agents().list().await
    }

    /// One agent profile.
    pub async fn agent(&self, name: &AgentName) -> Result<AgentProfile, HostError> {
        self.agents().get(name).await
    }

    /// Adds a profile; its name must be free.
    pub async fn add_agent(&self, profile: AgentProfile) -> Result<(), HostError> {
        self.agents().add(self, profile).await
    }

    /// Replaces the profile of the same name.
    pub async fn update_agent(&self, profile: AgentProfile) -> Result<(), HostError> {
        self.agents().update(self, profile).await
    }

    /// Removes a profile. Refused while another profile names it among its delegates.
    pub async fn remove_agent(&self, name: &AgentName) -> Result<(), HostError> {
        self.agents().remove(name).await
    }

    /// Every profile as a TOML file ([`Host::import_agents`] reads it back).
    pub async fn export_agents(&self) -> Result<String, HostError> {
        self.agents().export().await
    }

    /// Reads a TOML file of profiles and saves them all, or none ([`Agents::import`]).
    pub async fn import_agents(
        &self,
        toml: &str,
        replace: bool,
    ) -> Result<AgentImportReport, HostError> {
        self.agents().import(self, toml, replace).await
    }

    /// Parses a run id as the shells take it (`run-` and 32 hex digits).
    pub fn run_id(text: &str) -> Result<RunId, HostError> {
        RunId::parse(text.trim()).map_err(|_| {
            HostError::Invalid(format!(
                "{:?} is not a run id; a run id is `run-` followed by 32 hex digits",
                text.chars().take(80).collect::<String>()
            ))
        })
    }

    /// Writes a new version of `key` in `run`'s state and audits it ([`Agents::state_put`]).
    pub async fn state_put(
        &self,
        run: &RunId,
        key: &str,
        value: &Value,
        author: &StateAuthor,
        expected_version: Option<u32>,
    ) -> Result<StateKey, RunStateError> {
        self.agents()
            .state_put(run, key, value, author, expected_version)
            .await
    }

    /// Appends a note to `run`'s log and audits it (by size, not text).
    pub async fn state_add_note(
        &self,
        run: &RunId,
        author: &StateAuthor,
        text: &str,
    ) -> Result<StateNote, RunStateError> {
        self.agents().state_add_note(run, author, text).await
    }

    /// The newest version of `key`, if it was ever written.
    pub async fn state_get(&self, run: &RunId, key: &str) -> Result<Option<StateEntry>, HostError> {
        self.agents().state_get(run, key).await
    }

    /// Every version of `key`, oldest first.
    pub async fn state_history(
        &self,
        run: &RunId,
        key: &str,
    ) -> Result<Vec<StateEntry>, HostError> {
        self.agents().state_history(run, key).await
    }

    /// The newest version of every key, by key (without values).
    pub async fn state_list(&self, run: &RunId) -> Result<Vec<StateKey>, HostError> {
        self.agents().state_list(run).await
    }

    /// Every note, oldest first.
    pub async fn state_notes(&self, run: &RunId) -> Result<Vec<StateNote>, HostError> {
        self.agents().state_notes(run).await
    }

    /// Answers a call of a built-in state tool ([`Agents::run_state_tool`]).
    pub async fn run_state_tool(
        &self,
        run: &RunId,
        author: &StateAuthor,
        llm_name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Result<String, String>> {
        self.agents()
            .run_state_tool(run, author, llm_name, arguments)
            .await
    }

    /// Every node of every run that worked for `conversation` (runs and their nodes in the
    /// order they started).
    pub async fn conversation_agent_runs(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<AgentRunNode>, HostError> {
        self.agents().conversation_runs(conversation).await
    }

    /// Every node of a run tree, in the order they started (the root first).
    pub async fn agent_run_tree(&self, run: &RunId) -> Result<Vec<AgentRunNode>, HostError> {
        self.agents().run_tree(run).await
    }

    /// The newest runs' roots, newest first.
    pub async fn agent_runs(&self, limit: u32) -> Result<Vec<AgentRunNode>, HostError> {
        self.agents().run_roots(limit).await
    }
}
