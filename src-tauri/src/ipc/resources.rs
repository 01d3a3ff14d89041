//! Resources, resource templates and prompts of the running servers: listing, reading,
//! expanding, and argument completion. Reads happen only when the user asks (RN-03).

use std::collections::HashMap;

use serde::Serialize;
use specta::Type;
use switchboard_core::approval::Origin;
use switchboard_core::host::{CallOptions, Host, ServerCatalog};
use switchboard_core::ids::ServerId;
use switchboard_core::mcp::catalog::{
    PromptArgument, PromptInfo, ResourceInfo, ResourceTemplateInfo,
};
use switchboard_core::supervisor::ServerStatus;
use tauri::State;

use super::content::{ContentDto, PromptResultDto};
use super::conversations::conversation_id;
use super::{logged, IpcError};

/// The longest resource URI accepted.
const URI_MAX: usize = 16 * 1024;

/// One resource.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ResourceDto {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its title.
    pub title: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Its size in bytes, if the server says.
    pub size: Option<f64>,
}

/// One resource template (RFC 6570 URI template).
#[derive(Clone, Debug, Serialize, Type)]
pub struct TemplateDto {
    /// The URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// Its title.
    pub title: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
}

/// One argument of a prompt.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PromptArgDto {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

/// One prompt.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PromptDto {
    /// Its name.
    pub name: String,
    /// Its title.
    pub title: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Vec<PromptArgDto>,
}

/// What one running server offers besides tools.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerContextDto {
    /// The server.
    pub server: String,
    /// Whether it completes prompt arguments.
    pub completions: bool,
    /// Its resources.
    pub resources: Vec<ResourceDto>,
    /// Its resource templates.
    pub templates: Vec<TemplateDto>,
    /// Its prompts.
    pub prompts: Vec<PromptDto>,
}

impl From<&ResourceInfo> for ResourceDto {
    fn from(r: &ResourceInfo) -> Self {
        Self {
            uri: r.uri.clone(),
            name: r.name.clone(),
            title: r.title.clone(),
            description: r.description.clone(),
            mime_type: r.mime_type.clone(),
            size: r.size.map(|s| s as f64),
        }
    }
}

impl From<&ResourceTemplateInfo> for TemplateDto {
    fn from(t: &ResourceTemplateInfo) -> Self {
        Self {
            uri_template: t.uri_template.clone(),
            name: t.name.clone(),
            title: t.title.clone(),
            description: t.description.clone(),
            mime_type: t.mime_type.clone(),
        }
    }
}

impl From<&PromptArgument> for PromptArgDto {
    fn from(a: &PromptArgument) -> Self {
        Self {
            name: a.name.clone(),
            description: a.description.clone(),
            required: a.required,
        }
    }
}

impl From<&PromptInfo> for PromptDto {
    fn from(p: &PromptInfo) -> Self {
        Self {
            name: p.name.clone(),
            title: p.title.clone(),
            description: p.description.clone(),
            arguments: p.arguments.iter().map(Into::into).collect(),
        }
    }
}

impl ServerContextDto {
    /// What one server's catalog offers besides tools; `completions` says whether it
    /// completes prompt arguments.
    fn new(c: &ServerCatalog, completions: bool) -> Self {
        let cat = &c.catalog;
        Self {
            server: c.server.to_string(),
            completions,
            resources: cat.resources.iter().map(Into::into).collect(),
            templates: cat.resource_templates.iter().map(Into::into).collect(),
            prompts: cat.prompts.iter().map(Into::into).collect(),
        }
    }
}

/// Whether a server runs here and said it completes prompt arguments.
fn completes(host: &Host, server: &ServerId) -> bool {
    host.handle(server).is_some_and(|h| {
        matches!(h.status(), ServerStatus::Running { peer, .. } if peer.capabilities.completions)
    })
}

/// Resources, templates and prompts of every started server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn server_context(host: State<'_, Host>) -> Result<Vec<ServerContextDto>, IpcError> {
    Ok(host
        .catalogs()
        .await?
        .iter()
        .map(|c| ServerContextDto::new(c, completes(&host, &c.server)))
        .collect())
}

/// Who a read or prompt is for: the resource and prompt pages (`None`), or a message being
/// written in `conversation` (`Some("")` for a conversation not started yet), whose model will
/// read it.
fn origin(into: Option<String>) -> Result<Origin, IpcError> {
    Ok(match into {
        None => Origin::Manual,
        Some(c) if c.is_empty() => Origin::Attach { conversation: None },
        Some(c) => Origin::Attach {
            conversation: Some(conversation_id(&c)?),
        },
    })
}

/// Reads one resource through the host's seam (policy, audit). `into` names the conversation
/// it is attached to, if any.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(
    server = %logged(&server),
    conversation = into.as_deref().map(logged),
))]
pub async fn read_resource(
    host: State<'_, Host>,
    server: String,
    uri: String,
    into: Option<String>,
) -> Result<Vec<ContentDto>, IpcError> {
    let id = Host::server_id(&server)?;
    if uri.len() > URI_MAX {
        return Err(IpcError::invalid(format!(
            "a resource URI is at most {URI_MAX} bytes"
        )));
    }
    Ok(host
        .read_resource(&id, &uri, origin(into)?, CallOptions::default())
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// Expands a prompt with its arguments through the host's seam. `into` names the conversation
/// it goes into (a slash command), if any.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(
    server = %logged(&server),
    prompt = %logged(&name),
    conversation = into.as_deref().map(logged),
))]
pub async fn get_prompt(
    host: State<'_, Host>,
    server: String,
    name: String,
    args: HashMap<String, String>,
    into: Option<String>,
) -> Result<PromptResultDto, IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host
        .get_prompt(&id, &name, &args, origin(into)?, CallOptions::default())
        .await?
        .into())
}

/// Completion values the server suggests for a prompt argument.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(
    server = %logged(&server),
    prompt = %logged(&prompt),
    argument = %logged(&argument),
))]
pub async fn complete_prompt_argument(
    host: State<'_, Host>,
    server: String,
    prompt: String,
    argument: String,
    value: String,
) -> Result<Vec<String>, IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host
        .complete_prompt_argument(&id, &prompt, &argument, &value)
        .await?)
}
