//! Skills (`io.modelcontextprotocol/skills`) of the running servers: listed for the catalog and
//! the "Attach skill" picker (manifests only, no file read), approved by fingerprint, and read
//! for a conversation, verified by the host before any text comes back.

use serde::Serialize;
use specta::Type;
use switchboard_core::approval::Origin;
use switchboard_core::host::{Host, SkillHostError, SkillState, SkillView};
use switchboard_core::skill_data::SkillError;
use tauri::State;

use super::conversations::conversation_id;
use super::{logged, ErrorCode, IpcError};

/// One file of a skill's manifest.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SkillFileDto {
    /// Its URI.
    pub uri: String,
    /// Its size in bytes.
    pub size: f64,
    /// Its `sha256:` digest.
    pub digest: String,
}

/// One skill of a running server.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SkillDto {
    /// The server.
    pub server: String,
    /// Its `SKILL.md` URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// `approved`, `new` or `changed` (the last two are held until approved).
    pub state: String,
    /// What an approval of it names.
    pub fingerprint: String,
    /// Its files; empty for a dynamic skill.
    pub files: Vec<SkillFileDto>,
    /// Whether it is dynamic (no digests to verify against).
    pub dynamic: bool,
    /// Why it cannot be used at all, if it breaks the spec's rules.
    pub invalid: Option<String>,
    /// What changed since it was approved, a line each.
    pub changes: Vec<String>,
}

/// A skill's `SKILL.md`, read and verified.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SkillTextDto {
    /// Its URI.
    pub uri: String,
    /// Its text.
    pub text: String,
}

/// The skills of a server, or why they could not be listed.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerSkillsDto {
    /// The server.
    pub server: String,
    /// Its skills.
    pub skills: Vec<SkillDto>,
    /// Why listing failed, if it did.
    pub error: Option<String>,
}

impl From<SkillView> for SkillDto {
    fn from(v: SkillView) -> Self {
        let changes = v.changes();
        let state = match v.state {
            SkillState::Approved => "approved",
            SkillState::New => "new",
            SkillState::Changed => "changed",
        };
        Self {
            server: v.server.to_string(),
            uri: v.entry.uri.clone(),
            name: v.entry.name().to_owned(),
            description: v.entry.description().to_owned(),
            state: state.to_owned(),
            fingerprint: v.fingerprint,
            dynamic: v.entry.listed().is_none(),
            files: v
                .entry
                .listed()
                .unwrap_or_default()
                .iter()
                .map(|f| SkillFileDto {
                    uri: f.uri.clone(),
                    size: f.size as f64,
                    digest: f.digest.clone(),
                })
                .collect(),
            invalid: v.invalid,
            changes,
        }
    }
}

/// The error a person sees: held and stale skills ask for a review, a skill that failed
/// verification is the server's fault.
fn skill_error(e: SkillHostError) -> IpcError {
    match e {
        SkillHostError::Host(h) => h.into(),
        SkillHostError::Held { .. } | SkillHostError::Stale { .. } => {
            IpcError::new(ErrorCode::NeedsTrust, e.to_string())
        }
        SkillHostError::Skill(SkillError::Unknown { .. }) => IpcError::not_found(e.to_string()),
        SkillHostError::Skill(_) => IpcError::new(ErrorCode::Server, e.to_string()),
        other => IpcError::new(ErrorCode::Internal, other.to_string()),
    }
}

/// The skills of every running server that offers some (reads no skill file).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn list_skills(host: State<'_, Host>) -> Result<Vec<ServerSkillsDto>, IpcError> {
    let all = host.all_skills().await.map_err(skill_error)?;
    Ok(all
        .into_iter()
        .map(|(server, listed)| {
            let (skills, error) = match listed {
                Ok(v) => (v.into_iter().map(Into::into).collect(), None),
                Err(e) => (Vec::new(), Some(e.to_string())),
            };
            ServerSkillsDto {
                server: server.to_string(),
                skills,
                error,
            }
        })
        .collect())
}

/// Approves a skill as the person saw it (`fingerprint`); refused if it changed since.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), skill = %logged(&name)))]
pub async fn approve_skill(
    host: State<'_, Host>,
    server: String,
    name: String,
    fingerprint: String,
) -> Result<SkillDto, IpcError> {
    let id = Host::server_id(&server)?;
    let v = host
        .approve_skill(&id, &name, Some(&fingerprint))
        .await
        .map_err(skill_error)?;
    Ok(v.into())
}

/// Reads an approved skill's `SKILL.md`, verified, for the conversation `into` ("" for one
/// not started yet).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), skill = %logged(&name)))]
pub async fn read_skill(
    host: State<'_, Host>,
    server: String,
    name: String,
    into: String,
) -> Result<SkillTextDto, IpcError> {
    let id = Host::server_id(&server)?;
    let origin = Origin::Attach {
        conversation: (!into.is_empty())
            .then(|| conversation_id(&into))
            .transpose()?,
    };
    let opts = switchboard_core::host::CallOptions::default();
    let loaded = host
        .read_skill(&id, &name, origin, opts)
        .await
        .map_err(skill_error)?;
    let text = loaded.skill_md.text().map(str::to_owned);
    let text = text.ok_or_else(|| IpcError::new(ErrorCode::Server, "SKILL.md is not text"))?;
    Ok(SkillTextDto {
        uri: loaded.skill_md.uri,
        text,
    })
}
