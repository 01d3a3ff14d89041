//! Signing in, step by step, over rmcp's authorization state machine: discovery (RFC 9728 then
//! RFC 8414 / OpenID, issuer and resource checked by rmcp), PKCE S256 (refused when not
//! advertised, AU-02), registration in the spec's order (AU-04), the browser hand-off through
//! the loopback listener (AU-05), the code exchange with the RFC 8707 resource and RFC 9207
//! `iss` checked, and the record saved to the keyring before the first call uses it.
//!
//! Each step is reported to a [`Handoff`] as it starts and ends, so the desktop can draw the
//! timeline and the CLI can print it; a failure names its step and says what to do.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession, OAuthTokenResponse,
};
use url::Url;

use super::errors::{from_auth, from_exchange, SignInError};
use super::legacy;
use super::listener::{Callback, Listener, WAIT};
use super::net::{GuardedClient, Network};
use super::store::{self, BoundSecret, ClientRecord, KeyringCredentials, Record, Registration};
use super::{SignInStep, SignedIn, StepEvent};
use crate::ids::ServerId;
use crate::secrets::{Secrets, SignInPart};
use crate::url_check::{self, CheckedUrl};

/// The shell's side of a sign-in: it hears about steps and opens the browser.
#[async_trait]
pub trait Handoff: Send + Sync {
    /// A step started, finished or failed.
    fn step(&self, event: StepEvent);
    /// Opens the authorization page. The URL was checked (RN-02) and its domain is what the
    /// person should see before anything opens. An error ends the sign-in with its text.
    async fn open(&self, url: &CheckedUrl) -> Result<(), String>;
}

/// Who Switchboard is to the authorization server.
#[derive(Clone, Debug, Default)]
pub struct ClientSettings {
    /// A client id the person registered out of band.
    pub client_id: Option<String>,
    /// Its secret (from the keyring), with the client and issuer it belongs to: it is sent
    /// only with that client id, to that issuer (SE-08).
    pub client_secret: Option<BoundSecret>,
    /// Switchboard's Client ID Metadata Document URL (SEP-991), used when the server supports it.
    pub metadata_url: Option<String>,
    /// The name given in Dynamic Client Registration.
    pub name: String,
}

/// One sign-in to ask for.
pub struct SignIn<'a> {
    /// The server (names its keyring entries).
    pub server: &'a ServerId,
    /// Its MCP URL.
    pub url: &'a str,
    /// The keyring.
    pub secrets: &'a Secrets,
    /// The client identity to use.
    pub client: &'a ClientSettings,
    /// The `WWW-Authenticate` value of the 401 (or 403) that asked for it, if any.
    pub challenge: Option<&'a str>,
    /// Resolves host names (the system's, or a table in tests).
    pub net: Network,
    /// How long to wait for the browser.
    pub wait: Option<std::time::Duration>,
}

/// Reports a step's outcome and passes the result on.
fn track<T>(
    handoff: &dyn Handoff,
    step: SignInStep,
    result: Result<T, SignInError>,
    done: impl FnOnce(&T) -> String,
) -> Result<T, SignInError> {
    match &result {
        Ok(v) => handoff.step(StepEvent::done(step, done(v))),
        Err(e) => handoff.step(StepEvent::failed(step, e)),
    }
    result
}

/// Builds a manager for `url` over the guarded client.
pub(super) async fn manager(url: &str, net: Network) -> Result<AuthorizationManager, SignInError> {
    let parsed = Url::parse(url).map_err(|e| SignInError::Discovery(format!("{url}: {e}")))?;
    let client = GuardedClient::new(&parsed, net)
        .map_err(|e| SignInError::Discovery(format!("could not build the HTTP client: {e}")))?;
    AuthorizationManager::new_with_oauth_http_client(parsed, Arc::new(client))
        .await
        .map_err(from_auth)
}

/// The `scope` of a `WWW-Authenticate` challenge.
fn challenge_scope(challenge: Option<&str>, url: &str) -> Option<String> {
    let base = Url::parse(url).ok()?;
    rmcp::transport::auth::WWWAuthenticateParams::parse(challenge?, &base)
        .scope
        .filter(|s| !s.trim().is_empty())
}

