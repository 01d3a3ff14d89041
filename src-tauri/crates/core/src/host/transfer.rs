//! Import and export of foreign config files (SP-08, SE-01, SE-04).
//!
//! An import only writes configuration: nothing is started or contacted, every imported server
//! (local or remote) waits for approval, and secret-looking values go to the keyring, each in its
//! server's own namespace, before any spec that refers to them is saved. Everything is checked
//! before anything is written: if a secret is already stored under a key the import would write
//! (a leftover of an earlier server of the same name), the import stops unless the person
//! confirmed replacing it; if the keyring is unavailable it stops too, rather than leaving
//! secrets in plaintext or servers pointing at secrets that do not exist.

use serde::Serialize;
use serde_json::json;

use super::{Host, HostError};
use crate::approval::audit::ConfigChange;
use crate::config::export::{export, ExportOutput};
use crate::config::import::{
    import_with, ForeignFormat, ImportNote, ImportOptions, ImportedServer, NoteKind,
};
use crate::config::TransportSpec;
use crate::events::HostEvent;
use crate::ids::{SecretName, ServerId};

/// What an import did.
#[derive(Clone, Debug, Serialize)]
pub struct ImportOutcome {
    /// The format read.
    pub format: ForeignFormat,
    /// Servers added (under these names).
    pub added: Vec<ServerId>,
    /// Secrets moved to the keyring: (server, name in its namespace).
    pub secrets_stored: Vec<(ServerId, SecretName)>,
    /// Everything worth telling the user: dropped fields, renames, skipped entries.
    pub notes: Vec<ImportNote>,
}

/// What an import would do, computed without storing anything: the dialog's preview.
#[derive(Clone, Debug, Serialize)]
pub struct ImportPreview {
    /// The format read.
    pub format: ForeignFormat,
    /// The servers that would be added, under their final names.
    pub servers: Vec<PreviewServer>,
    /// Everything worth telling the user before they confirm.
    pub notes: Vec<ImportNote>,
}

/// One server an import would add.
#[derive(Clone, Debug, Serialize)]
pub struct PreviewServer {
    /// Its name after any rename.
    pub id: ServerId,
    /// `stdio` or `http`.
    pub kind: &'static str,
    /// What it runs or where it connects, escaped for display.
    pub summary: String,
    /// Names of the values that would move to the keyring (never the values).
    pub secrets: Vec<SecretName>,
    /// Whether a local server would run sandboxed (SP-07); `None` for a remote one.
    pub sandboxed: Option<bool>,
}

/// An import worked out against the current servers, ready to apply.
struct Plan {
    format: ForeignFormat,
    servers: Vec<ImportedServer>,
    notes: Vec<ImportNote>,
}

impl Host {
    /// Reads a foreign file and gives each server a free name. Stores nothing.
    async fn plan_import(
        &self,
        text: &str,
        format: Option<ForeignFormat>,
    ) -> Result<Plan, HostError> {
        let specs = self.inner.store.list_servers().await?;
        let existing: Vec<ServerId> = specs.iter().map(|s| s.id.clone()).collect();
        let report = import_with(
            text,
            &ImportOptions {
                format,
                existing_servers: existing.clone(),
            },
        )?;
        let mut notes = report.notes;
        let mut taken = existing;
        let mut servers = Vec::with_capacity(report.servers.len());
        for mut s in report.servers {
            if taken.contains(&s.spec.id) {
                let original = s.spec.id.clone();
                let Some(free) = (2..1000)
                    .filter_map(|n| ServerId::new(format!("{original}-{n}")).ok())
                    .find(|c| !taken.contains(c))
                else {
                    notes.push(ImportNote {
                        server: Some(original.to_string()),
                        kind: NoteKind::SkippedServer,
                        message: format!("{original} already exists and no free name was found"),
                    });
                    continue;
                };
                notes.push(ImportNote {
                    server: Some(free.to_string()),
                    kind: NoteKind::Renamed,
                    message: format!("{original} already exists; imported as {free}"),
                });
                s.spec.id = free;
            }
            taken.push(s.spec.id.clone());
            servers.push(s);
        }
        Ok(Plan {
            format: report.format,
            servers,
            notes,
        })
    }

    /// What importing `text` would add, which values would go to the keyring, and the notes;
    /// nothing is stored.
    pub async fn import_preview(
        &self,
        text: &str,
        format: Option<ForeignFormat>,
    ) -> Result<ImportPreview, HostError> {
        let plan = self.plan_import(text, format).await?;
        Ok(ImportPreview {
            format: plan.format,
            servers: plan
                .servers
                .iter()
                .map(|s| PreviewServer {
                    id: s.spec.id.clone(),
                    kind: match s.spec.transport {
                        TransportSpec::Stdio(_) => "stdio",
                        TransportSpec::Http(_) => "http",
                    },
                    summary: s.spec.summary(),
                    secrets: s.secrets.iter().map(|(n, _)| n.clone()).collect(),
                    sandboxed: match &s.spec.transport {
                        TransportSpec::Stdio(x) => Some(x.sandbox.enabled),
                        TransportSpec::Http(_) => None,
                    },
                })
                .collect(),
            notes: plan.notes,
        })
    }

