//! The catalog's cost in tokens (issue 16, point 1): per server and per tool, for every
//! configured provider's default model. Logic in `switchboard_core::catalog_cost`.

use serde::Serialize;
use specta::Type;
use switchboard_core::host::{CatalogCosts, CostModel, Host, ServerCost, ToolCost};
use tauri::State;

use super::IpcError;

/// One model the catalog is priced for.
#[derive(Clone, Debug, Serialize, Type)]
pub struct CostModelDto {
    /// The provider's name.
    pub provider: String,
    /// The model.
    pub model: String,
    /// How tokens are counted: `o200k_base`, `cl100k_base`, or an estimate's description.
    pub method: String,
    /// Whether the counts are estimates.
    pub estimate: bool,
    /// Its context window, in tokens.
    pub context_window: u32,
}

/// One tool; `tokens[i]` is for `models[i]`.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ToolCostDto {
    /// The tool as the server names it.
    pub tool: String,
    /// Whether the next turn offers it.
    pub offered: bool,
    /// Tokens per model.
    pub tokens: Vec<f64>,
}

/// One server; `tokens[i]` is for `models[i]`.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerCostDto {
    /// The server.
    pub server: String,
    /// Whether it is enabled.
    pub enabled: bool,
    /// Whether its catalog is live.
    pub running: bool,
    /// When not running, when its tools were listed (ms since the Unix epoch); `None` with no
    /// tools when it never ran.
    pub last_known_ms: Option<f64>,
    /// Whether its cost is known; false when it never ran (its `tokens` are then zeros).
    pub known: bool,
    /// Its tools.
    pub tools: Vec<ToolCostDto>,
    /// All its tools, per model.
    pub tokens: Vec<f64>,
    /// The tools the next turn offers, per model.
    pub offered_tokens: Vec<f64>,
}

/// The catalog priced for the configured models.
#[derive(Clone, Debug, Serialize, Type)]
pub struct CatalogCostsDto {
    /// The models, in the order of every `tokens` list.
    pub models: Vec<CostModelDto>,
    /// Every configured server.
    pub servers: Vec<ServerCostDto>,
    /// What the next turn's definitions cost per model, with the vendor's overhead.
    pub offered_tokens: Vec<f64>,
}

fn floats(v: &[u64]) -> Vec<f64> {
    v.iter().map(|n| *n as f64).collect()
}

impl From<CostModel> for CostModelDto {
    fn from(m: CostModel) -> Self {
        Self {
            provider: m.provider.to_string(),
            model: m.model,
            method: m.method.label().to_owned(),
            estimate: m.method.is_estimate(),
            context_window: m.context_window,
        }
    }
}

impl From<ToolCost> for ToolCostDto {
    fn from(t: ToolCost) -> Self {
        Self {
            tool: t.tool,
            offered: t.offered,
            tokens: floats(&t.tokens),
        }
    }
}

impl From<ServerCost> for ServerCostDto {
    fn from(s: ServerCost) -> Self {
        Self {
            server: s.server.to_string(),
            enabled: s.enabled,
            running: s.running,
            last_known_ms: s.last_known_ms.map(|ms| ms as f64),
            known: s.known,
            tools: s.tools.into_iter().map(Into::into).collect(),
            tokens: floats(&s.tokens),
            offered_tokens: floats(&s.offered_tokens),
        }
    }
}

impl From<CatalogCosts> for CatalogCostsDto {
    fn from(c: CatalogCosts) -> Self {
        Self {
            models: c.models.into_iter().map(Into::into).collect(),
            servers: c.servers.into_iter().map(Into::into).collect(),
            offered_tokens: floats(&c.offered_tokens),
        }
    }
}

/// What each server and tool costs in tokens, for every configured provider's default model.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn catalog_costs(host: State<'_, Host>) -> Result<CatalogCostsDto, IpcError> {
    Ok(host.catalog_costs(&[]).await?.into())
}
