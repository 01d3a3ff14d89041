//! Progressive discovery in the window (issue 16, point 2): the per-conversation switch. When
//! on, the conversation's model is offered a search over the catalog and the tools it loads
//! instead of every definition. The logic is the core's (`discovery.rs`).

use switchboard_core::host::Host;
use tauri::State;

use super::conversations::conversation_id;
use super::{logged, IpcError};

/// Whether progressive discovery is on for a conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&conversation)))]
pub async fn conversation_discovery(
    host: State<'_, Host>,
    conversation: String,
) -> Result<bool, IpcError> {
    let id = conversation_id(&conversation)?;
    if host.conversation(&id).await?.is_none() {
        return Err(IpcError::not_found("no such conversation"));
    }
    Ok(host.conversation_discovery(&id).await?)
}

/// Switches progressive discovery on or off for a conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&conversation)))]
pub async fn set_conversation_discovery(
    host: State<'_, Host>,
    conversation: String,
    on: bool,
) -> Result<(), IpcError> {
    let id = conversation_id(&conversation)?;
    if host.conversation(&id).await?.is_none() {
        return Err(IpcError::not_found("no such conversation"));
    }
    Ok(host.set_conversation_discovery(&id, on).await?)
}
