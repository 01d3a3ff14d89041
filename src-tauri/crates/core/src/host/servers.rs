//! Server configuration, the trust gate, and starting and stopping supervisors.

use std::sync::{Arc, Weak};

use serde::Serialize;

use super::{Host, HostError, Inner};
use crate::config::launch::{Fingerprint, LaunchPlan, ResolveError};
use crate::config::{ServerSpec, TransportSpec, ValueSource};
use crate::events::HostEvent;
use crate::ids::ServerId;
use crate::mcp::connection::Endpoint;
use crate::mcp::framing::DEFAULT_MAX_MESSAGE;
use crate::mcp::logs::ServerLogs;
use crate::mcp::process::{child_env, ServerProcess};
use crate::mcp::supervisor::{self, LaunchError, Launcher, ServerStatus, SupervisorConfig};
use crate::redact::{Redactor, Secret};
use crate::secrets::SecretError;

/// Whether a server's current launch plan is approved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// Approved, and unchanged since.
    Trusted,
    /// Never approved.
    NotApproved,
    /// Approved once, but what would run now differs.
    Changed,
    /// Remote servers run no local code; they need no launch approval.
    NotRequired,
}

/// What a person is shown before approving a server (SP-01, SP-02).
#[derive(Clone, Debug, Serialize)]
pub struct TrustView {
    /// The server.
    pub server: ServerId,
    /// What would run.
    pub plan: LaunchPlan,
    /// Labelled, escaped, untruncated lines.
    pub lines: Vec<(String, String)>,
    /// Dangerous patterns found.
    pub warnings: Vec<String>,
    /// The fingerprint to approve.
    pub fingerprint: Fingerprint,
    /// The current state.
    pub state: TrustState,
}

/// A server as listed.
#[derive(Clone, Debug, Serialize)]
pub struct ServerView {
    /// Its configuration.
    pub spec: ServerSpec,
    /// Its status in this process (`Stopped` if never started here).
    pub status: ServerStatus,
}

impl Host {
    /// Every configured server with its status.
    pub async fn list_servers(&self) -> Result<Vec<ServerView>, HostError> {
        let specs = self.inner.store.list_servers().await?;
        Ok(specs
            .into_iter()
            .map(|spec| {
                let status = self
                    .handle(&spec.id)
                    .map(|h| h.status())
                    .unwrap_or(ServerStatus::Stopped);
                ServerView { spec, status }
            })
            .collect())
    }

    /// One server's spec.
    pub async fn server(&self, id: &ServerId) -> Result<ServerSpec, HostError> {
        self.inner
            .store
            .get_server(id)
            .await?
            .ok_or_else(|| HostError::UnknownServer(id.to_string()))
    }

    /// Parses a user-typed server name.
    pub fn server_id(name: &str) -> Result<ServerId, HostError> {
        ServerId::new(name).map_err(|_| {
            HostError::UnknownServer(crate::config::escape::short_for_display(name, 64))
        })
    }

