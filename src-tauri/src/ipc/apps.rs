//! MCP Apps in the IPC shell: the link opener command, and which app a chat tool result shows.
//! The app jail itself (the `switchboard-app://` scheme that serves an app's HTML under its own
//! CSP) is `crate::apps`; an app never calls a command, the window does on the person's behalf.

use std::collections::HashMap;

use switchboard_core::chat::ChatEvent;
use switchboard_core::host::{apps, Host};
use tauri::State;

use super::IpcError;

/// Opens a link an MCP App asked for (`ui/open-link`), after the person clicked "Open in
/// browser" under the app: Rust checks it again and opens it with the one URL opener (RN-02).
/// The URL is not logged: an app chose it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn open_app_link(host: State<'_, Host>, url: String) -> Result<(), IpcError> {
    host.open_app_link(&url)
        .map(|_| ())
        .map_err(|e| IpcError::invalid(e.to_string()))
}

/// Finds the MCP App of each call that ran in a turn. A result names its call only, so the
/// call's server and tool are remembered from its proposal.
pub(super) struct AppViews {
    host: Host,
    /// Call id to (server, tool), for calls proposed and not yet answered.
    calls: HashMap<String, (String, String)>,
}

impl AppViews {
    /// Views looked up in `host`'s catalogs.
    pub(super) fn new(host: Host) -> Self {
        Self {
            host,
            calls: HashMap::new(),
        }
    }

    /// The view to show for `e` when it is a result: the result's own `ui://` link, or else
    /// the view the tool declares in its `_meta`. Nothing for a call that did not run.
    pub(super) async fn of(&mut self, e: &ChatEvent) -> Option<String> {
        match e {
            ChatEvent::ToolCallProposed {
                call_id,
                server: Some(server),
                tool: Some(tool),
                ..
            } => {
                self.calls
                    .insert(call_id.clone(), (server.clone(), tool.clone()));
                None
            }
            ChatEvent::ToolResult { call_id, full, .. } => {
                let call = self.calls.remove(call_id);
                let full = full.as_ref()?;
                if let Some(view) = apps::result_view_json(full) {
                    return Some(view);
                }
                let (server, tool) = call?;
                self.declared(&server, &tool).await
            }
            _ => None,
        }
    }

    async fn declared(&self, server: &str, tool: &str) -> Option<String> {
        let catalogs = self.host.catalogs().await.ok()?;
        let c = catalogs.iter().find(|c| c.server.to_string() == server)?;
        let t = c.catalog.tools.iter().find(|t| t.name == tool)?;
        apps::declared_view(t.meta.as_ref()).map(str::to_owned)
    }
}
