//! The one-time move of a data directory's secrets into namespaces (SE-04).
//!
//! Before namespaces, every value lived under `secret:<name>` and any config could name any of
//! them. At the first start of this version on a data directory, what the person set up keeps
//! working:
//! - a provider's key `provider.<name>` moves to the provider namespace;
//! - a secret referred to by exactly one server, when that server was approved (or is remote,
//!   which needed no approval before), moves to that server's namespace under the same name.
//!   A `provider.*` name never moves into a server's namespace, and a secret two servers share is
//!   not moved at all: each server gets its own, set by the person (doctor says which);
//! - plain values that look like credentials move out of the stored specs into the server's
//!   namespace.
//!
//! The old entries are left in place: the keyring is shared by every data directory on the
//! machine, and another one may not have moved yet; nothing reads them afterwards. Approvals
//! from before do not survive anyway (the fingerprint now covers values and bindings).
//!
//! Done is recorded by a marker file in the data directory, written only when every step
//! succeeded; a failure (no keyring in this session) is logged and retried at the next start.
//! An entry that exists already in the new layout is never overwritten.
//!
//! Several processes may start on the same data directory at once (the app and CLIs) and run
//! this together. Every step is safe to repeat: a secret is copied only where none is set,
//! a spec is rewritten only if it is still the one read (so neither a concurrent run nor a
//! person's edit in between is overwritten with a stale copy), and the marker is written to a
//! temporary file and renamed, so it is either there whole or not at all.

use std::collections::HashMap;

use super::{Host, HostError};
use crate::config::credentials::seal;
use crate::config::TransportSpec;
use crate::ids::SecretName;
use crate::secrets::{SecretError, SecretKey};

/// The marker file, in the data directory.
const MARKER: &str = "secrets-layout-v2";

