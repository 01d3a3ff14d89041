//! Where a sign-in lives: one keyring entry per server (`signin:<server>:tokens`, SE-01) holding
//! a [`Record`]: the MCP server's URL (the resource), the issuer and metadata of its
//! authorization server, the client registration, and rmcp's stored credentials (tokens, the
//! scopes granted, when the token was received).
//!
//! One entry, written whole, is what makes rotation atomic (AU-08): a refresh replaces access
//! and refresh token together or not at all, and `token_received_at` and the expiry travel with
//! the tokens, so a restart knows when to refresh. A record is used only for the resource it
//! was made for; for another issuer it is discarded (AU-04: client credentials are never reused
//! across issuers).
//!
//! [`KeyringCredentials`] is rmcp's [`CredentialStore`] over that entry. It caches the record in
//! memory (rmcp loads credentials before every request), and re-reads the keyring whenever a
//! refresh starts, so a refresh another process (the CLI beside the app) made is seen before
//! this one would spend an already-rotated refresh token.

use std::path::PathBuf;
use std::sync::Arc;

use nix::fcntl::{Flock, FlockArg};

use async_trait::async_trait;
use oauth2::basic::BasicTokenType;
use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, OAuthTokenResponse,
    StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::ids::ServerId;
use crate::redact::Secret;
use crate::secrets::{SecretError, SecretKey, Secrets, SignInPart};

/// The version of [`Record`]'s layout.
const RECORD_VERSION: u32 = 1;

/// How the client identity was obtained (shown on the Credentials page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Registration {
    /// A client id (and secret) the person typed.
    PreRegistered,
    /// Switchboard's Client ID Metadata Document URL.
    MetadataDocument,
    /// Dynamic Client Registration (RFC 7591).
    Dynamic,
    /// Machine-to-machine client credentials.
    ClientCredentials,
}

/// The client as registered with one authorization server.
#[derive(Clone, Serialize, Deserialize)]
pub struct ClientRecord {
    /// The client id.
    pub id: String,
    /// A secret issued by dynamic registration (a typed one stays in its own entry).
    pub secret: Option<String>,
    /// How it was obtained.
    pub registration: Registration,
    /// The redirect URI it was registered with.
    pub redirect_uri: Option<String>,
}

/// Everything one sign-in left (see the module docs).
#[derive(Clone, Serialize, Deserialize)]
pub struct Record {
    /// Layout version.
    pub version: u32,
    /// The MCP server URL the tokens are for (RFC 8707 resource).
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: Option<String>,
    /// Its metadata, so a restart refreshes without discovering again.
    pub metadata: AuthorizationMetadata,
    /// The client.
    pub client: ClientRecord,
    /// Tokens and what rmcp keeps with them.
    pub credentials: Option<StoredCredentials>,
    /// Seconds since the epoch when the person signed in.
    pub signed_in_at: u64,
    /// The scopes of the last 403 `insufficient_scope` challenge, for the next sign-in (a
    /// step-up asks for them plus what was granted). Cleared by that sign-in.
    #[serde(default)]
    pub step_up: Option<String>,
}

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Record")
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client.id)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl Record {
    /// A record for a fresh sign-in, before any token.
    pub fn new(
        resource: &str,
        issuer: Option<String>,
        metadata: AuthorizationMetadata,
        client: ClientRecord,
    ) -> Self {
        Self {
            version: RECORD_VERSION,
            resource: resource.to_owned(),
            issuer,
            metadata,
            client,
            credentials: None,
            signed_in_at: now_secs(),
            step_up: None,
        }
    }
}

/// The version of [`BoundSecret`]'s layout.
const BOUND_VERSION: u32 = 1;

