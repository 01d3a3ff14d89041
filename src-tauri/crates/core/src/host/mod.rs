//! The composition root: [`Host`] wires the store, the secret store, the supervisors and the
//! event channel together, and is what the CLI and the desktop shell call.
//!
//! Everything arrives through [`HostBuilder`] (data directory, secret store, PATH probe,
//! supervisor tunables, the environment children may inherit from); nothing below the host
//! reads global state.
//!
//! The host keeps one [`ServerHandle`] per started server in a map guarded by a `std` mutex.
//! The guard is held only to insert, remove or clone a handle, never across an `.await`; all
//! lifecycle state lives in the supervisor tasks themselves.

mod agents;
pub mod app_calls;
pub mod apps;
mod attention;
mod audit;
mod catalog_cost;
mod chat;
mod chat_tools;
pub mod credentials;
mod delegation;
mod demand;
mod discovery;
mod doctor;
mod history;
pub mod inspector;
mod links;
mod metered;
#[cfg(feature = "harness")]
mod metrics_bench;
mod models;
mod ops;
mod pins;
mod pipelines;
mod policy;
mod putback;
mod redaction;
mod requests;
mod run;
mod runners;
mod runs;
mod sandbox;
mod secret_layout;
mod server_secrets;
mod servers;
mod settings;
mod signin;
mod skills;
mod state;
mod transfer;
mod trust;
mod usage;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, MutexGuard, PoisonError};

use tokio::sync::{broadcast, OnceCell};

pub use crate::agents::{
    is_state_tool, state_tool_specs, AgentImportReport, AgentTools, AsAgent, HandOver,
    HandOverSlot, Lineage, StateAuthor, TaskOutcome, DELEGATE_TOOL, HAND_OVER_TOOL, MAX_CHILDREN,
    MAX_DEPTH, MAX_HAND_OVERS, STATE_TOOLS,
};
pub use crate::catalog_cost::{
    CatalogCosts, CostModel, CostTarget, ServerCost, ToolCost, DEFAULT_TOOLS_WARN_PERCENT,
};
pub use crate::discovery::{
    discovery_specs, loaded_in, Discovering, DISCOVERY_PROMPT, FIND_TOOL, LOAD_TOOL,
};
pub use crate::metrics::ExportOutcome;
pub use crate::metrics::{estimate_tokens, RESOURCE_READS, SERIES_POINTS};
pub use crate::models::ProviderView;
pub use crate::models::{ModelEntry, ProviderModels};
pub use crate::pipelines::{
    agent_refusal, input_schema, is_pipeline_tool_name, pipeline_in_scope, pipeline_spec,
    OfferedPipeline, PipelineAgent, PIPELINE_TOOL_PREFIX,
};
pub use crate::pipelines::{PipelineError, PipelineOutcome, StepRefusal, RUNS_LISTED};
pub use crate::redaction::RedactionState;
pub use crate::skills::{LoadedSkill, SkillHostError, SkillState, SkillView};
pub use attention::{Announced, Attention, Notice, WaitKind, Waiter};
pub use chat::{SendOutcome, SendRequest, TurnInput};
pub use chat_tools::HostTools;
pub use demand::DEFAULT_IDLE_STOP;
pub use doctor::{Check, CheckLevel, DoctorReport};
pub use history::no_conversation;
pub use links::LinkView;
pub use ops::ServerCatalog;
pub use pins::{Held, PinReview, ToolFindings};
pub use policy::tool_digest;
pub use requests::{ELICITATIONS_PER_HOUR, ELICITATIONS_WAITING, SAMPLING_PER_HOUR};
pub use run::{CallOptions, Started};
pub use sandbox::SandboxChange;
pub use server_secrets::ValueStatus;
pub use servers::{AddOptions, AddOutcome, ServerView};
pub use transfer::{ImportOutcome, ImportPreview, PreviewServer};
pub use trust::{FieldBinding, TrustState, TrustView};
pub use usage::{CostReport, ModelCost};

use crate::config::launch::SearchPath;
use crate::events::HostEvent;
use crate::ids::{ConversationId, ServerId};
use crate::secrets::Secrets;
use crate::store::Store;
use crate::supervisor::{ServerHandle, SupervisorConfig};