/// Runs the move unless it is done; never fails the host's start.
pub(super) async fn migrate(host: &Host) {
    let marker = host.inner.data_dir.join(MARKER);
    if marker.exists() {
        return;
    }
    match run(host).await {
        Ok(moved) => {
            if moved > 0 {
                tracing::info!(moved, "secrets moved to the namespaced keyring layout");
            }
            if let Err(e) = write_marker(&marker) {
                tracing::warn!(error = %e, "could not record that secrets were migrated");
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not move secrets to the namespaced layout yet; retrying at the next start");
        }
    }
}

async fn run(host: &Host) -> Result<usize, HostError> {
    let inner = &host.inner;
    let mut moved = 0;
    for p in inner.features.models.records().await? {
        let Ok(old) = SecretName::new(format!("provider.{}", p.name)) else {
            continue;
        };
        moved +=
            usize::from(copy(host, SecretKey::Legacy(old), SecretKey::Provider(p.name)).await?);
    }
    let specs = inner.store.list_servers().await?;
    let mut uses: HashMap<SecretName, usize> = HashMap::new();
    for spec in &specs {
        for name in spec.secret_refs() {
            *uses.entry(name.clone()).or_default() += 1;
        }
    }
    for spec in specs {
        let eligible = matches!(spec.transport, TransportSpec::Http(_))
            || inner.store.trust(&spec.id).await?.is_some();
        for name in spec.secret_refs() {
            let single = uses.get(name) == Some(&1);
            if !eligible || !single || name.as_str().starts_with("provider.") {
                continue;
            }
            let to = SecretKey::server(&spec.id, name);
            moved += usize::from(copy(host, SecretKey::Legacy(name.clone()), to).await?);
        }
        let sealed = seal(spec.clone(), Vec::new());
        if sealed.secrets.is_empty() {
            continue;
        }
        let id = sealed.spec.id.clone();
        for (name, value) in sealed.secrets {
            let key = SecretKey::server(&id, &name);
            if !inner.secrets.is_set(key.clone()).await? {
                inner.secrets.set(key, value).await?;
                moved += 1;
            }
        }
        inner.store.replace_server_if(&spec, &sealed.spec).await?;
    }
    Ok(moved)
}

/// Writes the marker whole or not at all: a temporary file in the same directory, renamed.
fn write_marker(marker: &std::path::Path) -> std::io::Result<()> {
    let mut tmp = marker.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let written = std::fs::write(&tmp, "secrets are namespaced\n")
        .and_then(|()| std::fs::rename(&tmp, marker));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Copies `from` to `to` unless `to` is set or `from` is not; returns whether it copied.
async fn copy(host: &Host, from: SecretKey, to: SecretKey) -> Result<bool, SecretError> {
    let secrets = &host.inner.secrets;
    if secrets.is_set(to.clone()).await? {
        return Ok(false);
    }
    match secrets.get(from).await {
        Ok(value) => secrets.set(to, value).await.map(|()| true),
        Err(SecretError::Missing(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ServerSpec, ValueSource};
    use crate::host::HostBuilder;
    use crate::ids::ProviderName;
    use crate::redact::Secret;
    use crate::secrets::{MemoryStore, Secrets};

    fn spec(id: &str, env: &[(&str, ValueSource)]) -> ServerSpec {
        ServerSpec::test_stdio(id, "/bin/true", env)
    }

    fn secret(n: &str) -> ValueSource {
        ValueSource::Secret(SecretName::new(n).unwrap())
    }

    fn legacy(n: &str) -> SecretKey {
        SecretKey::Legacy(SecretName::new(n).unwrap())
    }

    #[tokio::test]
    async fn an_old_keyring_keeps_working_and_nothing_crosses_namespaces() {
        let dir = tempfile::tempdir().unwrap();
        let store = Secrets::new(MemoryStore::default());
        let host = HostBuilder::new(dir.path())
            .secrets(store.clone())
            .build()
            .await
            .unwrap();
        let openai = ProviderName::new("openai").unwrap();
        host.models()
            .add_provider(&openai, "openai", None, None, None)
            .await
            .unwrap();
        // As the old version stored them: the specs as written, the values under `secret:`.
        let approved = spec(
            "gh",
            &[("TOKEN", secret("gh.TOKEN")), ("SHARED", secret("shared"))],
        );
        let unapproved = spec(
            "new",
            &[("T", secret("lonely")), ("K", secret("provider.openai"))],
        );
        let other = spec("other", &[("SHARED", secret("shared"))]);
        for s in [&approved, &unapproved, &other] {
            host.inner.store.insert_server(s).await.unwrap();
        }
        let plan = host.trust_view(&approved.id).await.unwrap().plan;
        host.inner
            .store
            .set_trust(&approved.id, &plan)
            .await
            .unwrap();
        let plain = spec(
            "plain",
            &[(
                "GITHUB_TOKEN",
                ValueSource::Plain("ghp_CANARYplain0123456789".into()),
            )],
        );
        host.inner.store.insert_server(&plain).await.unwrap();
        host.inner.store.set_trust(&plain.id, &plan).await.unwrap();
        for (k, v) in [
            ("provider.openai", "pk"),
            ("gh.TOKEN", "t1"),
            ("shared", "s"),
            ("lonely", "l"),
        ] {
            store.set(legacy(k), Secret::new(v)).await.unwrap();
        }
        host.shutdown().await;
        std::fs::remove_file(dir.path().join(MARKER)).unwrap();

        let host = HostBuilder::new(dir.path())
            .secrets(store.clone())
            .build()
            .await
            .unwrap();
        let get = |k: SecretKey| {
            let store = store.clone();
            async move { store.get(k).await.ok().map(|v| v.expose().to_owned()) }
        };
        assert_eq!(
            get(SecretKey::Provider(openai)).await.as_deref(),
            Some("pk")
        );
        let key = |s: &ServerSpec, n: &str| SecretKey::server(&s.id, &SecretName::new(n).unwrap());
        assert_eq!(get(key(&approved, "gh.TOKEN")).await.as_deref(), Some("t1"));
        assert_eq!(
            get(key(&approved, "shared")).await,
            None,
            "shared: not moved"
        );
        assert_eq!(
            get(key(&unapproved, "lonely")).await,
            None,
            "not approved: not moved"
        );
        assert_eq!(get(key(&unapproved, "provider.openai")).await, None);
        let sealed = host.server(&plain.id).await.unwrap();
        assert_eq!(sealed.values()[0].value, secret("GITHUB_TOKEN"));
        assert_eq!(
            get(key(&plain, "GITHUB_TOKEN")).await.as_deref(),
            Some("ghp_CANARYplain0123456789")
        );
        assert!(dir.path().join(MARKER).exists());
        host.shutdown().await;
    }
}
