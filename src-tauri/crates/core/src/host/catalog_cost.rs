//! The host's side of the catalog's cost ([`crate::catalog_cost`]): the [`CostHost`] handle it
//! prices through (the providers `models` keeps, the configured servers, the catalogs and
//! connections server control holds, the switched-off tools), and the methods the shells and
//! the chat turn call, each one line over the feature.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;

use super::{Host, HostError};
use crate::catalog_cost::{CatalogCosts, CostHost, CostTarget, LiveCatalog};
use crate::chat::ChatEvent;
use crate::config::ServerSpec;
use crate::ids::{ProviderName, ServerId};
use crate::llm::ToolSpec;
use crate::models::ProviderView;
use crate::status::ServerStatus;
use crate::store::LastTools;

#[async_trait]
impl CostHost for Host {
    async fn providers(&self) -> Result<Vec<ProviderView>, HostError> {
        self.inner.features.models.list_providers().await
    }

    async fn provider(&self, name: &ProviderName) -> Result<ProviderView, HostError> {
        self.inner.features.models.provider_view(name).await
    }

    async fn servers(&self) -> Result<Vec<ServerSpec>, HostError> {
        Ok(self.inner.store.list_servers().await?)
    }

    async fn catalogs(&self) -> Result<Vec<LiveCatalog>, HostError> {
        Ok(Host::catalogs(self)
            .await?
            .into_iter()
            .map(|c| LiveCatalog {
                server: c.server,
                catalog: c.catalog,
                disabled_tools: c.disabled_tools,
                last_known_ms: c.last_known_ms,
            })
            .collect())
    }

    fn connected(&self) -> HashSet<ServerId> {
        self.inner
            .servers()
            .iter()
            .filter(|(_, h)| matches!(h.status(), ServerStatus::Running { .. }))
            .map(|(id, _)| id.clone())
            .collect()
    }

    async fn last_tools(&self) -> Result<Vec<LastTools>, HostError> {
        Ok(self.inner.store.last_tools().await?)
    }

    async fn switched_off(&self, server: &ServerId) -> Result<Arc<HashSet<String>>, HostError> {
        Host::switched_off(self, server).await
    }
}

impl Host {
    /// The catalog's cost for `targets`; with none, for every configured provider that has a
    /// default model.
    pub async fn catalog_costs(&self, targets: &[CostTarget]) -> Result<CatalogCosts, HostError> {
        crate::catalog_cost::catalog_costs(self, targets).await
    }

    /// The share of the context window past which the chat warns, in percent; 0 never warns.
    pub fn tools_warn_percent(&self) -> u32 {
        self.settings().settings.tools_warn_percent
    }

    /// What the chat tells before a turn about its tool definitions: their cost, and a warning
    /// when they take more than the set share of the model's window.
    pub(super) fn tools_cost_events(
        &self,
        profile_id: &str,
        model: &str,
        window: u32,
        specs: &[ToolSpec],
    ) -> Vec<ChatEvent> {
        let limit = self.tools_warn_percent();
        crate::catalog_cost::tools_cost_events(profile_id, model, window, specs, limit)
    }
}