pub use crate::error::{DeniedBy, HostError};

/// Builds a [`Host`].
#[derive(Debug)]
pub struct HostBuilder {
    data_dir: PathBuf,
    secrets: Option<Secrets>,
    search_path: Option<SearchPath>,
    login_shell: Option<PathBuf>,
    supervisor: SupervisorConfig,
    host_env: Option<Vec<(String, String)>>,
    browser: Option<PathBuf>,
    apps: bool,
}

impl HostBuilder {
    /// A host whose database, logs and default server working directory live in `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            secrets: None,
            search_path: None,
            login_shell: None,
            supervisor: SupervisorConfig::default(),
            host_env: None,
            browser: None,
            apps: false,
        }
    }

    /// The secret store (default: the OS keyring under the app identifier).
    pub fn secrets(mut self, s: Secrets) -> Self {
        self.secrets = Some(s);
        self
    }

    /// The PATH directories for resolving commands (default: the app's PATH, then the login
    /// shell's, probed the first time a command is not on the app's PATH).
    pub fn search_path(mut self, s: SearchPath) -> Self {
        self.search_path = Some(s);
        self
    }

    /// The shell whose login PATH is probed (default: `$SHELL`, else `/bin/sh`).
    pub fn login_shell(mut self, shell: PathBuf) -> Self {
        self.login_shell = Some(shell);
        self
    }

    /// Supervisor tunables.
    pub fn supervisor_config(mut self, c: SupervisorConfig) -> Self {
        self.supervisor = c;
        self
    }

    /// The environment stdio children may inherit allowlisted variables from (default: this
    /// process's environment).
    pub fn host_env(mut self, env: Vec<(String, String)>) -> Self {
        self.host_env = Some(env);
        self
    }

    /// The program that opens URLs a person agreed to open (default: the system browser).
    /// It gets the URL as its only argument.
    pub fn browser(mut self, program: Option<PathBuf>) -> Self {
        self.browser = program;
        self
    }

    /// Whether servers are told this host renders MCP Apps (`io.modelcontextprotocol/ui`;
    /// default: no). Only a shell with the app jail says yes: the desktop app does, the CLI
    /// cannot show a view, so servers fall back to text for it.
    pub fn apps(mut self, on: bool) -> Self {
        self.apps = on;
        self
    }

    /// Opens the database and returns the host. No server is started.
    pub async fn build(self) -> Result<Host, HostError> {
        std::fs::create_dir_all(&self.data_dir).map_err(|source| HostError::Io {
            context: format!(
                "could not create the data directory {}",
                self.data_dir.display()
            ),
            source,
        })?;
        // Server trees a killed host left behind are killed before anything new starts.
        // (Each kill is logged by the sweep.)
        crate::server_process::reaper::RunRecords::in_data_dir(&self.data_dir).sweep();
        let store = Store::open(&self.data_dir.join("switchboard.sqlite")).await?;
        let audit = audit::AuditWriter::spawn(store.clone());
        let secrets = self
            .secrets
            .unwrap_or_else(|| Secrets::new(crate::secrets::KeyringStore::new(APP_ID)));
        let search = OnceCell::new();
        let host_search = match self.search_path {
            Some(s) => {
                let host = SearchPath {
                    host: s.host.clone(),
                    login_shell: Vec::new(),
                };
                let _ = search.set(s);
                host
            }
            None => SearchPath::from_env(),
        };
        let (events, _) = broadcast::channel(1024);
        // RD-03: the one client for providers, model lists and the metrics export follows no
        // redirect, so a key or a prompt never goes where a server points.
        let http = crate::llm::http_client().map_err(|e| HostError::Io {
            context: "could not set up the HTTP client".into(),
            source: std::io::Error::other(e),
        })?;
        let metrics =
            crate::metrics::Metrics::start(store.clone(), http.clone(), self.data_dir.clone());
        let models = crate::models::Models::new(
            store.clone(),
            secrets.clone(),
            http.clone(),
            self.data_dir.clone(),
            Arc::new(audit.clone()),
        );
        let redaction = crate::redaction::Redaction::new(
            store.clone(),
            self.data_dir.clone(),
            Arc::new(audit.clone()),
        );
        let skills = crate::skills::Skills::new(self.data_dir.clone(), Arc::new(audit.clone()));
        let pipelines = crate::pipelines::Pipelines::new(store.clone(), Arc::new(audit.clone()));
        let agents =
            crate::agents::Agents::new(store.clone(), Arc::new(audit.clone()), events.clone());
        let discovery = crate::discovery::Discovery::new(store.clone());
        let host = Host {
            inner: Arc::new(Inner {
                data_dir: self.data_dir,
                store,
                secrets,
                env: state::HostEnv {
                    search,
                    host_search,
                    login_shell: self.login_shell,
                    supervisor: self.supervisor,
                    host_env: self.host_env.unwrap_or_else(|| std::env::vars().collect()),
                    browser: self.browser,
                    apps: self.apps,
                },
                servers: state::ServerState::default(),
                seam: state::SeamState::new(&events),
                audit,
                features: state::Features {
                    metrics,
                    models,
                    redaction,
                    skills,
                    pipelines,
                    agents,
                    discovery,
                },
                events,
            }),
        };
        secret_layout::migrate(&host).await;
        Ok(host)
    }
}

