//! Using running servers: their catalogs, tool switches, the checks every tool call passes
//! first, and the crate-private last step of a call. The governed entry points are in
//! `host::run`.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{Host, HostError};
use crate::events::HostEvent;
use crate::ids::{ServerId, ToolRef};
use crate::mcp::catalog::{Arguments, CatalogSnapshot, Progress, ToolResult};
use crate::mcp::connection::{Connection, ProgressSink, RequestOptions};
use crate::mcp::naming::ToolNames;
use crate::mcp::McpError;

/// One server's catalog with its tool switches.
#[derive(Clone, Debug, Serialize)]
pub struct ServerCatalog {
    /// The server.
    pub server: ServerId,
    /// What it offers.
    pub catalog: CatalogSnapshot,
    /// Tools the user switched off.
    pub disabled_tools: Vec<String>,
    /// Set when the server is not running: the catalog holds the tools it offered when it
    /// last ran, listed at this time (ms since the Unix epoch). They are shown, never offered
    /// to a model nor called; the server starts when they are needed (`host::demand`).
    pub last_known_ms: Option<i64>,
}

/// What [`Host::check_call`] hands on: the catalog and connection it looked at, and the
/// arguments it validated.
pub(super) struct Checked {
    pub(super) catalog: CatalogSnapshot,
    conn: Result<Arc<Connection>, McpError>,
    pub(super) arguments: Arguments,
    /// The server's use, marked busy for the length of the call.
    pub(super) activity: Arc<crate::supervisor::activity::Activity>,
}

impl Host {
    pub(super) fn running(
        &self,
        id: &ServerId,
    ) -> Result<crate::supervisor::ServerHandle, HostError> {
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

    /// The catalogs of every started server, then the last-known tools of every enabled
    /// server that is not running (marked by [`ServerCatalog::last_known_ms`]).
    pub async fn catalogs(&self) -> Result<Vec<ServerCatalog>, HostError> {
        let handles: Vec<_> = self.inner.servers().values().cloned().collect();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(ServerCatalog {
                server: h.id().clone(),
                catalog: h.catalog(),
                disabled_tools: self.disabled_tools(h.id()).await?.iter().cloned().collect(),
                last_known_ms: None,
            });
        }
        let enabled: HashSet<ServerId> = self
            .inner
            .store
            .list_servers()
            .await?
            .into_iter()
            .filter(|s| s.enabled)
            .map(|s| s.id)
            .collect();
        for last in self.inner.store.last_tools().await? {
            if !enabled.contains(&last.server) || out.iter().any(|c| c.server == last.server) {
                continue;
            }
            out.push(ServerCatalog {
                disabled_tools: self
                    .switched_off(&last.server)
                    .await?
                    .iter()
                    .cloned()
                    .collect(),
                server: last.server,
                catalog: Arc::new(crate::mcp::catalog::Catalog {
                    tools: last.tools,
                    ..Default::default()
                }),
                last_known_ms: Some(last.seen_at_ms),
            });
        }
        Ok(out)
    }

    /// The LLM-facing names of every enabled tool of every started server.
    pub async fn tool_names(&self) -> Result<ToolNames, HostError> {
        let mut refs = Vec::new();
        for c in self.catalogs().await? {
            if c.last_known_ms.is_some() {
                continue;
            }
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
        self.audit_config(
            crate::approval::audit::ConfigChange::ToolSwitch,
            Some(&tool.server),
            serde_json::json!({ "tool": &*tool.tool, "enabled": enabled }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::CatalogChanged {
            server: tool.server.clone(),
        });
        Ok(())
    }

    /// Refuses, before anything is sent or asked, a call to an unknown or disabled tool or
    /// with arguments its schema rejects (TD-07). Returns the catalog and connection to use.
    pub(super) async fn check_call(
        &self,
        tool: &ToolRef,
        arguments: Arguments,
    ) -> Result<Checked, HostError> {
        // Take what the call needs under the map's lock instead of cloning the whole handle.
        let (catalog, conn, activity) = {
            let map = self.inner.servers();
            let handle = map.get(&tool.server).ok_or_else(|| McpError::NotRunning {
                server: tool.server.clone(),
                status: "not started".into(),
            })?;
            (
                handle.catalog(),
                handle.connection(),
                handle.activity().clone(),
            )
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
            activity,
        })
    }

    /// Calls a tool of a running server without asking anyone: the last step of
    /// [`Host::run_tool`], crate-private so that no shell can reach a server around the seam
    /// (AP-09). Unknown and disabled tools and invalid arguments are refused before anything
    /// is sent (the catalog may have changed while a person decided).
    pub(crate) async fn call_tool(
        &self,
        tool: &ToolRef,
        arguments: Arguments,
        cancel: CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<ToolResult, HostError> {
        let Checked {
            conn,
            arguments,
            activity,
            ..
        } = self.check_call(tool, arguments).await?;
        let conn = conn?;
        // In flight until it returns: the idle stop leaves the server alone meanwhile.
        let _busy = activity.busy();
        let call_id = self.inner.seam.next_call.fetch_add(1, Ordering::Relaxed);
        let span = tracing::info_span!(
            "tool_call",
            server = %tool.server,
            tool = %crate::escape::ServerText(&tool.tool),
            call_id
        );
        // Progress goes to the caller and out as a host event, straight from the reader task:
        // no channel or task per call on the hot path.
        let events = self.inner.events.clone();
        let what = tool.clone();
        let sink: ProgressSink = Arc::new(move |p: Progress| {
            if let Some(c) = &progress {
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
                    cancel: Some(cancel),
                    progress: Some(sink),
                },
            )
            .instrument(span)
            .await;
        Ok(result?)
    }
}
