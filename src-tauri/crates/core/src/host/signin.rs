//! Signing in to remote servers (issue 12): the host side of the core's OAuth flow
//! ([`crate::oauth`]). The host owns one [`Authorizer`] per signed-in server
//! (so every connection to it shares one token and one refresh), asks for a sign-in when a
//! server answers 401, and restarts the server once signed in so its first call is the proof.

use std::sync::Arc;

use crate::config::{HttpAuth, HttpSpec, TransportSpec};
use crate::ids::ServerId;
use crate::oauth::{
    self, Authorizer, BoundSecret, ClientSettings, Handoff, SignInError, SignInStatus, SignInStep,
    SignedIn, SignedOut, StepEvent,
};
use crate::redact::Secret;
use crate::secrets::{SecretKey, SignInPart};
use crate::status::Reason;

use super::{Host, HostError, Inner};

/// The authorizer for a server's connection: its stored sign-in, if any, for this URL. A
/// server configured for client credentials gets a token here without anyone: at the first
/// connection, and again whenever the last one has expired (client credentials have no refresh
/// token; the supervisor's restart after the 401 lands here).
pub(super) async fn authorizer_for(
    inner: &Inner,
    id: &ServerId,
    h: &HttpSpec,
) -> Option<Authorizer> {
    let (url, auth) = (h.url.as_str(), h.auth.as_ref());
    // A token never crosses the network in clear text unless the person allowed it (AU-10).
    if cleartext(h) {
        return None;
    }
    let net = network(h);
    if let Some(HttpAuth::ClientCredentials {
        client_id,
        signing_algorithm,
        scopes,
    }) = auth
    {
        let fresh = oauth::status(&inner.secrets, id, url)
            .await
            .ok()
            .flatten()
            .is_some_and(|s| s.current && s.has_token && !expired(s.expires_at));
        if !fresh {
            inner.signins().remove(id);
            if let Err(e) = machine_token(
                inner,
                id,
                url,
                client_id,
                signing_algorithm.as_deref(),
                scopes,
                net.clone(),
            )
            .await
            {
                tracing::warn!(server = %id, "client credentials failed: {e}");
                return None;
            }
        }
    }
    // The cache is by name: an authorizer made for the server's old URL is dropped, never
    // used for the new one (SE-08).
    let cached = inner.signins().get(id).cloned();
    match cached {
        Some(a) if a.is_for(url) => return Some(a),
        Some(_) => {
            inner.signins().remove(id);
        }
        None => {}
    }
    let secret = client_secret(inner, id).await;
    let lock = inner
        .data_dir
        .join("run")
        .join("signin")
        .join(format!("{id}.lock"));
    match oauth::authorizer(&inner.secrets, id, url, secret, net.clone(), Some(lock)).await {
        Ok(Some(a)) => {
            let a = match auth {
                Some(HttpAuth::ClientCredentials { .. }) => {
                    a.renewing(renewer(inner, id, url, auth, net))
                }
                _ => a,
            };
            inner.signins().insert(id.clone(), a.clone());
            Some(a)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(server = %id, "the stored sign-in cannot be used: {e}");
            None
        }
    }
}

/// Gets a new client-credentials token when the server refuses the current one (revoked, or
/// expired early): the connection retries with it, no person involved.
fn renewer(
    inner: &Inner,
    id: &ServerId,
    url: &str,
    auth: Option<&HttpAuth>,
    net: oauth::Network,
) -> oauth::Renewer {
    let (secrets, id, url, auth) = (
        inner.secrets.clone(),
        id.clone(),
        url.to_owned(),
        auth.cloned(),
    );
    Arc::new(move || {
        let (secrets, id, url, auth) = (secrets.clone(), id.clone(), url.clone(), auth.clone());
        let net = net.clone();
        Box::pin(async move {
            let Some(HttpAuth::ClientCredentials {
                client_id,
                signing_algorithm,
                scopes,
            }) = auth
            else {
                return None;
            };
            let (secret, key) = machine_credentials(&secrets, &id, signing_algorithm.as_deref())
                .await
                .ok()?;
            oauth::renew_client_credentials(oauth::ClientCredentials {
                server: &id,
                url: &url,
                secrets: &secrets,
                client_id,
                secret,
                key,
                scopes,
                challenge: None,
                net,
            })
            .await
        })
    })
}

