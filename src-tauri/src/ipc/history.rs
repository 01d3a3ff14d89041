//! A conversation's course and cost: forking it at a message, the summaries that stand in for
//! its older messages, and its tokens with an estimated cost.

use serde::Serialize;
use specta::Type;
use switchboard_core::host::{CostReport, Host, ModelCost};
use switchboard_core::store::Summary;
use tauri::State;

use super::conversations::{conversation_id, message_id, title};
use super::{logged, IpcError};

/// A summary made by context compaction.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SummaryDto {
    /// The last message it covers (its id, as text).
    pub through: String,
    /// How many messages it stands in for.
    pub messages: u32,
    /// The summary the model reads instead of them.
    pub text: String,
    /// The model that wrote it.
    pub model: Option<String>,
}

/// One model's tokens and estimated cost.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ModelUsageDto {
    /// The provider's name.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// Input tokens.
    pub input_tokens: f64,
    /// Output tokens.
    pub output_tokens: f64,
    /// Estimated dollars at list price; `None` when the price is unknown.
    pub cost_usd: Option<f64>,
}

/// What a conversation has: summaries, tokens and cost.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ConversationInfoDto {
    /// Summaries that still describe the visible messages, oldest first.
    pub summaries: Vec<SummaryDto>,
    /// Input tokens, every model.
    pub input_tokens: f64,
    /// Output tokens, every model.
    pub output_tokens: f64,
    /// The sum of the known costs, in dollars.
    pub cost_usd: f64,
    /// Whether every model's price was known (else `cost_usd` is a lower bound).
    pub cost_complete: bool,
    /// Per provider and model.
    pub by_model: Vec<ModelUsageDto>,
}

impl From<Summary> for SummaryDto {
    fn from(s: Summary) -> Self {
        Self {
            through: s.through.to_string(),
            messages: s.messages,
            text: s.text,
            model: s.model,
        }
    }
}

impl From<ModelCost> for ModelUsageDto {
    fn from(m: ModelCost) -> Self {
        Self {
            provider: m.provider,
            model: m.model,
            input_tokens: m.usage.input_tokens as f64,
            output_tokens: m.usage.output_tokens as f64,
            cost_usd: m.cost_usd,
        }
    }
}

impl ConversationInfoDto {
    /// The summaries and the cost report of one conversation, together.
    fn new(summaries: Vec<Summary>, usage: CostReport) -> Self {
        Self {
            summaries: summaries.into_iter().map(Into::into).collect(),
            input_tokens: usage.total.input_tokens as f64,
            output_tokens: usage.total.output_tokens as f64,
            cost_usd: usage.cost_usd,
            cost_complete: usage.cost_complete,
            by_model: usage.by_model.into_iter().map(Into::into).collect(),
        }
    }
}

/// A fork's title: none when blank (the fork keeps the source's title), else checked.
fn fork_title(typed: Option<&str>) -> Result<Option<&str>, IpcError> {
    match typed.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => title(t).map(Some),
        None => Ok(None),
    }
}

/// A conversation's summaries, tokens and estimated cost.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&id)))]
pub async fn conversation_info(
    host: State<'_, Host>,
    id: String,
) -> Result<ConversationInfoDto, IpcError> {
    let id = conversation_id(&id)?;
    let summaries = host.summaries(&id).await?;
    let usage = host.conversation_usage(&id).await?;
    Ok(ConversationInfoDto::new(summaries, usage))
}

/// Copies `id` up to message `at` into a new conversation; returns the new id.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&id), at = %logged(&at)))]
pub async fn fork_conversation(
    host: State<'_, Host>,
    id: String,
    at: String,
    title: Option<String>,
) -> Result<String, IpcError> {
    let id = conversation_id(&id)?;
    let at = message_id(&at)?;
    let title = fork_title(title.as_deref())?;
    let fork = host.fork_conversation(&id, at, title).await?;
    Ok(fork.id.to_string())
}
