//! The host's side of the chat tool seam: [`HostTools`] implements [`ToolRunner`] for a turn.
//!
//! The seam is defined in `chat` and filled here because `chat` sits below `host` in
//! ARCHITECTURE's table: the turn loop must not know the host, only what it asks of a runner.
//! Every call a model makes goes through [`Host::run_tool`] (argument validation first,
//! TD-07; then the approval seam, AP-01/AP-03; then the server), with the model's conversation
//! as its origin, so nothing a model asks for reaches a server around the governed seam.
//! Saved pipelines marked to be offered are local tools of the runner (`pipeline_tools`):
//! each runs through the same seam, approved by a person as a whole.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{agent_refusal, CallOptions, Host, HostError};
use crate::agent_data::AgentProfile;
use crate::agents::AsAgent;
use crate::approval::Origin;
use crate::chat::{ToolCall, ToolError, ToolRunner};
use crate::error::DeniedBy;
use crate::ids::{ConversationId, ToolRef};
use crate::llm::ToolSpec;
use crate::mcp::catalog::ToolResult;
use crate::mcp::naming::ToolNames;
use crate::mcp::McpError;
use crate::pipelines::{pipeline_spec, OfferedPipeline, PipelineAgent};

/// The enabled tools of every running server, run through the host.
pub struct HostTools {
    host: Host,
    names: ToolNames,
    specs: Vec<ToolSpec>,
    conversation: ConversationId,
    /// The pipelines offered in this turn, each bound to the version it runs.
    pipelines: Vec<OfferedPipeline>,
}

impl HostTools {
    /// Snapshots the running servers' enabled tools for a turn of `conversation`.
    pub async fn load(host: &Host, conversation: &ConversationId) -> Result<Arc<Self>, HostError> {
        let names = host.tool_names().await?;
        let mut specs = Vec::new();
        let catalogs = host.catalogs().await?;
        // A pipeline store that cannot be read costs the pipelines, not the conversation.
        let pipelines = host.offered_pipelines(&catalogs).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "pipelines not offered: the store could not be read");
            Vec::new()
        });
        for c in catalogs {
            // Last-known tools are a preview of a server that is not running: never offered.
            if c.last_known_ms.is_some() {
                continue;
            }
            for t in &c.catalog.tools {
                if c.disabled_tools.contains(&t.name) {
                    continue;
                }
                let r = ToolRef {
                    server: c.server.clone(),
                    tool: t.name.as_str().into(),
                };
                let Some(name) = names.llm_name(&r) else {
                    continue;
                };
                specs.push(ToolSpec {
                    name: name.to_owned(),
                    description: t
                        .description
                        .clone()
                        .or_else(|| t.title.clone())
                        .unwrap_or_default(),
                    input_schema: t.input_schema.clone(),
                });
            }
        }
        specs.extend(pipelines.iter().map(pipeline_spec));
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Arc::new(Self {
            host: host.clone(),
            names,
            specs,
            conversation: conversation.clone(),
            pipelines,
        }))
    }

    /// The pipeline tools `profile`'s agent may run: every step in its scope, none denied.
    /// (`specs` filtered by `resolve` drops them: they are no server's tools.)
    pub fn pipeline_specs_for(&self, profile: &AgentProfile) -> Vec<ToolSpec> {
        self.pipelines
            .iter()
            .filter(|o| agent_refusal(&o.pipeline, profile).is_none())
            .map(pipeline_spec)
            .collect()
    }

    /// Whether `llm_name` is a pipeline offered in this turn.
    pub fn offers_pipeline(&self, llm_name: &str) -> bool {
        self.pipelines.iter().any(|o| o.llm_name == llm_name)
    }

    /// Runs the pipeline offered as `llm_name`, as `agent` when one asks (its scope and
    /// tightenings apply to every step). `Err` is a sentence for the model.
    pub async fn run_pipeline_as(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        agent: Option<PipelineAgent<'_>>,
        cancel: CancellationToken,
    ) -> Result<ToolResult, String> {
        let Some(offered) = self.pipelines.iter().find(|o| o.llm_name == llm_name) else {
            return Err(format!(
                "There is no tool named {llm_name:?}. Use one of the tools offered."
            ));
        };
        self.host
            .run_offered_pipeline(offered, arguments, &self.conversation, agent, cancel)
            .await
    }
}

impl HostTools {
    /// Runs `call` as the conversation's model would, or as `agent` when one asks.
    pub fn run_as(
        &self,
        call: ToolCall,
        agent: Option<AsAgent>,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async move {
            let (acting, ask) = match agent {
                Some(a) => (Some(a.acting), a.ask),
                None => (None, None),
            };
            let ToolCall {
                tool,
                arguments,
                cancel,
                progress,
                started,
            } = call;
            self.host
                .run_tool(
                    &tool,
                    arguments,
                    Origin::Model {
                        conversation: self.conversation.clone(),
                        agent: acting,
                    },
                    CallOptions {
                        cancel: Some(cancel),
                        ask,
                        ..CallOptions::default()
                    }
                    .progress(progress)
                    .started(started),
                )
                .await
                .map_err(for_model)
        })
    }
}

/// A host error as the model should read it.
fn for_model(e: HostError) -> ToolError {
    match e {
        HostError::Denied {
            reason,
            by: DeniedBy::Person,
            ..
        } => ToolError::DeniedByPerson { reason },
        HostError::Denied { reason, .. } => ToolError::DeniedByPolicy { reason },
        HostError::Mcp(McpError::InvalidArguments { errors, .. }) => {
            ToolError::InvalidArguments { errors }
        }
        HostError::Mcp(McpError::Cancelled) => ToolError::Cancelled,
        other => ToolError::Failed(Box::new(other)),
    }
}

impl ToolRunner for HostTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        self.names.resolve(llm_name).cloned()
    }

    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        self.run_as(call, None)
    }

    fn is_local(&self, llm_name: &str) -> bool {
        self.offers_pipeline(llm_name)
    }

    /// An offered pipeline sends one tool call per step: a budget counts them all.
    fn calls_in(&self, llm_name: &str) -> usize {
        self.pipelines
            .iter()
            .find(|o| o.llm_name == llm_name)
            .map_or(1, |o| o.pipeline.steps.len())
    }

    fn run_local(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        let name = llm_name.to_owned();
        Box::pin(async move { self.run_pipeline_as(&name, arguments, None, cancel).await })
    }
}