/// A client secret or signing key the person typed, with the client id and the authorization
/// server it belongs to (SE-08). It is sent only to that issuer's endpoints and only with that
/// client id, so a server re-added under the same name, or whose URL now leads to another
/// issuer, never hands it to a stranger. The issuer is learnt when it is first used: the person
/// types it for the server they see, before anything was discovered; from then on it is bound.
#[derive(Clone, Serialize, Deserialize)]
pub struct BoundSecret {
    /// Layout version.
    v: u32,
    /// The client id it authenticates; `None` until it is first used (typed in the app
    /// before a client id was set).
    pub client_id: Option<String>,
    /// The issuer it was first sent to.
    pub issuer: Option<String>,
    value: String,
}

impl std::fmt::Debug for BoundSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundSecret")
            .field("client_id", &self.client_id)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl BoundSecret {
    /// A new secret for `client_id`, not yet bound to an issuer.
    pub fn new(value: Secret, client_id: Option<String>) -> Self {
        Self {
            v: BOUND_VERSION,
            client_id,
            issuer: None,
            value: value.expose().to_owned(),
        }
    }

    /// The value, when it may be sent with `client_id` to `issuer`.
    pub fn for_use(&self, client_id: &str, issuer: Option<&str>) -> Option<Secret> {
        let client = self.client_id.as_deref().is_none_or(|c| c == client_id);
        let at = match (&self.issuer, issuer) {
            (None, _) => true,
            (Some(mine), Some(theirs)) => mine == theirs,
            (Some(_), None) => false,
        };
        (client && at).then(|| Secret::new(self.value.clone()))
    }

    /// Whether using it at `issuer` binds it further (it was not bound yet). Called only
    /// once [`BoundSecret::for_use`] allowed the use.
    fn binds(&self, issuer: Option<&str>) -> bool {
        self.client_id.is_none() || (self.issuer.is_none() && issuer.is_some())
    }
}

