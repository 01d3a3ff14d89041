//! The sandbox of local servers, as the host runs and changes it (SP-07).
//!
//! - At every start, [`wrap`] turns the approved plan's program and arguments into a bubblewrap
//!   command line (see `config::sandbox::argv`). A sandbox that cannot be set up (bubblewrap
//!   missing, user namespaces off) fails the start: the server is never run unsandboxed instead.
//! - [`Host::set_server_sandbox`] is how a person changes the setting (CLI, app). The setting is
//!   part of the approved fingerprint (SP-03), so a change made anywhere else (a file, an
//!   import, another process) voids the approval; a change made here is the person's own act,
//!   so an approval that was current before it is carried over to the new plan and both the
//!   change and the carried approval are audited (AP-09).
//! - [`Host::sandbox_findings`] reads the last failed run's stderr for what the sandbox blocked
//!   (see `config::sandbox::explain`), for the doctor and the app's "allow" button.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::doctor::{Check, CheckLevel};
use super::sandbox_net::{self, SandboxNet};
use super::sandbox_proxy;
use super::trust::{resolve, trust_state, TrustState};
use super::{Host, HostError, Inner};
use crate::approval::audit::ConfigChange;
use crate::config::launch::LaunchPlan;
use crate::config::sandbox::argv::{bwrap_args, Facts};
use crate::config::sandbox::explain::{explain, Context, Finding};
use crate::config::sandbox::{credential_stores, store_of, CredentialStore, SandboxSpec};
use crate::config::{ServerSpec, SpecError, TransportSpec, ValueSource};
use crate::events::HostEvent;
use crate::ids::ServerId;
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
/// sandbox is off, bubblewrap around them when it is on. `net` is the network of a sandbox
/// with network ([`super::sandbox_net`]).
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
    if !sandbox.enabled {
        return Ok((program.to_path_buf(), args.to_vec()));
    }
    let home = env.get("HOME").map(PathBuf::from);
    let person_home = person_home(inner);
    let facts = Facts::gather(
        program,
        sandbox,
        home.as_deref(),
        person_home.as_deref(),
        &inner.data_dir,
    );
    let (bwrap, argv) = bwrap_args(
        program,
        args,
        cwd,
        sandbox,
        &facts,
        env.contains_key("TMPDIR"),
        net.map(SandboxNet::fds),
    )
    .map_err(|e| LaunchError::Fatal(e.to_string()))?;
    let argv = argv
        .into_iter()
        .map(|a| a.into_string())
        .collect::<Result<Vec<String>, _>>()
        .map_err(|_| {
            LaunchError::Fatal(
                "a sandboxed path is not valid UTF-8; the server was not started".into(),
            )
        })?;
    logs.note(&format!(
        "sandboxed with {}: {}",
        bwrap.display(),
        sandbox.summary()
    ));
    Ok((bwrap, argv))
}

/// The network of one sandboxed start (SP-13): the filtering proxy when it has domain lists,
/// and the pipes pasta connects its namespace through when it has network. Both `None` when
/// it has none (or pasta is missing, which `wrap` then refuses with the package to install).
pub(super) async fn network_for(
    inner: &Inner,
    id: &ServerId,
    sandbox: &SandboxSpec,
    logs: &ServerLogs,
) -> Result<(Option<sandbox_proxy::Proxy>, Option<SandboxNet>), LaunchError> {
    if !(sandbox.enabled && sandbox.network) || sandbox_net::find_pasta().is_none() {
        return Ok((None, None));
    }
    let proxy = match sandbox.filtered() {
        Some(lists) => Some(
            sandbox_proxy::start(id.clone(), lists, logs.clone(), inner.logs_dir(id))
                .await
                .map_err(|e| {
                    LaunchError::Fatal(format!(
                        "the sandbox's filtering proxy could not start ({e}); the server was not started"
                    ))
                })?,
        ),
        None => None,
    };
    let net = SandboxNet::prepare(sandbox, proxy.as_ref().map(|p| p.port))
        .map_err(|e| LaunchError::Fatal(e.to_string()))?;
    Ok((proxy, net))
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
        let mut sandbox = sandbox.normalized();
        sandbox.validate().map_err(SpecError::from)?;
        // SP-12: a credential store only by the person's explicit unmask; an unmask of a path
        // that is in no store means nothing and is dropped (it must not void the approval).
        let stores = self.credential_stores();
        sandbox.unmask.retain(|p| store_of(&stores, p).is_some());
        sandbox.check_masked(&stores).map_err(SpecError::from)?;
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
        blocked: &crate::config::sandbox::explain::Blocked,
    ) -> Result<SandboxChange, HostError> {
        use crate::config::sandbox::explain::Blocked;
        let now = self.server_sandbox(id).await?;
        let next = match blocked {
            Blocked::Path { path, access } => now.granted(path, *access),
            Blocked::Network => SandboxSpec {
                network: true,
                ..now
            },
            Blocked::Domain { name } => now.domain_allowed(name).map_err(SpecError::from)?,
            Blocked::Unavailable { .. } => {
                return Err(HostError::Invalid(
                    "the sandbox itself could not be set up; nothing can be granted for that"
                        .into(),
                ))
            }
            Blocked::Masked { .. } => {
                return Err(HostError::Invalid(
                    "a credential store is never granted from what a server printed; type the grant yourself with the unmask option if you mean it".into(),
                ))
            }
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
        let Some(lists) = s.sandbox.enabled.then(|| s.sandbox.filtered()).flatten() else {
            return Vec::new();
        };
        let file = self
            .inner
            .logs_dir(&spec.id)
            .join(sandbox_proxy::REFUSED_FILE);
        sandbox_proxy::refused_domains(&file)
            .iter()
            .filter(|d| !lists.decide(d).passes())
            .map(|d| Finding::refused_domain(d))
            .collect()
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
        let facts = Facts::gather(
            Path::new("/bin/true"),
            &s.sandbox,
            None,
            None,
            &self.inner.data_dir,
        );
        let pasta = match (s.sandbox.network, facts.pasta.is_some()) {
            (true, false) => Err(crate::config::sandbox::argv::WrapError::NoPasta.to_string()),
            _ => Ok(()),
        };
        let (level, detail) = match pasta.and(probe(facts.bwrap.as_deref()).await) {
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

/// Runs a trivial program under bubblewrap with every namespace unshared: the cheapest proof
/// that a sandboxed start can work here.
async fn probe(bwrap: Option<&Path>) -> Result<(), String> {
    let Some(bwrap) = bwrap else {
        return Err(crate::config::sandbox::argv::WrapError::NoBwrap.to_string());
    };
    let mut cmd = tokio::process::Command::new(bwrap);
    cmd.args([
        "--unshare-all",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "true",
    ])
    .env_clear()
    .env("PATH", "/usr/bin:/bin")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(10), cmd.output())
        .await
        .map_err(|_| {
            format!(
                "{} did not finish a trivial sandboxed run in 10 s",
                bwrap.display()
            )
        })?
        .map_err(|e| format!("{} could not be run: {e}", bwrap.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = crate::escape::short_for_display(said.trim(), 300);
    Err(format!(
        "bubblewrap cannot create a sandbox here ({said}); unprivileged user namespaces may be off (kernel.unprivileged_userns_clone, or an AppArmor restriction on them)"
    ))
}