/// The client secret, or the signing key and its algorithm, of a client-credentials server.
async fn machine_credentials(
    secrets: &crate::secrets::Secrets,
    id: &ServerId,
    signing_algorithm: Option<&str>,
) -> Result<(Option<BoundSecret>, Option<(BoundSecret, Option<String>)>), SignInError> {
    let part = match signing_algorithm {
        Some(_) => SignInPart::ClientKey,
        None => SignInPart::ClientSecret,
    };
    let value = oauth::read_bound(secrets, id, part).await?.ok_or_else(|| {
        SignInError::Store(crate::secrets::SecretError::Missing(SecretKey::SignIn {
            server: id.clone(),
            part,
        }))
    })?;
    Ok(match signing_algorithm {
        Some(alg) => (None, Some((value, Some(alg.to_owned())))),
        None => (Some(value), None),
    })
}

/// Whether tokens for this server would cross the network in clear text: plain http to another
/// machine, without the person's "allow insecure (development)".
fn cleartext(h: &HttpSpec) -> bool {
    url::Url::parse(&h.url)
        .map(|u| u.scheme() == "http" && !crate::config::is_loopback(&u))
        .unwrap_or(true)
        && !h.allow_insecure
}

/// The network rules of a server's sign-in requests.
fn network(h: &HttpSpec) -> oauth::Network {
    oauth::Network::system().insecure(h.allow_insecure)
}

/// Whether a token expiring at `at` is (about to be) expired.
fn expired(at: Option<u64>) -> bool {
    at.is_some_and(|at| at <= oauth::now_secs() + 30)
}

/// Gets a client-credentials token for a server and stores it like a sign-in.
async fn machine_token(
    inner: &Inner,
    id: &ServerId,
    url: &str,
    client_id: &str,
    signing_algorithm: Option<&str>,
    scopes: &[String],
    net: oauth::Network,
) -> Result<SignedIn, SignInError> {
    let (secret, key) = machine_credentials(&inner.secrets, id, signing_algorithm).await?;
    oauth::client_credentials(oauth::ClientCredentials {
        server: id,
        url,
        secrets: &inner.secrets,
        client_id: client_id.to_owned(),
        secret,
        key,
        scopes: scopes.to_vec(),
        challenge: None,
        net,
    })
    .await
}

/// The client secret the person typed for a server's pre-registered client, if any, with the
/// client and issuer it belongs to.
async fn client_secret(inner: &Inner, id: &ServerId) -> Option<BoundSecret> {
    oauth::read_bound(&inner.secrets, id, SignInPart::ClientSecret)
        .await
        .ok()
        .flatten()
}

/// The client id a server is configured to sign in with, if the person gave one.
fn configured_client(spec: &crate::config::ServerSpec) -> Option<String> {
    match &spec.transport {
        TransportSpec::Http(h) => match &h.auth {
            Some(HttpAuth::SignIn { client_id })
            | Some(HttpAuth::ClientCredentials { client_id, .. }) => Some(client_id.clone()),
            None => None,
        },
        _ => None,
    }
}

/// Who Switchboard is to authorization servers.
pub const CLIENT_NAME: &str = "Switchboard";

/// The Client ID Metadata Document Switchboard publishes (see docs/oauth.md). Off unless the
/// person sets `SWITCHBOARD_CLIENT_METADATA_URL`: the document must be served over https at
/// that URL, and no one hosts one for this build yet.
fn metadata_url() -> Option<String> {
    std::env::var("SWITCHBOARD_CLIENT_METADATA_URL")
        .ok()
        .filter(|u| u.starts_with("https://"))
}

impl Host {
    fn remote_url(&self, spec: &crate::config::ServerSpec) -> Result<String, HostError> {
        Ok(remote(spec)?.url.clone())
    }

