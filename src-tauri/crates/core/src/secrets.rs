//! Secrets: the [`SecretStore`] seam, the OS keyring, and an in-memory store for unit tests.
//!
//! SQLite and config files only ever hold names; the value lives in the OS keyring (Secret
//! Service on Linux, Keychain on macOS, Credential Manager on Windows) under the service name
//! given to [`KeyringStore::new`] (SE-01).
//!
//! # Namespaces (SE-04)
//! Every value is addressed by a typed [`SecretKey`], never by a bare name: a provider's API key
//! (`provider:<name>`), a secret of one server (`server:<server>:<name>`), and what signing in
//! left (`signin:<server>:tokens|client-secret|client-key`). The keyring account is derived from the
//! key in one place, [`SecretKey::account`]. Server, provider and secret names can only hold
//! letters, digits, `-`, `_` and `.` (see [`crate::ids`]), so the `:` separators cannot occur
//! inside a name and no name can reach another namespace: a server called `provider` with a
//! secret called `openai` is `server:provider:openai`, never the provider key `provider:openai`.
//! A server config can only name secrets of its own namespace; anything else is an explicit
//! binding made by the person (see [`crate::config::Binding`]).
//!
//! The layout before namespaces stored everything under `secret:<name>`
//! ([`SecretKey::Legacy`]); only the host's one-time migration reads those entries.
//!
//! Keyring calls block (D-Bus round trips), so the async methods run them on the blocking pool.
//! When no store is available (no D-Bus session, locked or missing collection) every call fails
//! with [`SecretError::Unavailable`] and a message that says so: the host never falls back to a
//! plaintext file or the non-persistent kernel keyring behind the user's back (SE-03).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::ids::{ProviderName, SecretName, ServerId};
use crate::redact::Secret;

/// Where a secret lives: its namespace and its name there.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SecretKey {
    /// The API key of a model provider.
    Provider(ProviderName),
    /// A secret that belongs to one server (an env var or header value of it).
    Server {
        /// The server that owns it.
        server: ServerId,
        /// Its name within the server's namespace.
        name: SecretName,
    },
    /// An entry of the layout before namespaces (`secret:<name>`). Only the host's one-time
    /// migration reads these; nothing writes them.
    Legacy(SecretName),
    /// What signing in to a remote server left (`signin:<server>:<part>`): its tokens, or the
    /// client secret or signing key the person typed for it.
    SignIn {
        /// The server signed in to.
        server: ServerId,
        /// Which entry.
        part: SignInPart,
    },
}

/// The entries of a server's sign-in namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SignInPart {
    /// The sign-in record: issuer, resource, client registration and tokens (one entry, so a
    /// refresh rewrites it whole and a rotated refresh token can never be half-saved).
    Tokens,
    /// The client secret of a pre-registered client, typed by the person.
    ClientSecret,
    /// The private key (PEM) for client credentials with a signed assertion.
    ClientKey,
}

impl SignInPart {
    /// The account suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tokens => "tokens",
            Self::ClientSecret => "client-secret",
            Self::ClientKey => "client-key",
        }
    }
}

impl SecretKey {
    /// A secret of `server`.
    pub fn server(server: &ServerId, name: &SecretName) -> Self {
        Self::Server {
            server: server.clone(),
            name: name.clone(),
        }
    }

    /// The keyring account: the one place a key becomes text. The separators cannot occur in
    /// any name (see the module docs), so two different keys never share an account.
    pub fn account(&self) -> String {
        match self {
            Self::Provider(p) => format!("provider:{p}"),
            Self::Server { server, name } => format!("server:{server}:{name}"),
            Self::Legacy(name) => format!("secret:{name}"),
            Self::SignIn { server, part } => format!("signin:{server}:{}", part.as_str()),
        }
    }

    /// How to set this secret from the command line, for error messages.
    pub fn how_to_set(&self) -> String {
        match self {
            Self::Provider(p) => format!("switchboard provider set-key {p}"),
            Self::Server { server, name } => {
                format!("switchboard secret set --server {server} {name}")
            }
            Self::Legacy(name) => format!("switchboard secret set --server SERVER {name}"),
            Self::SignIn { server, .. } => format!("switchboard auth login {server}"),
        }
    }
}

