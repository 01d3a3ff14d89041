//! What the Credentials page and `switchboard auth` need beyond signing in: the state of a
//! sign-in (never a token), signing out (revoke where the server supports it, then delete),
//! machine-to-machine client credentials, and the [`Authorizer`] a connection puts tokens on
//! its requests with.

use std::sync::Arc;

use oauth2::TokenResponse;
use rmcp::transport::auth::{ClientCredentialsConfig, JwtSigningAlgorithm, OAuthClientConfig};
use serde::{Deserialize, Serialize};
use url::Url;

use super::errors::{from_auth, SignInError};
use super::flow::manager;
use super::net::{GuardedClient, Network};
use super::store::{self, BoundSecret, ClientRecord, KeyringCredentials, Record, Registration};
use super::{Authorizer, SignedIn};
use crate::ids::ServerId;
use crate::secrets::{SecretError, Secrets, SignInPart};

/// A sign-in as the Credentials page shows it: no value, ever.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInStatus {
    /// The MCP URL the tokens are for.
    pub resource: String,
    /// Whether that is still the server's URL (if not, the sign-in is not used).
    pub current: bool,
    /// The authorization server.
    pub issuer: Option<String>,
    /// How the client id was obtained.
    pub registration: Registration,
    /// The client id (public by nature).
    pub client_id: String,
    /// Whether an access token is held.
    pub has_token: bool,
    /// Whether a refresh token is held.
    pub refreshable: bool,
    /// Scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires (seconds since the epoch), if known.
    pub expires_at: Option<u64>,
    /// When the person signed in.
    pub signed_in_at: u64,
    /// Scopes the server asked for (403 `insufficient_scope`) that this sign-in lacks: signing
    /// in again asks for them.
    pub wants_scopes: Vec<String>,
}

/// Reads the state of `server`'s sign-in for the MCP server now at `url`.
pub async fn status(
    secrets: &Secrets,
    server: &ServerId,
    url: &str,
) -> Result<Option<SignInStatus>, SecretError> {
    let Some(r) = store::read(secrets, server).await? else {
        return Ok(None);
    };
    let token = r
        .credentials
        .as_ref()
        .and_then(|c| c.token_response.as_ref());
    let received = r.credentials.as_ref().and_then(|c| c.token_received_at);
    Ok(Some(SignInStatus {
        current: r.resource == url,
        issuer: r.issuer.clone(),
        registration: r.client.registration,
        client_id: r.client.id.clone(),
        has_token: token.is_some(),
        refreshable: token.is_some_and(|t| t.refresh_token().is_some()),
        scopes: r
            .credentials
            .as_ref()
            .map(|c| c.granted_scopes.clone())
            .unwrap_or_default(),
        expires_at: token
            .and_then(|t| t.expires_in())
            .zip(received)
            .map(|(d, at)| at + d.as_secs()),
        signed_in_at: r.signed_in_at,
        wants_scopes: r
            .step_up
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .filter(|w| {
                !r.credentials
                    .as_ref()
                    .is_some_and(|c| c.granted_scopes.iter().any(|g| g == w))
            })
            .map(str::to_owned)
            .collect(),
        resource: r.resource,
    }))
}

/// The authorizer for `server` at `url` from its stored sign-in; `None` when it has none for
/// this URL (the connection then goes without a token, and a 401 asks for sign-in). With
/// `lock`, refreshes take turns with other processes through that file.
pub async fn authorizer(
    secrets: &Secrets,
    server: &ServerId,
    url: &str,
    client_secret: Option<BoundSecret>,
    net: Network,
    lock: Option<std::path::PathBuf>,
) -> Result<Option<Authorizer>, SignInError> {
    let Some(record) = store::read(secrets, server).await? else {
        return Ok(None);
    };
    if record.resource != url || record.credentials.is_none() {
        return Ok(None);
    }
    let mut m = manager(url, net).await?;
    m.set_metadata(record.metadata.clone());
    let mut config = OAuthClientConfig::new(
        record.client.id.clone(),
        record
            .client
            .redirect_uri
            .clone()
            .unwrap_or_else(|| url.to_owned()),
    );
    if let Some(s) = secret_for(&record, client_secret.as_ref()) {
        config = config.with_client_secret(s);
    }
    m.configure_client(config).map_err(from_auth)?;
    let mut store = KeyringCredentials::new(secrets.clone(), server.clone(), url, Some(record));
    if let Some(path) = lock {
        store = store.with_lock(path);
    }
    m.set_credential_store(store.clone());
    Ok(Some(Authorizer {
        manager: Arc::new(tokio::sync::Mutex::new(m)),
        store,
        renew: None,
        recovering: Arc::default(),
    }))
}