    /// Signs in to a remote server (the steps go to `handoff`), then restarts it so the first
    /// call uses the new token. `client_id` is a client the person registered themselves.
    pub async fn sign_in(
        &self,
        id: &ServerId,
        client_id: Option<String>,
        handoff: &dyn Handoff,
    ) -> Result<SignedIn, HostError> {
        let spec = self.server(id).await?;
        let h = remote(&spec)?;
        if cleartext(h) {
            return Err(HostError::Invalid(format!(
                "{id} is at a plain http address on another computer: its sign-in tokens would \
                 cross the network in clear text. Use its https address, or for a development \
                 server turn on \"allow insecure (development)\" for it (`switchboard server \
                 insecure {id} on`)"
            )));
        }
        // SP-11: no request of a sign-in leaves before the person approved what is contacted.
        self.approved_for_sign_in(&spec).await?;
        let (url, net, configured) = (h.url.clone(), network(h), h.auth.clone());
        if let Some(HttpAuth::ClientCredentials {
            client_id,
            signing_algorithm,
            scopes,
        }) = &configured
        {
            // No browser: the token comes from the client's own credentials.
            handoff.step(StepEvent::started(SignInStep::Token));
            let signed = machine_token(
                &self.inner,
                id,
                &url,
                client_id,
                signing_algorithm.as_deref(),
                scopes,
                net,
            )
            .await;
            let signed = match signed {
                Ok(s) => {
                    handoff.step(StepEvent::done(
                        SignInStep::Token,
                        "got a token with the client's credentials",
                    ));
                    s
                }
                Err(e) => {
                    handoff.step(StepEvent::failed(SignInStep::Token, &e));
                    return Err(sign_in_err(e));
                }
            };
            self.inner.signins().remove(id);
            self.first_call(id, handoff).await?;
            return Ok(signed);
        }
        let client_id = client_id.or(match configured {
            Some(HttpAuth::SignIn { client_id }) => Some(client_id),
            _ => None,
        });
        let challenge = match self.handle(id).map(|h| h.status()) {
            Some(s) => match s.reason() {
                Some(Reason::AuthRequired(c)) => c.challenge.clone(),
                _ => None,
            },
            None => None,
        };
        let client = ClientSettings {
            client_id,
            client_secret: client_secret(&self.inner, id).await,
            metadata_url: metadata_url(),
            name: CLIENT_NAME.to_owned(),
        };
        let signed = oauth::sign_in(
            oauth::SignIn {
                server: id,
                url: &url,
                secrets: &self.inner.secrets,
                client: &client,
                challenge: challenge.as_deref(),
                net: net.clone(),
                wait: None,
            },
            handoff,
        )
        .await
        .map_err(sign_in_err)?;
        self.inner.signins().remove(id);
        self.first_call(id, handoff).await?;
        Ok(signed)
    }

    /// Refuses a sign-in to a server that is not approved, or changed since it was (SP-11):
    /// discovery, registration and the token request all go where its URL leads, so they wait
    /// for the same consent as a connection. The shells call it before they store anything.
    pub async fn may_sign_in(&self, id: &ServerId) -> Result<(), HostError> {
        let spec = self.server(id).await?;
        remote(&spec)?;
        self.approved_for_sign_in(&spec).await
    }

    async fn approved_for_sign_in(
        &self,
        spec: &crate::config::ServerSpec,
    ) -> Result<(), HostError> {
        let plan = super::trust::resolve(&self.inner, spec)
            .await
            .map_err(|e| HostError::Launch {
                server: spec.id.clone(),
                reason: e.to_string(),
            })?;
        match super::trust::trust_state(&self.inner, spec, &plan).await? {
            super::trust::TrustState::Trusted => Ok(()),
            state => Err(HostError::NotApproved {
                server: spec.id.clone(),
                changed: state == super::trust::TrustState::Changed,
            }),
        }
    }

    /// Restarts the server with its new sign-in and lists its tools: the timeline's last step.
    async fn first_call(&self, id: &ServerId, handoff: &dyn Handoff) -> Result<(), HostError> {
        handoff.step(StepEvent::started(SignInStep::FirstCall));
        let spec = self.server(id).await?;
        if !spec.enabled {
            handoff.step(StepEvent::done(
                SignInStep::FirstCall,
                "signed in; the server is disabled, so it was not started",
            ));
            return Ok(());
        }
        let handle = self.start_server(id).await?;
        let settled = handle
            .wait_settled(std::time::Duration::from_secs(30))
            .await;
        match settled {
            crate::status::ServerStatus::Running { tools, .. } => {
                handoff.step(StepEvent::done(
                    SignInStep::FirstCall,
                    format!("connected; {tools} tools"),
                ));
                Ok(())
            }
            other => {
                let e = HostError::Invalid(format!(
                    "signed in, but the server did not connect: {other}"
                ));
                handoff.step(StepEvent {
                    step: SignInStep::FirstCall,
                    state: oauth::StepState::Failed {
                        detail: e.to_string(),
                        code: "first_call_failed".into(),
                    },
                });
                Err(e)
            }
        }
    }

