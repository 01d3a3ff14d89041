//! Models (issue 26: a feature of its own, out of `host`): the model providers the person
//! configured (the `providers` table, each key in the keyring's provider namespace), the models
//! each offers and the local runtimes found on this machine, and which models go through the
//! prompt-based tool mode.
//!
//! [`Models`] owns that state and gets narrow handles from the host: the store (its
//! `providers` rows only), the secret store (the `provider:<name>` keys only), the host's HTTP
//! client (it follows no redirect, RD-03), the data directory (its `model_tool_modes.json` and
//! the redaction settings' local hosts) and the audit [`Recorder`]. Shells reach it through
//! `host.models()`; what needs another feature too (removing a provider an agent uses, a chat
//! turn) is composed in the host.

mod lists;
mod providers;

use std::path::PathBuf;
use std::sync::Arc;

pub use lists::{ModelEntry, ProviderModels};
pub use providers::ProviderView;

use crate::approval::audit::Recorder;
use crate::secrets::Secrets;
use crate::store::Store;

/// The models feature: configured providers, their keys and models, local runtimes.
#[derive(Clone)]
pub struct Models {
    store: Store,
    secrets: Secrets,
    http: reqwest::Client,
    data_dir: PathBuf,
    audit: Arc<dyn Recorder>,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Models").finish_non_exhaustive()
    }
}

impl Models {
    /// The feature over the host's handles.
    pub(crate) fn new(
        store: Store,
        secrets: Secrets,
        http: reqwest::Client,
        data_dir: PathBuf,
        audit: Arc<dyn Recorder>,
    ) -> Self {
        Self {
            store,
            secrets,
            http,
            data_dir,
            audit,
        }
    }

    /// The configured providers' rows as stored (no keyring read), for what prices or
    /// migrates by name and profile.
    pub(crate) async fn records(
        &self,
    ) -> Result<Vec<crate::store::ProviderRecord>, crate::error::HostError> {
        Ok(self.store.list_providers().await?)
    }

    /// Whether a provider named `name` is configured.
    pub async fn exists(
        &self,
        name: &crate::ids::ProviderName,
    ) -> Result<bool, crate::error::HostError> {
        Ok(self.store.get_provider(name).await?.is_some())
    }

    /// The hosts the person marked local in the redaction settings (RD-02, RD-03).
    fn local_hosts(&self) -> Vec<String> {
        crate::outbound::config::load(&self.data_dir).local_hosts_list()
    }
}