/// Runs a whole sign-in (see the module docs). On success the record is in the keyring.
pub async fn sign_in(req: SignIn<'_>, handoff: &dyn Handoff) -> Result<SignedIn, SignInError> {
    handoff.step(StepEvent::started(SignInStep::Discovery));
    let mut manager = manager(req.url, req.net.clone()).await?;
    let resolved = discover(&req, &manager).await;
    let (metadata, source) = track(handoff, SignInStep::Discovery, resolved, |(_, source)| {
        discovered_how(*source)
    })?;

    handoff.step(StepEvent::started(SignInStep::Metadata));
    // The authorization page itself is checked again when it is opened (with its query).
    let checked = check_metadata(&metadata, source);
    track(handoff, SignInStep::Metadata, checked, |a| {
        format!(
            "authorization server {} ({})",
            metadata.issuer.as_deref().unwrap_or("without an issuer"),
            a.domain
        )
    })?;
    let issuer = metadata.issuer.clone();
    manager.set_metadata(metadata.clone());

    // Registration, in the spec's order (AU-04).
    handoff.step(StepEvent::started(SignInStep::Registration));
    let listener = Listener::bind()
        .await
        .map_err(|e| SignInError::Browser(e.to_string()))?;
    let redirect_uri = listener.redirect_uri();
    let scopes = scopes_to_ask(&req, &manager, issuer.as_ref()).await?;
    let client = register(&req, &mut manager, &metadata, &redirect_uri, &scopes).await;
    let client = track(handoff, SignInStep::Registration, client, |c| {
        registered_how(c.registration)
    })?;

    // The new record waits in the store's memory and reaches the keyring with the tokens
    // (rmcp saves them through the store): a sign-in that fails leaves the old one as it was.
    let record = Record::new(req.url, issuer.clone(), metadata.clone(), client.clone());
    let store = KeyringCredentials::new(
        req.secrets.clone(),
        req.server.clone(),
        req.url,
        Some(record),
    );
    manager.set_credential_store(store.clone());
    let request =
        authorization_request(&req, &client, issuer.as_deref(), redirect_uri, &scopes).await?;

    handoff.step(StepEvent::started(SignInStep::Browser));
    let (session, callback, page) = in_browser(&req, handoff, manager, request, listener).await?;

    handoff.step(StepEvent::started(SignInStep::Token));
    let exchanged = exchange(&session, callback, &page, &store).await;
    let token = track(handoff, SignInStep::Token, exchanged, |_| {
        "signed in".to_owned()
    })?;
    Ok(SignedIn::from_token(issuer, &token, &scopes))
}

/// Discovery: the metadata the challenge points to (RFC 9728, then RFC 8414 / OpenID), else
/// what a 2025-03-26 server publishes at its own origin.
async fn discover(
    req: &SignIn<'_>,
    manager: &AuthorizationManager,
) -> Result<(AuthorizationMetadata, AuthorizationMetadataSource), SignInError> {
    match manager.resolve_metadata_from_challenge(req.challenge).await {
        Ok(r) => Ok((r.metadata, r.source)),
        Err(e) => {
            let refused = from_auth(e);
            match legacy::same_origin_metadata(req.url, req.challenge, req.net.clone(), &refused)
                .await
            {
                Some(metadata) => Ok((
                    metadata,
                    AuthorizationMetadataSource::AuthorizationServerMetadata,
                )),
                None => Err(refused),
            }
        }
    }
}

/// What discovery found, for the timeline.
fn discovered_how(source: AuthorizationMetadataSource) -> String {
    match source {
        AuthorizationMetadataSource::ProtectedResourceMetadata => {
            "found the server's protected resource metadata".to_owned()
        }
        AuthorizationMetadataSource::AuthorizationServerMetadata => {
            "found authorization server metadata at the server's address".to_owned()
        }
        _ => "no metadata published; using the 2025-03-26 default endpoints".to_owned(),
    }
}

/// The metadata's checks: PKCE S256 advertised, and an authorization endpoint that may be
/// opened (its checked URL).
fn check_metadata(
    metadata: &AuthorizationMetadata,
    source: AuthorizationMetadataSource,
) -> Result<CheckedUrl, SignInError> {
    // PKCE S256 or nothing (AU-02). Only a server that published no metadata at all (the
    // 2025-03-26 fallback) cannot advertise it; it gets S256 regardless.
    if source.is_discovered() {
        let methods = metadata
            .code_challenge_methods_supported
            .clone()
            .unwrap_or_default();
        if !methods.iter().any(|m| m == "S256") {
            return Err(SignInError::NoPkce {
                advertised: methods,
            });
        }
    }
    url_check::check(&metadata.authorization_endpoint).map_err(|e| {
        SignInError::Discovery(format!(
            "the authorization endpoint {} cannot be opened: {e}",
            metadata.authorization_endpoint
        ))
    })
}

