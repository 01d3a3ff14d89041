//! The Registry page: browse and search an MCP Registry, show an entry, and install it as a
//! server that waits in the trust dialog like any other (issue 14, point 3).
//!
//! The registry URL is the settings' (`Host::settings`), never the window's: the window cannot
//! point the app at a registry of its choosing. Install takes the entry's name and the
//! person's answers, and the core fetches and builds the spec itself, so what is added is what
//! the registry published; secret answers are sent once, go to the keyring, and never come
//! back. Nothing starts here: the window then opens the trust dialog for the new server.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::host::{AddOptions, Host};
use switchboard_core::redact::Secret;
use switchboard_core::registry::{
    self, Answers, Entry, Freshness, InputKind, InputSpec, InstallOption, Page, RegistryError,
    SearchQuery,
};
use tauri::State;

use super::{ErrorCode, IpcError};

/// Where an input goes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RegistryInputKind {
    /// An environment variable.
    Env,
    /// A command-line argument.
    Arg,
    /// A request header.
    Header,
    /// A template variable.
    Var,
}

impl From<InputKind> for RegistryInputKind {
    fn from(k: InputKind) -> Self {
        match k {
            InputKind::Env => Self::Env,
            InputKind::Arg => Self::Arg,
            InputKind::Header => Self::Header,
            InputKind::Var => Self::Var,
        }
    }
}

impl From<RegistryInputKind> for InputKind {
    fn from(k: RegistryInputKind) -> Self {
        match k {
            RegistryInputKind::Env => Self::Env,
            RegistryInputKind::Arg => Self::Arg,
            RegistryInputKind::Header => Self::Header,
            RegistryInputKind::Var => Self::Var,
        }
    }
}

/// One entry as listed.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RegistryEntryDto {
    /// The registry name (`io.github.user/server`).
    pub name: String,
    /// A display name.
    pub title: Option<String>,
    /// The version.
    pub version: String,
    /// What it does (cut by the core).
    pub description: String,
    /// Its source repository.
    pub repository: Option<String>,
    /// Whether one of its packages or remotes can be installed.
    pub installable: bool,
}

impl From<&Entry> for RegistryEntryDto {
    fn from(e: &Entry) -> Self {
        Self {
            name: e.server.name.clone(),
            title: e.server.title.clone(),
            version: e.server.version.clone(),
            description: e.server.description.clone(),
            repository: e.server.repository.as_ref().map(|r| r.url.clone()),
            installable: registry::default_option(&e.server).is_some(),
        }
    }
}

/// One page of entries.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RegistryPageDto {
    /// The active entries.
    pub entries: Vec<RegistryEntryDto>,
    /// The cursor of the next page.
    pub next_cursor: Option<String>,
    /// Entries not shown (deprecated, deleted, or not valid server.json).
    pub not_shown: u32,
    /// When the page is from the cache because the registry could not be reached: why.
    pub offline: Option<String>,
}

impl From<Page> for RegistryPageDto {
    fn from(p: Page) -> Self {
        Self {
            entries: p.entries.iter().map(RegistryEntryDto::from).collect(),
            next_cursor: p.next_cursor,
            not_shown: u32::try_from(p.hidden + p.skipped).unwrap_or(u32::MAX),
            offline: offline(&p.freshness),
        }
    }
}

fn offline(f: &Freshness) -> Option<String> {
    match f {
        Freshness::Offline { age_secs, reason } => Some(format!(
            "The registry could not be reached ({reason}); this is what was cached {} min ago.",
            age_secs / 60
        )),
        Freshness::Live | Freshness::Cached { .. } => None,
    }
}

/// One value the install form asks for.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RegistryInputDto {
    /// Where it goes.
    pub kind: RegistryInputKind,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether it must be given.
    pub required: bool,
    /// Whether it is a secret (a password field; the value goes to the keyring).
    pub secret: bool,
    /// The value used when none is given.
    pub default: Option<String>,
    /// The only values allowed, if any.
    pub choices: Vec<String>,
}

impl From<&InputSpec> for RegistryInputDto {
    fn from(i: &InputSpec) -> Self {
        Self {
            kind: i.kind.into(),
            name: i.name.clone(),
            description: i.description.clone(),
            required: i.required,
            secret: i.secret,
            default: i.default.clone(),
            choices: i.choices.clone(),
        }
    }
}

