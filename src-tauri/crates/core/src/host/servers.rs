//! Server configuration, and starting and stopping supervisors.
//!
//! Adding or editing a server validates everything before anything is written: the spec, the
//! name, that every secret it would store is free in the keyring (unless the person confirmed
//! replacing it), and that it refers to no secret outside its own namespace. Only then are the
//! secrets stored, then the spec. Plain values that look like credentials are moved to the
//! server's own namespace on the way in (SE-01, SE-04). Every change is audited (AP-09).

use std::sync::{Arc, Weak};

use serde::Serialize;
use serde_json::json;

use super::server_secrets::{lookup, placeholder_values};
use super::trust::{resolve, trust_state, TrustState};
use super::{Host, HostError, Inner};
use crate::approval::audit::ConfigChange;
use crate::config::credentials::{seal, Sealed};
use crate::config::launch::LaunchPlan;
use crate::config::placeholders::{fill, fill_url, spec_refs};
use crate::config::{Binding, NamedValue, ServerSpec, TransportSpec, ValueSource};
use crate::events::HostEvent;
use crate::ids::{SecretName, ServerId};
use crate::mcp::connection::Endpoint;
use crate::redact::{Redactor, Secret};
use crate::secrets::{SecretError, SecretKey};
use crate::server_logs::ServerLogs;
use crate::server_process::reaper::RunRecords;
use crate::server_process::{child_env, ServerProcess};
use crate::supervisor::{self, LaunchError, Launcher, ServerStatus, SupervisorConfig};

/// A server as listed.
#[derive(Clone, Debug, Serialize)]
pub struct ServerView {
    /// Its configuration.
    pub spec: ServerSpec,
    /// Its status in this process (`Stopped` if never started here).
    pub status: ServerStatus,
    /// Whether the person keeps it running whenever the app runs; otherwise it starts when
    /// needed (`host::demand`).
    pub always_on: bool,
}

/// How to add or save a server.
#[derive(Clone, Debug, Default)]
pub struct AddOptions {
    /// Values typed into secret fields, by env var or header name; they go to the server's own
    /// namespace and replace whatever the spec held for that field.
    pub secrets: Vec<(String, Secret)>,
    /// The person confirmed replacing secrets that are already stored under the names this
    /// server's values would get. Without it, such a collision stops the add before anything
    /// is written.
    pub replace_secrets: bool,
}

/// What adding or saving a server did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AddOutcome {
    /// Plain values moved to the keyring because they look like credentials: (field, name of
    /// the server's secret).
    pub moved: Vec<(String, SecretName)>,
    /// Every secret stored, by name in the server's namespace.
    pub secrets_stored: Vec<SecretName>,
}

impl Host {
    /// Every configured server with its status.
    pub async fn list_servers(&self) -> Result<Vec<ServerView>, HostError> {
        let specs = self.inner.store.list_servers().await?;
        let keep = self.inner.store.always_on().await?;
        Ok(specs
            .into_iter()
            .map(|spec| {
                let status = self
                    .handle(&spec.id)
                    .map(|h| h.status())
                    .unwrap_or(ServerStatus::Stopped);
                let always_on = keep.contains(&spec.id);
                ServerView {
                    spec,
                    status,
                    always_on,
                }
            })
            .collect())
    }

    /// What the server's last successful handshake settled on, in this process or any other on
    /// the same data dir (the protocol revision, the server's name and capabilities).
    pub fn last_peer(&self, id: &ServerId) -> Option<crate::server_logs::LastPeer> {
        crate::server_logs::ServerLogs::load_peer(&self.inner.logs_dir(id))
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
        ServerId::new(name)
            .map_err(|_| HostError::UnknownServer(crate::escape::short_for_display(name, 64)))
    }

    /// Adds a server. It is not started, and it will not start until trusted. Plain values
    /// that look like credentials move to its own keyring namespace.
    pub async fn add_server(&self, spec: ServerSpec) -> Result<AddOutcome, HostError> {
        self.add_server_with(spec, AddOptions::default()).await
    }

