//! Model lists for shells: the local runtimes found on this machine, each configured
//! provider's models from its vendor, and which models a person sends through the prompt-based
//! tool mode.
//!
//! The tool-mode choice is per provider and model (one Ollama serves models with and without
//! native tools) and lives in `model_tool_modes.json` in the data directory, read on each use
//! and replaced atomically: a few lines a person changes rarely, with no schema to migrate.
//! [`Models::provider`] reads it to route those models through
//! [`ModelRouted`](crate::llm::models::ModelRouted).
//!
//! Local runtimes are looked for at their default loopback ports, or where
//! `SWITCHBOARD_OLLAMA_URL` / `SWITCHBOARD_LMSTUDIO_URL` say (tests; a runtime moved to another
//! port); a URL that is not loopback is never probed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Models, ProviderView};
use crate::approval::audit::ConfigChange;
use crate::error::HostError;
use crate::ids::ProviderName;
use crate::llm::models::{self, DetectedRuntime, LocalRuntime, ModelInfo, ModelsError};
use crate::llm::profiles::ToolMode;

/// The file holding the tool-mode choices.
const FILE: &str = "model_tool_modes.json";

/// A model of a configured provider, with the person's tool-mode choice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModelEntry {
    /// What the vendor or runtime says of it.
    #[serde(flatten)]
    pub info: ModelInfo,
    /// Whether the person sends it through the prompt-based tool mode.
    pub prompt_tools: bool,
}

/// One configured provider's models, or why they could not be listed.
#[derive(Clone, Debug)]
pub struct ProviderModels {
    /// The provider.
    pub provider: ProviderView,
    /// Its models, or the failure.
    pub models: Result<Vec<ModelEntry>, ModelsError>,
    /// Models set to the prompt-based mode that the list did not contain (typed by hand).
    pub prompt_only: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct ToolModes {
    /// Provider name to the models that use the prompt-based tool mode.
    #[serde(default)]
    prompt: BTreeMap<String, BTreeSet<String>>,
}

impl Models {
    fn tool_modes_path(&self) -> PathBuf {
        self.data_dir.join(FILE)
    }

    fn tool_modes(&self) -> ToolModes {
        match std::fs::read(self.tool_modes_path()) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "{FILE} is unreadable; every model uses native tools");
                ToolModes::default()
            }),
            Err(_) => ToolModes::default(),
        }
    }

    fn save_tool_modes(&self, modes: &ToolModes) -> Result<(), HostError> {
        let path = self.tool_modes_path();
        let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
        let io = |source| HostError::Io {
            context: format!("saving {}", path.display()),
            source,
        };
        let text = serde_json::to_vec_pretty(modes).unwrap_or_default();
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }

    /// The models of provider `name` that use the prompt-based tool mode.
    pub fn prompt_tool_models(&self, name: &ProviderName) -> BTreeSet<String> {
        self.tool_modes()
            .prompt
            .remove(name.as_str())
            .unwrap_or_default()
    }

    /// Sets how `model` of provider `name` is given tools. Audited.
    pub async fn set_model_tool_mode(
        &self,
        name: &ProviderName,
        model: &str,
        mode: ToolMode,
    ) -> Result<(), HostError> {
        self.provider_view(name).await?;
        let model = model.trim();
        if model.is_empty() || model.len() > 512 {
            return Err(HostError::Invalid(
                "a model id must be 1 to 512 characters".into(),
            ));
        }
        let mut modes = self.tool_modes();
        let set = modes.prompt.entry(name.to_string()).or_default();
        let changed = match mode {
            ToolMode::Prompt => set.insert(model.to_owned()),
            ToolMode::Native => set.remove(model),
        };
        modes.prompt.retain(|_, s| !s.is_empty());
        if changed {
            self.save_tool_modes(&modes)?;
            self.audit
                .config_changed(
                    ConfigChange::ProviderSaved,
                    None,
                    json!({ "provider": name, "model": model, "tool_mode": mode }),
                )
                .await;
        }
        Ok(())
    }

    /// Forgets every tool-mode choice for provider `name` (it was removed).
    pub(crate) fn forget_tool_modes(&self, name: &ProviderName) {
        let mut modes = self.tool_modes();
        if modes.prompt.remove(name.as_str()).is_some() {
            if let Err(e) = self.save_tool_modes(&modes) {
                tracing::warn!(error = %e, "could not forget a removed provider's tool modes");
            }
        }
    }

    /// Where each local runtime is looked for: its default root, or the environment's.
    pub fn local_runtime_roots() -> Vec<(LocalRuntime, String)> {
        LocalRuntime::ALL
            .iter()
            .map(|r| {
                let root = std::env::var(r.env_var())
                    .ok()
                    .filter(|v| !v.trim().is_empty())
                    .unwrap_or_else(|| r.default_root().to_owned());
                (*r, root)
            })
            .collect()
    }

    /// The local runtimes (Ollama, LM Studio) answering on this machine, with their models.
    pub async fn detect_local_runtimes(&self) -> Vec<DetectedRuntime> {
        models::detect(&models::local::probe_client(), &Self::local_runtime_roots()).await
    }

    /// The models of each configured provider (or only `only`), listed concurrently.
    pub async fn provider_models(
        &self,
        only: Option<&ProviderName>,
    ) -> Result<Vec<ProviderModels>, HostError> {
        let views = match only {
            Some(name) => vec![self.provider_view(name).await?],
            None => self.list_providers().await?,
        };
        let lists = views.into_iter().map(|v| self.models_of(v));
        Ok(futures::future::join_all(lists).await)
    }

    async fn models_of(&self, view: ProviderView) -> ProviderModels {
        let key = match view.key_set {
            true => self.provider_key(&view.name).await,
            false => None,
        };
        // Local runtimes get the short-connect client: a stopped Ollama answers at once.
        let local = view
            .base_url
            .as_deref()
            .is_some_and(models::local::is_loopback);
        let http = if local {
            models::local::probe_client()
        } else {
            self.http.clone()
        };
        let listed =
            models::list_models(&http, view.profile, view.base_url.as_deref(), key.as_ref()).await;
        let mut prompt = self.prompt_tool_models(&view.name);
        let models = listed.map(|list| {
            list.into_iter()
                .map(|info| ModelEntry {
                    prompt_tools: prompt.remove(&info.id),
                    info,
                })
                .collect()
        });
        ProviderModels {
            provider: view,
            models,
            prompt_only: prompt.into_iter().collect(),
        }
    }
}
