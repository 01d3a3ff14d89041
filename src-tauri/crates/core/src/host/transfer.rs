//! Import and export of foreign config files, and secrets (SP-08, SE-01).
//!
//! An import only writes configuration: nothing is started, every imported stdio server waits
//! for approval, and secret-looking values go to the keyring before any spec that refers to them
//! is saved. If the keyring is unavailable the import stops before saving anything, rather than
//! leaving secrets in plaintext or servers pointing at secrets that do not exist.

use serde::Serialize;

use super::{Host, HostError};
use crate::config::export::{export, ExportOutput};
use crate::config::import::{import_with, ForeignFormat, ImportNote, ImportOptions, NoteKind};
use crate::events::HostEvent;
use crate::ids::{SecretName, ServerId};
use crate::redact::Secret;

/// What an import did.
#[derive(Clone, Debug, Serialize)]
pub struct ImportOutcome {
    /// The format read.
    pub format: ForeignFormat,
    /// Servers added (under these names).
    pub added: Vec<ServerId>,
    /// Names of secrets moved to the keyring.
    pub secrets_stored: Vec<SecretName>,
    /// Everything worth telling the user: dropped fields, renames, skipped entries.
    pub notes: Vec<ImportNote>,
}

impl Host {
    /// Imports a Claude Desktop, VS Code or Cursor file's servers.
    pub async fn import_config(
        &self,
        text: &str,
        format: Option<ForeignFormat>,
    ) -> Result<ImportOutcome, HostError> {
        let specs = self.inner.store.list_servers().await?;
        let existing: Vec<ServerId> = specs.iter().map(|s| s.id.clone()).collect();
        let existing_secrets: Vec<SecretName> = specs
            .iter()
            .flat_map(|s| s.secret_refs().into_iter().cloned())
            .collect();
        let report = import_with(
            text,
            &ImportOptions {
                format,
                existing_servers: existing.clone(),
                existing_secrets,
            },
        )?;
        let mut notes = report.notes;
        // Secrets first: a spec must never be saved pointing at a secret that was not stored.
        let mut secrets_stored = Vec::new();
        for s in &report.servers {
            for (name, value) in &s.secrets {
                self.inner.secrets.set(name.clone(), value.clone()).await?;
                secrets_stored.push(name.clone());
            }
        }
        let mut added = Vec::new();
        for s in report.servers {
            let mut spec = s.spec;
            if existing.contains(&spec.id) || added.contains(&spec.id) {
                let original = spec.id.clone();
                let Some(free) = (2..1000)
                    .filter_map(|n| ServerId::new(format!("{original}-{n}")).ok())
                    .find(|c| !existing.contains(c) && !added.contains(c))
                else {
                    continue;
                };
                notes.push(ImportNote {
                    server: Some(free.to_string()),
                    kind: NoteKind::Renamed,
                    message: format!("{original} already exists; imported as {free}"),
                });
                spec.id = free;
            }
            self.add_server(spec.clone()).await?;
            added.push(spec.id);
        }
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(ImportOutcome {
            format: report.format,
            added,
            secrets_stored,
            notes,
        })
    }

    /// Writes every server in a foreign format. Secret values are never written.
    pub async fn export_config(&self, format: ForeignFormat) -> Result<ExportOutput, HostError> {
        let specs = self.inner.store.list_servers().await?;
        Ok(export(&specs, format))
    }

    /// Stores a secret in the keyring.
    pub async fn set_secret(&self, name: &SecretName, value: Secret) -> Result<(), HostError> {
        Ok(self.inner.secrets.set(name.clone(), value).await?)
    }

    /// Deletes a secret.
    pub async fn delete_secret(&self, name: &SecretName) -> Result<(), HostError> {
        Ok(self.inner.secrets.delete(name.clone()).await?)
    }

    /// Whether a secret is set; its value is never returned (SE-05).
    pub async fn secret_is_set(&self, name: &SecretName) -> Result<bool, HostError> {
        Ok(self.inner.secrets.is_set(name.clone()).await?)
    }
}