/// One way to run an entry.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RegistryOptionDto {
    /// Its index, sent back with the install.
    pub index: u32,
    /// `npm @scope/pkg 1.2.3`, `remote streamable-http https://...`.
    pub label: String,
    /// Why it cannot be used.
    pub refused: Option<String>,
    /// What the form asks.
    pub inputs: Vec<RegistryInputDto>,
}

impl From<&InstallOption> for RegistryOptionDto {
    fn from(o: &InstallOption) -> Self {
        Self {
            index: u32::try_from(o.index).unwrap_or(u32::MAX),
            label: o.label.clone(),
            refused: o.refused.clone(),
            inputs: o.inputs.iter().map(RegistryInputDto::from).collect(),
        }
    }
}

/// An entry with its ways to run it.
#[derive(Clone, Debug, Serialize, Type)]
pub struct RegistryDetailDto {
    /// The entry.
    pub entry: RegistryEntryDto,
    /// Its packages and remotes.
    pub options: Vec<RegistryOptionDto>,
    /// The server name proposed.
    pub suggested_name: Option<String>,
}

impl From<&Entry> for RegistryDetailDto {
    fn from(e: &Entry) -> Self {
        Self {
            entry: e.into(),
            options: registry::options(&e.server)
                .iter()
                .map(RegistryOptionDto::from)
                .collect(),
            suggested_name: registry::suggested_id(&e.server.name).map(|i| i.to_string()),
        }
    }
}

/// A value the person typed. No `Debug`: the value may be a secret.
#[derive(Clone, Deserialize, Type)]
pub struct RegistryAnswer {
    /// Where it goes.
    pub kind: RegistryInputKind,
    /// The input's name.
    pub name: String,
    /// The value (a secret one goes to the keyring).
    pub value: String,
}

/// What to install (no `Debug`: the answers may hold secrets).
#[derive(Clone, Deserialize, Type)]
pub struct RegistryInstallRequest {
    /// The registry name.
    pub registry_name: String,
    /// The version shown.
    pub version: String,
    /// Which package or remote.
    pub option: u32,
    /// The server name here.
    pub server_name: String,
    /// The values typed.
    pub answers: Vec<RegistryAnswer>,
}

impl RegistryInstallRequest {
    fn answers(&self) -> Answers {
        let mut a = Answers::new();
        for x in &self.answers {
            a.set(x.kind.into(), x.name.clone(), Secret::new(x.value.clone()));
        }
        a
    }
}

impl From<RegistryError> for IpcError {
    fn from(e: RegistryError) -> Self {
        let code = match &e {
            RegistryError::NotFound { .. } => ErrorCode::NotFound,
            RegistryError::Unreachable { .. }
            | RegistryError::Status { .. }
            | RegistryError::TooLarge { .. }
            | RegistryError::Malformed { .. } => ErrorCode::Server,
            _ => ErrorCode::Invalid,
        };
        IpcError::new(code, e.to_string())
    }
}

fn client(host: &Host) -> Result<registry::RegistryClient, IpcError> {
    let url = host.settings().settings.registry_url;
    Ok(registry::client_in(host.data_dir(), &url)?)
}

/// One page of the registry's active entries whose names contain `query`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn registry_search(
    host: State<'_, Host>,
    query: Option<String>,
    cursor: Option<String>,
    refresh: bool,
) -> Result<RegistryPageDto, IpcError> {
    let q = SearchQuery {
        text: query,
        cursor,
        limit: 30,
        refresh,
    };
    Ok(client(&host)?.search(&q).await?.into())
}

/// One entry (latest version) with what each way of running it needs.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn registry_show(
    host: State<'_, Host>,
    name: String,
) -> Result<RegistryDetailDto, IpcError> {
    let (entry, _) = client(&host)?.server(&name, None).await?;
    Ok((&entry).into())
}

/// Adds the entry as an unapproved server; returns its name for the trust dialog.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn registry_install(
    host: State<'_, Host>,
    request: RegistryInstallRequest,
) -> Result<String, IpcError> {
    let id = Host::server_id(&request.server_name)?;
    let option = Some(request.option as usize);
    let (_, p) = registry::fetch_proposal(
        &client(&host)?,
        &request.registry_name,
        Some(&request.version),
        option,
        id.clone(),
        &request.answers(),
    )
    .await?;
    let opts = AddOptions {
        secrets: p.secrets,
        ..AddOptions::default()
    };
    host.add_server_with(p.spec, opts).await?;
    Ok(id.to_string())
}
