//! Outbound redaction in the window (issue 16, point 5): the per-conversation switch and
//! whether it applies to the provider picked, what each turn had redacted (kinds and counts,
//! never values) for the notice at that turn, and the settings (on/off, the person's own
//! patterns). The logic is the core's (`redaction`, reached as `host.redaction()`, and `outbound`).

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::host::{Host, RedactionState};
use switchboard_core::outbound::{Kind, RedactionSettings};
use switchboard_core::store::TurnRedaction;
use tauri::State;

use super::conversations::conversation_id;
use super::{logged, IpcError};

/// Whether a conversation's requests to a provider are redacted, and why not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Type)]
pub struct RedactionStateDto {
    /// On in the settings (for every conversation).
    pub enabled: bool,
    /// On for this conversation.
    pub on_for_conversation: bool,
    /// The provider runs on this machine: nothing leaves it, nothing is redacted.
    pub local: bool,
    /// The provider's profile id, when one was named.
    pub profile: Option<String>,
    /// Whether requests are redacted, all taken together.
    pub applies: bool,
}

impl From<RedactionState> for RedactionStateDto {
    fn from(s: RedactionState) -> Self {
        Self {
            applies: s.applies(),
            enabled: s.enabled,
            on_for_conversation: s.on_for_conversation,
            local: s.local,
            profile: s.profile,
        }
    }
}

/// How many distinct values of one kind a turn had redacted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Type)]
pub struct TurnRedactedCountDto {
    /// The kind's id (`email`, `api_key`, ...).
    pub kind: String,
    /// How many distinct values.
    pub count: u32,
    /// For a person: "2 e-mail addresses".
    pub label: String,
}

/// What one turn had redacted before it went to one provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Type)]
pub struct TurnRedactionDto {
    /// The person's message that started the turn (a message id, as text).
    pub message_id: String,
    /// The provider profile (`openai`, `anthropic`, ...).
    pub provider: String,
    /// What was replaced, by kind.
    pub counts: Vec<TurnRedactedCountDto>,
}

impl From<TurnRedaction> for TurnRedactionDto {
    fn from(t: TurnRedaction) -> Self {
        Self {
            message_id: t.message_id.to_string(),
            provider: t.provider,
            counts: t
                .counts
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(|(kind, count)| TurnRedactedCountDto {
                    label: Kind::from_id(&kind)
                        .map_or_else(|| format!("{count} {kind}"), |k| k.describe(count)),
                    kind,
                    count,
                })
                .collect(),
        }
    }
}

/// The redaction settings a person changes on the Settings page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RedactionSettingsDto {
    /// Whether requests to cloud models are redacted.
    pub enabled: bool,
    /// The person's own regular expressions (group 1 is redacted when there is one).
    pub patterns: Vec<String>,
}

impl From<RedactionSettings> for RedactionSettingsDto {
    fn from(s: RedactionSettings) -> Self {
        Self {
            enabled: s.enabled,
            patterns: s.patterns,
        }
    }
}

/// Whether requests of `conversation` (none: a new chat) to `provider` are redacted.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(conversation.as_deref().unwrap_or(""))))]
pub async fn redaction_state(
    host: State<'_, Host>,
    conversation: Option<String>,
    provider: Option<String>,
) -> Result<RedactionStateDto, IpcError> {
    let conversation = conversation.as_deref().map(conversation_id).transpose()?;
    let provider = provider.as_deref().map(Host::provider_name).transpose()?;
    let state = host
        .redaction_state(conversation.as_ref(), provider.as_ref())
        .await?;
    Ok(state.into())
}

/// Switches redaction on or off for one conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&conversation)))]
pub async fn set_conversation_redaction(
    host: State<'_, Host>,
    conversation: String,
    on: bool,
) -> Result<(), IpcError> {
    let id = conversation_id(&conversation)?;
    if host.conversation(&id).await?.is_none() {
        return Err(IpcError::not_found("no such conversation"));
    }
    Ok(host.redaction().set_for_conversation(&id, on).await?)
}

/// What each turn of a conversation had redacted, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&conversation)))]
pub async fn turn_redactions(
    host: State<'_, Host>,
    conversation: String,
) -> Result<Vec<TurnRedactionDto>, IpcError> {
    let id = conversation_id(&conversation)?;
    let turns = host.redaction().turn_redactions(&id).await?;
    Ok(turns.into_iter().map(Into::into).collect())
}

/// The redaction settings (on/off and the person's patterns).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn get_redaction_settings(
    host: State<'_, Host>,
) -> Result<RedactionSettingsDto, IpcError> {
    Ok(host.redaction().settings().into())
}

/// Saves the redaction settings (the conversations it is off for are kept as they are). A
/// pattern that does not compile is refused, naming it, and nothing is saved.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn save_redaction_settings(
    host: State<'_, Host>,
    settings: RedactionSettingsDto,
) -> Result<RedactionSettingsDto, IpcError> {
    let mut s = host.redaction().settings();
    s.enabled = settings.enabled;
    s.patterns = settings.patterns;
    Ok(host.redaction().save_settings(s)?.into())
}
