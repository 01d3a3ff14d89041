//! Stored conversations: the list, one conversation's messages, rename, delete and search.
//! Message ids are `i64` in the store and travel as strings (JavaScript numbers are not i64).

use serde::Serialize;
use specta::Type;
use switchboard_core::host::Host;
use switchboard_core::ids::{ConversationId, MessageId};
use switchboard_core::llm::{Part, ResultPart, Role};
use switchboard_core::store::{
    ConversationQuery, ConversationSummary, SearchHit, StoredMessage, HIGHLIGHT_END,
    HIGHLIGHT_START,
};
use tauri::State;

use super::{logged, IpcError};

/// The longest title accepted.
const TITLE_MAX: usize = 200;
/// The longest search query accepted.
const QUERY_MAX: usize = 1_000;

/// A conversation in the list.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ConversationDto {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Last activity, ms since the Unix epoch.
    pub updated_ms: f64,
    /// The start of its last text.
    pub preview: Option<String>,
}

/// One piece of a stored message. All text is untrusted and shown as text.
#[derive(Clone, Debug, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PartDto {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// Base64 data.
        data: String,
    },
    /// A tool call the model asked for.
    ToolCall {
        /// The vendor's call id.
        id: String,
        /// The LLM-facing tool name.
        name: String,
        /// The arguments, pretty-printed JSON.
        arguments: String,
    },
    /// What a call returned to the model.
    ToolResult {
        /// The call.
        call_id: String,
        /// Whether it failed or was denied.
        is_error: bool,
        /// Its text parts, joined.
        text: String,
    },
}

/// One stored message.
#[derive(Clone, Debug, Serialize, Type)]
pub struct MessageDto {
    /// Its id (an integer, as text).
    pub id: String,
    /// `user` or `assistant`.
    pub role: String,
    /// `complete`, `incomplete`, `interrupted`, `cancelled` or `failed`.
    pub status: String,
    /// What went wrong, for failed answers.
    pub error: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// Its content.
    pub parts: Vec<PartDto>,
}

/// One search hit.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SearchHitDto {
    /// The conversation.
    pub conversation: String,
    /// Its title.
    pub title: String,
    /// Words around the match.
    pub snippet: String,
}

/// The text parts of a tool result, joined (images become a placeholder).
pub(super) fn result_text(content: &[ResultPart]) -> String {
    content
        .iter()
        .map(|p| match p {
            ResultPart::Text { text } => text.as_str(),
            ResultPart::Image { .. } => "[image]",
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl From<Part> for PartDto {
    fn from(p: Part) -> Self {
        match p {
            Part::Text { text } => Self::Text { text },
            Part::Image { mime_type, data } => Self::Image { mime_type, data },
            Part::ToolCall {
                id,
                name,
                arguments,
            } => Self::ToolCall {
                id,
                name,
                arguments: serde_json::to_string_pretty(&arguments).unwrap_or_default(),
            },
            Part::ToolResult {
                call_id,
                content,
                is_error,
            } => Self::ToolResult {
                call_id,
                is_error,
                text: result_text(&content),
            },
        }
    }
}

impl From<StoredMessage> for MessageDto {
    fn from(m: StoredMessage) -> Self {
        Self {
            id: m.id.to_string(),
            role: match m.message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            }
            .into(),
            status: m.status.as_str().into(),
            error: m.error,
            model: m.model,
            parts: m.message.parts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<ConversationSummary> for ConversationDto {
    fn from(s: ConversationSummary) -> Self {
        Self {
            id: s.conversation.id.to_string(),
            title: s.conversation.title,
            updated_ms: s.conversation.updated_at_ms as f64,
            preview: s.preview,
        }
    }
}

impl From<SearchHit> for SearchHitDto {
    /// The store marks the matched words; the window shows the snippet as plain text.
    fn from(h: SearchHit) -> Self {
        Self {
            conversation: h.conversation.to_string(),
            title: h.title,
            snippet: h
                .snippet
                .replace(HIGHLIGHT_START, "")
                .replace(HIGHLIGHT_END, ""),
        }
    }
}

/// A conversation id from the window.
pub(super) fn conversation_id(id: &str) -> Result<ConversationId, IpcError> {
    ConversationId::parse(id).map_err(|_| IpcError::invalid("that is not a conversation id"))
}

/// A message id from the window (an integer, as text).
pub(super) fn message_id(id: &str) -> Result<MessageId, IpcError> {
    id.parse::<i64>()
        .map(MessageId::new)
        .map_err(|_| IpcError::invalid("that is not a message id"))
}

/// A conversation title as typed: trimmed, on one line, at most [`TITLE_MAX`] characters.
pub(super) fn title(typed: &str) -> Result<&str, IpcError> {
    let title = typed.trim();
    if title.is_empty() || title.chars().count() > TITLE_MAX || title.chars().any(char::is_control)
    {
        return Err(IpcError::invalid(format!(
            "a title must be 1 to {TITLE_MAX} characters on one line"
        )));
    }
    Ok(title)
}

/// The conversations, most recent activity first (the first 200).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn list_conversations(host: State<'_, Host>) -> Result<Vec<ConversationDto>, IpcError> {
    let query = ConversationQuery {
        limit: 200,
        ..Default::default()
    };
    let page = host.list_conversations(&query).await?;
    Ok(page.items.into_iter().map(Into::into).collect())
}

/// One conversation's visible messages, in order.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&id)))]
pub async fn load_conversation(
    host: State<'_, Host>,
    id: String,
) -> Result<Vec<MessageDto>, IpcError> {
    let id = conversation_id(&id)?;
    if host.conversation(&id).await?.is_none() {
        return Err(IpcError::not_found("no such conversation"));
    }
    let messages = host.messages(&id).await?;
    Ok(messages.into_iter().map(Into::into).collect())
}

/// Renames a conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&id)))]
pub async fn rename_conversation(
    host: State<'_, Host>,
    id: String,
    title: String,
) -> Result<(), IpcError> {
    let id = conversation_id(&id)?;
    let title = self::title(&title)?;
    host.rename_conversation(&id, title).await?;
    Ok(())
}

/// Deletes a conversation with its messages. Returns whether it existed.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&id)))]
pub async fn delete_conversation(host: State<'_, Host>, id: String) -> Result<bool, IpcError> {
    let id = conversation_id(&id)?;
    Ok(host.delete_conversation(&id).await?)
}

/// Full-text search over every message, best first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn search_conversations(
    host: State<'_, Host>,
    query: String,
) -> Result<Vec<SearchHitDto>, IpcError> {
    if query.len() > QUERY_MAX {
        return Err(IpcError::invalid("the search is too long"));
    }
    let hits = host.search_conversations(&query, 50).await?;
    Ok(hits.into_iter().map(Into::into).collect())
}