    /// Signs out of a server: revokes where offered, deletes the tokens, and restarts a running
    /// server without them (so it says it needs sign-in).
    pub async fn sign_out(&self, id: &ServerId) -> Result<SignedOut, HostError> {
        let spec = self.server(id).await?;
        let net = network(remote(&spec)?);
        let secret = client_secret(&self.inner, id).await;
        let out = oauth::sign_out(&self.inner.secrets, id, secret, net)
            .await
            .map_err(sign_in_err)?;
        self.inner.signins().remove(id);
        // A running server starts again without a token: its 401 puts "Needs sign-in" on its
        // card, instead of a stopped server that says nothing about why.
        if let Some(h) = self.handle(id) {
            h.restart().await;
        }
        Ok(out)
    }

    /// The state of a server's sign-in (never a token); `None` when it has none.
    pub async fn sign_in_status(&self, id: &ServerId) -> Result<Option<SignInStatus>, HostError> {
        let spec = self.server(id).await?;
        let url = self.remote_url(&spec)?;
        Ok(oauth::status(&self.inner.secrets, id, &url).await?)
    }

    /// Opens a checked URL (a sign-in page) with the host's browser: the configured program
    /// (`SWITCHBOARD_BROWSER` in the shells, a stand-in in tests) or the system browser.
    pub fn open_in_browser(&self, url: &crate::url_check::CheckedUrl) -> std::io::Result<()> {
        crate::opener::open(url, self.inner.env.browser.as_deref())
    }

    /// Sets how Switchboard gets tokens for a remote server (a pre-registered client, client
    /// credentials, or the default browser sign-in with automatic registration). Not part of
    /// what the person approved (it changes who we are to the server, not what we contact), so
    /// the approval stands; the old sign-in is kept until the next one replaces it.
    pub async fn set_http_auth(
        &self,
        id: &ServerId,
        auth: Option<HttpAuth>,
    ) -> Result<(), HostError> {
        let mut spec = self.server(id).await?;
        match &mut spec.transport {
            TransportSpec::Http(h) => h.auth = auth,
            _ => {
                return Err(HostError::Invalid(format!(
                    "{id} runs on this computer; only remote servers sign in"
                )))
            }
        }
        spec.validate()?;
        self.inner.store.update_server(&spec).await?;
        let kind = match &auth_kind(&spec) {
            Some(k) => serde_json::json!(k),
            None => serde_json::Value::Null,
        };
        self.audit_config(
            crate::approval::audit::ConfigChange::ServerUpdated,
            Some(id),
            serde_json::json!({ "sign_in": kind }),
        )
        .await;
        self.inner.signins().remove(id);
        let _ = self.inner.events.send(super::HostEvent::ServersChanged);
        Ok(())
    }

    /// Turns "allow insecure (development)" on or off for a remote server (AU-10): with it,
    /// sign-in and its tokens may use plain http to another machine. It is part of what the
    /// person approves, so turning it on asks for approval again.
    pub async fn set_allow_insecure(&self, id: &ServerId, allow: bool) -> Result<(), HostError> {
        let mut spec = self.server(id).await?;
        let TransportSpec::Http(h) = &mut spec.transport else {
            return Err(HostError::Invalid(format!(
                "{id} runs on this computer; only remote servers sign in"
            )));
        };
        h.allow_insecure = allow;
        spec.validate()?;
        self.inner.store.update_server(&spec).await?;
        self.audit_config(
            crate::approval::audit::ConfigChange::ServerUpdated,
            Some(id),
            serde_json::json!({ "allow_insecure": allow }),
        )
        .await;
        self.inner.signins().remove(id);
        let _ = self.inner.events.send(super::HostEvent::ServersChanged);
        if let Some(h) = self.handle(id) {
            h.restart().await;
        }
        Ok(())
    }

