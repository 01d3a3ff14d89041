//! Using running servers: tools, resources, prompts.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{Host, HostError};
use crate::events::HostEvent;
use crate::ids::{ServerId, ToolRef};
use crate::mcp::catalog::{
    Arguments, CatalogSnapshot, Progress, PromptResult, ResourceContents, ToolResult,
};
use crate::mcp::connection::{ProgressSink, RequestOptions};
use crate::mcp::naming::ToolNames;
use crate::mcp::McpError;

/// Options for a tool call made through the host.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Cancels the call (the server is sent `notifications/cancelled`).
    pub cancel: Option<CancellationToken>,
    /// Receives progress as it arrives (also published as [`HostEvent::Progress`]).
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
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

impl Host {
    fn running(&self, id: &ServerId) -> Result<crate::mcp::supervisor::ServerHandle, HostError> {
        self.handle(id).ok_or_else(|| {
            HostError::Mcp(McpError::NotRunning {
                server: id.clone(),
                status: "not started".into(),
            })
        })
    }

    /// The tools of a server the user switched off, cached in memory: a tool call must not pay
    /// for a database read. The cache is dropped whenever a switch changes.
    async fn disabled_tools(&self, id: &ServerId) -> Result<Arc<HashSet<String>>, HostError> {
        if let Some(d) = self.inner.disabled().get(id) {
            return Ok(d.clone());
        }
        let set: Arc<HashSet<String>> = Arc::new(
            self.inner
                .store
                .disabled_tools(id)
                .await?
                .into_iter()
                .collect(),
        );
        self.inner.disabled().insert(id.clone(), set.clone());
        Ok(set)
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

    /// Calls a tool of a running server. Unknown and disabled tools are refused before
    /// anything is sent.
    pub async fn call_tool(
        &self,
        tool: &ToolRef,
        arguments: Arguments,
        opts: CallOptions,
    ) -> Result<ToolResult, HostError> {
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
        if self
            .disabled_tools(&tool.server)
            .await?
            .contains(&*tool.tool)
        {
            return Err(McpError::ToolDisabled {
                server: tool.server.clone(),
                tool: tool.tool.to_string(),
            }
            .into());
        }
        // Invalid arguments never reach the server (TD-07).
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