/// Reads a typed client secret or key (`part` is [`SignInPart::ClientSecret`] or
/// [`SignInPart::ClientKey`]); an entry from before binding (a bare value) reads as unbound.
pub async fn read_bound(
    secrets: &Secrets,
    server: &ServerId,
    part: SignInPart,
) -> Result<Option<BoundSecret>, SecretError> {
    let key = SecretKey::SignIn {
        server: server.clone(),
        part,
    };
    let text = match secrets.get(key).await {
        Ok(v) => v,
        Err(SecretError::Missing(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let bound = serde_json::from_str::<BoundSecret>(text.expose())
        .ok()
        .filter(|b| b.v == BOUND_VERSION)
        .unwrap_or_else(|| BoundSecret::new(text, None));
    crate::redact::register_for_logs(&Secret::new(bound.value.clone()));
    Ok(Some(bound))
}

/// Writes a typed client secret or key whole.
pub async fn write_bound(
    secrets: &Secrets,
    server: &ServerId,
    part: SignInPart,
    bound: &BoundSecret,
) -> Result<(), SecretError> {
    let text = serde_json::to_string(bound)
        .map_err(|e| SecretError::Store(format!("could not encode the client secret: {e}")))?;
    let key = SecretKey::SignIn {
        server: server.clone(),
        part,
    };
    secrets.set(key, Secret::new(text)).await
}

/// The value of a typed secret for `client_id` at `issuer`, binding it there if it was
/// unbound (see [`BoundSecret`]); `None` when it belongs to another client or issuer.
pub async fn use_bound(
    secrets: &Secrets,
    server: &ServerId,
    part: SignInPart,
    bound: &BoundSecret,
    client_id: &str,
    issuer: Option<&str>,
) -> Result<Option<Secret>, SecretError> {
    let Some(value) = bound.for_use(client_id, issuer) else {
        tracing::warn!(%server, client_id, issuer, "the stored client secret belongs to another client or authorization server; not sent");
        return Ok(None);
    };
    if bound.binds(issuer) {
        let mut bound = bound.clone();
        bound.client_id = Some(client_id.to_owned());
        bound.issuer = bound.issuer.or_else(|| issuer.map(str::to_owned));
        write_bound(secrets, server, part, &bound).await?;
    }
    Ok(Some(value))
}

/// The `token_type` of a token answer when it is not one Switchboard can send: only Bearer is
/// (RFC 6750; `DPoP` once proofs are supported). Anything else would go out as a bearer token
/// while the server expects proof of possession, so it is never stored or used.
pub fn unusable_type(token: &OAuthTokenResponse) -> Option<String> {
    match token.token_type() {
        BasicTokenType::Bearer => None,
        other => Some(other.as_ref().to_owned()),
    }
}

/// Registers every credential a record holds (access and refresh token, a registered client's
/// secret) with the process-wide log redactor, as [`Secrets::get`] does for keyring values: the
/// record is one keyring value, so the tokens inside it would otherwise be unknown to it (SE-06).
pub fn register_for_logs(record: &Record) {
    if let Some(token) = record
        .credentials
        .as_ref()
        .and_then(|c| c.token_response.as_ref())
    {
        register_token(token);
    }
    if let Some(secret) = &record.client.secret {
        crate::redact::register_for_logs(&Secret::new(secret.clone()));
    }
}

/// Registers a token answer's access and refresh token with the process-wide log redactor.
pub fn register_token(token: &OAuthTokenResponse) {
    crate::redact::register_for_logs(&Secret::new(token.access_token().secret().clone()));
    if let Some(r) = token.refresh_token() {
        crate::redact::register_for_logs(&Secret::new(r.secret().clone()));
    }
}

/// Seconds since the epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The keyring key of a server's sign-in record.
pub fn tokens_key(server: &ServerId) -> SecretKey {
    SecretKey::SignIn {
        server: server.clone(),
        part: SignInPart::Tokens,
    }
}

/// Reads a server's record; `None` when there is none or it is unreadable (an unreadable
/// record means signing in again, never a crash).
pub async fn read(secrets: &Secrets, server: &ServerId) -> Result<Option<Record>, SecretError> {
    match secrets.get(tokens_key(server)).await {
        Ok(v) => {
            let record = serde_json::from_str::<Record>(v.expose())
                .ok()
                .filter(|r| r.version == RECORD_VERSION);
            if let Some(r) = &record {
                register_for_logs(r);
            }
            Ok(record)
        }
        Err(SecretError::Missing(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes a server's record whole.
pub async fn write(
    secrets: &Secrets,
    server: &ServerId,
    record: &Record,
) -> Result<(), SecretError> {
    register_for_logs(record);
    let text = serde_json::to_string(record)
        .map_err(|e| SecretError::Store(format!("could not encode the sign-in record: {e}")))?;
    secrets.set(tokens_key(server), Secret::new(text)).await
}

/// Deletes a server's record.
pub async fn delete(secrets: &Secrets, server: &ServerId) -> Result<(), SecretError> {
    secrets.delete(tokens_key(server)).await
}

/// Takes an exclusive `flock` on `path`, waiting (off the runtime) while another process holds
/// it; released when the returned lock drops.
async fn lock_file(path: PathBuf) -> Result<Flock<std::fs::File>, AuthError> {
    tokio::task::spawn_blocking(move || {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| std::io::Error::from(e))
    })
    .await
    .map_err(|e| AuthError::CredentialStoreError(format!("the refresh lock task stopped: {e}")))?
    .map_err(|e| AuthError::CredentialStoreError(format!("could not take the refresh lock: {e}")))
}

fn store_err(e: SecretError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

/// The in-memory copy of a record a [`KeyringCredentials`] keeps; `None` means read the keyring.
pub type Cache = Arc<Mutex<Option<Record>>>;

/// rmcp's credential store over a server's keyring record. Clones share the cache.
#[derive(Clone)]
pub struct KeyringCredentials {
    secrets: Secrets,
    server: ServerId,
    resource: String,
    cache: Cache,
    refresh: Arc<Mutex<()>>,
    /// A file whose `flock` makes one refresh at a time across processes (the app and a CLI
    /// on the same data dir): a refresh rotates the refresh token, and two at once would have
    /// one of them spend a token the other already spent.
    lock: Option<PathBuf>,
    /// The `token_type` of the last token answer [`CredentialStore::save`] refused (see
    /// [`unusable_type`]), so the sign-in can say why rmcp's exchange failed. std Mutex: set
    /// and read without awaiting.
    refused: Arc<std::sync::Mutex<Option<String>>>,
}

impl KeyringCredentials {
    /// The store for `server`'s record, used only while it is for `resource`.
    pub fn new(secrets: Secrets, server: ServerId, resource: &str, record: Option<Record>) -> Self {
        Self {
            secrets,
            server,
            resource: resource.to_owned(),
            cache: Arc::new(Mutex::new(record)),
            refresh: Arc::default(),
            lock: None,
            refused: Arc::default(),
        }
    }

    /// The `token_type` of a token answer this store refused to save, if any.
    pub fn refused_type(&self) -> Option<String> {
        self.refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Refreshes also take an exclusive `flock` on `path` (created if missing).
    pub fn with_lock(mut self, path: PathBuf) -> Self {
        self.lock = Some(path);
        self
    }

    /// Whether this store is for the MCP server at `url`.
    pub fn is_for(&self, url: &str) -> bool {
        self.resource == url
    }

    /// The MCP URL this store is for.
    pub fn resource_url(&self) -> url::Url {
        url::Url::parse(&self.resource).unwrap_or_else(|_| {
            // Unreachable: the resource was a parsed URL when the store was made.
            url::Url::parse("http://127.0.0.1/").unwrap_or_else(|_| unreachable!())
        })
    }

    /// Forgets the cached record: the next read goes to the keyring.
    pub async fn forget(&self) {
        *self.cache.lock().await = None;
    }

    /// The access token held now (read from the keyring if not cached).
    pub async fn access_token(&self) -> Option<String> {
        let record = self.current().await.ok()??;
        let token = record.credentials?.token_response?;
        Some(token.access_token().secret().clone())
    }

    /// Remembers the scopes a 403 asked for, for the next sign-in.
    pub async fn remember_step_up(&self, scope: &str) -> Result<(), SecretError> {
        let mut record = match read(&self.secrets, &self.server).await? {
            Some(r) if r.resource == self.resource => r,
            _ => return Ok(()),
        };
        if record.step_up.as_deref() == Some(scope) {
            return Ok(());
        }
        record.step_up = Some(scope.to_owned());
        write(&self.secrets, &self.server, &record).await?;
        *self.cache.lock().await = Some(record);
        Ok(())
    }

    async fn current(&self) -> Result<Option<Record>, AuthError> {
        let mut cache = self.cache.lock().await;
        if cache.is_none() {
            *cache = read(&self.secrets, &self.server).await.map_err(store_err)?;
        }
        Ok(cache.clone().filter(|r| r.resource == self.resource))
    }
}

#[async_trait]
impl CredentialStore for KeyringCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.current().await?.and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        if let Some(token) = &credentials.token_response {
            // Known to the redactor before anything can log or echo it (SE-06).
            register_token(token);
            if let Some(kind) = unusable_type(token) {
                *self
                    .refused
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(kind.clone());
                return Err(AuthError::CredentialStoreError(format!(
                    "refused a token of type {kind:?}: only Bearer tokens are used"
                )));
            }
        }
        let Some(mut record) = self.current().await? else {
            return Err(AuthError::CredentialStoreError(
                "no sign-in record to save tokens into".into(),
            ));
        };
        record.credentials = Some(credentials);
        write(&self.secrets, &self.server, &record)
            .await
            .map_err(store_err)?;
        *self.cache.lock().await = Some(record);
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        delete(&self.secrets, &self.server)
            .await
            .map_err(store_err)?;
        *self.cache.lock().await = None;
        Ok(())
    }

    /// The authorization server said `invalid_grant` to our refresh token (revoked, rotated by
    /// a refresh whose answer was lost in a crash, expired): the sign-in is dead, so it is
    /// deleted and the server asks for a new one, instead of every call retrying it (AU-08).
    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let current = read(&self.secrets, &self.server).await.map_err(store_err)?;
        let same = current
            .as_ref()
            .and_then(|r| r.credentials.as_ref())
            .is_some_and(|c| {
                let refresh = |c: &StoredCredentials| {
                    c.token_response
                        .as_ref()
                        .and_then(|t| t.refresh_token().map(|r| r.secret().clone()))
                };
                refresh(c) == refresh(rejected)
            });
        // Only the sign-in that was rejected: another process may have signed in meanwhile.
        if same {
            delete(&self.secrets, &self.server)
                .await
                .map_err(store_err)?;
        }
        *self.cache.lock().await = None;
        Ok(())
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self.refresh.clone().lock_owned().await;
        let file_lock = match &self.lock {
            Some(path) => Some(lock_file(path.clone()).await?),
            None => None,
        };
        // Another process may have refreshed (and rotated the refresh token) since we read.
        *self.cache.lock().await = None;
        Ok(Some(CredentialRefreshGuard::new((guard, file_lock))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MemoryStore;

    /// SE-08: a typed secret goes only with its client id, to its issuer; an unbound one binds
    /// at its first use and is then refused elsewhere.
    #[tokio::test]
    async fn a_typed_secret_goes_only_to_its_client_and_issuer() {
        let bound = |client: Option<&str>, issuer: Option<&str>| {
            let mut b = BoundSecret::new(Secret::new("s3cret-value"), client.map(str::to_owned));
            b.issuer = issuer.map(str::to_owned);
            b
        };
        let a = Some("https://a.example");
        let b = Some("https://b.example");
        for (secret, client, issuer, sent) in [
            (bound(Some("c1"), a), "c1", a, true),
            (bound(Some("c1"), a), "c2", a, false),
            (bound(Some("c1"), a), "c1", b, false),
            (bound(Some("c1"), a), "c1", None, false),
            (bound(Some("c1"), None), "c1", b, true),
            (bound(None, None), "any", a, true),
        ] {
            assert_eq!(
                secret.for_use(client, issuer).is_some(),
                sent,
                "{secret:?} for {client} at {issuer:?}"
            );
        }
        let secrets = Secrets::new(MemoryStore::default());
        let server = ServerId::new("s").unwrap();
        let part = SignInPart::ClientSecret;
        write_bound(&secrets, &server, part, &bound(None, None))
            .await
            .unwrap();
        let first = read_bound(&secrets, &server, part).await.unwrap().unwrap();
        assert!(use_bound(&secrets, &server, part, &first, "c1", a)
            .await
            .unwrap()
            .is_some());
        let now = read_bound(&secrets, &server, part).await.unwrap().unwrap();
        assert_eq!(now.client_id.as_deref(), Some("c1"));
        assert_eq!(now.issuer.as_deref(), a);
        assert!(use_bound(&secrets, &server, part, &now, "c1", b)
            .await
            .unwrap()
            .is_none());
    }

    #[tokio::test]
    async fn refreshes_take_turns_across_stores_sharing_a_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/signin/s.lock");
        let server = ServerId::new("s").unwrap();
        let store = |secrets: Secrets| {
            KeyringCredentials::new(secrets, server.clone(), "https://x/mcp", None)
                .with_lock(path.clone())
        };
        // Two stores as two processes would have them: separate in-process locks, one file.
        let (a, b) = (
            store(Secrets::new(MemoryStore::default())),
            store(Secrets::new(MemoryStore::default())),
        );
        let held = a.acquire_refresh_guard().await.unwrap();
        let waiting = tokio::spawn(async move { b.acquire_refresh_guard().await.map(|_| ()) });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(
            !waiting.is_finished(),
            "the second refresh must wait for the first"
        );
        drop(held);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("the second refresh goes on once the first is done")
            .unwrap()
            .unwrap();
    }
}