    /// Adds a server with typed secrets and options; see [`AddOptions`]. If it fails, nothing
    /// was written.
    pub async fn add_server_with(
        &self,
        spec: ServerSpec,
        opts: AddOptions,
    ) -> Result<AddOutcome, HostError> {
        let Sealed {
            spec,
            secrets,
            moved,
        } = self.prepare(spec, opts.secrets, None).await?;
        if self.inner.store.get_server(&spec.id).await?.is_some() {
            return Err(HostError::ServerExists(spec.id.clone()));
        }
        self.check_free(&spec.id, &secrets, &[], opts.replace_secrets)
            .await?;
        let outcome = self.insert_new(&spec, secrets, moved).await?;
        self.audit_config(
            ConfigChange::ServerAdded,
            Some(&spec.id),
            describe(&spec, &outcome),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(outcome)
    }

    /// Seals and validates a spec: credentials moved, bindings refused unless `before` had
    /// the same one for the field.
    pub(super) async fn prepare(
        &self,
        spec: ServerSpec,
        typed: Vec<(String, Secret)>,
        before: Option<&ServerSpec>,
    ) -> Result<Sealed, HostError> {
        let sealed = seal(spec, typed);
        sealed.spec.validate()?;
        refuse_new_bindings(&sealed.spec, before)?;
        Ok(sealed)
    }

    /// Fails with [`HostError::SecretExists`] when one of `secrets` is stored already, unless
    /// `replace`. Names in `own` (the server's existing references, on an edit) may be
    /// replaced: the person typed a new value into that field.
    pub(super) async fn check_free(
        &self,
        server: &ServerId,
        secrets: &[(SecretName, Secret)],
        own: &[&SecretName],
        replace: bool,
    ) -> Result<(), HostError> {
        if replace {
            return Ok(());
        }
        for (name, _) in secrets.iter().filter(|(n, _)| !own.contains(&n)) {
            let key = SecretKey::server(server, name);
            if self.inner.secrets.is_set(key.clone()).await? {
                return Err(HostError::SecretExists(key));
            }
        }
        Ok(())
    }

    /// Stores the secrets, then the spec; if the spec cannot be stored, the secrets written
    /// are deleted again. Checks are the caller's.
    pub(super) async fn insert_new(
        &self,
        spec: &ServerSpec,
        secrets: Vec<(SecretName, Secret)>,
        moved: Vec<(String, SecretName)>,
    ) -> Result<AddOutcome, HostError> {
        let stored = self.store_secrets(&spec.id, secrets).await?;
        if let Err(e) = self.inner.store.insert_server(spec).await {
            self.delete_secrets(&spec.id, stored.iter()).await;
            return Err(match e {
                crate::store::StoreError::Exists(_) => HostError::ServerExists(spec.id.clone()),
                other => other.into(),
            });
        }
        Ok(AddOutcome {
            moved,
            secrets_stored: stored,
        })
    }

    pub(super) async fn store_secrets(
        &self,
        server: &ServerId,
        secrets: Vec<(SecretName, Secret)>,
    ) -> Result<Vec<SecretName>, HostError> {
        let mut stored = Vec::with_capacity(secrets.len());
        for (name, value) in secrets {
            let key = SecretKey::server(server, &name);
            if let Err(e) = self.inner.secrets.set(key, value).await {
                self.delete_secrets(server, stored.iter()).await;
                return Err(e.into());
            }
            stored.push(name);
        }
        Ok(stored)
    }

    /// Deletes secrets of `server`'s namespace, best effort (a failure is logged): used to undo
    /// and to clean up, where the caller's outcome does not depend on it.
    pub(super) async fn delete_secrets(
        &self,
        server: &ServerId,
        names: impl Iterator<Item = &SecretName>,
    ) {
        for name in names {
            if let Err(e) = self
                .inner
                .secrets
                .delete(SecretKey::server(server, name))
                .await
            {
                tracing::warn!(server = %server, secret = %name, error = %e, "could not delete a server secret");
            }
        }
    }

    /// Replaces a server's spec. A running server is restarted, which re-checks trust.
    pub async fn update_server(&self, spec: ServerSpec) -> Result<AddOutcome, HostError> {
        self.update_server_with(spec, AddOptions::default()).await
    }

    /// Replaces a server's spec with typed secrets; see [`AddOptions`]. A binding the spec had
    /// may stay on its field; no new one can be made here (only in the trust view). Secrets
    /// of the server the new spec no longer uses are deleted.
    pub async fn update_server_with(
        &self,
        spec: ServerSpec,
        opts: AddOptions,
    ) -> Result<AddOutcome, HostError> {
        let before = self.server(&spec.id).await?;
        // The sandbox changes only through `set_server_sandbox` (SP-07): an edit keeps it.
        let mut spec = spec;
        if let (TransportSpec::Stdio(new), TransportSpec::Stdio(old)) =
            (&mut spec.transport, &before.transport)
        {
            new.sandbox = old.sandbox.clone();
        }
        // Likewise the sign-in settings (`set_http_auth`, `set_allow_insecure`): a form that
        // does not show them must not reset them.
        if let (TransportSpec::Http(new), TransportSpec::Http(old)) =
            (&mut spec.transport, &before.transport)
        {
            new.auth = old.auth.clone();
            new.allow_insecure = old.allow_insecure;
        }
        let Sealed {
            spec,
            secrets,
            moved,
        } = self.prepare(spec, opts.secrets, Some(&before)).await?;
        let own = before.secret_refs();
        self.check_free(&spec.id, &secrets, &own, opts.replace_secrets)
            .await?;
        let stored = self.store_secrets(&spec.id, secrets).await?;
        self.inner.store.update_server(&spec).await?;
        let still = spec.secret_refs();
        let dropped: Vec<&SecretName> = own.into_iter().filter(|n| !still.contains(n)).collect();
        self.delete_secrets(&spec.id, dropped.iter().copied()).await;
        let kept = spec_refs(&spec);
        let gone: Vec<SecretName> = spec_refs(&before)
            .into_iter()
            .filter(|n| !kept.contains(n) && !still.contains(&n))
            .collect();
        self.delete_secrets(&spec.id, gone.iter()).await;
        let outcome = AddOutcome {
            moved,
            secrets_stored: stored,
        };
        let mut detail = describe(&spec, &outcome);
        detail["deleted_from_keyring"] = json!(dropped);
        self.audit_config(ConfigChange::ServerUpdated, Some(&spec.id), detail)
            .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        if let Some(h) = self.handle(&spec.id) {
            h.restart().await;
        }
        Ok(outcome)
    }

    /// Removes a server: stops it, deletes its config, approval, saved logs and its own
    /// secrets.
    pub async fn remove_server(&self, id: &ServerId) -> Result<(), HostError> {
        let spec = self.server(id).await?;
        let handle = self.inner.servers().remove(id);
        if let Some(h) = handle {
            h.stop().await;
        }
        if !self.inner.store.delete_server(id).await? {
            return Err(HostError::UnknownServer(id.to_string()));
        }
        let mut refs: Vec<SecretName> = spec.secret_refs().into_iter().cloned().collect();
        refs.extend(spec_refs(&spec));
        self.delete_secrets(id, refs.iter()).await;
        // SE-08: its sign-in goes with it (revoked, then deleted), like a sign-out.
        let sign_in = self.forget_sign_in(&spec).await;
        let _ = std::fs::remove_dir_all(self.inner.logs_dir(id));
        self.audit_config(
            ConfigChange::ServerRemoved,
            Some(id),
            json!({ "deleted_from_keyring": refs, "sign_in": sign_in }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// Replaces a server's limits (timeouts, message cap). They are not part of what the
    /// person approved, so its approval stands; a running server restarts under the new ones.
    pub async fn set_server_limits(
        &self,
        id: &ServerId,
        limits: crate::config::Timeouts,
    ) -> Result<(), HostError> {
        let mut spec = self.server(id).await?;
        let before = std::mem::replace(&mut spec.timeouts, limits);
        spec.validate()?;
        self.inner.store.update_server(&spec).await?;
        self.audit_config(
            ConfigChange::ServerUpdated,
            Some(id),
            json!({ "limits": limits, "limits_before": before }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        if let Some(h) = self.handle(id) {
            h.restart().await;
        }
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
        self.audit_config(
            ConfigChange::ServerEnabled,
            Some(id),
            json!({ "enabled": enabled }),
        )
        .await;
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
            ..self.inner.env.supervisor.clone()
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

/// What an add or update records: the transport, the command line or URL, the names of its
/// values and of the secrets stored. Never a value.
fn describe(spec: &ServerSpec, outcome: &AddOutcome) -> serde_json::Value {
    let kind = match spec.transport {
        TransportSpec::Stdio(_) => "stdio",
        TransportSpec::Http(_) => "http",
    };
    let names: Vec<&str> = spec.values().iter().map(|v| v.name.as_str()).collect();
    json!({
        "transport": kind,
        "summary": spec.summary(),
        "values": names,
        "stored_in_keyring": outcome.secrets_stored,
        "enabled": spec.enabled,
    })
}

/// SE-04: a config refers only to its own secrets. A binding to another namespace is made in
/// the trust view; an edit may keep one that is already on the same field.
fn refuse_new_bindings(spec: &ServerSpec, before: Option<&ServerSpec>) -> Result<(), HostError> {
    for (field, binding) in spec.bindings() {
        let kept = before.is_some_and(|b| {
            b.bindings()
                .iter()
                .any(|(f, old)| *f == field && *old == binding)
        });
        if !kept {
            return Err(HostError::CrossReference {
                server: spec.id.clone(),
                field: field.to_owned(),
                binding: binding.clone(),
            });
        }
    }
    Ok(())
}

/// The keyring entry a configured value of `server` reads.
pub(super) fn key_of(server: &ServerId, value: &ValueSource) -> Option<SecretKey> {
    match value {
        ValueSource::Plain(_) => None,
        ValueSource::Secret(name) => Some(SecretKey::server(server, name)),
        ValueSource::Bound(Binding::Provider(p)) => Some(SecretKey::Provider(p.clone())),
        ValueSource::Bound(Binding::Server { server, name }) => {
            Some(SecretKey::server(server, name))
        }
    }
}

/// Reads the values of every secret a spec of `server` refers to.
pub(super) async fn resolve_values(
    inner: &Inner,
    server: &ServerId,
    values: &[NamedValue],
) -> Result<Vec<(String, Secret)>, SecretError> {
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        let value = match (&v.value, key_of(server, &v.value)) {
            (ValueSource::Plain(p), _) => Secret::new(p.clone()),
            (_, Some(key)) => inner.secrets.get(key).await?,
            (_, None) => continue,
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

/// A start waits for the person's approval of what it would run (and for a new one when that
/// changed since).
async fn approved_to_run(
    inner: &Inner,
    id: &ServerId,
    spec: &ServerSpec,
    plan: &LaunchPlan,
) -> Result<(), LaunchError> {
    match trust_state(inner, spec, plan)
        .await
        .map_err(|e| LaunchError::Transient(e.to_string()))?
    {
        TrustState::Trusted => {}
        TrustState::NotApproved => {
            let what = match spec.transport {
                TransportSpec::Stdio(_) => "its launch command has not been approved; review it",
                TransportSpec::Http(_) => {
                    "its URL and headers have not been approved (nothing was sent); review them"
                }
            };
            return Err(LaunchError::NeedsTrust(format!(
                "{what} with `switchboard server trust {id}`"
            )));
        }
        TrustState::Changed => {
            return Err(LaunchError::NeedsTrust(format!(
                "what it would run changed since it was approved; review it with `switchboard server trust {id}`"
            )))
        }
    }
    Ok(())
}

/// A remote server's endpoint: its URL and headers with their secrets filled in (and
/// redacted from its logs), and the authorizer of its sign-in.
async fn http_endpoint(
    inner: &Inner,
    id: &ServerId,
    spec: &ServerSpec,
    h: &crate::config::HttpSpec,
    logs: &ServerLogs,
) -> Result<Endpoint, LaunchError> {
    let secret_err = |e: SecretError| LaunchError::Fatal(e.to_string());
    let headers = resolve_values(inner, id, &h.headers)
        .await
        .map_err(secret_err)?;
    let in_url = placeholder_values(inner, spec).await.map_err(secret_err)?;
    let all = headers.iter().map(|(_, v)| v);
    logs.set_redactor(Redactor::new(all.chain(in_url.iter().map(|(_, v)| v))));
    Ok(Endpoint::Http {
        url: fill_url(&h.url, lookup(&in_url)),
        headers,
        max_message: spec.timeouts.max_message(),
        auth: super::signin::authorizer_for(inner, id, h).await,
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
    // Again at connect time: a spec edited on disk may send a secret in clear text (SP-10).
    spec.validate()
        .map_err(|e| LaunchError::Fatal(format!("its configuration is invalid: {e}")))?;
    let plan = resolve(inner, &spec)
        .await
        .map_err(|e| LaunchError::Fatal(e.to_string()))?;
    approved_to_run(inner, id, &spec, &plan).await?;
    let secret_err = |e: SecretError| LaunchError::Fatal(e.to_string());
    match (&spec.transport, plan) {
        (
            TransportSpec::Stdio(s),
            LaunchPlan::Stdio {
                program,
                args,
                cwd,
                sandbox,
                ..
            },
        ) => {
            let configured = resolve_values(inner, id, &s.env)
                .await
                .map_err(secret_err)?;
            // LK-01: `${secret:NAME}` in an argument is filled in only now, and redacted.
            let in_args = placeholder_values(inner, &spec).await.map_err(secret_err)?;
            let args: Vec<String> = args.iter().map(|a| fill(a, lookup(&in_args))).collect();
            let all = configured.iter().map(|(_, v)| v);
            logs.set_redactor(Redactor::new(all.chain(in_args.iter().map(|(_, v)| v))));
            let env = child_env(inner.env.host_env.iter().cloned(), &configured);
            // SP-07: a sandboxed server runs under bubblewrap, or not at all; SP-13: with
            // network, in a namespace of its own (and with domain lists, behind the proxy).
            let (proxy, net) = super::sandbox::network_for(inner, id, &sandbox, logs).await?;
            let (program, args) = super::sandbox::wrap(
                inner,
                &sandbox,
                &program,
                &args,
                &cwd,
                &env,
                logs,
                net.as_ref(),
            )?;
            // Recorded until stopped, so the next start can sweep it if this host is killed.
            let records = RunRecords::in_data_dir(&inner.data_dir);
            let keep = net.as_ref().map(|n| n.keep()).unwrap_or_default();
            let (mut process, pipes) = ServerProcess::spawn_keeping(
                &program,
                &args,
                &cwd,
                &env,
                Some(records.entry(id.as_str())),
                if net.is_some() { &keep } else { &[] },
            )
            .map_err(|e| {
                LaunchError::Transient(format!("could not start {}: {e}", program.display()))
            })?;
            if let Some(net) = net {
                // On failure the process is dropped here, which kills it before it ran.
                net.connect(logs)
                    .await
                    .map_err(|e| LaunchError::Fatal(e.to_string()))?;
            }
            if let Some(proxy) = proxy {
                process.hold(crate::server_process::Held(Box::new(proxy)));
            }
            process.set_stop_grace(inner.env.supervisor.stop_grace);
            logs.note(&format!(
                "started {} (pid {})",
                program.display(),
                process.pid().unwrap_or(0)
            ));
            Ok(Endpoint::Stdio {
                process: Box::new(process),
                pipes,
                max_message: spec.timeouts.max_message(),
            })
        }
        (TransportSpec::Http(h), _) => http_endpoint(inner, id, &spec, h, logs).await,
        _ => Err(LaunchError::Fatal(
            "internal: plan does not match transport".into(),
        )),
    }
}