    /// Imports a Claude Desktop, VS Code or Cursor file's servers. Nothing starts; see the
    /// module docs.
    pub async fn import_config(
        &self,
        text: &str,
        format: Option<ForeignFormat>,
    ) -> Result<ImportOutcome, HostError> {
        self.import_config_with(text, format, false).await
    }

    /// Like [`Host::import_config`]; `replace_secrets` is the person's confirmation that
    /// secrets already stored under the keys the import writes may be replaced.
    pub async fn import_config_with(
        &self,
        text: &str,
        format: Option<ForeignFormat>,
        replace_secrets: bool,
    ) -> Result<ImportOutcome, HostError> {
        let plan = self.plan_import(text, format).await?;
        // Everything is checked before anything is written.
        let mut ready = Vec::with_capacity(plan.servers.len());
        for s in plan.servers {
            let sealed = self.prepare(s.spec, Vec::new(), None).await?;
            let spec = sealed.spec;
            let mut secrets = sealed.secrets;
            secrets.extend(s.secrets);
            self.check_free(&spec.id, &secrets, &[], replace_secrets)
                .await?;
            ready.push((spec, secrets));
        }
        // All or nothing: every secret first, then every server in one transaction; if
        // anything fails (a full disk, a keyring error), what was stored is taken back.
        let mut secrets_stored: Vec<(ServerId, SecretName)> = Vec::new();
        let mut specs = Vec::with_capacity(ready.len());
        for (spec, secrets) in ready {
            match self.store_secrets(&spec.id, secrets).await {
                Ok(stored) => {
                    secrets_stored.extend(stored.into_iter().map(|n| (spec.id.clone(), n)));
                    specs.push(spec);
                }
                Err(e) => {
                    self.take_back(&secrets_stored).await;
                    return Err(e);
                }
            }
        }
        if let Err(e) = self.inner.store.insert_servers(&specs).await {
            self.take_back(&secrets_stored).await;
            return Err(match e {
                crate::store::StoreError::Exists(what) => HostError::Invalid(format!(
                    "{what} was added while the import ran; nothing was imported, try again"
                )),
                other => other.into(),
            });
        }
        let added: Vec<ServerId> = specs.into_iter().map(|s| s.id).collect();
        self.audit_config(
            ConfigChange::Imported,
            None,
            json!({
                "format": plan.format,
                "added": added,
                "stored_in_keyring": secrets_stored
                    .iter()
                    .map(|(s, n)| format!("{s}/{n}"))
                    .collect::<Vec<_>>(),
            }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(ImportOutcome {
            format: plan.format,
            added,
            secrets_stored,
            notes: plan.notes,
        })
    }

    /// Deletes the secrets an unfinished import stored.
    async fn take_back(&self, stored: &[(ServerId, SecretName)]) {
        for (server, name) in stored {
            self.delete_secrets(server, std::iter::once(name)).await;
        }
    }

    /// Writes every server in a foreign format. Secret values are never written.
    pub async fn export_config(&self, format: ForeignFormat) -> Result<ExportOutput, HostError> {
        let specs = self.inner.store.list_servers().await?;
        Ok(export(&specs, format))
    }
}

#[cfg(test)]
mod tests {
    use crate::host::HostBuilder;
    use crate::secrets::{MemoryStore, Secrets};

    /// A disk that fills up in the middle of a large import: nothing of it stays, neither
    /// servers nor the secrets moved to the keyring, and what was there before is untouched.
    #[tokio::test]
    async fn an_import_that_runs_out_of_space_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let memory = std::sync::Arc::new(MemoryStore::default());
        let host = HostBuilder::new(dir.path())
            .secrets(Secrets::new(memory.clone()))
            .build()
            .await
            .unwrap();
        let before = r#"{"mcpServers": {"kept": {"command": "/bin/true"}}}"#;
        host.import_config(before, None).await.unwrap();
        // 3,000 servers, each with a key that moves to the keyring.
        let many: serde_json::Map<String, serde_json::Value> = (0..3000)
            .map(|i| {
                (
                    format!("s{i}"),
                    serde_json::json!({"command": "/bin/true", "args": ["x".repeat(200)],
                                       "env": {"API_KEY": format!("sk-live-{i:0>24}")}}),
                )
            })
            .collect();
        let text = serde_json::json!({ "mcpServers": many }).to_string();
        // The disk is full after a few more pages (SQLite's page limit on the one writer
        // connection stands in for ENOSPC).
        let (pages,): (i64,) = sqlx::query_as("PRAGMA page_count")
            .fetch_one(host.inner.store.writer())
            .await
            .unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "PRAGMA max_page_count = {}",
            pages + 8
        )))
        .execute(host.inner.store.writer())
        .await
        .unwrap();
        let err = host.import_config(&text, None).await.unwrap_err();
        assert!(err.to_string().contains("full"), "{err}");
        let names: Vec<String> = host
            .list_servers()
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.spec.id.to_string())
            .collect();
        assert_eq!(names, ["kept"], "a partial import stayed");
        assert_eq!(memory.len(), 0, "secrets of the failed import stayed");
        host.shutdown().await;
    }
}
