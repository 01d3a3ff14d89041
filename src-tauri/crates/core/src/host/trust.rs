//! The trust gate: what a person is shown before a server may run or be contacted, their
//! approval bound to its fingerprint, and the secret bindings they make while approving
//! (SP-01, SP-03, SP-10, SE-04).
//!
//! Local and remote servers are gated alike: a remote server's headers can carry a credential
//! to wherever its URL points, so nothing connects before the person approved the URL and every
//! header. A server may use a secret outside its own namespace (a provider key, another
//! server's secret) only through a binding made here; the binding is written into the spec in
//! the same step as the approval, and it is part of the fingerprint, so it is visible in the
//! consent view and any later change of it voids the approval.

use serde::Serialize;
use serde_json::json;

use super::{Host, HostError, Inner};
use crate::approval::audit::ConfigChange;
use crate::config::launch::{Fingerprint, LaunchPlan, ResolveError};
use crate::config::{Binding, ServerSpec, ValueSource};
use crate::events::HostEvent;
use crate::ids::ServerId;

/// Whether a server's current launch plan (or remote endpoint) is approved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// Approved, and unchanged since.
    Trusted,
    /// Never approved.
    NotApproved,
    /// Approved once, but what would run (or be contacted) now differs.
    Changed,
}

/// What a person is shown before approving a server (SP-01, SP-02, SP-10).
#[derive(Clone, Debug, Serialize)]
pub struct TrustView {
    /// The server.
    pub server: ServerId,
    /// What would run or be contacted.
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

/// A secret binding the person makes in the trust view: field `field` (an env var or header
/// of the server) takes its value from `to`, or from the server's own secret when `None`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldBinding {
    /// The env var or header, exactly as configured.
    pub field: String,
    /// The secret of another namespace, or `None` for the server's own.
    pub to: Option<Binding>,
}

impl Host {
    /// What would run, for the trust prompt.
    pub async fn trust_view(&self, id: &ServerId) -> Result<TrustView, HostError> {
        self.trust_view_with(id, &[]).await
    }

    /// What would run if the person made `bindings`: the view they approve with
    /// [`Host::trust_server_with`]. Nothing is stored.
    pub async fn trust_view_with(
        &self,
        id: &ServerId,
        bindings: &[FieldBinding],
    ) -> Result<TrustView, HostError> {
        let spec = self.server(id).await?;
        let spec = self.apply_bindings(spec, bindings).await?;
        view(&self.inner, &spec).await
    }

    /// Records approval of the plan with `fingerprint` (the one the person was shown). Fails
    /// if what would run changed in between.
    pub async fn trust_server(
        &self,
        id: &ServerId,
        fingerprint: &Fingerprint,
    ) -> Result<(), HostError> {
        self.trust_server_with(id, &[], fingerprint).await
    }

