//! The secrets of one server, as shells reach them: set, delete, "set / not set" (SE-04, SE-05).
//!
//! Shells never name a keyring entry: they name a server and a secret of that server's
//! namespace, or a provider (see `providers`). Values go in and never come back out.

use serde_json::json;

use super::servers::key_of;
use super::{Host, HostError};
use crate::approval::audit::ConfigChange;
use crate::config::credentials::binding_words;
use crate::config::placeholders::spec_refs;
use crate::config::{ServerSpec, ValueSource};
use crate::ids::{SecretName, ServerId};
use crate::redact::Secret;
use crate::secrets::SecretKey;

/// Whether one configured value can be read when the server starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueStatus {
    /// The env var or header.
    pub field: String,
    /// Where its value comes from, in words (never the value).
    pub source: String,
    /// `None` for a plain value; else whether the keyring holds the secret (an unreadable
    /// keyring counts as not set).
    pub set: Option<bool>,
}

impl Host {
    /// Stores a secret in `server`'s namespace. The server must exist. An existing value is
    /// replaced only with `replace` (the person confirmed); otherwise
    /// [`HostError::SecretExists`].
    pub async fn set_server_secret(
        &self,
        server: &ServerId,
        name: &SecretName,
        value: Secret,
        replace: bool,
    ) -> Result<(), HostError> {
        self.server(server).await?;
        let key = SecretKey::server(server, name);
        let existed = self.inner.secrets.is_set(key.clone()).await?;
        if existed && !replace {
            return Err(HostError::SecretExists(key));
        }
        self.inner.secrets.set(key, value).await?;
        self.audit_config(
            ConfigChange::SecretSet,
            Some(server),
            json!({ "name": name, "replaced": existed }),
        )
        .await;
        Ok(())
    }

    /// Deletes a secret of `server`'s namespace (deleting one that is not set succeeds).
    pub async fn delete_server_secret(
        &self,
        server: &ServerId,
        name: &SecretName,
    ) -> Result<(), HostError> {
        self.server(server).await?;
        self.inner
            .secrets
            .delete(SecretKey::server(server, name))
            .await?;
        self.audit_config(
            ConfigChange::SecretDeleted,
            Some(server),
            json!({ "name": name }),
        )
        .await;
        Ok(())
    }

    /// Whether a secret of `server`'s namespace is set; its value is never returned (SE-05).
    pub async fn server_secret_is_set(
        &self,
        server: &ServerId,
        name: &SecretName,
    ) -> Result<bool, HostError> {
        Ok(self
            .inner
            .secrets
            .is_set(SecretKey::server(server, name))
            .await?)
    }

    /// Each env var or header of `spec` with where its value comes from and whether the
    /// keyring holds it.
    pub async fn value_status(&self, spec: &ServerSpec) -> Vec<ValueStatus> {
        let mut out = Vec::new();
        for v in spec.values() {
            let source = match &v.value {
                ValueSource::Plain(_) => "plain value".to_owned(),
                ValueSource::Secret(n) => format!("secret {n}"),
                ValueSource::Bound(b) => binding_words(b),
            };
            let set = match key_of(&spec.id, &v.value) {
                None => None,
                Some(key) => Some(self.inner.secrets.is_set(key).await.unwrap_or(false)),
            };
            out.push(ValueStatus {
                field: v.name.clone(),
                source,
                set,
            });
        }
        out
    }

    /// The secrets `spec` needs that the keyring does not hold, in words (names only).
    pub async fn missing_secrets(&self, spec: &ServerSpec) -> Vec<String> {
        let mut out = Vec::new();
        for v in spec.values() {
            let Some(key) = key_of(&spec.id, &v.value) else {
                continue;
            };
            if !self.inner.secrets.is_set(key).await.unwrap_or(false) {
                out.push(match &v.value {
                    ValueSource::Secret(n) => n.to_string(),
                    ValueSource::Bound(b) => b.to_string(),
                    ValueSource::Plain(_) => continue,
                });
            }
        }
        for name in spec_refs(spec) {
            let key = SecretKey::server(&spec.id, &name);
            if !self.inner.secrets.is_set(key).await.unwrap_or(false) {
                out.push(name.to_string());
            }
        }
        out
    }

    /// What the secret store is, for messages ("stored in the OS keyring (service ...)").
    pub fn secret_store_description(&self) -> String {
        self.inner.secrets.describe()
    }
}

/// The values of the secrets `spec`'s arguments or URL refer to (`${secret:NAME}`, LK-01),
/// read from the server's own namespace at start.
pub(super) async fn placeholder_values(
    inner: &super::Inner,
    spec: &ServerSpec,
) -> Result<Vec<(SecretName, Secret)>, crate::secrets::SecretError> {
    let mut out = Vec::new();
    for name in spec_refs(spec) {
        let value = inner
            .secrets
            .get(SecretKey::server(&spec.id, &name))
            .await?;
        out.push((name, value));
    }
    Ok(out)
}

/// The value of `name` among `values`, for [`crate::config::placeholders::fill`].
pub(super) fn lookup(
    values: &[(SecretName, Secret)],
) -> impl Fn(&SecretName) -> Option<String> + '_ {
    |name| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.expose().to_owned())
    }
}
