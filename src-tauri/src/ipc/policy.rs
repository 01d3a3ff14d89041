//! The approval policy from the window: rules and grants listed (grants revocable one by one
//! or all at once), the whole policy edited as TOML (checked in Rust; an invalid file changes
//! nothing), and server tags. Nothing here can allow a call by itself: rules only take effect
//! through `approval::decide` in the core.

use serde::Serialize;
use specta::Type;
use switchboard_core::approval::{Rule, Source};
use switchboard_core::host::Host;
use switchboard_core::store::ServerTag;
use tauri::State;

use super::{logged, IpcError};

/// The largest policy file accepted.
const POLICY_MAX: usize = 1024 * 1024;

/// One rule or grant, for display.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RuleDto {
    /// Its id.
    pub id: String,
    /// `allow`, `ask` or `deny`.
    pub effect: String,
    /// The server pattern.
    pub server: String,
    /// What it covers: `tool`, `resource`, `prompt` or `any`.
    pub on: String,
    /// The tool pattern (for resource rules the URI's, for prompt rules the prompt's).
    pub tool: String,
    /// Its conditions and limit, in words (JSON of each condition).
    pub conditions: Vec<String>,
    /// "at most N per PERIOD", when limited.
    pub limit: Option<String>,
    /// Why it exists.
    pub note: Option<String>,
    /// Whether it is a grant made at an approval prompt.
    pub grant: bool,
    /// For a conversation grant, the conversation.
    pub conversation: Option<String>,
}

impl From<Rule> for RuleDto {
    fn from(r: Rule) -> Self {
        let (grant, conversation) = match r.source {
            Source::User => (false, None),
            Source::Grant { conversation, .. } => (true, conversation.map(|c| c.to_string())),
        };
        Self {
            conditions: r
                .when
                .iter()
                .map(|c| serde_json::to_string(c).unwrap_or_default())
                .collect(),
            limit: r
                .limit
                .map(|l| format!("at most {} per {}", l.max, l.per.word())),
            id: r.id,
            effect: r.effect.as_str().into(),
            server: r.server,
            on: r.on.as_str().into(),
            tool: r.tool,
            note: r.note,
            grant,
            conversation,
        }
    }
}

/// Every rule and grant, in order.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn policy_rules(host: State<'_, Host>) -> Result<Vec<RuleDto>, IpcError> {
    Ok(host
        .policy_rules()
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// Removes a rule or revokes a grant.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(rule = %logged(&id)))]
pub async fn remove_policy_rule(host: State<'_, Host>, id: String) -> Result<(), IpcError> {
    if id.len() > 64 {
        return Err(IpcError::invalid("that is not a rule id"));
    }
    Ok(host.remove_policy_rule(&id).await?)
}

/// Revokes every grant; returns how many there were.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn reset_grants(host: State<'_, Host>) -> Result<f64, IpcError> {
    Ok(host.reset_grants().await? as f64)
}

/// The policy as TOML, for the editor.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn export_policy(host: State<'_, Host>) -> Result<String, IpcError> {
    Ok(host.export_policy().await?)
}

/// Replaces the user rules with those of `text` (TOML); grants stay. Returns how many rules.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn import_policy(host: State<'_, Host>, text: String) -> Result<f64, IpcError> {
    if text.len() > POLICY_MAX {
        return Err(IpcError::invalid("a policy file is at most 1 MB"));
    }
    Ok(host.import_policy(&text).await? as f64)
}

/// A server's tags.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn server_tags(host: State<'_, Host>, server: String) -> Result<Vec<String>, IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host
        .server_tags(&id)
        .await?
        .into_iter()
        .map(|t| t.as_str().to_owned())
        .collect())
}

/// Replaces a server's tags (`trusted`, `private-data`, `untrusted-content`, `external`).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn set_server_tags(
    host: State<'_, Host>,
    server: String,
    tags: Vec<String>,
) -> Result<(), IpcError> {
    let id = Host::server_id(&server)?;
    let tags = tags
        .iter()
        .map(|t| {
            ServerTag::parse(t).ok_or_else(|| {
                IpcError::invalid("tags are trusted, private-data, untrusted-content or external")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(host.set_server_tags(&id, &tags).await?)
}