    /// Stores the client's signing key (PEM) for client credentials with a signed assertion.
    /// It belongs to the client id the server is configured with (SE-08; set that first) and
    /// to the issuer it is first used with.
    pub async fn set_client_key(&self, id: &ServerId, pem: Secret) -> Result<(), HostError> {
        let spec = self.server(id).await?;
        let bound = BoundSecret::new(pem, configured_client(&spec));
        oauth::write_bound(&self.inner.secrets, id, SignInPart::ClientKey, &bound).await?;
        self.inner.signins().remove(id);
        Ok(())
    }

    /// Stores the client secret of a pre-registered client (never shown again).
    /// Like the key, it belongs to the configured client id and the issuer it is first sent to.
    pub async fn set_client_secret(&self, id: &ServerId, secret: Secret) -> Result<(), HostError> {
        let spec = self.server(id).await?;
        let bound = BoundSecret::new(secret, configured_client(&spec));
        oauth::write_bound(&self.inner.secrets, id, SignInPart::ClientSecret, &bound).await?;
        self.inner.signins().remove(id);
        Ok(())
    }

    /// Deletes everything a server's sign-in left, as its removal does (SE-08): the tokens are
    /// revoked where the authorization server offers it (RFC 7009), then the record (tokens,
    /// registration, step-up), the typed client secret and the signing key are deleted, so a
    /// server added later under the same name starts with nothing. Best effort: what could not
    /// be done is in the answer (for the audit) and the log; the removal goes on.
    pub(super) async fn forget_sign_in(
        &self,
        spec: &crate::config::ServerSpec,
    ) -> serde_json::Value {
        let id = &spec.id;
        let net = remote(spec)
            .map(network)
            .unwrap_or_else(|_| oauth::Network::system());
        let secret = client_secret(&self.inner, id).await;
        let signed_out = match oauth::sign_out(&self.inner.secrets, id, secret, net).await {
            Ok(out) => serde_json::json!(out),
            Err(e) => {
                tracing::warn!(server = %id, "could not sign out of the removed server: {e}");
                serde_json::json!({ "revocation": "failed", "detail": e.to_string() })
            }
        };
        let mut kept = Vec::new();
        for part in [
            SignInPart::Tokens,
            SignInPart::ClientSecret,
            SignInPart::ClientKey,
        ] {
            let key = SecretKey::SignIn {
                server: id.clone(),
                part,
            };
            if let Err(e) = self.inner.secrets.delete(key).await {
                tracing::warn!(server = %id, "could not delete {}: {e}", part.as_str());
                kept.push(part.as_str());
            }
        }
        self.inner.signins().remove(id);
        serde_json::json!({ "signed_out": signed_out, "not_deleted": kept })
    }
}

/// How a server gets tokens, for the audit log (names only, never a secret).
fn auth_kind(spec: &crate::config::ServerSpec) -> Option<&'static str> {
    match &spec.transport {
        TransportSpec::Http(h) => h.auth.as_ref().map(|a| match a {
            HttpAuth::SignIn { .. } => "pre_registered_client",
            HttpAuth::ClientCredentials { .. } => "client_credentials",
        }),
        _ => None,
    }
}

/// A server's HTTP settings, or why it has none.
fn remote(spec: &crate::config::ServerSpec) -> Result<&HttpSpec, HostError> {
    match &spec.transport {
        TransportSpec::Http(h) => Ok(h),
        _ => Err(HostError::Invalid(format!(
            "{} runs on this computer; only remote servers sign in",
            spec.id
        ))),
    }
}

fn sign_in_err(e: SignInError) -> HostError {
    match e {
        SignInError::Store(s) => HostError::Secret(s),
        other => HostError::SignIn(Arc::new(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_send<T: Send>(_: T) {}

    /// The shells run these on work-stealing tasks (Tauri commands must be Send).
    #[allow(dead_code)]
    fn sign_in_futures_are_send(host: &Host, id: &ServerId, handoff: &dyn Handoff) {
        is_send(host.sign_in(id, None, handoff));
        is_send(host.sign_out(id));
        is_send(host.sign_in_status(id));
    }
}
