//! OAuth sign-in for remote servers (issue 12), over rmcp's authorization state machine (the
//! SDK's `auth` feature: discovery, issuer and resource checks, PKCE, scope selection and
//! step-up, refresh, client credentials). It is its own module, below `mcp`: a sign-in is not a
//! connection, and the host's sign-in, credentials and `switchboard auth` need it without a
//! server running. With `mcp::connection` it is one of the two users of `rmcp` (its auth types);
//! everything outside sees only the types of this file. A connection takes an [`Authorizer`].
//!
//! What Switchboard adds around rmcp:
//! - `net`: the one HTTP client of every sign-in request, with the SSRF guard (AU-09/AU-10);
//! - `store`: one keyring entry per server holding the whole sign-in (AU-08, SE-01);
//! - `listener`: the loopback redirect listener (AU-05, TA-07);
//! - `flow`: the steps of a sign-in, reported as a timeline, registration in the spec's order
//!   and PKCE S256 required (AU-02, AU-04);
//! - `errors`: failures in words, with the step they happened at;
//! - `manage`: what the Credentials page and `switchboard auth` need: status, sign out with
//!   revocation (RFC 7009), client credentials, and the [`Authorizer`] a connection uses.

mod errors;
mod flow;
mod legacy;
mod listener;
mod manage;
pub mod net;
mod store;

use std::sync::Arc;

use futures::future::BoxFuture;

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, OAuthTokenResponse};
use serde::{Deserialize, Serialize};

pub use self::errors::SignInError;
pub use self::flow::{sign_in, ClientSettings, Handoff, SignIn};
pub use self::manage::{
    authorizer, client_credentials, renew_client_credentials, sign_out, status, ClientCredentials,
    SignInStatus, SignedOut,
};
pub use self::net::{Lookup, Network};
pub use self::store::{now_secs, read_bound, write_bound, BoundSecret, Registration};

/// The steps of a sign-in, in order, as the timeline shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignInStep {
    /// Finding the protected resource metadata (RFC 9728).
    Discovery,
    /// Reading and checking the authorization server's metadata.
    Metadata,
    /// Getting a client id.
    Registration,
    /// The browser: the person signs in and consents.
    Browser,
    /// Exchanging the code for tokens.
    Token,
    /// The first call with the new token.
    FirstCall,
}

/// Where a step is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StepState {
    /// Running.
    Started,
    /// Finished, with what it found.
    Done {
        /// In words.
        detail: String,
    },
    /// Failed, with what failed and what to do.
    Failed {
        /// In words.
        detail: String,
        /// A stable code ([`SignInError::code`]).
        code: String,
    },
}

/// One entry of the timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEvent {
    /// Which step.
    pub step: SignInStep,
    /// How it stands.
    #[serde(flatten)]
    pub state: StepState,
}

impl StepEvent {
    /// A step started.
    pub fn started(step: SignInStep) -> Self {
        Self {
            step,
            state: StepState::Started,
        }
    }

    /// A step finished.
    pub fn done(step: SignInStep, detail: impl Into<String>) -> Self {
        Self {
            step,
            state: StepState::Done {
                detail: detail.into(),
            },
        }
    }

    /// A step failed.
    pub fn failed(step: SignInStep, e: &SignInError) -> Self {
        Self {
            step,
            state: StepState::Failed {
                detail: e.to_string(),
                code: e.code().to_owned(),
            },
        }
    }
}

/// The outcome of a sign-in, without any secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedIn {
    /// The authorization server.
    pub issuer: Option<String>,
    /// The scopes granted (or asked for, when the server did not say).
    pub scopes: Vec<String>,
    /// When the access token expires (seconds since the epoch), if the server said.
    pub expires_at: Option<u64>,
    /// Whether a refresh token came with it.
    pub refreshable: bool,
}

impl SignedIn {
    fn from_token(issuer: Option<String>, token: &OAuthTokenResponse, asked: &[String]) -> Self {
        Self {
            issuer,
            scopes: token
                .scopes()
                .map(|s| s.iter().map(|s| s.to_string()).collect())
                .unwrap_or_else(|| asked.to_vec()),
            expires_at: token.expires_in().map(|d| now_secs() + d.as_secs()),
            refreshable: token.refresh_token().is_some(),
        }
    }
}

/// Gets a new access token without a person (client credentials), or `None` when it cannot.
/// It stores the token in the server's keyring record itself.
pub type Renewer = Arc<dyn Fn() -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// What a connection uses to put a token on its requests and refresh it: shared by every
/// connection to one server, so concurrent calls wait for one refresh instead of racing.
#[derive(Clone)]
pub struct Authorizer {
    pub(crate) manager: Arc<tokio::sync::Mutex<AuthorizationManager>>,
    /// The keyring record, as the manager's store (a clone sharing its cache).
    pub(crate) store: store::KeyringCredentials,
    /// How a refused token is replaced without a person (client credentials).
    pub(crate) renew: Option<Renewer>,
    /// Held while a refused token is being replaced, so the requests refused with it wait and
    /// use the one replacement instead of each refreshing.
    pub(crate) recovering: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorizer(..)")
    }
}

impl Authorizer {
    /// This authorizer, renewing refused tokens with `renew` (see [`Renewer`]).
    pub fn renewing(mut self, renew: Renewer) -> Self {
        self.renew = Some(renew);
        self
    }

    /// Whether this authorizer's sign-in is for the MCP server at `url` (SE-08): a server
    /// whose URL changed must not get the tokens made for the old one.
    pub fn is_for(&self, url: &str) -> bool {
        self.store.is_for(url)
    }

    /// A token to retry a request the server refused with `sent`: the one another request
    /// already got in its place, else a refreshed one (or, for client credentials, a renewed
    /// one). One at a time: whoever waited finds the replacement made meanwhile.
    pub(crate) async fn recover(&self, sent: &str) -> Option<String> {
        let _one = self.recovering.lock().await;
        // Another request (or process) may have replaced it while we waited.
        self.store.forget().await;
        if let Some(current) = self.store.access_token().await.filter(|t| t != sent) {
            return Some(current);
        }
        let fresh = match &self.renew {
            Some(renew) => renew().await,
            None => match self.manager.lock().await.refresh_token().await {
                Ok(t) => Some(t.access_token().secret().clone()),
                Err(e) => {
                    tracing::warn!("the refused token could not be refreshed: {e}");
                    None
                }
            },
        };
        self.store.forget().await;
        fresh
    }

    /// Remembers what a 403 `insufficient_scope` asked for: the next sign-in asks for it.
    pub(crate) async fn remember_challenge(&self, header: &str) {
        let base = self.store.resource_url();
        let params = rmcp::transport::auth::WWWAuthenticateParams::parse(header, &base);
        if let Some(scope) = params.scope.filter(|s| !s.trim().is_empty()) {
            if let Err(e) = self.store.remember_step_up(&scope).await {
                tracing::warn!("could not remember the scopes the server asked for: {e}");
            }
        }
    }

    /// rmcp's authorizing HTTP client around `inner`, sharing this server's manager.
    pub(crate) async fn client<C>(&self, inner: C) -> Result<AuthClient<C>, AuthError> {
        // AuthClient::new wants a manager of its own; it is replaced by the shared one at once.
        // The placeholder has no network access and never runs.
        let placeholder = AuthorizationManager::new_with_oauth_http_client(
            "http://127.0.0.1/",
            Arc::new(net::NoNetwork),
        )
        .await?;
        let mut client = AuthClient::new(inner, placeholder);
        client.auth_manager = self.manager.clone();
        Ok(client)
    }
}
