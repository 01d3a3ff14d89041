//! What the tool catalog costs in tokens, per server and per tool, for each configured model
//! (issue 16, point 1), and the per-turn count the chat shows before it sends.
//!
//! Counting is `llm::tokens`; this file decides what is counted: every server the person
//! configured, running ones from their live catalog, the others (stopped, or added and not yet
//! enabled) from the tools they listed when they last ran, so a server can be priced before it
//! is switched on. A server that never ran has no catalog to price and says so. The per-model
//! total is what the next turn would send: the tools of every enabled server, minus those
//! switched off or held for review, plus the vendor's per-request overhead.
//!
//! A feature of its own (issue 26): it decides what is priced and counts it; what only the host
//! knows (the configured providers and servers, the live catalogs, which servers are connected,
//! the tools switched off) it asks through [`CostHost`], which the host implements in
//! `host/catalog_cost.rs`; it never sees the host itself.

use std::collections::{HashMap, HashSet};

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;

use crate::catalog::{CatalogSnapshot, ToolInfo};
use crate::chat::ChatEvent;
use crate::config::ServerSpec;
use crate::error::HostError;
use crate::ids::{ProviderName, ServerId, ToolRef};
use crate::llm::profiles::{profile, Wire};
use crate::llm::tokens::{share_percent, Counter, Method};
use crate::llm::ToolSpec;
use crate::mcp::naming::ToolNames;
use crate::models::ProviderView;
use crate::store::LastTools;

/// The share of a model's context window the tool definitions may take before the chat warns,
/// in percent, unless the person sets another.
pub const DEFAULT_TOOLS_WARN_PERCENT: u32 = 25;

/// A model to price the catalog for: a configured provider, and a model (its default when
/// `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostTarget {
    /// The provider.
    pub provider: ProviderName,
    /// The model; the provider's default when `None`.
    pub model: Option<String>,
}

/// One model the catalog is priced for.
#[derive(Clone, Debug, Serialize)]
pub struct CostModel {
    /// The provider.
    pub provider: ProviderName,
    /// Its vendor profile id (`openai`, `anthropic`, ...).
    pub profile: &'static str,
    /// The model.
    pub model: String,
    /// How tokens are counted for it.
    pub method: Method,
    /// Its context window, in tokens.
    pub context_window: u32,
    /// What a request with tools pays once, beyond the definitions.
    pub request_overhead: u64,
}

/// One tool's cost; `tokens[i]` is for `CatalogCosts::models[i]`.
#[derive(Clone, Debug, Serialize)]
pub struct ToolCost {
    /// The tool as the server names it.
    pub tool: String,
    /// The name the model sees.
    pub llm_name: String,
    /// Whether the next turn offers it (its server is enabled and it is not switched off or
    /// held for review).
    pub offered: bool,
    /// Tokens per model.
    pub tokens: Vec<u64>,
}

/// One server's cost.
#[derive(Clone, Debug, Serialize)]
pub struct ServerCost {
    /// The server.
    pub server: ServerId,
    /// Whether it is enabled.
    pub enabled: bool,
    /// Whether it runs now (its catalog is live).
    pub running: bool,
    /// When not running: when the priced tools were listed (ms since the Unix epoch); `None`
    /// with no tools when it never ran.
    pub last_known_ms: Option<i64>,
    /// Whether its cost is known: false for a server that never ran (it listed no tools yet),
    /// whose `tokens` are then zeros that mean "unknown", not "free". It is listed all the
    /// same, so a person sees that enabling it will add definitions nobody has priced.
    pub known: bool,
    /// Its tools, by name.
    pub tools: Vec<ToolCost>,
    /// Per model: all its tools (what enabling it, with every tool on, would add).
    pub tokens: Vec<u64>,
    /// Per model: the tools the next turn offers.
    pub offered_tokens: Vec<u64>,
}

/// The catalog priced for some models.
#[derive(Clone, Debug, Serialize)]
pub struct CatalogCosts {
    /// The models, in the order of every `tokens` list.
    pub models: Vec<CostModel>,
    /// Every configured server, by id.
    pub servers: Vec<ServerCost>,
    /// Per model: what the next turn's tool definitions cost, overhead included.
    pub offered_tokens: Vec<u64>,
}

/// A server's catalog as the host holds it.
pub struct LiveCatalog {
    /// The server.
    pub server: ServerId,
    /// What it offers (the tools it last listed when `last_known_ms` is set).
    pub catalog: CatalogSnapshot,
    /// Tools the person switched off or that are held for review.
    pub disabled_tools: Vec<String>,
    /// Set when the server is not running: when its catalog was listed.
    pub last_known_ms: Option<i64>,
}

