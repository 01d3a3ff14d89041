//! Signing in to remote servers (issue 12): the host side of the core's OAuth flow
//! ([`crate::mcp::connection::oauth`]). The host owns one [`Authorizer`] per signed-in server
//! (so every connection to it shares one token and one refresh), asks for a sign-in when a
//! server answers 401, and restarts the server once signed in so its first call is the proof.

use std::sync::Arc;

use crate::config::TransportSpec;
use crate::ids::ServerId;
use crate::mcp::connection::oauth::{
    self, Authorizer, ClientSettings, Handoff, SignInError, SignInStatus, SignInStep, SignedIn,
    SignedOut, StepEvent,
};
use crate::redact::Secret;
use crate::secrets::{SecretKey, SignInPart};
use crate::status::Reason;

use super::{Host, HostError, Inner};

/// The authorizer for a server's connection: its stored sign-in, if any, for this URL.
pub(super) async fn authorizer_for(inner: &Inner, id: &ServerId, url: &str) -> Option<Authorizer> {
    if let Some(a) = inner.signins().get(id).cloned() {
        return Some(a);
    }
    let secret = client_secret(inner, id).await;
    match oauth::authorizer(&inner.secrets, id, url, secret, oauth::system_lookup()).await {
        Ok(Some(a)) => {
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

/// The client secret the person typed for a server's pre-registered client, if any.
async fn client_secret(inner: &Inner, id: &ServerId) -> Option<Secret> {
    let key = SecretKey::SignIn {
        server: id.clone(),
        part: SignInPart::ClientSecret,
    };
    inner.secrets.get(key).await.ok()
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
        match &spec.transport {
            TransportSpec::Http(h) => Ok(h.url.clone()),
            _ => Err(HostError::Invalid(format!(
                "{} runs on this computer; only remote servers sign in",
                spec.id
            ))),
        }
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
        let url = self.remote_url(&spec)?;
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
                lookup: oauth::system_lookup(),
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

    /// Signs out of a server: revokes where offered, deletes the tokens, stops the server's
    /// session (it will ask for sign-in again when started).
    pub async fn sign_out(&self, id: &ServerId) -> Result<SignedOut, HostError> {
        let spec = self.server(id).await?;
        self.remote_url(&spec)?;
        let secret = client_secret(&self.inner, id).await;
        let out = oauth::sign_out(&self.inner.secrets, id, secret, oauth::system_lookup())
            .await
            .map_err(sign_in_err)?;
        self.inner.signins().remove(id);
        if self.handle(id).is_some() {
            self.stop_server(id).await?;
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
        crate::opener::open(url, self.inner.browser.as_deref())
    }

    /// Stores the client secret of a pre-registered client (never shown again).
    pub async fn set_client_secret(&self, id: &ServerId, secret: Secret) -> Result<(), HostError> {
        self.server(id).await?;
        let key = SecretKey::SignIn {
            server: id.clone(),
            part: SignInPart::ClientSecret,
        };
        self.inner.secrets.set(key, secret).await?;
        self.inner.signins().remove(id);
        Ok(())
    }
}

fn sign_in_err(e: SignInError) -> HostError {
    match e {
        SignInError::Store(s) => HostError::Secret(s),
        other => HostError::SignIn(Arc::new(other)),
    }
}