impl fmt::Display for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Provider(p) => write!(f, "the API key of provider {p}"),
            Self::Server { server, name } => write!(f, "secret {name} of server {server}"),
            Self::Legacy(name) => write!(f, "secret {name} (old layout)"),
            Self::SignIn { server, part } => match part {
                SignInPart::Tokens => write!(f, "the sign-in of server {server}"),
                SignInPart::ClientSecret => write!(f, "the OAuth client secret of server {server}"),
                SignInPart::ClientKey => write!(f, "the OAuth signing key of server {server}"),
            },
        }
    }
}

/// Why a secret operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// There is no usable OS secret store on this machine or session.
    #[error("the OS keyring is not available ({0}); on Linux a Secret Service (GNOME Keyring, KWallet) must be running and unlocked")]
    Unavailable(String),
    /// No secret is stored under this key.
    #[error("{key} is not set; set it with `{how}`", key = .0, how = .0.how_to_set())]
    Missing(SecretKey),
    /// The store refused or failed the operation.
    #[error("the OS keyring failed: {0}")]
    Store(String),
}

/// A place secret values live. Implementations must never log values, and must keep entries
/// of different [`SecretKey`]s apart (the keyring does it through [`SecretKey::account`]).
pub trait SecretStore: Send + Sync + 'static {
    /// Stores or replaces a secret.
    fn set(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError>;
    /// Reads a secret.
    fn get(&self, key: &SecretKey) -> Result<Secret, SecretError>;
    /// Deletes a secret; deleting a missing secret succeeds.
    fn delete(&self, key: &SecretKey) -> Result<(), SecretError>;
    /// A short description of the backing store for `doctor` output.
    fn describe(&self) -> String;
}

/// Async helpers over a shared store that move the blocking calls off the runtime.
#[derive(Clone)]
pub struct Secrets(Arc<dyn SecretStore>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({})", self.0.describe())
    }
}

impl Secrets {
    /// Wraps a store.
    pub fn new(store: impl SecretStore) -> Self {
        Self(Arc::new(store))
    }

    /// Stores a secret.
    pub async fn set(&self, key: SecretKey, value: Secret) -> Result<(), SecretError> {
        let s = self.0.clone();
        blocking(move || s.set(&key, &value)).await
    }

    /// Reads a secret. Every value read is added to the log redaction set, so it cannot reach
    /// a log line afterwards.
    pub async fn get(&self, key: SecretKey) -> Result<Secret, SecretError> {
        let s = self.0.clone();
        let value = blocking(move || s.get(&key)).await?;
        crate::redact::register_for_logs(&value);
        Ok(value)
    }

    /// Deletes a secret.
    pub async fn delete(&self, key: SecretKey) -> Result<(), SecretError> {
        let s = self.0.clone();
        blocking(move || s.delete(&key)).await
    }

    /// Whether a secret is set, without returning it (the UI shows "set / not set", SE-05).
    pub async fn is_set(&self, key: SecretKey) -> Result<bool, SecretError> {
        match self.get(key).await {
            Ok(_) => Ok(true),
            Err(SecretError::Missing(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A description of the store.
    pub fn describe(&self) -> String {
        self.0.describe()
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, SecretError> + Send + 'static,
) -> Result<T, SecretError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SecretError::Store(format!("keyring task failed: {e}")))?
}

/// The OS keyring through the `keyring` crate (v4, platform-native stores).
#[derive(Debug, Clone)]
pub struct KeyringStore {
    service: String,
}

impl KeyringStore {
    /// A store whose entries are namespaced under `service` (the app identifier; tests use a
    /// unique one).
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
        }
    }

    /// Checks that the platform store can be reached, so the host can say so at start-up.
    pub fn check_available() -> Result<(), SecretError> {
        keyring::Entry::store_status()
            .as_ref()
            .map(|_| ())
            .map_err(|e| SecretError::Unavailable(e.to_string()))
    }

    fn entry(&self, key: &SecretKey) -> Result<keyring::Entry, SecretError> {
        Self::check_available()?;
        keyring::Entry::new(&self.service, &key.account()).map_err(map_err)
    }
}

fn map_err(e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::NoStorageAccess(inner) => SecretError::Unavailable(inner.to_string()),
        keyring::Error::NoDefaultStore => SecretError::Unavailable("no default store".into()),
        keyring::Error::PlatformFailure(inner) => SecretError::Store(inner.to_string()),
        other => SecretError::Store(other.to_string()),
    }
}

