//! The host's side of the models feature ([`crate::models`]): the facade shells use, and what
//! needs another feature too (a provider an agent uses is not removed).

use super::{Host, HostError};
use crate::ids::ProviderName;
use crate::llm::models::LocalRuntime;
use crate::models::Models;

impl Host {
    /// The models feature: providers, their keys, their models, local runtimes.
    pub fn models(&self) -> &Models {
        &self.inner.features.models
    }

    /// A provider name from user input.
    pub fn provider_name(name: &str) -> Result<ProviderName, HostError> {
        Models::provider_name(name)
    }

    /// Where each local runtime is looked for: its default root, or the environment's.
    pub fn local_runtime_roots() -> Vec<(LocalRuntime, String)> {
        Models::local_runtime_roots()
    }

    /// Removes a provider and its key, unless an agent uses it: that agent would fail at its
    /// next task, so the person is told now, while it can be fixed.
    pub async fn remove_provider(&self, name: &ProviderName) -> Result<(), HostError> {
        self.inner.features.models.provider_view(name).await?;
        let users: Vec<String> = self
            .list_agents()
            .await?
            .into_iter()
            .filter(|a| a.provider == *name)
            .map(|a| a.name.to_string())
            .collect();
        if !users.is_empty() {
            let one = users.len() == 1;
            return Err(HostError::Invalid(format!(
                "provider {name} is used by agent{} {}; move {} to another provider or remove \
                 {} first",
                if one { "" } else { "s" },
                users.join(", "),
                if one { "it" } else { "them" },
                if one { "it" } else { "them" },
            )));
        }
        self.inner.features.models.remove_provider(name).await
    }
}