    /// Makes `bindings` and approves the resulting plan, which must have `fingerprint` (the
    /// one shown by [`Host::trust_view_with`] with the same bindings).
    pub async fn trust_server_with(
        &self,
        id: &ServerId,
        bindings: &[FieldBinding],
        fingerprint: &Fingerprint,
    ) -> Result<(), HostError> {
        let before = self.server(id).await?;
        let spec = self.apply_bindings(before.clone(), bindings).await?;
        let view = view(&self.inner, &spec).await?;
        if &view.fingerprint != fingerprint {
            return Err(HostError::TrustRace(id.clone()));
        }
        if spec != before {
            self.inner.store.update_server(&spec).await?;
        }
        self.inner.store.set_trust(id, &view.plan).await?;
        tracing::info!(server = %id, fingerprint = %fingerprint, "launch spec approved");
        let bound: Vec<String> = spec
            .bindings()
            .iter()
            .map(|(field, b)| format!("{field}={b}"))
            .collect();
        self.audit_config(
            ConfigChange::Trusted,
            Some(id),
            json!({ "fingerprint": fingerprint, "bindings": bound, "plan": view.lines }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// Withdraws approval.
    pub async fn revoke_trust(&self, id: &ServerId) -> Result<(), HostError> {
        self.server(id).await?;
        self.inner.store.clear_trust(id).await?;
        if let Some(h) = self.handle(id) {
            h.stop().await;
        }
        self.audit_config(ConfigChange::TrustRevoked, Some(id), json!({}))
            .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(())
    }

    /// `spec` with `bindings` made. A binding must name something that exists: a configured
    /// provider, or a secret another server refers to.
    async fn apply_bindings(
        &self,
        mut spec: ServerSpec,
        bindings: &[FieldBinding],
    ) -> Result<ServerSpec, HostError> {
        for b in bindings {
            if let Some(to) = &b.to {
                self.check_binding_target(&spec.id, to).await?;
            }
            let taken: Vec<String> = spec
                .secret_refs()
                .iter()
                .map(|n| n.as_str().to_owned())
                .collect();
            let Some(v) = spec.values_mut().iter_mut().find(|v| v.name == b.field) else {
                return Err(HostError::Invalid(format!(
                    "{} has no environment variable or header named {}",
                    spec.id,
                    crate::escape::short_for_display(&b.field, 64)
                )));
            };
            v.value = match (&b.to, &v.value) {
                (Some(to), _) => ValueSource::Bound(to.clone()),
                (None, ValueSource::Bound(_) | ValueSource::Plain(_)) => {
                    let mut taken = crate::config::import::names::Taken::new(taken);
                    let name = crate::config::credentials::own_name(&v.name, &mut taken)
                        .ok_or_else(|| {
                            HostError::Invalid(format!("no secret name fits {}", v.name))
                        })?;
                    ValueSource::Secret(name)
                }
                (None, own @ ValueSource::Secret(_)) => own.clone(),
            };
        }
        Ok(spec)
    }

    async fn check_binding_target(&self, server: &ServerId, to: &Binding) -> Result<(), HostError> {
        match to {
            Binding::Provider(p) => {
                if !self.inner.features.models.exists(p).await? {
                    return Err(HostError::Invalid(format!(
                        "there is no provider named {p}; `switchboard provider list` shows them"
                    )));
                }
            }
            Binding::Server {
                server: other,
                name,
            } => {
                if other == server {
                    return Err(HostError::Invalid(format!(
                        "{server}/{name} is the server's own secret: bind the field to `own`"
                    )));
                }
                let spec = self.server(other).await?;
                if !spec.secret_refs().contains(&name) {
                    return Err(HostError::Invalid(format!(
                        "{other} has no secret named {name} (it can only lend a secret it uses)"
                    )));
                }
            }
        }
        Ok(())
    }
}

async fn view(inner: &Inner, spec: &ServerSpec) -> Result<TrustView, HostError> {
    let plan = resolve(inner, spec).await.map_err(|e| HostError::Launch {
        server: spec.id.clone(),
        reason: e.to_string(),
    })?;
    let state = trust_state(inner, spec, &plan).await?;
    Ok(TrustView {
        server: spec.id.clone(),
        lines: plan.consent_lines(),
        warnings: plan.warnings(),
        fingerprint: plan.fingerprint(),
        plan,
        state,
    })
}

/// The host's own PATH first, and the login shell's only when that finds nothing: probing a
/// login shell costs a process and whatever the person's start-up files do (up to 2 s), which
/// the servers page paid on its first render while most commands are absolute or on the
/// app's PATH. The order of the search, and so the result, is the same as one pass over both.
pub(super) async fn resolve(inner: &Inner, spec: &ServerSpec) -> Result<LaunchPlan, ResolveError> {
    if let Some(full) = inner.env.search.get() {
        return LaunchPlan::resolve(spec, &inner.data_dir, full);
    }
    match LaunchPlan::resolve(spec, &inner.data_dir, &inner.env.host_search) {
        Err(ResolveError::NotFound { .. }) => {
            LaunchPlan::resolve(spec, &inner.data_dir, inner.search_path().await)
        }
        done => done,
    }
}

/// Whether `plan` is what the person approved for `spec`'s server. Remote servers are no
/// exception (SP-10).
pub(super) async fn trust_state(
    inner: &Inner,
    spec: &ServerSpec,
    plan: &LaunchPlan,
) -> Result<TrustState, HostError> {
    Ok(match inner.store.trust(&spec.id).await? {
        None => TrustState::NotApproved,
        Some(t) if t.fingerprint == plan.fingerprint() => TrustState::Trusted,
        Some(_) => TrustState::Changed,
    })
}
