//! A local server's sandbox (SP-07): read and change it from the server card, and grant what a
//! failed start says the sandbox blocked.
//!
//! Paths arrive typed (the desktop has no file picker): absolute or starting with `~/`, and they
//! must exist; Rust resolves them. A grant from the card's "allow" button is not a path the
//! webview chose: it sends back the kind and path the finding showed, Rust reads the last
//! failed run again and grants only a finding it still makes with exactly that kind and
//! path (SP-12). An index would grant whatever the live stderr says now, which may no longer
//! be what the person saw; the path they saw is what they agreed to.
//!
//! Domain lists (SP-13) arrive as typed patterns and are checked here and again by the core;
//! a refused-domain finding's button allows exactly the domain the card showed.
//!
//! Credential stores (SP-12) are never offered by a finding. A typed grant of one is refused
//! unless its path is also in `unmask`; the card asks [`sandbox_credential_store`] what a
//! typed path holds and puts it there only after a separate confirmation that says so.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::escape::short_for_display;
use switchboard_core::host::{Host, SandboxChange};
use switchboard_core::sandbox::domains::{self, MAX_DOMAINS};
use switchboard_core::sandbox::explain::{Blocked, Finding};
use switchboard_core::sandbox::{Access, SandboxSpec, MAX_PATHS};
use tauri::State;

use super::{logged, IpcError};

/// The longest path accepted.
const PATH_MAX: usize = 4096;

/// A server's sandbox as the card shows and edits it.
#[derive(Clone, Debug, Serialize, Deserialize, Type)]
pub struct SandboxDto {
    /// Whether it runs sandboxed.
    pub enabled: bool,
    /// Folders (or files) it may read.
    pub read: Vec<String>,
    /// Folders (or files) it may read and write.
    pub write: Vec<String>,
    /// Paths hidden even inside a granted folder.
    pub deny: Vec<String>,
    /// Whether it may use the network.
    pub network: bool,
    /// Domains it may reach (`example.com`, `*.example.com`); with any listed, only those,
    /// through the filtering proxy (SP-13).
    pub allow_domains: Vec<String>,
    /// Domains it may never reach (a deny wins over an allow).
    pub deny_domains: Vec<String>,
    /// Granted credential stores the person unmasked after the card's confirmation.
    pub unmask: Vec<String>,
}

/// The setting after a change.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SandboxSaved {
    /// As stored (resolved, sorted, without duplicates).
    pub sandbox: SandboxDto,
    /// Whether the server stayed approved (it was approved before the change).
    pub approval_kept: bool,
}

/// What the sandbox blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum BlockedKind {
    /// Reading a path.
    Read,
    /// Writing a path.
    Write,
    /// The network.
    Network,
    /// A credential store, always hidden (nothing to grant from a finding).
    Masked,
    /// The sandbox could not be set up at all (nothing to grant).
    Unavailable,
}

/// One thing the sandbox blocked in the last failed run.
#[derive(Clone, Debug, Serialize, Type)]
pub struct SandboxFindingDto {
    /// What.
    pub kind: BlockedKind,
    /// The path, for reads and writes (escaped for display).
    pub path: Option<String>,
    /// One sentence: what was blocked and how to allow it.
    pub message: String,
    /// The stderr line it was read from, escaped.
    pub evidence: String,
}