/// The client secret a record's client authenticates with: a typed one only when it was
/// typed for this record's client at this record's issuer (SE-08), else the one its dynamic
/// registration issued.
fn secret_for(record: &Record, typed: Option<&BoundSecret>) -> Option<String> {
    let typed = match record.client.registration {
        Registration::PreRegistered | Registration::ClientCredentials => typed
            .and_then(|b| b.for_use(&record.client.id, record.issuer.as_deref()))
            .map(|s| s.expose().to_owned()),
        Registration::Dynamic | Registration::MetadataDocument => None,
    };
    typed.or_else(|| record.client.secret.clone())
}

/// What signing out did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "revocation", rename_all = "snake_case")]
pub enum SignedOut {
    /// There was no sign-in.
    NotSignedIn,
    /// The server revoked the tokens (RFC 7009), and they were deleted.
    Revoked,
    /// The server offers no revocation; the tokens were deleted here (they stay valid at the
    /// server until they expire).
    NotOffered,
    /// Revocation failed; the tokens were deleted here anyway.
    Failed {
        /// Why.
        detail: String,
    },
}

/// Signs out: revokes the refresh and access tokens where the server offers revocation, then
/// deletes the record whatever the server said.
pub async fn sign_out(
    secrets: &Secrets,
    server: &ServerId,
    client_secret: Option<BoundSecret>,
    net: Network,
) -> Result<SignedOut, SignInError> {
    let Some(record) = store::read(secrets, server).await? else {
        return Ok(SignedOut::NotSignedIn);
    };
    let outcome = match revoke(&record, client_secret, net).await {
        Ok(true) => SignedOut::Revoked,
        Ok(false) => SignedOut::NotOffered,
        Err(detail) => SignedOut::Failed { detail },
    };
    store::delete(secrets, server).await?;
    Ok(outcome)
}

/// RFC 7009 revocation of every token held; `Ok(false)` when no endpoint is advertised.
async fn revoke(
    record: &Record,
    secret: Option<BoundSecret>,
    net: Network,
) -> Result<bool, String> {
    let Some(endpoint) = record
        .metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
    else {
        return Ok(false);
    };
    let Some(token) = record
        .credentials
        .as_ref()
        .and_then(|c| c.token_response.as_ref())
    else {
        return Ok(true);
    };
    let resource = Url::parse(&record.resource).map_err(|e| e.to_string())?;
    let client = GuardedClient::new(&resource, net).map_err(|e| e.to_string())?;
    let secret = secret_for(record, secret.as_ref());
    let mut tokens = vec![];
    if let Some(r) = token.refresh_token() {
        tokens.push((r.secret().as_str(), "refresh_token"));
    }
    tokens.push((token.access_token().secret().as_str(), "access_token"));
    for (value, hint) in tokens {
        let status = client
            .post_form(
                endpoint,
                &[("token", value), ("token_type_hint", hint)],
                &record.client.id,
                secret.as_deref(),
            )
            .await
            .map_err(|e| e.to_string())?;
        if !(200..300).contains(&status) {
            return Err(format!("{endpoint} answered HTTP {status}"));
        }
    }
    Ok(true)
}

/// Machine-to-machine credentials for a server (SEP-1046).
pub struct ClientCredentials<'a> {
    /// The server.
    pub server: &'a ServerId,
    /// Its MCP URL.
    pub url: &'a str,
    /// The keyring.
    pub secrets: &'a Secrets,
    /// The client id.
    pub client_id: String,
    /// A client secret, or...
    pub secret: Option<BoundSecret>,
    /// ...a PEM private key for a signed assertion (RFC 7523), with its algorithm
    /// (`ES256` unless given: RS256, RS384, RS512, ES256, ES384). Either is used only with
    /// the client id and at the issuer it belongs to (SE-08).
    pub key: Option<(BoundSecret, Option<String>)>,
    /// Scopes to ask for.
    pub scopes: Vec<String>,
    /// The `WWW-Authenticate` of the 401, if any.
    pub challenge: Option<&'a str>,
    /// Resolves host names.
    pub net: Network,
}

