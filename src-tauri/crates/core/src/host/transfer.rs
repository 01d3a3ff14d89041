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
        let mut added = Vec::new();
        let mut secrets_stored = Vec::new();
        for (spec, secrets) in ready {
            let outcome = self.insert_new(&spec, secrets, Vec::new()).await?;
            secrets_stored.extend(
                outcome
                    .secrets_stored
                    .into_iter()
                    .map(|n| (spec.id.clone(), n)),
            );
            added.push(spec.id);
        }
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

    /// Writes every server in a foreign format. Secret values are never written.
    pub async fn export_config(&self, format: ForeignFormat) -> Result<ExportOutput, HostError> {
        let specs = self.inner.store.list_servers().await?;
        Ok(export(&specs, format))
    }
}