/// The scopes to ask for. A step-up asks for what was granted before plus what the server
/// now wants (SEP-2350), never fewer: only from a sign-in with the same authorization server
/// and resource. What it wants is the challenge that started this sign-in, else the last 403
/// remembered.
async fn scopes_to_ask(
    req: &SignIn<'_>,
    manager: &AuthorizationManager,
    issuer: Option<&String>,
) -> Result<Vec<String>, SignInError> {
    let previous = store::read(req.secrets, req.server)
        .await?
        .filter(|p| p.resource == req.url && p.issuer.as_ref() == issuer);
    let wanted = challenge_scope(req.challenge, req.url)
        .or_else(|| previous.as_ref().and_then(|p| p.step_up.clone()));
    let mut scopes = manager.select_scopes(wanted.as_deref(), &[]);
    if let Some(prev) = previous {
        let granted = prev
            .credentials
            .map(|c| c.granted_scopes)
            .unwrap_or_default();
        for scope in granted {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
    }
    Ok(scopes)
}

/// Registration, in the spec's order (AU-04): the client id the person registered, else
/// Switchboard's metadata document where the server supports it, else dynamic registration.
async fn register(
    req: &SignIn<'_>,
    manager: &mut AuthorizationManager,
    metadata: &AuthorizationMetadata,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<ClientRecord, SignInError> {
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if let Some(id) = &req.client.client_id {
        Ok(ClientRecord {
            id: id.clone(),
            secret: None,
            registration: Registration::PreRegistered,
            redirect_uri: None,
        })
    } else if let (Some(doc), true) = (&req.client.metadata_url, cimd) {
        Ok(ClientRecord {
            id: doc.clone(),
            secret: None,
            registration: Registration::MetadataDocument,
            redirect_uri: None,
        })
    } else if metadata.registration_endpoint.is_some() {
        manager
            .register_client(&req.client.name, redirect_uri, &scope_refs)
            .await
            .map(|c| ClientRecord {
                id: c.client_id,
                secret: c.client_secret,
                registration: Registration::Dynamic,
                redirect_uri: Some(redirect_uri.to_owned()),
            })
            .map_err(|e| SignInError::Registration(from_auth(e).to_string()))
    } else {
        Err(SignInError::NeedsClientId)
    }
}

/// How the client was registered, for the timeline.
fn registered_how(registration: Registration) -> String {
    match registration {
        Registration::PreRegistered => "using the client id you registered".to_owned(),
        Registration::MetadataDocument => "using Switchboard's client metadata document".to_owned(),
        Registration::Dynamic => "registered Switchboard with the server".to_owned(),
        Registration::ClientCredentials => "client credentials".to_owned(),
    }
}

/// The authorization request for `client`. A typed secret goes only with the client id it
/// was typed for, to the issuer it belongs to (SE-08); a dynamic registration's own secret is
/// in its record.
async fn authorization_request(
    req: &SignIn<'_>,
    client: &ClientRecord,
    issuer: Option<&str>,
    redirect_uri: String,
    scopes: &[String],
) -> Result<AuthorizationRequest, SignInError> {
    let typed = match (&req.client.client_secret, client.registration) {
        (Some(bound), Registration::PreRegistered) => {
            store::use_bound(
                req.secrets,
                req.server,
                SignInPart::ClientSecret,
                bound,
                &client.id,
                issuer,
            )
            .await?
        }
        _ => None,
    };
    let secret = typed
        .map(|s| s.expose().to_owned())
        .or(client.secret.clone());
    let mut request = AuthorizationRequest::new(redirect_uri)
        .with_preregistered_client(client.id.clone())
        .with_scopes(scopes.to_vec());
    if let Some(s) = secret {
        request = request.with_client_secret(s);
    }
    Ok(request)
}

/// The browser hand-off (AU-05): the session opened, its authorization page opened in the
/// browser after the URL check, and the callback the loopback listener receives.
async fn in_browser(
    req: &SignIn<'_>,
    handoff: &dyn Handoff,
    manager: AuthorizationManager,
    request: AuthorizationRequest,
    listener: Listener,
) -> Result<(AuthorizationSession, Callback, CheckedUrl), SignInError> {
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| from_auth(e));
    let session = match session {
        Ok(s) => s,
        Err(e) => {
            handoff.step(StepEvent::failed(SignInStep::Browser, &e));
            return Err(e);
        }
    };
    let auth_url = session.get_authorization_url().to_owned();
    let state = Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .unwrap_or_default();
    let opened = match url_check::check(&auth_url) {
        Ok(page) => handoff
            .open(&page)
            .await
            .map(|_| page)
            .map_err(SignInError::Browser),
        Err(e) => Err(SignInError::Browser(format!(
            "the authorization page cannot be opened: {e}"
        ))),
    };
    let page = track(handoff, SignInStep::Browser, opened, |p| {
        format!("opened {} in the browser; waiting for you there", p.domain)
    })?;
    let callback = listener
        .wait(&state, req.wait.unwrap_or(WAIT))
        .await
        .map_err(|e| SignInError::Browser(e.to_string()));
    match callback {
        Ok(c) => Ok((session, c, page)),
        Err(e) => {
            handoff.step(StepEvent::failed(SignInStep::Browser, &e));
            Err(e)
        }
    }
}

/// The code exchange, with the RFC 8707 resource and RFC 9207 `iss` checked (by rmcp); a
/// refusal in the callback is the person's or the server's.
async fn exchange(
    session: &AuthorizationSession,
    callback: Callback,
    page: &CheckedUrl,
    store: &KeyringCredentials,
) -> Result<OAuthTokenResponse, SignInError> {
    match callback {
        Callback::Error {
            error, description, ..
        } => Err(if error == "access_denied" {
            SignInError::ConsentDenied
        } else {
            SignInError::Authorization {
                error,
                description,
                domain: page.domain.clone(),
            }
        }),
        Callback::Code { code, state, iss } => session
            .handle_callback_with_issuer(&code, &state, iss.as_deref())
            .await
            .map_err(|e| match store.refused_type() {
                Some(token_type) => SignInError::TokenType { token_type },
                None => from_exchange(e),
            }),
    }
}
