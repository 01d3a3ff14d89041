//! Import and export of foreign config files, and secrets (SP-08, SE-01).
//!
//! An import only writes configuration: nothing is started, every imported stdio server waits
//! for approval, and secret-looking values go to the keyring before any spec that refers to them
//! is saved. If the keyring is unavailable the import stops before saving anything, rather than
//! leaving secrets in plaintext or servers pointing at secrets that do not exist.

use serde::Serialize;

use super::{Host, HostError};
use crate::config::export::{export, ExportOutput};
use crate::config::import::{
    import_with, ForeignFormat, ImportNote, ImportOptions, ImportedServer, NoteKind,
};
use crate::config::TransportSpec;
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
                })
                .collect(),
            notes: plan.notes,
        })
    }

    /// Imports a Claude Desktop, VS Code or Cursor file's servers.
    pub async fn import_config(
        &self,
        text: &str,
        format: Option<ForeignFormat>,
    ) -> Result<ImportOutcome, HostError> {
        let plan = self.plan_import(text, format).await?;
        // Secrets first: a spec must never be saved pointing at a secret that was not stored.
        let mut secrets_stored = Vec::new();
        for s in &plan.servers {
            for (name, value) in &s.secrets {
                self.inner.secrets.set(name.clone(), value.clone()).await?;
                secrets_stored.push(name.clone());
            }
        }
        let mut added = Vec::new();
        for s in plan.servers {
            self.add_server(s.spec.clone()).await?;
            added.push(s.spec.id);
        }
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        Ok(ImportOutcome {
            format: plan.format,
            added,
            secrets_stored,
            notes: plan.notes,
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
