//! Model providers: the vendor profiles one can add, the configured providers with "key set /
//! not set", and their keys, which go to the OS keyring and never come back (SE-05).

use serde::Serialize;
use specta::Type;
use switchboard_core::host::{Host, ProviderView};
use switchboard_core::llm::{Profile, PROFILES};
use switchboard_core::redact::Secret;
use tauri::State;

use super::{logged, IpcError};

/// The longest API key accepted.
const KEY_MAX: usize = 8 * 1024;
/// The longest base URL or model id accepted.
const FIELD_MAX: usize = 2 * 1024;

/// A configured provider. Carries whether a key is set, never the key.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ProviderDto {
    /// Its name.
    pub name: String,
    /// The profile id (`openai`, `anthropic`, ...).
    pub kind: String,
    /// The profile's display name.
    pub kind_name: String,
    /// The base URL in use.
    pub base_url: Option<String>,
    /// The default model.
    pub model: Option<String>,
    /// Whether the keyring holds its key.
    pub key_set: bool,
    /// Whether requests without a key are pointless.
    pub key_required: bool,
    /// Model ids known to work, for suggestions.
    pub models: Vec<String>,
    /// The context window the user set, in tokens.
    pub context_window: Option<u32>,
}

impl From<&Profile> for ProviderKindDto {
    fn from(p: &Profile) -> Self {
        Self {
            id: p.id.into(),
            name: p.name.into(),
            needs_base_url: p.base_url.is_none(),
            key_required: p.key_required,
            models: models(p),
        }
    }
}

impl From<ProviderView> for ProviderDto {
    fn from(v: ProviderView) -> Self {
        Self {
            name: v.name.to_string(),
            kind: v.profile.id.into(),
            kind_name: v.profile.name.into(),
            base_url: v.base_url,
            model: v.model,
            key_set: v.key_set,
            key_required: v.profile.key_required,
            models: models(v.profile),
            context_window: v.context_window,
        }
    }
}

fn models(p: &Profile) -> Vec<String> {
    p.models.iter().map(|m| (*m).to_owned()).collect()
}

/// A vendor profile a provider can be added with.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ProviderKindDto {
    /// The profile id.
    pub id: String,
    /// The name shown to people.
    pub name: String,
    /// Whether the user must give a base URL (no default).
    pub needs_base_url: bool,
    /// Whether a key is needed.
    pub key_required: bool,
    /// Model ids known to work.
    pub models: Vec<String>,
}

/// An optional text field: blank means `None`; over-long is refused.
pub(super) fn optional(what: &str, v: Option<String>) -> Result<Option<String>, IpcError> {
    match v.map(|s| s.trim().to_owned()) {
        Some(s) if s.len() > FIELD_MAX => Err(IpcError::invalid(format!("the {what} is too long"))),
        Some(s) if s.is_empty() => Ok(None),
        other => Ok(other),
    }
}

/// Every vendor profile.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn provider_kinds() -> Vec<ProviderKindDto> {
    PROFILES.iter().map(Into::into).collect()
}

/// Every configured provider.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn list_providers(host: State<'_, Host>) -> Result<Vec<ProviderDto>, IpcError> {
    Ok(host
        .models()
        .list_providers()
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// Adds a provider of `kind`; the key is set separately with `set_provider_key`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(provider = %logged(&name), kind = %logged(&kind)))]
pub async fn add_provider(
    host: State<'_, Host>,
    name: String,
    kind: String,
    base_url: Option<String>,
    model: Option<String>,
    context_window: Option<u32>,
) -> Result<(), IpcError> {
    let name = Host::provider_name(&name)?;
    if kind.len() > 64 {
        return Err(IpcError::invalid("unknown provider kind"));
    }
    let base_url = optional("base URL", base_url)?;
    let model = optional("model", model)?;
    Ok(host
        .models()
        .add_provider(&name, &kind, base_url, model, context_window)
        .await?)
}

/// Stores a provider's API key in the keyring. The key is never returned by any command.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(provider = %logged(&name)))]
pub async fn set_provider_key(
    host: State<'_, Host>,
    name: String,
    key: String,
) -> Result<(), IpcError> {
    let name = Host::provider_name(&name)?;
    let key = key.trim();
    if key.is_empty() || key.len() > KEY_MAX {
        return Err(IpcError::invalid("an API key must be 1 to 8192 characters"));
    }
    Ok(host
        .models()
        .set_provider_key(&name, Secret::new(key))
        .await?)
}

/// Removes a provider and its key.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(provider = %logged(&name)))]
pub async fn remove_provider(host: State<'_, Host>, name: String) -> Result<(), IpcError> {
    let name = Host::provider_name(&name)?;
    Ok(host.remove_provider(&name).await?)
}
