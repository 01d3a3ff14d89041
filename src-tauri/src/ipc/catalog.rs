//! Catalog commands: the tools of every running server, and per-tool switches.

use std::collections::HashMap;

use serde::Serialize;
use specta::Type;
use switchboard_core::host::{Host, ServerCatalog, ToolFindings};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::{Icon, ToolInfo};
use tauri::State;

use super::pins::{held_label, tool_name};
use super::{logged, IpcError};

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
    /// Hygiene flags on its texts (TD-04): hidden characters, injection phrases, sensitive
    /// paths, other servers' tool names.
    pub findings: Vec<super::pins::FindingDto>,
    /// Why it is held for review (new or changed since approved, TD-02); it is then not
    /// offered to models and cannot run until approved.
    pub held: Option<String>,
    /// An icon the web view may show: only an inline `data:` PNG, JPEG, GIF or WebP of at most
    /// 64 KiB. Remote icons are never fetched (the CSP would block them, and fetching would
    /// tell a third party when the catalog is opened).
    pub icon: Option<String>,
    /// The `ui://` view the tool declares (MCP Apps, `_meta.ui.resourceUri`), if any. The run
    /// panel renders it in the app jail once the tool has run.
    pub ui_view: Option<String>,
}

const ICON_MAX: usize = 64 * 1024;

/// The first icon that is safe to show inline, if any.
pub fn inline_icon(icons: &[Icon]) -> Option<String> {
    icons.iter().find_map(|i| {
        let rest = i.src.strip_prefix("data:")?;
        let (mime, data) = rest.split_once(";base64,")?;
        let ok_mime = matches!(
            mime,
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        );
        let ok_data = !data.is_empty()
            && data.len() <= ICON_MAX
            && data
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
        (ok_mime && ok_data).then(|| i.src.clone())
    })
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
    /// Set when the server is not running: these are the tools it offered when it last ran,
    /// listed then (ms since the Unix epoch); it starts when they are needed.
    pub last_known_ms: Option<f64>,
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

impl ToolDto {
    /// One tool: `disabled` lists the server's tools that are off (switched off or held), and
    /// `flags` is what the hygiene check and the pin review say about this one.
    fn new(t: &ToolInfo, disabled: &[String], flags: Option<&ToolFindings>) -> Self {
        Self {
            name: t.name.clone(),
            title: t
                .title
                .clone()
                .or_else(|| t.annotations.as_ref().and_then(|a| a.title.clone())),
            description: t.description.clone(),
            input_schema: pretty(&t.input_schema),
            output_schema: t.output_schema.as_ref().map(pretty),
            hints: t.claimed_hints(),
            enabled: !disabled.contains(&t.name),
            findings: flags
                .map(|f| f.findings.iter().map(Into::into).collect())
                .unwrap_or_default(),
            held: flags.and_then(|f| f.held).map(held_label),
            icon: inline_icon(&t.icons),
            ui_view: switchboard_core::host::apps::declared_view(t.meta.as_ref())
                .map(str::to_owned),
        }
    }
}

impl ServerToolsDto {
    /// One server's tools, each with its findings (a list per tool, from `tool_findings`).
    fn new(c: &ServerCatalog, findings: &[ToolFindings]) -> Self {
        let flags: HashMap<&str, &ToolFindings> =
            findings.iter().map(|f| (f.tool.as_str(), f)).collect();
        Self {
            server: c.server.to_string(),
            tools: c
                .catalog
                .tools
                .iter()
                .map(|t| ToolDto::new(t, &c.disabled_tools, flags.get(t.name.as_str()).copied()))
                .collect(),
            excluded: c.catalog.excluded_tools.clone(),
            last_known_ms: c.last_known_ms.map(|ms| ms as f64),
        }
    }
}

/// The tools of every started server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn catalog(host: State<'_, Host>) -> Result<Vec<ServerToolsDto>, IpcError> {
    let mut out = Vec::new();
    for c in host.catalogs().await? {
        let findings = host.tool_findings(&c.server).await?;
        out.push(ServerToolsDto::new(&c, &findings));
    }
    Ok(out)
}

/// Switches one tool on or off.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), tool = %logged(&tool), enabled = enabled))]
pub async fn set_tool_enabled(
    host: State<'_, Host>,
    server: String,
    tool: String,
    enabled: bool,
) -> Result<(), IpcError> {
    tool_name(&tool)?;
    let tool = ToolRef {
        server: Host::server_id(&server)?,
        tool: tool.into(),
    };
    host.set_tool_enabled(&tool, enabled).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn icon(src: &str) -> Icon {
        Icon {
            src: src.into(),
            mime_type: None,
        }
    }

    #[test]
    fn only_small_inline_raster_icons_are_passed_on() {
        let png = "data:image/png;base64,iVBORw0KGgo=";
        assert_eq!(inline_icon(&[icon(png)]).as_deref(), Some(png));
        for bad in [
            "https://tracker.example/icon.png",
            "data:image/svg+xml;base64,PHN2Zz4=",
            "data:image/png;base64,\"><script>",
            "data:text/html;base64,PGI+",
            "data:image/png,rawdata",
        ] {
            assert_eq!(inline_icon(&[icon(bad)]), None, "{bad}");
        }
        let huge = format!("data:image/png;base64,{}", "A".repeat(ICON_MAX + 4));
        assert_eq!(inline_icon(&[icon(&huge)]), None);
        assert_eq!(
            inline_icon(&[icon("https://x/y.png"), icon(png)]).as_deref(),
            Some(png),
            "the first safe one wins"
        );
    }
}