/// What pricing needs of the host: the configured providers and servers, the catalogs it holds
/// and which servers are connected. Implemented for the host in `host/catalog_cost.rs`.
#[async_trait]
pub trait CostHost: Send + Sync {
    /// Every configured provider.
    async fn providers(&self) -> Result<Vec<ProviderView>, HostError>;
    /// The provider `name`.
    async fn provider(&self, name: &ProviderName) -> Result<ProviderView, HostError>;
    /// Every configured server.
    async fn servers(&self) -> Result<Vec<ServerSpec>, HostError>;
    /// The catalog of every server the host holds a handle for.
    async fn catalogs(&self) -> Result<Vec<LiveCatalog>, HostError>;
    /// The servers whose handle is connected: their catalog has been listed, even when empty.
    fn connected(&self) -> HashSet<ServerId>;
    /// The tools every server listed when it last ran.
    async fn last_tools(&self) -> Result<Vec<LastTools>, HostError>;
    /// The tools switched off for `server`.
    async fn switched_off(&self, server: &ServerId) -> Result<Arc<HashSet<String>>, HostError>;
}

/// One server's tools as the cost is computed from them.
struct Priced {
    server: ServerId,
    enabled: bool,
    running: bool,
    last_known_ms: Option<i64>,
    known: bool,
    tools: Vec<ToolInfo>,
    off: HashSet<String>,
}

/// The catalog's cost for `targets`; with none, for every configured provider that has a
/// default model.
pub async fn catalog_costs(
    host: &dyn CostHost,
    targets: &[CostTarget],
) -> Result<CatalogCosts, HostError> {
    let models = cost_models(host, targets).await?;
    let priced = priced_servers(host).await?;
    // Tokenizing every definition is CPU work (and the first call builds the tokenizer):
    // off the async workers, which on two cores would otherwise stall every other request.
    tokio::task::spawn_blocking(move || price(models, priced))
        .await
        .map_err(|e| HostError::Invalid(format!("pricing the catalog failed: {e}")))
}

/// Prices `priced` for `models`: the CPU part of [`catalog_costs`].
fn price(models: Vec<CostModel>, priced: Vec<Priced>) -> CatalogCosts {
    let counters: Vec<Counter> = models.iter().map(counter_for).collect();
    let names = ToolNames::build(priced.iter().flat_map(|p| {
        p.tools.iter().map(|t| ToolRef {
            server: p.server.clone(),
            tool: t.name.as_str().into(),
        })
    }));
    let mut servers = Vec::with_capacity(priced.len());
    let mut offered_total = vec![0u64; models.len()];
    for p in priced {
        let mut tools = Vec::with_capacity(p.tools.len());
        let mut all = vec![0u64; models.len()];
        let mut offered_sum = vec![0u64; models.len()];
        for t in &p.tools {
            let r = ToolRef {
                server: p.server.clone(),
                tool: t.name.as_str().into(),
            };
            let llm_name = names
                .llm_name(&r)
                .map_or_else(|| format!("{}__{}", p.server, t.name), str::to_owned);
            let spec = spec_of(llm_name.clone(), t);
            let tokens: Vec<u64> = counters.iter().map(|c| c.tool(&spec)).collect();
            let offered = p.enabled && !p.off.contains(&t.name);
            for (i, n) in tokens.iter().enumerate() {
                all[i] += n;
                if offered {
                    offered_sum[i] += n;
                }
            }
            tools.push(ToolCost {
                tool: t.name.clone(),
                llm_name,
                offered,
                tokens,
            });
        }
        for (i, n) in offered_sum.iter().enumerate() {
            offered_total[i] += n;
        }
        servers.push(ServerCost {
            server: p.server,
            enabled: p.enabled,
            running: p.running,
            last_known_ms: p.last_known_ms,
            known: p.known,
            tools,
            tokens: all,
            offered_tokens: offered_sum,
        });
    }
    for (i, c) in counters.iter().enumerate() {
        if offered_total[i] > 0 {
            offered_total[i] += c.request_overhead();
        }
    }
    CatalogCosts {
        models,
        servers,
        offered_tokens: offered_total,
    }
}

