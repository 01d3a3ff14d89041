//! Secrets: the [`SecretStore`] seam, the OS keyring, and an in-memory store for unit tests.
//!
//! SQLite and config files only ever hold a [`SecretName`]; the value lives in the OS keyring
//! (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows) under the service
//! name given to [`KeyringStore::new`] and the account `secret:<name>` (SE-01, SE-04).
//!
//! Keyring calls block (D-Bus round trips), so the async methods run them on the blocking pool.
//! When no store is available (no D-Bus session, locked or missing collection) every call fails
//! with [`SecretError::Unavailable`] and a message that says so: the host never falls back to a
//! plaintext file or the non-persistent kernel keyring behind the user's back (SE-03).

use std::collections::HashMap;
use std::sync::Arc;

use crate::ids::SecretName;
use crate::redact::Secret;

/// Why a secret operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// There is no usable OS secret store on this machine or session.
    #[error("the OS keyring is not available ({0}); on Linux a Secret Service (GNOME Keyring, KWallet) must be running and unlocked")]
    Unavailable(String),
    /// No secret with this name is stored.
    #[error("no secret named {0} is stored; set it with `switchboard secret set {0}`")]
    Missing(SecretName),
    /// The store refused or failed the operation.
    #[error("the OS keyring failed: {0}")]
    Store(String),
}

/// A place secret values live. Implementations must never log values.
pub trait SecretStore: Send + Sync + 'static {
    /// Stores or replaces a secret.
    fn set(&self, name: &SecretName, value: &Secret) -> Result<(), SecretError>;
    /// Reads a secret.
    fn get(&self, name: &SecretName) -> Result<Secret, SecretError>;
    /// Deletes a secret; deleting a missing secret succeeds.
    fn delete(&self, name: &SecretName) -> Result<(), SecretError>;
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
    pub async fn set(&self, name: SecretName, value: Secret) -> Result<(), SecretError> {
        let s = self.0.clone();
        blocking(move || s.set(&name, &value)).await
    }

    /// Reads a secret. Every value read is added to the log redaction set, so it cannot reach
    /// a log line afterwards.
    pub async fn get(&self, name: SecretName) -> Result<Secret, SecretError> {
        let s = self.0.clone();
        let value = blocking(move || s.get(&name)).await?;
        crate::redact::register_for_logs(&value);
        Ok(value)
    }

    /// Deletes a secret.
    pub async fn delete(&self, name: SecretName) -> Result<(), SecretError> {
        let s = self.0.clone();
        blocking(move || s.delete(&name)).await
    }

    /// Whether a secret is set, without returning it (the UI shows "set / not set", SE-05).
    pub async fn is_set(&self, name: SecretName) -> Result<bool, SecretError> {
        match self.get(name).await {
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

    fn entry(&self, name: &SecretName) -> Result<keyring::Entry, SecretError> {
        Self::check_available()?;
        keyring::Entry::new(&self.service, &format!("secret:{name}")).map_err(map_err)
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
    fn set(&self, name: &SecretName, value: &Secret) -> Result<(), SecretError> {
        self.entry(name)?
            .set_password(value.expose())
            .map_err(map_err)
    }

    fn get(&self, name: &SecretName) -> Result<Secret, SecretError> {
        match self.entry(name)?.get_password() {
            Ok(v) => Ok(Secret::new(v)),
            Err(keyring::Error::NoEntry) => Err(SecretError::Missing(name.clone())),
            Err(e) => Err(map_err(e)),
        }
    }

    fn delete(&self, name: &SecretName) -> Result<(), SecretError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_err(e)),
        }
    }

    fn describe(&self) -> String {
        format!("OS keyring (service {:?})", self.service)
    }
}

/// Secrets held in memory only, for unit tests and for an explicit "session only" choice.
#[derive(Debug, Default)]
pub struct MemoryStore {
    // std Mutex: critical sections are a map lookup and never await.
    values: std::sync::Mutex<HashMap<SecretName, Secret>>,
}

impl MemoryStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SecretName, Secret>> {
        self.values
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl SecretStore for MemoryStore {
    fn set(&self, name: &SecretName, value: &Secret) -> Result<(), SecretError> {
        self.lock().insert(name.clone(), value.clone());
        Ok(())
    }
    fn get(&self, name: &SecretName) -> Result<Secret, SecretError> {
        self.lock()
            .get(name)
            .cloned()
            .ok_or_else(|| SecretError::Missing(name.clone()))
    }
    fn delete(&self, name: &SecretName) -> Result<(), SecretError> {
        self.lock().remove(name);
        Ok(())
    }
    fn describe(&self) -> String {
        "in-memory store (nothing persists)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_roundtrip() {
        let s = Secrets::new(MemoryStore::default());
        let n = SecretName::new("gh.token").unwrap();
        assert!(!s.is_set(n.clone()).await.unwrap());
        s.set(n.clone(), Secret::new("v1")).await.unwrap();
        assert_eq!(s.get(n.clone()).await.unwrap().expose(), "v1");
        s.delete(n.clone()).await.unwrap();
        assert!(matches!(s.get(n).await, Err(SecretError::Missing(_))));
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
        let n = SecretName::new("unit.roundtrip").unwrap();
        s.set(n.clone(), Secret::new("canary-unit-7f3a"))
            .await
            .unwrap();
        assert_eq!(s.get(n.clone()).await.unwrap().expose(), "canary-unit-7f3a");
        s.delete(n.clone()).await.unwrap();
        assert!(!s.is_set(n).await.unwrap());
    }
}