fn shown(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl From<&SandboxSpec> for SandboxDto {
    fn from(s: &SandboxSpec) -> Self {
        let list = |v: &[PathBuf]| v.iter().map(|p| shown(p)).collect();
        Self {
            enabled: s.enabled,
            read: list(&s.read),
            write: list(&s.write),
            deny: list(&s.deny),
            network: s.network,
            allow_domains: s.allow_domains.clone(),
            deny_domains: s.deny_domains.clone(),
            unmask: list(&s.unmask),
        }
    }
}

impl From<SandboxChange> for SandboxSaved {
    fn from(c: SandboxChange) -> Self {
        Self {
            sandbox: (&c.sandbox).into(),
            approval_kept: c.approval_kept,
        }
    }
}

fn finding_dto(server: &switchboard_core::ids::ServerId, f: &Finding) -> SandboxFindingDto {
    let (kind, path) = match &f.blocked {
        Blocked::Path { path, access } => (
            match access {
                Access::Read => BlockedKind::Read,
                Access::Write => BlockedKind::Write,
            },
            Some(short_for_display(&path.to_string_lossy(), PATH_MAX)),
        ),
        Blocked::Masked { path, .. } => (
            BlockedKind::Masked,
            Some(short_for_display(&path.to_string_lossy(), PATH_MAX)),
        ),
        Blocked::Network => (BlockedKind::Network, None),
        // SP-13: a domain the proxy refused; granting it (matched back by kind and name)
        // allows that domain.
        Blocked::Domain { name } => (
            BlockedKind::Network,
            Some(short_for_display(name, PATH_MAX)),
        ),
        Blocked::Unavailable { .. } => (BlockedKind::Unavailable, None),
    };
    SandboxFindingDto {
        kind,
        path,
        message: f.describe(server),
        evidence: f.evidence.clone(),
    }
}

/// A typed path: absolute, or under the home folder with `~/`; it must exist.
fn typed_path(typed: &str, home: Option<&Path>) -> Result<PathBuf, IpcError> {
    let typed = typed.trim();
    if typed.is_empty() || typed.len() > PATH_MAX || typed.contains(['\0', '\n', '\r']) {
        return Err(IpcError::invalid(
            "a sandbox path must be one line of at most 4096 characters",
        ));
    }
    let path = match (typed.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => PathBuf::from(typed),
    };
    if !path.is_absolute() {
        return Err(IpcError::invalid(
            "a sandbox path must be absolute (or start with ~/)",
        ));
    }
    if !path.exists() {
        return Err(IpcError::invalid(format!(
            "{} does not exist",
            short_for_display(&path.to_string_lossy(), 200)
        )));
    }
    Ok(path)
}

/// Domain patterns as the window typed them, each checked (SP-13).
fn domain_list(typed: &[String]) -> Result<Vec<String>, IpcError> {
    if typed.len() > MAX_DOMAINS {
        return Err(IpcError::invalid(format!(
            "a sandbox lists at most {MAX_DOMAINS} domains of each kind"
        )));
    }
    typed
        .iter()
        .map(|d| domains::pattern(d).map_err(|e| IpcError::invalid(e.to_string())))
        .collect()
}

impl SandboxDto {
    /// The setting the window asked for, every path checked.
    fn into_spec(self, home: Option<&Path>) -> Result<SandboxSpec, IpcError> {
        if self.read.len() + self.write.len() + self.deny.len() + self.unmask.len() > MAX_PATHS {
            return Err(IpcError::invalid(format!(
                "a sandbox lists at most {MAX_PATHS} paths"
            )));
        }
        let paths = |v: &[String]| -> Result<Vec<PathBuf>, IpcError> {
            v.iter().map(|p| typed_path(p, home)).collect()
        };
        Ok(SandboxSpec {
            enabled: self.enabled,
            read: paths(&self.read)?,
            write: paths(&self.write)?,
            deny: paths(&self.deny)?,
            network: self.network,
            allow_domains: domain_list(&self.allow_domains)?,
            deny_domains: domain_list(&self.deny_domains)?,
            unmask: paths(&self.unmask)?,
        })
    }
}

/// A local server's sandbox.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn server_sandbox(host: State<'_, Host>, server: String) -> Result<SandboxDto, IpcError> {
    let id = Host::server_id(&server)?;
    Ok((&host.server_sandbox(&id).await?).into())
}

/// Replaces a local server's sandbox; a running server restarts into it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), enabled = sandbox.enabled))]
pub async fn set_server_sandbox(
    host: State<'_, Host>,
    server: String,
    sandbox: SandboxDto,
) -> Result<SandboxSaved, IpcError> {
    let id = Host::server_id(&server)?;
    let spec = sandbox.into_spec(std::env::home_dir().as_deref())?;
    Ok(host.set_server_sandbox(&id, spec).await?.into())
}

/// What the sandbox blocked in the server's last failed run.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn sandbox_findings(
    host: State<'_, Host>,
    server: String,
) -> Result<Vec<SandboxFindingDto>, IpcError> {
    let id = Host::server_id(&server)?;
    let found = host.sandbox_findings(&id).await?;
    Ok(found.iter().map(|f| finding_dto(&id, f)).collect())
}

/// The finding among `found` that the window showed as `kind` and `path` (the path as
/// displayed), if Rust still makes it.
fn shown_finding<'a>(
    server: &switchboard_core::ids::ServerId,
    found: &'a [Finding],
    kind: BlockedKind,
    path: Option<&str>,
) -> Option<&'a Finding> {
    found.iter().find(|f| {
        let dto = finding_dto(server, f);
        dto.kind == kind && dto.path.as_deref() == path
    })
}

/// Grants the finding the window showed, named by its kind and displayed path: only if
/// Rust's own reading of the last failed run still finds exactly that (SP-12).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), kind = ?kind))]
pub async fn grant_sandbox_finding(
    host: State<'_, Host>,
    server: String,
    kind: BlockedKind,
    path: Option<String>,
) -> Result<SandboxSaved, IpcError> {
    let id = Host::server_id(&server)?;
    let found = host.sandbox_findings(&id).await?;
    let f = shown_finding(&id, &found, kind, path.as_deref()).ok_or_else(|| {
        IpcError::invalid("the sandbox no longer reports that; the server may have started since")
    })?;
    Ok(host.grant_sandbox(&id, &f.blocked).await?.into())
}

