//! The tools a turn offers the model, and how a call the model asks for reaches a server.
//!
//! [`ToolRunner`] is the seam: the turn loop asks it for specs, resolves names through it and
//! runs calls with it, so the loop is tested with a scripted runner and used with
//! [`HostTools`], which sends every call through [`Host::run_tool`]: argument validation
//! first (TD-07), then the approval seam (AP-01/AP-03), then the server.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::approval::Origin;
use crate::host::{CallOptions, Host, HostError, Started};
use crate::ids::ConversationId;
use crate::ids::ToolRef;
use crate::llm::ToolSpec;
use crate::mcp::catalog::{Progress, ToolResult};
use crate::mcp::naming::ToolNames;
use crate::mcp::McpError;

/// Runs the tools of one turn.
pub trait ToolRunner: Send + Sync {
    /// The tools offered to the model.
    fn specs(&self) -> Vec<ToolSpec>;
    /// The server tool behind an LLM-facing name.
    fn resolve(&self, llm_name: &str) -> Option<ToolRef>;
    /// Runs one call. `started` fires once it is approved and sent, with the arguments when
    /// the person edited them. `Err` is a sentence for the model (denied, invalid, failed).
    fn run(
        &self,
        tool: ToolRef,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Progress>,
        started: oneshot::Sender<Started>,
    ) -> BoxFuture<'_, Result<ToolResult, String>>;
}

/// The enabled tools of every running server, run through the host.
pub struct HostTools {
    host: Host,
    names: ToolNames,
    specs: Vec<ToolSpec>,
    conversation: ConversationId,
}

impl HostTools {
    /// Snapshots the running servers' enabled tools for a turn of `conversation`.
    pub async fn load(host: &Host, conversation: &ConversationId) -> Result<Arc<Self>, HostError> {
        let names = host.tool_names().await?;
        let mut specs = Vec::new();
        for c in host.catalogs().await? {
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
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Arc::new(Self {
            host: host.clone(),
            names,
            specs,
            conversation: conversation.clone(),
        }))
    }
}

/// A host error as the model should read it.
fn for_model(e: HostError) -> String {
    match e {
        HostError::Denied { reason, .. } if reason.starts_with("the user said no") => {
            format!("The user did not allow this call ({reason}).")
        }
        HostError::Denied { reason, .. } => {
            format!("The approval policy did not allow this call: {reason}.")
        }
        HostError::Mcp(McpError::InvalidArguments { errors, .. }) => format!(
            "The arguments do not match the tool's input schema: {}",
            errors.join("; ")
        ),
        HostError::Mcp(McpError::Cancelled) => "The call was cancelled.".into(),
        other => format!("The call failed: {other}"),
    }
}

impl ToolRunner for HostTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        self.names.resolve(llm_name).cloned()
    }

    fn run(
        &self,
        tool: ToolRef,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Progress>,
        started: oneshot::Sender<Started>,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        Box::pin(async move {
            self.host
                .run_tool(
                    &tool,
                    arguments,
                    Origin::Model {
                        conversation: self.conversation.clone(),
                    },
                    CallOptions {
                        cancel: Some(cancel),
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