/// Gets a token with client credentials and saves it like a sign-in.
pub async fn client_credentials(req: ClientCredentials<'_>) -> Result<SignedIn, SignInError> {
    let mut m = manager(req.url, req.net.clone()).await?;
    let resolution = m
        .resolve_metadata_from_challenge(req.challenge)
        .await
        .map_err(from_auth)?;
    let metadata = resolution.metadata;
    let issuer = metadata.issuer.clone();
    m.set_metadata(metadata.clone());
    let resource = Some(req.url.to_owned());
    // SE-08: the secret or key goes only to the issuer it belongs to, with its client id.
    let key = match &req.key {
        Some((bound, alg)) => Some((
            usable(&req, SignInPart::ClientKey, bound, issuer.as_deref()).await?,
            alg.clone(),
        )),
        None => None,
    };
    let secret = match (&req.secret, &key) {
        (Some(bound), None) => {
            Some(usable(&req, SignInPart::ClientSecret, bound, issuer.as_deref()).await?)
        }
        _ => None,
    };
    let config = match (&secret, &key) {
        (_, Some((pem, alg))) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id: req.client_id.clone(),
            signing_key: pem.expose().as_bytes().to_vec(),
            signing_algorithm: algorithm(alg.as_deref())?,
            token_endpoint_audience: None,
            scopes: req.scopes.clone(),
            resource,
        },
        (Some(secret), None) => ClientCredentialsConfig::ClientSecret {
            client_id: req.client_id.clone(),
            client_secret: secret.expose().to_owned(),
            scopes: req.scopes.clone(),
            resource,
        },
        (None, None) => {
            return Err(SignInError::Registration(
                "client credentials need a client secret or a signing key".into(),
            ))
        }
    };
    m.configure_client_credentials(&config).map_err(from_auth)?;
    // rmcp 3.11's signed-assertion exchange holds a form serializer (not Send) across an await,
    // so its future cannot run on a work-stealing task: drive it on a blocking thread of the
    // same runtime. Remove when rmcp's future is Send.
    let handle = tokio::runtime::Handle::current();
    let exchange = config.clone();
    let token = tokio::task::spawn_blocking(move || {
        handle.block_on(async move { m.exchange_client_credentials(&exchange).await })
    })
    .await
    .map_err(|e| SignInError::Token(format!("the token request stopped: {e}")))?
    .map_err(from_auth)?;
    store::register_token(&token);
    if let Some(token_type) = store::unusable_type(&token) {
        return Err(SignInError::TokenType { token_type });
    }
    let mut record = Record::new(
        req.url,
        issuer.clone(),
        metadata,
        ClientRecord {
            id: req.client_id.clone(),
            secret: None,
            registration: Registration::ClientCredentials,
            redirect_uri: None,
        },
    );
    record.credentials = Some(
        rmcp::transport::auth::StoredCredentials::new(
            req.client_id,
            Some(token.clone()),
            req.scopes.clone(),
            Some(store::now_secs()),
        )
        .with_issuer(issuer.clone()),
    );
    store::write(req.secrets, req.server, &record).await?;
    Ok(SignedIn::from_token(issuer, &token, &req.scopes))
}

/// The value of a client-credentials secret or key for `req`'s client at `issuer`, or why not.
async fn usable(
    req: &ClientCredentials<'_>,
    part: SignInPart,
    bound: &BoundSecret,
    issuer: Option<&str>,
) -> Result<crate::redact::Secret, SignInError> {
    store::use_bound(req.secrets, req.server, part, bound, &req.client_id, issuer)
        .await?
        .ok_or_else(|| SignInError::CredentialElsewhere {
            client_id: req.client_id.clone(),
            issuer: issuer.map(str::to_owned),
        })
}

/// Like [`client_credentials`], for a connection whose token the server refused: the new
/// access token itself, for the retry (it never leaves the core).
pub async fn renew_client_credentials(req: ClientCredentials<'_>) -> Option<String> {
    let (secrets, server) = (req.secrets.clone(), req.server.clone());
    if let Err(e) = client_credentials(req).await {
        tracing::warn!(%server, "renewing the client-credentials token failed: {e}");
        return None;
    }
    let record = store::read(&secrets, &server).await.ok()??;
    let token = record.credentials?.token_response?;
    Some(token.access_token().secret().clone())
}

fn algorithm(name: Option<&str>) -> Result<JwtSigningAlgorithm, SignInError> {
    Ok(match name.unwrap_or("ES256") {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => {
            return Err(SignInError::Registration(format!(
                "signing algorithm {other} is not supported (RS256, RS384, RS512, ES256, ES384)"
            )))
        }
    })
}