/// What a typed path holds when it is (or is inside) a credential store the sandbox always
/// hides, for the card's confirmation; `None` for any other path (SP-12).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn sandbox_credential_store(
    host: State<'_, Host>,
    path: String,
) -> Result<Option<String>, IpcError> {
    let path = typed_path(&path, std::env::home_dir().as_deref())?;
    Ok(host.credential_store_of(&path).map(|s| s.holds.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::ErrorCode;

    #[test]
    fn typed_paths_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir(home.join("proj")).unwrap();
        assert_eq!(typed_path("~/proj", Some(home)).unwrap(), home.join("proj"));
        for bad in ["", "relative", "~x/y", "/no/such/path/here", "/tmp/\nx"] {
            let e = typed_path(bad, Some(home)).unwrap_err();
            assert_eq!(e.code, ErrorCode::Invalid, "{bad}");
        }
        let too_many = SandboxDto {
            enabled: true,
            read: vec![home.to_string_lossy().into_owned(); MAX_PATHS + 1],
            write: vec![],
            deny: vec![],
            network: false,
            allow_domains: vec![],
            deny_domains: vec![],
            unmask: vec![],
        };
        assert!(too_many.into_spec(Some(home)).is_err());
    }

    /// SP-13: the window's domain lists are checked as typed and stored as written; a domain
    /// that is no domain is refused with the reason.
    #[test]
    fn typed_domains_are_checked() {
        let dto = |allow: &[&str], deny: &[&str]| SandboxDto {
            enabled: true,
            read: vec![],
            write: vec![],
            deny: vec![],
            network: true,
            allow_domains: allow.iter().map(|d| (*d).to_owned()).collect(),
            deny_domains: deny.iter().map(|d| (*d).to_owned()).collect(),
            unmask: vec![],
        };
        let spec = dto(&["API.Example.com", "*.cdn.test"], &["ads.example.com"])
            .into_spec(None)
            .unwrap();
        assert_eq!(spec.allow_domains, ["api.example.com", "*.cdn.test"]);
        assert_eq!(spec.deny_domains, ["ads.example.com"]);
        assert_eq!(SandboxDto::from(&spec).allow_domains, spec.allow_domains);
        for bad in ["not a domain", "http://x.test/", "", "*"] {
            let e = dto(&[bad], &[]).into_spec(None).unwrap_err();
            assert_eq!(e.code, ErrorCode::Invalid, "{bad}");
            let e = dto(&[], &[bad]).into_spec(None).unwrap_err();
            assert_eq!(e.code, ErrorCode::Invalid, "{bad}");
        }
        let many: Vec<String> = (0..=MAX_DOMAINS).map(|i| format!("h{i}.test")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(dto(&many, &[]).into_spec(None).is_err());
    }

    /// SP-13: a refused domain is offered as that domain, and only the domain the window
    /// showed is granted.
    #[test]
    fn a_refused_domain_is_granted_by_its_name() {
        use switchboard_core::ids::ServerId;
        let id = ServerId::new("s").unwrap();
        let found = vec![Finding {
            blocked: Blocked::Domain {
                name: "api.example.com".into(),
            },
            evidence: "e".into(),
        }];
        let dto = finding_dto(&id, &found[0]);
        assert_eq!(dto.kind, BlockedKind::Network);
        assert_eq!(dto.path.as_deref(), Some("api.example.com"));
        let got = |path| shown_finding(&id, &found, BlockedKind::Network, path).is_some();
        assert!(got(Some("api.example.com")));
        assert!(!got(Some("evil.example.com")));
        assert!(!got(None), "the whole network is not what was shown");
    }

    /// SP-12: the button grants only what the window displayed, checked again against Rust's
    /// own findings; a finding of a credential store is never granted.
    #[test]
    fn a_grant_names_the_finding_the_window_showed() {
        use switchboard_core::ids::ServerId;
        let id = ServerId::new("s").unwrap();
        let finding = |blocked| Finding {
            blocked,
            evidence: "e".into(),
        };
        let found = vec![
            finding(Blocked::Path {
                path: "/srv/data".into(),
                access: Access::Read,
            }),
            finding(Blocked::Masked {
                path: "/home/ann/.ssh".into(),
                holds: "SSH keys".into(),
            }),
            finding(Blocked::Network),
        ];
        let got =
            |kind, path: Option<&str>| shown_finding(&id, &found, kind, path).map(|f| &f.blocked);
        assert_eq!(
            got(BlockedKind::Read, Some("/srv/data")),
            Some(&found[0].blocked)
        );
        assert_eq!(got(BlockedKind::Network, None), Some(&found[2].blocked));
        // Not what Rust finds now: another path, another access, a path it never showed.
        assert_eq!(got(BlockedKind::Write, Some("/srv/data")), None);
        assert_eq!(got(BlockedKind::Read, Some("/srv")), None);
        assert_eq!(got(BlockedKind::Read, Some("/home/ann/.ssh")), None);
        assert_eq!(got(BlockedKind::Read, None), None);
        // The credential store is found as what it is, and the DTO offers nothing for it.
        let dto = finding_dto(&id, &found[1]);
        assert_eq!(dto.kind, BlockedKind::Masked);
        assert!(!dto.message.contains("--allow"), "{}", dto.message);
    }
}
