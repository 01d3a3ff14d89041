//! The sandbox of local servers, as the host runs and changes it (SP-07): the composition of
//! the `sandbox` feature with the store, trust, audit and supervisor, which only the host has.
//!
//! - At every start, [`wrap`] and [`network_for`] hand the approved plan to
//!   `sandbox::start`, with the host's data and log folders and the person's home.
//! - [`Host::set_server_sandbox`] is how a person changes the setting (CLI, app). The setting is
//!   part of the approved fingerprint (SP-03), so a change made anywhere else (a file, an
//!   import, another process) voids the approval; a change made here is the person's own act,
//!   so an approval that was current before it is carried over to the new plan and both the
//!   change and the carried approval are audited (AP-09).
//! - [`Host::sandbox_findings`] reads the last failed run's stderr for what the sandbox blocked
//!   (see `sandbox::explain`), for the doctor and the app's "allow" button.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::doctor::{Check, CheckLevel};
use super::trust::{resolve, trust_state, TrustState};
use super::{Host, HostError, Inner};
use crate::approval::audit::ConfigChange;
use crate::config::launch::LaunchPlan;
use crate::config::{ServerSpec, SpecError, TransportSpec, ValueSource};
use crate::events::HostEvent;
use crate::ids::ServerId;
use crate::sandbox::explain::{explain, Blocked, Context, Finding, GrantError};
use crate::sandbox::net::SandboxNet;
use crate::sandbox::proxy::{self, Proxy};
use crate::sandbox::start::{self, Launch};
use crate::sandbox::{credential_stores, store_of, CredentialStore, SandboxSpec};
use crate::server_logs::ServerLogs;
use crate::supervisor::{LaunchError, ServerStatus};

/// What changing a server's sandbox did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SandboxChange {
    /// The setting now stored.
    pub sandbox: SandboxSpec,
    /// Whether the server's approval was carried over (it was current before the change).
    pub approval_kept: bool,
}

/// The program and arguments to spawn for `plan`'s `program` and `args`: unchanged when the
/// sandbox is off, bubblewrap around them when it is on (`sandbox::start::wrap`).
#[allow(clippy::too_many_arguments)]
pub(super) fn wrap(
    inner: &Inner,
    sandbox: &SandboxSpec,
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &HashMap<String, String>,
    logs: &ServerLogs,
    net: Option<&SandboxNet>,
) -> Result<(PathBuf, Vec<String>), LaunchError> {
    let person_home = person_home(inner);
    let launch = Launch {
        program,
        args,
        cwd,
        env,
        person_home: person_home.as_deref(),
        data_dir: &inner.data_dir,
    };
    start::wrap(sandbox, &launch, logs, net).map_err(|e| LaunchError::Fatal(e.to_string()))
}

/// The network of one sandboxed start (SP-13; `sandbox::start::network`).
pub(super) async fn network_for(
    inner: &Inner,
    id: &ServerId,
    sandbox: &SandboxSpec,
    logs: &ServerLogs,
) -> Result<(Option<Proxy>, Option<SandboxNet>), LaunchError> {
    start::network(id, sandbox, logs, inner.logs_dir(id))
        .await
        .map_err(|e| LaunchError::Fatal(e.to_string()))
}

impl Host {
    /// A local server's sandbox setting.
    pub async fn server_sandbox(&self, id: &ServerId) -> Result<SandboxSpec, HostError> {
        let spec = self.server(id).await?;
        match &spec.transport {
            TransportSpec::Stdio(s) => Ok(s.sandbox.clone()),
            TransportSpec::Http(_) => Err(not_local(id)),
        }
    }