async fn cost_models(
    host: &dyn CostHost,
    targets: &[CostTarget],
) -> Result<Vec<CostModel>, HostError> {
    let mut out = Vec::new();
    if targets.is_empty() {
        for v in host.providers().await? {
            if let Some(m) = v.model.clone() {
                out.push(cost_model(&v, m));
            }
        }
        return Ok(out);
    }
    for t in targets {
        let v = host.provider(&t.provider).await?;
        let model =
            t.model
                .clone()
                .or_else(|| v.model.clone())
                .ok_or_else(|| HostError::Provider {
                    name: t.provider.to_string(),
                    reason: "no model given and the provider has no default; name one as \
                             PROVIDER:MODEL"
                        .into(),
                })?;
        out.push(cost_model(&v, model));
    }
    Ok(out)
}

/// Every configured server with the tools it is priced from.
async fn priced_servers(host: &dyn CostHost) -> Result<Vec<Priced>, HostError> {
    let specs = host.servers().await?;
    let mut live: HashMap<ServerId, _> = host
        .catalogs()
        .await?
        .into_iter()
        .map(|c| (c.server.clone(), c))
        .collect();
    let mut last: HashMap<ServerId, _> = host
        .last_tools()
        .await?
        .into_iter()
        .map(|l| (l.server.clone(), l))
        .collect();
    // Handles that are connected: their catalog has been listed (even when it is empty).
    let listed = host.connected();
    let mut out = Vec::with_capacity(specs.len());
    for s in specs {
        let p = match live.remove(&s.id) {
            // A live catalog counts once it was listed: connected, or kept from an earlier
            // run while restarting. A handle starting for the first time (or failing before
            // its handshake) has an empty catalog that says nothing; it is priced like a
            // stopped server, from the tools it last listed, or not at all.
            Some(c)
                if c.last_known_ms.is_some()
                    || !c.catalog.tools.is_empty()
                    || listed.contains(&s.id) =>
            {
                Priced {
                    known: true,
                    running: c.last_known_ms.is_none(),
                    last_known_ms: c.last_known_ms,
                    tools: c.catalog.tools.clone(),
                    off: c.disabled_tools.into_iter().collect(),
                    server: s.id,
                    enabled: s.enabled,
                }
            }
            _ => {
                let (tools, seen) = match last.remove(&s.id) {
                    Some(l) => (l.tools, Some(l.seen_at_ms)),
                    None => (Vec::new(), None),
                };
                Priced {
                    running: false,
                    known: seen.is_some(),
                    last_known_ms: seen,
                    tools,
                    off: host.switched_off(&s.id).await?.iter().cloned().collect(),
                    server: s.id,
                    enabled: s.enabled,
                }
            }
        };
        out.push(p);
    }
    Ok(out)
}

/// What the chat tells before a turn about its tool definitions: their cost, and a warning
/// when they take more than `limit` percent of the model's window (0 never warns).
pub fn tools_cost_events(
    profile_id: &str,
    model: &str,
    window: u32,
    specs: &[ToolSpec],
    limit: u32,
) -> Vec<ChatEvent> {
    let wire = profile(profile_id).map_or(Wire::OpenAi, |p| p.wire);
    let counter = Counter::new(profile_id, wire, model);
    // The turn adds its own tool for reading capped outputs to every request.
    let mut specs = specs.to_vec();
    specs.push(crate::chat::cap::read_output_spec());
    let tokens = counter.tools(&specs);
    let share = share_percent(tokens, window);
    let mut out = vec![ChatEvent::ToolsCost {
        tools: u32::try_from(specs.len()).unwrap_or(u32::MAX),
        tokens,
        estimate: counter.method().is_estimate(),
        context_window: window,
        share_percent: share,
    }];
    if limit > 0 && share > f64::from(limit) {
        out.push(ChatEvent::ToolsOverBudget {
            tokens,
            context_window: window,
            share_percent: share,
            limit_percent: limit,
        });
    }
    out
}

fn cost_model(v: &ProviderView, model: String) -> CostModel {
    let counter = Counter::new(v.profile.id, v.profile.wire, &model);
    CostModel {
        provider: v.name.clone(),
        profile: v.profile.id,
        context_window: crate::llm::limits::context_window(&model, v.context_window),
        method: counter.method(),
        request_overhead: counter.request_overhead(),
        model,
    }
}

fn counter_for(m: &CostModel) -> Counter {
    let wire = profile(m.profile).map_or(Wire::OpenAi, |p| p.wire);
    Counter::new(m.profile, wire, &m.model)
}

/// A tool as a turn offers it (the same fields `HostTools::load` sends).
fn spec_of(llm_name: String, t: &ToolInfo) -> ToolSpec {
    ToolSpec {
        name: llm_name,
        description: t
            .description
            .clone()
            .or_else(|| t.title.clone())
            .unwrap_or_default(),
        input_schema: t.input_schema.clone(),
    }
}
