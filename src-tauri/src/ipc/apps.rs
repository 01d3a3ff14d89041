//! MCP Apps in the IPC shell: opening an app's frame, the calls an app makes from it, the link
//! opener command, and which app a chat tool result shows. The app jail itself (the
//! `switchboard-app://` scheme that serves an app's HTML under its own CSP) is `crate::apps`;
//! an app never calls a command, the window does for it, naming the frame, so the core knows
//! which app asks (AP-10, `host::app_calls`).

use std::collections::HashMap;

use switchboard_core::agent_data::AgentName;
use switchboard_core::chat::ChatEvent;
use switchboard_core::host::app_calls::{AppFrameId, ShownIn};
use switchboard_core::host::apps::AppError;
use switchboard_core::host::{apps, CallOptions, Host};
use tauri::ipc::Channel;
use tauri::State;

use super::content::{ProgressDto, ToolResultDto};
use super::conversations::conversation_id;
use super::{logged, IpcError};

/// An app error as the window sees it: a refused or failed read or call keeps its code.
fn app_error(e: AppError) -> IpcError {
    match e {
        AppError::Host(e) => e.into(),
        e => IpcError::invalid(e.to_string()),
    }
}

/// Opens a frame for the app `uri` of `server`, shown in `conversation` (answered there by
/// `agent`) or, with neither, under the person's own run. Returns the frame's id: the jail
/// serves the document at `?frame=<id>` only, and the app's calls name it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn open_app_frame(
    host: State<'_, Host>,
    server: String,
    uri: String,
    conversation: Option<String>,
    agent: Option<String>,
) -> Result<String, IpcError> {
    let server = Host::server_id(&server)?;
    let shown = ShownIn {
        conversation: conversation.as_deref().map(conversation_id).transpose()?,
        agent: agent
            .map(|a| AgentName::new(&a).map_err(|e| IpcError::invalid(e.to_string())))
            .transpose()?,
    };
    let frame = host
        .open_app_frame(&server, &uri, shown)
        .await
        .map_err(app_error)?;
    Ok(frame.to_string())
}

/// Reads a frame id the window got from `open_app_frame`.
fn frame_id(frame: &str) -> Result<AppFrameId, IpcError> {
    AppFrameId::parse(frame).ok_or_else(|| IpcError::invalid("not an app frame id"))
}

/// The app in `frame` asks to run `tool` of its own server with `args_json` (a JSON object as
/// text): refused unless the server shows the tool to apps, then asked about and audited as
/// the app's own call; progress arrives on `on_progress`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(tool = %logged(&tool)))]
pub async fn run_app_tool(
    host: State<'_, Host>,
    frame: String,
    tool: String,
    args_json: String,
    on_progress: Channel<ProgressDto>,
) -> Result<ToolResultDto, IpcError> {
    let frame = frame_id(&frame)?;
    let arguments = super::run::json_object(&args_json, "the arguments are not valid JSON")?;
    let (tx, forwarding) = super::run::forward(on_progress);
    let result = host
        .run_app_tool(
            &frame,
            &tool,
            arguments,
            CallOptions::default().progress(tx),
        )
        .await;
    let _ = forwarding.await;
    Ok(result.map_err(app_error)?.into())
}

/// The window saw the app in `frame` load a second document (it navigated away): the frame
/// is closed in the core (its calls refused from now on) and the app is named in the audit
/// log. Returns whether it was open.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn app_navigated(host: State<'_, Host>, frame: String) -> Result<bool, IpcError> {
    Ok(host.app_navigated(&frame_id(&frame)?).await)
}

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
