//! Model providers the person configured: the row in SQLite (profile, base URL, default model)
//! and the API key in the OS keyring in the provider namespace, `provider:<name>` (SE-01,
//! SE-04): no server name or secret name can reach it; a server uses a provider key only
//! through a binding the person makes when approving that server. Nothing returned here carries
//! a key; [`Models::provider`] reads it only to build the client. Every change is audited by name.

use serde_json::json;

use super::Models;
use crate::approval::audit::ConfigChange;
use crate::error::HostError;
use crate::ids::ProviderName;
use crate::llm::models::ModelRouted;
use crate::llm::profiles::ToolMode;
use crate::llm::{profile, Profile, Provider, ProviderConfig, PROFILES};
use crate::redact::Secret;
use crate::secrets::SecretKey;
use crate::store::{ProviderRecord, StoreError};

/// A configured provider as shells show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderView {
    /// Its name.
    pub name: ProviderName,
    /// The vendor profile.
    pub profile: &'static Profile,
    /// The base URL in use (the override or the profile's).
    pub base_url: Option<String>,
    /// The default model.
    pub model: Option<String>,
    /// Whether the keyring holds its key ("set / not set", never the value).
    pub key_set: bool,
    /// The context window the user set, in tokens.
    pub context_window: Option<u32>,
}

fn key_name(name: &ProviderName) -> SecretKey {
    SecretKey::Provider(name.clone())
}

fn known_profile(id: &str) -> Result<&'static Profile, HostError> {
    profile(id).ok_or_else(|| HostError::Provider {
        name: id.to_owned(),
        reason: format!(
            "unknown kind; use one of {}",
            PROFILES.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
        ),
    })
}

impl Models {
    /// A provider name from user input.
    pub fn provider_name(name: &str) -> Result<ProviderName, HostError> {
        ProviderName::new(name).map_err(|e| HostError::Provider {
            name: crate::escape::short_for_display(name, 64),
            reason: e.to_string(),
        })
    }

    /// Adds a provider of `kind` (a profile id). The base URL is checked now, not at the first
    /// message; the key is set separately ([`Models::set_provider_key`]).
    pub async fn add_provider(
        &self,
        name: &ProviderName,
        kind: &str,
        base_url: Option<String>,
        model: Option<String>,
        context_window: Option<u32>,
    ) -> Result<(), HostError> {
        let p = known_profile(kind)?;
        // Build once without a key to validate the URL (a missing key is fine here), with the
        // addresses marked local: plain http goes nowhere else (RD-03).
        let probe = ProviderConfig {
            base_url: base_url.clone(),
            local_hosts: self.local_hosts(),
            ..ProviderConfig::new(p)
        }
        .build(self.http.clone());
        if let Err(e) = probe {
            if !matches!(e, crate::llm::ProfileError::MissingKey { .. }) {
                return Err(HostError::Provider {
                    name: name.to_string(),
                    reason: e.to_string(),
                });
            }
        }
        let detail = json!({
            "provider": name,
            "kind": p.id,
            "base_url": base_url,
            "model": model,
            "context_window": context_window,
        });
        self.store
            .insert_provider(&ProviderRecord {
                name: name.clone(),
                profile: p.id.to_owned(),
                base_url,
                model,
                context_window,
            })
            .await
            .map_err(|e| match e {
                StoreError::Exists(_) => HostError::Provider {
                    name: name.to_string(),
                    reason: "a provider with this name exists".into(),
                },
                other => other.into(),
            })?;
        self.audit
            .config_changed(ConfigChange::ProviderSaved, None, detail)
            .await;
        Ok(())
    }

    /// Every configured provider with its key status.
    pub async fn list_providers(&self) -> Result<Vec<ProviderView>, HostError> {
        let mut out = Vec::new();
        for r in self.store.list_providers().await? {
            out.push(self.view(r).await?);
        }
        Ok(out)
    }

