//! Catalog commands: the tools of every running server, and per-tool switches.

use serde::Serialize;
use specta::Type;
use switchboard_core::host::Host;
use switchboard_core::ids::ToolRef;
use tauri::State;

use super::IpcError;

/// One tool as the catalog page shows it. Server-provided texts are untrusted and shown as text.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ToolDto {
    /// The tool's name as the server reports it.
    pub name: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Its description, if any.
    pub description: Option<String>,
    /// The input schema, pretty-printed JSON.
    pub input_schema: String,
    /// The output schema, pretty-printed JSON, if declared.
    pub output_schema: Option<String>,
    /// Hints the server claims (they never relax approval).
    pub hints: Vec<String>,
    /// Whether the user allows it to be used.
    pub enabled: bool,
}

/// The tools of one running server.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerToolsDto {
    /// The server.
    pub server: String,
    /// Its tools.
    pub tools: Vec<ToolDto>,
    /// Tools left out because their schema does not compile, with the reason.
    pub excluded: Vec<(String, String)>,
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The tools of every started server.
#[tauri::command]
#[specta::specta]
pub async fn catalog(host: State<'_, Host>) -> Result<Vec<ServerToolsDto>, IpcError> {
    let mut out = Vec::new();
    for c in host.catalogs().await? {
        let tools = c
            .catalog
            .tools
            .iter()
            .map(|t| {
                let a = t.annotations.clone().unwrap_or_default();
                let hints = [
                    (a.read_only_hint, "read-only"),
                    (a.destructive_hint, "destructive"),
                    (a.idempotent_hint, "idempotent"),
                    (a.open_world_hint, "open world"),
                ]
                .into_iter()
                .filter(|(v, _)| *v == Some(true))
                .map(|(_, label)| label.to_owned())
                .collect();
                ToolDto {
                    name: t.name.clone(),
                    title: t.title.clone().or(a.title),
                    description: t.description.clone(),
                    input_schema: pretty(&t.input_schema),
                    output_schema: t.output_schema.as_ref().map(pretty),
                    hints,
                    enabled: !c.disabled_tools.contains(&t.name),
                }
            })
            .collect();
        out.push(ServerToolsDto {
            server: c.server.to_string(),
            tools,
            excluded: c.catalog.excluded_tools.clone(),
        });
    }
    Ok(out)
}

/// Switches one tool on or off.
#[tauri::command]
#[specta::specta]
pub async fn set_tool_enabled(
    host: State<'_, Host>,
    server: String,
    tool: String,
    enabled: bool,
) -> Result<(), IpcError> {
    let tool = ToolRef {
        server: Host::server_id(&server)?,
        tool: tool.into(),
    };
    host.set_tool_enabled(&tool, enabled).await?;
    Ok(())
}