impl SecretStore for KeyringStore {
    fn set(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError> {
        self.entry(key)?
            .set_password(value.expose())
            .map_err(map_err)
    }

    fn get(&self, key: &SecretKey) -> Result<Secret, SecretError> {
        match self.entry(key)?.get_password() {
            Ok(v) => Ok(Secret::new(v)),
            Err(keyring::Error::NoEntry) => Err(SecretError::Missing(key.clone())),
            Err(e) => Err(map_err(e)),
        }
    }

    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        match self.entry(key)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_err(e)),
        }
    }

    fn describe(&self) -> String {
        format!("OS keyring (service {:?})", self.service)
    }
}

/// Secrets held in memory only, for unit tests and for an explicit "session only" choice.
/// Entries are kept by keyring account, exactly as the OS keyring keeps them.
#[derive(Debug, Default)]
pub struct MemoryStore {
    // std Mutex: critical sections are a map lookup and never await.
    values: std::sync::Mutex<HashMap<String, Secret>>,
}

impl MemoryStore {
    /// How many secrets it holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Secret>> {
        self.values
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl SecretStore for MemoryStore {
    fn set(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError> {
        self.lock().insert(key.account(), value.clone());
        Ok(())
    }
    fn get(&self, key: &SecretKey) -> Result<Secret, SecretError> {
        self.lock()
            .get(&key.account())
            .cloned()
            .ok_or_else(|| SecretError::Missing(key.clone()))
    }
    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        self.lock().remove(&key.account());
        Ok(())
    }
    fn describe(&self) -> String {
        "in-memory store (nothing persists)".into()
    }
}

/// A store shared with whoever keeps the other handle (a test that looks inside).
impl<T: SecretStore> SecretStore for Arc<T> {
    fn set(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError> {
        (**self).set(key, value)
    }
    fn get(&self, key: &SecretKey) -> Result<Secret, SecretError> {
        (**self).get(key)
    }
    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        (**self).delete(key)
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_key(server: &str, name: &str) -> SecretKey {
        SecretKey::server(
            &ServerId::new(server).unwrap(),
            &SecretName::new(name).unwrap(),
        )
    }

    #[tokio::test]
    async fn memory_store_roundtrip() {
        let s = Secrets::new(MemoryStore::default());
        let k = server_key("gh", "token");
        assert!(!s.is_set(k.clone()).await.unwrap());
        s.set(k.clone(), Secret::new("v1")).await.unwrap();
        assert_eq!(s.get(k.clone()).await.unwrap().expose(), "v1");
        s.delete(k.clone()).await.unwrap();
        assert!(matches!(s.get(k).await, Err(SecretError::Missing(_))));
    }

    /// No choice of names makes two namespaces meet: the separators cannot occur in a name.
    #[tokio::test]
    async fn namespaces_never_share_an_account() {
        let s = Secrets::new(MemoryStore::default());
        let provider = SecretKey::Provider(ProviderName::new("openai").unwrap());
        s.set(provider.clone(), Secret::new("provider-key"))
            .await
            .unwrap();
        // A server named `provider` with a secret `openai`, and the old-style name.
        for other in [
            server_key("provider", "openai"),
            server_key("provider", "provider.openai"),
            SecretKey::Legacy(SecretName::new("provider.openai").unwrap()),
            SecretKey::Legacy(SecretName::new("openai").unwrap()),
        ] {
            assert_ne!(other.account(), provider.account());
            s.set(other, Secret::new("imported")).await.unwrap();
        }
        assert_eq!(s.get(provider).await.unwrap().expose(), "provider-key");
        assert_eq!(server_key("a", "b").account(), "server:a:b");
        assert_ne!(
            server_key("a.b", "c").account(),
            server_key("a", "b.c").account()
        );
        for bad in ["a:b", "a/b", "x:y:z"] {
            assert!(SecretName::new(bad).is_err() && ServerId::new(bad).is_err());
        }
    }

    /// Runs against the real OS keyring only where the test harness started one
    /// (`make test` runs the suite inside a private D-Bus session with GNOME Keyring).
    #[tokio::test]
    async fn keyring_store_roundtrip_when_available() {
        if std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_none() {
            eprintln!("skipped: SWITCHBOARD_TEST_KEYRING is not set");
            return;
        }
        let service = format!("dev.switchboard.test.{}", std::process::id());
        let s = Secrets::new(KeyringStore::new(service));
        let n = server_key("unit", "roundtrip");
        s.set(n.clone(), Secret::new("canary-unit-7f3a"))
            .await
            .unwrap();
        assert_eq!(s.get(n.clone()).await.unwrap().expose(), "canary-unit-7f3a");
        s.delete(n.clone()).await.unwrap();
        assert!(!s.is_set(n).await.unwrap());
    }
}
