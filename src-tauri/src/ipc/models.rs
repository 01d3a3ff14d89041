//! Model lists for the provider dialog and the chat's model picker: local runtimes found on
//! this machine (offered as "add as provider"), a configured provider's models with native
//! tool support, and turning the prompt-based tool mode on or off for one model.
//!
//! A provider whose list fails is not a command failure: the picker still takes free text, so
//! the reason comes back beside an empty list for the UI to show.

use serde::Serialize;
use specta::Type;
use switchboard_core::host::{Host, ModelEntry};
use switchboard_core::llm::models::{DetectedRuntime, ModelInfo, ToolSource, ToolSupport};
use switchboard_core::llm::profiles::ToolMode;
use tauri::State;

use super::providers::optional;
use super::{logged, IpcError};

/// Whether a model takes native tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ToolSupportDto {
    /// The vendor or runtime says so.
    Native,
    /// The runtime says it does not: offer the prompt-based mode.
    None,
    /// Nobody said.
    Unknown,
}

/// One model.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ModelDto {
    /// The id to send.
    pub id: String,
    /// A display name, when the vendor has one.
    pub display_name: Option<String>,
    /// Native tool calling.
    pub tools: ToolSupportDto,
    /// `runtime` (the runtime's capability list), `family` (the vendor's model family) or
    /// `none`.
    pub tools_source: String,
    /// Whether the person turned on the prompt-based tool mode for it.
    pub prompt_tools: bool,
}

impl ModelDto {
    fn new(m: ModelInfo, prompt_tools: bool) -> Self {
        Self {
            tools: match m.tools {
                ToolSupport::Native => ToolSupportDto::Native,
                ToolSupport::None => ToolSupportDto::None,
                ToolSupport::Unknown => ToolSupportDto::Unknown,
            },
            tools_source: match m.tools_source {
                ToolSource::Runtime => "runtime",
                ToolSource::Family => "family",
                ToolSource::None => "none",
            }
            .into(),
            id: m.id,
            display_name: m.display_name,
            prompt_tools,
        }
    }
}

impl From<ModelEntry> for ModelDto {
    fn from(e: ModelEntry) -> Self {
        Self::new(e.info, e.prompt_tools)
    }
}

/// A local runtime that answered.
#[derive(Clone, Debug, Serialize, Type)]
pub struct DetectedRuntimeDto {
    /// The provider kind to add it with (`ollama`, `lmstudio`).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its base URL for a provider.
    pub base_url: String,
    /// Its installed chat models.
    pub models: Vec<ModelDto>,
}

impl From<DetectedRuntime> for DetectedRuntimeDto {
    fn from(d: DetectedRuntime) -> Self {
        Self {
            kind: d.profile_id.into(),
            name: d.runtime.name().into(),
            base_url: d.base_url,
            models: d
                .models
                .into_iter()
                .map(|m| ModelDto::new(m, false))
                .collect(),
        }
    }
}

/// A provider's models, or why they could not be listed.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ProviderModelsDto {
    /// The provider.
    pub name: String,
    /// Its models (empty when listing failed), then any set to prompt mode but not listed.
    pub models: Vec<ModelDto>,
    /// Why the list failed.
    pub error: Option<String>,
}

/// The local runtimes (Ollama, LM Studio) answering on this machine.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn detect_local_models(
    host: State<'_, Host>,
) -> Result<Vec<DetectedRuntimeDto>, IpcError> {
    let found = host.models().detect_local_runtimes().await;
    Ok(found.into_iter().map(Into::into).collect())
}

/// A configured provider's models from its vendor.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(provider = %logged(&name)))]
pub async fn list_provider_models(
    host: State<'_, Host>,
    name: String,
) -> Result<ProviderModelsDto, IpcError> {
    let name = Host::provider_name(&name)?;
    let p = host.models().provider_models(Some(&name)).await?.remove(0);
    let (mut models, error) = match p.models {
        Ok(list) => (
            list.into_iter().map(Into::into).collect::<Vec<ModelDto>>(),
            None,
        ),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    models.extend(
        p.prompt_only
            .into_iter()
            .map(|id| ModelDto::new(ModelInfo::from_family("", id, None), true)),
    );
    Ok(ProviderModelsDto {
        name: name.to_string(),
        models,
        error,
    })
}

/// Sends `model` of provider `name` through the prompt-based tool mode (`prompt`), or back to
/// native tools.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(provider = %logged(&name), prompt))]
pub async fn set_model_tool_mode(
    host: State<'_, Host>,
    name: String,
    model: String,
    prompt: bool,
) -> Result<(), IpcError> {
    let name = Host::provider_name(&name)?;
    let model = optional("model", Some(model))?
        .ok_or_else(|| IpcError::invalid("a model id is required"))?;
    let mode = if prompt {
        ToolMode::Prompt
    } else {
        ToolMode::Native
    };
    Ok(host
        .models()
        .set_model_tool_mode(&name, &model, mode)
        .await?)
}
