//! What a server may see and what the model reads of it: the folders (roots) a server is told
//! it may work in, and whether its tool results wait for the person's review before a model
//! reads them (AP-05).
//!
//! Folders arrive as typed paths (the desktop has no file picker): they must be absolute (or
//! start with `~`), and exist as folders; Rust resolves them, so what the server is told is the
//! real path, not what was typed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::host::Host;
use switchboard_core::mcp::requests::Root;
use switchboard_core::store::ResultReview;
use tauri::State;

use super::{logged, IpcError};

/// Folders one server may be given.
const ROOTS_MAX: usize = 64;
/// The longest path accepted.
const PATH_MAX: usize = 4096;

/// A folder a server may see.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RootDto {
    /// The `file://` URI the server is told.
    pub uri: String,
    /// Its name.
    pub name: Option<String>,
    /// The local path, when the URI is a local folder.
    pub path: Option<String>,
}

impl From<Root> for RootDto {
    fn from(r: Root) -> Self {
        let path = tauri::Url::parse(&r.uri)
            .ok()
            .filter(|u| u.scheme() == "file")
            .and_then(|u| u.to_file_path().ok())
            .map(|p| p.to_string_lossy().into_owned());
        Self {
            uri: r.uri,
            name: r.name,
            path,
        }
    }
}

/// Whether a server's tool results wait for review before a model reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ResultReviewDto {
    /// Held when the server is tagged untrusted-content or the tool says it reaches the open
    /// world.
    Default,
    /// Always held.
    Always,
    /// Never held.
    Never,
}

impl From<ResultReview> for ResultReviewDto {
    fn from(r: ResultReview) -> Self {
        match r {
            ResultReview::Default => Self::Default,
            ResultReview::Always => Self::Always,
            ResultReview::Never => Self::Never,
        }
    }
}

impl From<ResultReviewDto> for ResultReview {
    fn from(r: ResultReviewDto) -> Self {
        match r {
            ResultReviewDto::Default => Self::Default,
            ResultReviewDto::Always => Self::Always,
            ResultReviewDto::Never => Self::Never,
        }
    }
}

/// A typed folder as a path: absolute, or under the home folder with `~`; it must exist.
fn folder(typed: &str, home: Option<&Path>) -> Result<PathBuf, IpcError> {
    let typed = typed.trim();
    if typed.is_empty() || typed.len() > PATH_MAX || typed.contains('\0') {
        return Err(IpcError::invalid(
            "a folder must be a path of at most 4096 characters",
        ));
    }
    let path = match (typed.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => PathBuf::from(typed),
    };
    if !path.is_absolute() {
        return Err(IpcError::invalid(
            "a folder must be an absolute path (or start with ~/)",
        ));
    }
    if !path.is_dir() {
        return Err(IpcError::invalid(format!(
            "{} is not an existing folder",
            switchboard_core::escape::short_for_display(&path.to_string_lossy(), 200)
        )));
    }
    Ok(path)
}

/// The typed folders of one server, each checked and resolved (against the home folder for
/// `~`); one bad folder refuses them all.
fn folders(typed: &[String]) -> Result<Vec<PathBuf>, IpcError> {
    if typed.len() > ROOTS_MAX {
        return Err(IpcError::invalid(format!(
            "a server may see at most {ROOTS_MAX} folders"
        )));
    }
    let home = std::env::home_dir();
    typed.iter().map(|f| folder(f, home.as_deref())).collect()
}

/// Roots as the window shows them.
fn dtos(roots: Vec<Root>) -> Vec<RootDto> {
    roots.into_iter().map(Into::into).collect()
}

/// The folders a server may see.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn server_roots(host: State<'_, Host>, server: String) -> Result<Vec<RootDto>, IpcError> {
    let id = Host::server_id(&server)?;
    Ok(dtos(host.server_roots(&id).await?))
}

/// Replaces the folders a server may see; a running server is told at once. Returns them as
/// stored (resolved, without duplicates).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), folders = folders.len()))]
pub async fn set_server_roots(
    host: State<'_, Host>,
    server: String,
    folders: Vec<String>,
) -> Result<Vec<RootDto>, IpcError> {
    let id = Host::server_id(&server)?;
    let paths = self::folders(&folders)?;
    Ok(dtos(host.set_server_roots(&id, &paths).await?))
}

/// Whether a server's tool results are held for review.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn result_review(
    host: State<'_, Host>,
    server: String,
) -> Result<ResultReviewDto, IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host.result_review(&id).await?.into())
}

/// Sets whether a server's tool results are held for review.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), review = ?review))]
pub async fn set_result_review(
    host: State<'_, Host>,
    server: String,
    review: ResultReviewDto,
) -> Result<(), IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host.set_result_review(&id, review.into()).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::ErrorCode;

    #[test]
    fn typed_folders_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir(home.join("proj")).unwrap();
        std::fs::write(home.join("file.txt"), "x").unwrap();
        assert_eq!(folder("~/proj", Some(home)).unwrap(), home.join("proj"));
        assert_eq!(folder(" ~ ", Some(home)).unwrap(), home);
        let abs = home.join("proj");
        assert_eq!(folder(abs.to_str().unwrap(), None).unwrap(), abs);
        for bad in [
            "",
            "relative/dir",
            "~other/x",
            "/no/such/folder/anywhere",
            "/tmp/\0x",
        ] {
            let e = folder(bad, Some(home)).unwrap_err();
            assert_eq!(e.code, ErrorCode::Invalid, "{bad}");
        }
        let file = home.join("file.txt");
        assert!(folder(file.to_str().unwrap(), Some(home)).is_err());
        assert!(folder(&"/a".repeat(3000), Some(home)).is_err());
    }

    #[test]
    fn roots_show_their_local_path() {
        let r = RootDto::from(Root {
            uri: "file:///home/ada/my%20notes/".into(),
            name: Some("my notes".into()),
        });
        assert_eq!(r.path.as_deref(), Some("/home/ada/my notes/"));
        let r = RootDto::from(Root {
            uri: "https://example.com/".into(),
            name: None,
        });
        assert_eq!(r.path, None);
    }
}