/// The app identifier, used as the keyring service name.
pub const APP_ID: &str = "dev.switchboard.app";

/// The default data directory: the platform data dir plus `switchboard`.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("switchboard")
}

pub(crate) struct Inner {
    data_dir: PathBuf,
    store: Store,
    secrets: Secrets,
    events: broadcast::Sender<HostEvent>,
    /// The queue in front of the audit table (group commit).
    audit: audit::AuditWriter,
    /// The machine as the builder described it.
    env: state::HostEnv,
    /// Server control: handles, switched-off tools, sign-ins, idle stops.
    servers: state::ServerState,
    /// The governed seam's state: pins, pending approvals and questions, gates, runs.
    seam: state::SeamState,
    /// The features the host composes, each owning its state and its store tables.
    features: state::Features,
}

/// The host. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("data_dir", &self.inner.data_dir)
            .finish_non_exhaustive()
    }
}

impl Inner {
    fn servers(&self) -> MutexGuard<'_, BTreeMap<ServerId, ServerHandle>> {
        self.servers
            .handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn signins(&self) -> MutexGuard<'_, HashMap<ServerId, crate::oauth::Authorizer>> {
        self.servers
            .signins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn disabled(&self) -> MutexGuard<'_, HashMap<ServerId, Arc<HashSet<String>>>> {
        self.servers
            .disabled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn flows(&self) -> MutexGuard<'_, HashMap<ConversationId, crate::approval::Flow>> {
        self.seam
            .flows
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    async fn search_path(&self) -> &SearchPath {
        self.env
            .search
            .get_or_init(|| async {
                let shell = self.env.login_shell.clone();
                tokio::task::spawn_blocking(move || match shell {
                    Some(shell) => SearchPath::probe_with(&shell),
                    None => SearchPath::probe(),
                })
                .await
                .unwrap_or_default()
            })
            .await
    }

    fn logs_dir(&self, id: &ServerId) -> PathBuf {
        self.data_dir.join("logs").join(id.as_str())
    }
}

impl Host {
    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// Subscribes to host events.
    pub fn subscribe(&self) -> broadcast::Receiver<HostEvent> {
        self.inner.events.subscribe()
    }

    /// The handle of a started server.
    pub fn handle(&self, id: &ServerId) -> Option<ServerHandle> {
        self.inner.servers().get(id).cloned()
    }

    /// Stops every server (each process tree is gone when this returns), saves their logs and
    /// closes the database.
    pub async fn shutdown(&self) {
        let handles: Vec<ServerHandle> = std::mem::take(&mut *self.inner.servers())
            .into_values()
            .collect();
        futures::future::join_all(handles.iter().map(|h| async move {
            h.stop().await;
            h.logs().persist();
        }))
        .await;
        self.inner.features.metrics.flush().await;
        self.inner.audit.flush().await;
        self.inner.store.close().await;
    }
}
