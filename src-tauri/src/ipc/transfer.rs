//! Import from and export to other hosts' config files (Claude Desktop, VS Code, Cursor).
//! The window reads the file itself (a file input) and sends its text; nothing here touches
//! the file system on the web view's behalf.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::export::ExportOutput;
use switchboard_core::config::import::{ForeignFormat, ImportNote, NoteKind};
use switchboard_core::host::{Host, ImportOutcome, ImportPreview, PreviewServer};
use tauri::State;

use super::IpcError;

/// A foreign config format.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum FormatDto {
    /// Claude Desktop (`mcpServers`).
    Claude,
    /// VS Code (`servers` + `inputs`).
    Vscode,
    /// Cursor (`mcpServers`, remote servers too).
    Cursor,
}

impl From<FormatDto> for ForeignFormat {
    fn from(f: FormatDto) -> Self {
        match f {
            FormatDto::Claude => Self::Claude,
            FormatDto::Vscode => Self::Vscode,
            FormatDto::Cursor => Self::Cursor,
        }
    }
}

impl From<ForeignFormat> for FormatDto {
    fn from(f: ForeignFormat) -> Self {
        match f {
            ForeignFormat::Claude => Self::Claude,
            ForeignFormat::Vscode => Self::Vscode,
            ForeignFormat::Cursor => Self::Cursor,
        }
    }
}

/// Something the user should read about an import.
#[derive(Clone, Debug, Serialize, Type)]
pub struct NoteDto {
    /// The server concerned.
    pub server: Option<String>,
    /// A short kind: dropped_field, skipped_server, renamed, secret_moved, needs_secret,
    /// secret_not_movable, refused_reference.
    pub kind: String,
    /// The sentence, names escaped.
    pub message: String,
}

impl From<ImportNote> for NoteDto {
    fn from(n: ImportNote) -> Self {
        let kind = match n.kind {
            NoteKind::DroppedField => "dropped_field",
            NoteKind::SkippedServer => "skipped_server",
            NoteKind::Renamed => "renamed",
            NoteKind::SecretMoved => "secret_moved",
            NoteKind::NeedsSecret => "needs_secret",
            NoteKind::SecretNotMovable => "secret_not_movable",
            NoteKind::RefusedReference => "refused_reference",
            _ => "other",
        };
        Self {
            server: n.server,
            kind: kind.into(),
            message: n.message,
        }
    }
}

/// One server an import would add.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PreviewServerDto {
    /// Its name after any rename.
    pub name: String,
    /// `stdio` or `http`.
    pub kind: String,
    /// The command line or URL, escaped.
    pub summary: String,
    /// Values that go to the keyring, by name only.
    pub secrets: Vec<String>,
    /// Whether a local server would run sandboxed (SP-07); `None` for a remote one.
    pub sandboxed: Option<bool>,
}

/// What an import would do; nothing has been stored.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ImportPreviewDto {
    /// The format recognised.
    pub format: FormatDto,
    /// Servers to add.
    pub servers: Vec<PreviewServerDto>,
    /// Notes.
    pub notes: Vec<NoteDto>,
}

/// What an import did.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ImportResultDto {
    /// Servers added; every one waits for approval before it starts or connects.
    pub added: Vec<String>,
    /// Secrets stored in the keyring, as `SERVER: NAME` (names only).
    pub secrets_stored: Vec<String>,
    /// Notes.
    pub notes: Vec<NoteDto>,
}

impl From<PreviewServer> for PreviewServerDto {
    fn from(s: PreviewServer) -> Self {
        Self {
            name: s.id.to_string(),
            kind: s.kind.into(),
            summary: s.summary,
            secrets: s.secrets.iter().map(ToString::to_string).collect(),
            sandboxed: s.sandboxed,
        }
    }
}

impl From<ImportPreview> for ImportPreviewDto {
    fn from(p: ImportPreview) -> Self {
        Self {
            format: p.format.into(),
            servers: p.servers.into_iter().map(Into::into).collect(),
            notes: p.notes.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<ImportOutcome> for ImportResultDto {
    fn from(o: ImportOutcome) -> Self {
        Self {
            added: o.added.iter().map(ToString::to_string).collect(),
            secrets_stored: o
                .secrets_stored
                .iter()
                .map(|(server, name)| format!("{server}: {name}"))
                .collect(),
            notes: o.notes.into_iter().map(Into::into).collect(),
        }
    }
}

/// Previews importing `text` (the file's contents or pasted JSON). Stores nothing.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(format = ?format))]
pub async fn import_preview(
    host: State<'_, Host>,
    text: String,
    format: Option<FormatDto>,
) -> Result<ImportPreviewDto, IpcError> {
    let p = host.import_preview(&text, format.map(Into::into)).await?;
    Ok(p.into())
}

/// Imports `text`. Nothing starts or connects; secret-looking values go to the keyring first.
/// `replace_secrets` is the person's confirmation after a `secret_exists` error.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(format = ?format, replace_secrets = replace_secrets))]
pub async fn import_config(
    host: State<'_, Host>,
    text: String,
    format: Option<FormatDto>,
    replace_secrets: bool,
) -> Result<ImportResultDto, IpcError> {
    let o = host
        .import_config_with(&text, format.map(Into::into), replace_secrets)
        .await?;
    Ok(o.into())
}

/// An exported config file.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ExportDto {
    /// The file's text (secrets only referenced, never written).
    pub text: String,
    /// What did not carry over.
    pub notes: Vec<String>,
}

impl From<ExportOutput> for ExportDto {
    fn from(o: ExportOutput) -> Self {
        Self {
            text: o.text,
            notes: o.notes,
        }
    }
}

/// Every server in another host's format.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(format = ?format))]
pub async fn export_config(
    host: State<'_, Host>,
    format: FormatDto,
) -> Result<ExportDto, IpcError> {
    Ok(host.export_config(format.into()).await?.into())
}