    /// Replaces a local server's sandbox setting; see the module docs for what happens to its
    /// approval. A running server is restarted into the new sandbox.
    pub async fn set_server_sandbox(
        &self,
        id: &ServerId,
        sandbox: SandboxSpec,
    ) -> Result<SandboxChange, HostError> {
        // SP-12: a credential store only by the person's explicit unmask.
        let sandbox = sandbox
            .prepared(&self.credential_stores())
            .map_err(SpecError::from)?;
        let before = self.server(id).await?;
        let mut spec = before.clone();
        let TransportSpec::Stdio(s) = &mut spec.transport else {
            return Err(not_local(id));
        };
        let old = std::mem::replace(&mut s.sandbox, sandbox.clone());
        let was_trusted = self.is_trusted(&before).await;
        self.inner.store.update_server(&spec).await?;
        let mut approval_kept = false;
        // Reaching further into a credential store is re-approved on the consent view, even
        // when the person typed it (SP-12); any other change of theirs keeps the approval.
        if was_trusted && !sandbox.widens_unmasked(&old) {
            if let Ok(plan) = resolve(&self.inner, &spec).await {
                self.inner.store.set_trust(id, &plan).await?;
                approval_kept = true;
            }
        }
        self.audit_config(
            ConfigChange::ServerUpdated,
            Some(id),
            json!({
                "sandbox": sandbox,
                "sandbox_before": old,
                "summary": sandbox.summary(),
                "approval_kept": approval_kept,
            }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        if let Some(h) = self.handle(id) {
            h.restart().await;
        }
        Ok(SandboxChange {
            sandbox,
            approval_kept,
        })
    }

    /// Grants what a [`Finding`] says the sandbox blocked (the app's "allow" button).
    pub async fn grant_sandbox(
        &self,
        id: &ServerId,
        blocked: &Blocked,
    ) -> Result<SandboxChange, HostError> {
        let next = match self.server_sandbox(id).await?.grant(blocked) {
            Ok(next) => next,
            Err(GrantError::Sandbox(e)) => return Err(SpecError::from(e).into()),
            Err(e) => return Err(HostError::Invalid(e.to_string())),
        };
        self.set_server_sandbox(id, next).await
    }

    /// What the sandbox blocked in the server's last failed run: from the stderr tail of its
    /// failed status in this process, or else of its saved logs. Empty when it is not
    /// sandboxed.
    pub async fn sandbox_findings(&self, id: &ServerId) -> Result<Vec<Finding>, HostError> {
        let spec = self.server(id).await?;
        let lines = match self.handle(id).map(|h| h.status()) {
            Some(ServerStatus::Failed { stderr_tail, .. }) => stderr_tail,
            Some(_) => self
                .handle(id)
                .map(|h| h.logs().stderr_tail(60))
                .unwrap_or_default(),
            None => ServerLogs::load_persisted(&self.inner.logs_dir(id)).0,
        };
        let mut out = self.explain_sandbox(&spec, &lines).await;
        out.extend(self.refused_domains(&spec));
        Ok(out)
    }

    /// The domains the filtering proxy refused `spec`'s server that its lists still refuse
    /// (SP-13), as findings with the command that allows each.
    pub(super) fn refused_domains(&self, spec: &ServerSpec) -> Vec<Finding> {
        let TransportSpec::Stdio(s) = &spec.transport else {
            return Vec::new();
        };
        proxy::still_refused(&s.sandbox, &self.inner.logs_dir(&spec.id))
    }

    /// Reads `lines` for what `spec`'s sandbox blocked.
    pub(super) async fn explain_sandbox(
        &self,
        spec: &ServerSpec,
        lines: &[String],
    ) -> Vec<Finding> {
        let TransportSpec::Stdio(s) = &spec.transport else {
            return Vec::new();
        };
        if !s.sandbox.enabled {
            return Vec::new();
        }
        let cwd = match resolve(&self.inner, spec).await {
            Ok(LaunchPlan::Stdio { cwd, .. }) => cwd,
            _ => s.cwd.clone().unwrap_or_else(|| self.inner.data_dir.clone()),
        };
        let home = self.home();
        let configured: Vec<PathBuf> = s
            .env
            .iter()
            .filter_map(|v| match &v.value {
                ValueSource::Plain(p) if p.starts_with('/') => Some(PathBuf::from(p)),
                _ => None,
            })
            .collect();
        let stores = self.credential_stores();
        let cx = Context {
            sandbox: &s.sandbox,
            cwd: &cwd,
            home: home.as_deref(),
            configured_paths: &configured,
            stores: &stores,
        };
        let kind = |p: &Path| std::fs::metadata(p).ok().map(|m| m.is_dir());
        explain(lines, &cx, &kind)
    }

    /// The doctor's sandbox check before a trial start: whether it is on, and whether
    /// bubblewrap works here (a failed check stops the doctor before the trial). `None` for a
    /// remote server.
    pub(super) async fn sandbox_check(&self, spec: &ServerSpec) -> Option<Check> {
        let TransportSpec::Stdio(s) = &spec.transport else {
            return None;
        };
        if !s.sandbox.enabled {
            return Some(Check {
                name: "sandbox".into(),
                level: CheckLevel::Ok,
                detail: format!(
                    "off: it runs with all your rights; `switchboard server sandbox {} --on` confines it",
                    spec.id
                ),
            });
        }
        let (level, detail) = match start::usable(&s.sandbox, &self.inner.data_dir).await {
            Ok(()) => (CheckLevel::Ok, s.sandbox.summary()),
            Err(why) => (
                CheckLevel::Fail,
                format!("{why}. A sandboxed server is never started unsandboxed: fix this or switch the sandbox off with `switchboard server sandbox {} --off`", spec.id),
            ),
        };
        Some(Check {
            name: "sandbox".into(),
            level,
            detail,
        })
    }

    async fn is_trusted(&self, spec: &ServerSpec) -> bool {
        match resolve(&self.inner, spec).await {
            Ok(plan) => matches!(
                trust_state(&self.inner, spec, &plan).await,
                Ok(TrustState::Trusted)
            ),
            Err(_) => false,
        }
    }

    fn home(&self) -> Option<PathBuf> {
        person_home(&self.inner)
    }

    /// The credential stores of the person's home and the app's data directory (SP-12).
    pub fn credential_stores(&self) -> Vec<CredentialStore> {
        let home = self.home();
        credential_stores(
            &home.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
            &self.inner.data_dir,
        )
    }

    /// The credential store `path` is in (or is), if any: what the app's confirmation names
    /// before it offers to unmask a typed grant (SP-12).
    pub fn credential_store_of(&self, path: &Path) -> Option<CredentialStore> {
        store_of(&self.credential_stores(), path).cloned()
    }
}

/// The person's home folder, as the host's environment says.
fn person_home(inner: &Inner) -> Option<PathBuf> {
    inner
        .env
        .host_env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
}

fn not_local(id: &ServerId) -> HostError {
    HostError::Invalid(format!(
        "{id} is a remote server; only local (stdio) servers run in a sandbox"
    ))
}