    /// Adds a server. It is not started, and a stdio server will not start until trusted.
    pub async fn add_server(&self, spec: ServerSpec) -> Result<(), HostError> {
        spec.validate()?;
        self.inner
            .store
            .insert_server(&spec)
            .await
            .map_err(|e| match e {
                crate::store::StoreError::Exists(_) => HostError::ServerExists(spec.id.clone()),
                other => other.into(),
            })?;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// Replaces a server's spec. A running server is restarted, which re-checks trust.
    pub async fn update_server(&self, spec: ServerSpec) -> Result<(), HostError> {
        spec.validate()?;
        self.inner.store.update_server(&spec).await?;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        if let Some(h) = self.handle(&spec.id) {
            h.restart().await;
        }
        Ok(())
    }

    /// Removes a server: stops it, deletes its config, approval and saved logs.
    pub async fn remove_server(&self, id: &ServerId) -> Result<(), HostError> {
        let handle = self.inner.servers().remove(id);
        if let Some(h) = handle {
            h.stop().await;
        }
        if !self.inner.store.delete_server(id).await? {
            return Err(HostError::UnknownServer(id.to_string()));
        }
        let _ = std::fs::remove_dir_all(self.inner.logs_dir(id));
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// Enables or disables a server; disabling stops it.
    pub async fn set_enabled(&self, id: &ServerId, enabled: bool) -> Result<(), HostError> {
        let mut spec = self.server(id).await?;
        spec.enabled = enabled;
        self.inner.store.update_server(&spec).await?;
        if !enabled {
            if let Some(h) = self.handle(id) {
                h.stop().await;
            }
        }
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// What would run, for the trust prompt.
    pub async fn trust_view(&self, id: &ServerId) -> Result<TrustView, HostError> {
        let spec = self.server(id).await?;
        let plan = resolve(&self.inner, &spec)
            .await
            .map_err(|e| HostError::Launch {
                server: id.clone(),
                reason: e.to_string(),
            })?;
        let state = trust_state(&self.inner, &spec, &plan).await?;
        Ok(TrustView {
            server: id.clone(),
            lines: plan.consent_lines(),
            warnings: plan.warnings(),
            fingerprint: plan.fingerprint(),
            plan,
            state,
        })
    }

    /// Records approval of the plan with `fingerprint` (the one the person was shown). Fails
    /// if what would run changed in between.
    pub async fn trust_server(
        &self,
        id: &ServerId,
        fingerprint: &Fingerprint,
    ) -> Result<(), HostError> {
        let view = self.trust_view(id).await?;
        if &view.fingerprint != fingerprint {
            return Err(HostError::TrustRace(id.clone()));
        }
        self.inner.store.set_trust(id, &view.plan).await?;
        tracing::info!(server = %id, fingerprint = %fingerprint, "launch spec approved");
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// Withdraws approval.
    pub async fn revoke_trust(&self, id: &ServerId) -> Result<(), HostError> {
        self.inner.store.clear_trust(id).await?;
        if let Some(h) = self.handle(id) {
            h.stop().await;
        }
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// Starts (or restarts) supervising a server and returns its handle. The supervisor
    /// re-checks trust on every start.
    pub async fn start_server(&self, id: &ServerId) -> Result<supervisor::ServerHandle, HostError> {
        let spec = self.server(id).await?;
        if !spec.enabled {
            return Err(HostError::Disabled(id.clone()));
        }
        if let Some(h) = self.handle(id) {
            h.restart().await;
            return Ok(h);
        }
        let logs = ServerLogs::new(Some(self.inner.logs_dir(id)));
        let config = SupervisorConfig {
            init_timeout: spec.timeouts.init(),
            request_timeout: spec.timeouts.request(),
            ..self.inner.supervisor.clone()
        };
        let handle = supervisor::spawn(
            id.clone(),
            launcher(Arc::downgrade(&self.inner), id.clone(), logs.clone()),
            config,
            logs,
            self.inner.events.clone(),
            None,
            Some(super::requests::HostRequests::for_server(
                Arc::downgrade(&self.inner),
                id.clone(),
            )),
        );
        // TD-02: pin its surface on first sight and hold what changes later.
        self.watch_pins(&handle);
        let mut map = self.inner.servers();
        // Another caller may have started it meanwhile; keep theirs and drop ours (its task
        // exits when its last handle is gone).
        Ok(map.entry(id.clone()).or_insert(handle).clone())
    }

    /// Starts every enabled server without waiting for any (RL-07).
    pub async fn start_enabled(&self) -> Result<Vec<supervisor::ServerHandle>, HostError> {
        let mut out = Vec::new();
        for spec in self.inner.store.list_servers().await? {
            if spec.enabled {
                out.push(self.start_server(&spec.id).await?);
            }
        }
        Ok(out)
    }

    /// Stops a server (its process tree is gone when this returns).
    pub async fn stop_server(&self, id: &ServerId) -> Result<(), HostError> {
        let handle = self.inner.servers().remove(id);
        if let Some(h) = handle {
            h.stop().await;
        }
        Ok(())
    }
}

async fn resolve(inner: &Inner, spec: &ServerSpec) -> Result<LaunchPlan, ResolveError> {
    LaunchPlan::resolve(spec, &inner.data_dir, inner.search_path().await)
}

async fn trust_state(
    inner: &Inner,
    spec: &ServerSpec,
    plan: &LaunchPlan,
) -> Result<TrustState, HostError> {
    if matches!(spec.transport, TransportSpec::Http(_)) {
        return Ok(TrustState::NotRequired);
    }
    Ok(match inner.store.trust(&spec.id).await? {
        None => TrustState::NotApproved,
        Some(t) if t.fingerprint == plan.fingerprint() => TrustState::Trusted,
        Some(_) => TrustState::Changed,
    })
}

/// Reads the values of every secret a spec refers to.
pub(super) async fn resolve_values(
    inner: &Inner,
    values: &[crate::config::NamedValue],
) -> Result<Vec<(String, Secret)>, SecretError> {
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        let value = match &v.value {
            ValueSource::Plain(p) => Secret::new(p.clone()),
            ValueSource::Secret(name) => inner.secrets.get(name.clone()).await?,
        };
        out.push((v.name.clone(), value));
    }
    Ok(out)
}

fn launcher(inner: Weak<Inner>, id: ServerId, logs: ServerLogs) -> Launcher {
    Arc::new(move || {
        let inner = inner.clone();
        let id = id.clone();
        let logs = logs.clone();
        Box::pin(async move {
            let inner = inner
                .upgrade()
                .ok_or_else(|| LaunchError::Fatal("the host is shutting down".into()))?;
            endpoint_for(&inner, &id, &logs).await
        })
    })
}

/// Everything a start needs, re-read each time: the spec from the database, the resolved
/// executable, the approval, the secrets.
pub(super) async fn endpoint_for(
    inner: &Inner,
    id: &ServerId,
    logs: &ServerLogs,
) -> Result<Endpoint, LaunchError> {
    let spec = inner
        .store
        .get_server(id)
        .await
        .map_err(|e| LaunchError::Transient(e.to_string()))?
        .ok_or_else(|| LaunchError::Fatal("it was removed".into()))?;
    if !spec.enabled {
        return Err(LaunchError::Fatal("it is disabled".into()));
    }
    let plan = resolve(inner, &spec)
        .await
        .map_err(|e| LaunchError::Fatal(e.to_string()))?;
    match trust_state(inner, &spec, &plan)
        .await
        .map_err(|e| LaunchError::Transient(e.to_string()))?
    {
        TrustState::Trusted | TrustState::NotRequired => {}
        TrustState::NotApproved => {
            return Err(LaunchError::NeedsTrust(format!(
                "its launch command has not been approved; review it with `switchboard server trust {id}`"
            )))
        }
        TrustState::Changed => {
            return Err(LaunchError::NeedsTrust(format!(
                "what it would run changed since it was approved; review it with `switchboard server trust {id}`"
            )))
        }
    }
    let secret_err = |e: SecretError| LaunchError::Fatal(e.to_string());
    match (&spec.transport, plan) {
        (
            TransportSpec::Stdio(s),
            LaunchPlan::Stdio {
                program, args, cwd, ..
            },
        ) => {
            let configured = resolve_values(inner, &s.env).await.map_err(secret_err)?;
            logs.set_redactor(Redactor::new(configured.iter().map(|(_, v)| v)));
            let env = child_env(inner.host_env.iter().cloned(), &configured);
            let (process, pipes) =
                ServerProcess::spawn(&program, &args, &cwd, &env).map_err(|e| {
                    LaunchError::Transient(format!("could not start {}: {e}", program.display()))
                })?;
            logs.note(&format!(
                "started {} (pid {})",
                program.display(),
                process.pid().unwrap_or(0)
            ));
            Ok(Endpoint::Stdio {
                process: Box::new(process),
                pipes,
                max_message: DEFAULT_MAX_MESSAGE,
            })
        }
        (TransportSpec::Http(h), _) => {
            let headers = resolve_values(inner, &h.headers)
                .await
                .map_err(secret_err)?;
            logs.set_redactor(Redactor::new(headers.iter().map(|(_, v)| v)));
            Ok(Endpoint::Http {
                url: h.url.clone(),
                headers,
            })
        }
        _ => Err(LaunchError::Fatal(
            "internal: plan does not match transport".into(),
        )),
    }
}