    async fn view(&self, r: ProviderRecord) -> Result<ProviderView, HostError> {
        let profile = known_profile(&r.profile)?;
        let key_set = self
            .secrets
            .is_set(key_name(&r.name))
            .await
            .unwrap_or(false);
        Ok(ProviderView {
            base_url: r
                .base_url
                .clone()
                .or_else(|| profile.base_url.map(str::to_owned)),
            name: r.name,
            profile,
            model: r.model,
            key_set,
            context_window: r.context_window,
        })
    }

    async fn provider_record(&self, name: &ProviderName) -> Result<ProviderRecord, HostError> {
        self.store
            .get_provider(name)
            .await?
            .ok_or_else(|| HostError::Provider {
                name: name.to_string(),
                reason: "no such provider; `switchboard provider list` shows the configured ones"
                    .into(),
            })
    }

    /// One configured provider with its key status.
    pub async fn provider_view(&self, name: &ProviderName) -> Result<ProviderView, HostError> {
        let r = self.provider_record(name).await?;
        self.view(r).await
    }

    /// A provider's key, for listing its models; `None` when unset or unreadable.
    pub(crate) async fn provider_key(&self, name: &ProviderName) -> Option<Secret> {
        self.secrets.get(key_name(name)).await.ok()
    }

    /// Removes a provider and its key (the host first refuses when an agent uses it).
    pub(crate) async fn remove_provider(&self, name: &ProviderName) -> Result<(), HostError> {
        self.provider_record(name).await?;
        let key_deleted = self.secrets.delete(key_name(name)).await.is_ok();
        self.store.delete_provider(name).await?;
        self.forget_tool_modes(name);
        self.audit
            .config_changed(
                ConfigChange::ProviderRemoved,
                None,
                json!({ "provider": name, "key_deleted": key_deleted }),
            )
            .await;
        Ok(())
    }

    /// Stores (or replaces: setting a provider's key is always the person's explicit act) a
    /// provider's API key in the keyring.
    pub async fn set_provider_key(
        &self,
        name: &ProviderName,
        key: Secret,
    ) -> Result<(), HostError> {
        self.provider_record(name).await?;
        self.secrets.set(key_name(name), key).await?;
        self.audit
            .config_changed(ConfigChange::SecretSet, None, json!({ "provider": name }))
            .await;
        Ok(())
    }

    /// Deletes a provider's API key; the provider stays.
    pub async fn delete_provider_key(&self, name: &ProviderName) -> Result<(), HostError> {
        self.provider_record(name).await?;
        self.secrets.delete(key_name(name)).await?;
        self.audit
            .config_changed(
                ConfigChange::SecretDeleted,
                None,
                json!({ "provider": name }),
            )
            .await;
        Ok(())
    }

    /// A client for a configured provider, with its default model. Models the person set to
    /// the prompt-based tool mode ([`Models::set_model_tool_mode`]) are routed through it.
    pub async fn provider(
        &self,
        name: &ProviderName,
    ) -> Result<(Box<dyn Provider>, ProviderView), HostError> {
        let r = self.provider_record(name).await?;
        let view = self.view(r.clone()).await?;
        let key = if view.key_set {
            Some(self.secrets.get(key_name(name)).await?)
        } else {
            None
        };
        let failed = |e: crate::llm::ProfileError| HostError::Provider {
            name: name.to_string(),
            reason: e.to_string(),
        };
        let local_hosts = self.local_hosts();
        let build = |mode: ToolMode, key: Option<Secret>| {
            let mut profile = *view.profile;
            profile.quirks.tool_mode = mode;
            ProviderConfig {
                base_url: r.base_url.clone(),
                api_key: key,
                local_hosts: local_hosts.clone(),
                ..ProviderConfig::new(&profile)
            }
            .build(self.http.clone())
        };
        let prompt_models = self.prompt_tool_models(name);
        let native = build(view.profile.quirks.tool_mode, key.clone()).map_err(failed)?;
        if prompt_models.is_empty() || view.profile.quirks.tool_mode == ToolMode::Prompt {
            return Ok((native, view));
        }
        let prompt = build(ToolMode::Prompt, key).map_err(failed)?;
        Ok((
            Box::new(ModelRouted::new(native, prompt, prompt_models)),
            view,
        ))
    }
}
