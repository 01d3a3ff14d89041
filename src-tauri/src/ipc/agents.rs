//! Agent profiles (issue 15) for the Agents page: the list, save (add or edit), remove, and
//! the TOML file (export, import). The profile is flattened for a form: scope and overrides as
//! plain lists, budgets as numbers (JSON numbers, so whole numbers are checked on the way in).
//! Every check of the profile itself is the core's; this only converts.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::agent_data::{AgentName, AgentProfile, Budget, PolicyTightening, Tighten};
use switchboard_core::host::{AgentImportReport, Host};
use tauri::State;

use super::{logged, IpcError};

/// One agent profile as the page shows and edits it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Type)]
pub struct AgentDto {
    /// Its name (lowercase letters, digits, '-', '_').
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The configured provider.
    pub provider: String,
    /// The model; `null` = the provider's default.
    pub model: Option<String>,
    /// The system prompt.
    pub system: Option<String>,
    /// Servers it may use (`*` = every server); empty = none.
    pub servers: Vec<String>,
    /// `server/tool` patterns; empty = every tool of its servers.
    pub tools: Vec<String>,
    /// Patterns whose calls always ask.
    pub ask: Vec<String>,
    /// Patterns whose calls are refused.
    pub deny: Vec<String>,
    /// Whom it may delegate to; `null` = every agent, empty = nobody.
    pub delegates: Option<Vec<String>>,
    /// Progressive discovery: it searches its tools and loads what it needs (issue 16).
    #[serde(default)]
    pub discovery: bool,
    /// Token budget.
    pub max_tokens: Option<f64>,
    /// Estimated cost budget in US dollars.
    pub max_cost_usd: Option<f64>,
    /// Tool call budget.
    pub max_tool_calls: Option<f64>,
    /// Wall-time budget in seconds.
    pub max_wall_secs: Option<f64>,
}

fn patterns(p: &AgentProfile, action: Tighten) -> Vec<String> {
    p.policy
        .iter()
        .filter(|t| t.action == action)
        .map(|t| t.tool.clone())
        .collect()
}

impl From<AgentProfile> for AgentDto {
    fn from(p: AgentProfile) -> Self {
        Self {
            ask: patterns(&p, Tighten::Ask),
            deny: patterns(&p, Tighten::Deny),
            name: p.name.to_string(),
            description: p.description,
            provider: p.provider.to_string(),
            model: p.model,
            system: p.system,
            servers: p.scope.servers,
            tools: p.scope.tools,
            delegates: p
                .delegates
                .map(|d| d.iter().map(ToString::to_string).collect()),
            discovery: p.discovery,
            max_tokens: p.budget.tokens.map(|n| n as f64),
            max_cost_usd: p.budget.cost_usd,
            max_tool_calls: p.budget.tool_calls.map(f64::from),
            max_wall_secs: p.budget.wall_secs.map(|n| n as f64),
        }
    }
}

/// A whole number of at least 0 that a JSON number holds exactly.
fn whole(what: &str, v: Option<f64>) -> Result<Option<u64>, IpcError> {
    match v {
        None => Ok(None),
        Some(n)
            if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0 =>
        {
            Ok(Some(n as u64))
        }
        Some(_) => Err(IpcError::invalid(format!(
            "the {what} must be a whole number of 0 or more"
        ))),
    }
}

impl TryFrom<AgentDto> for AgentProfile {
    type Error = IpcError;
    fn try_from(d: AgentDto) -> Result<Self, IpcError> {
        let name = |s: &str| AgentName::new(s).map_err(|e| IpcError::invalid(e.to_string()));
        let rule = |action| move |tool: String| PolicyTightening { tool, action };
        let mut policy: Vec<_> = d.ask.into_iter().map(rule(Tighten::Ask)).collect();
        policy.extend(d.deny.into_iter().map(rule(Tighten::Deny)));
        let calls = whole("tool call budget", d.max_tool_calls)?;
        Ok(Self {
            name: name(&d.name)?,
            description: d.description,
            provider: Host::provider_name(&d.provider)?,
            model: d.model.filter(|m| !m.trim().is_empty()),
            system: d.system.filter(|s| !s.trim().is_empty()),
            delegates: d
                .delegates
                .map(|list| list.iter().map(|s| name(s)).collect::<Result<_, _>>())
                .transpose()?,
            discovery: d.discovery,
            scope: switchboard_core::agent_data::ToolScope {
                servers: d.servers,
                tools: d.tools,
            },
            policy,
            budget: Budget {
                tokens: whole("token budget", d.max_tokens)?,
                cost_usd: d.max_cost_usd,
                tool_calls: calls
                    .map(u32::try_from)
                    .transpose()
                    .map_err(|_| IpcError::invalid("the tool call budget is too large"))?,
                wall_secs: whole("time budget", d.max_wall_secs)?,
            },
        })
    }
}

/// What an import did.
#[derive(Clone, Debug, Serialize, Type)]
pub struct AgentImportDto {
    /// Profiles that were new.
    pub added: Vec<String>,
    /// Profiles that replaced one of the same name.
    pub replaced: Vec<String>,
}

impl From<AgentImportReport> for AgentImportDto {
    fn from(r: AgentImportReport) -> Self {
        let names = |v: Vec<AgentName>| v.iter().map(ToString::to_string).collect();
        Self {
            added: names(r.added),
            replaced: names(r.replaced),
        }
    }
}

/// Every agent profile, by name.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn list_agents(host: State<'_, Host>) -> Result<Vec<AgentDto>, IpcError> {
    Ok(host
        .list_agents()
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// Adds a profile (`is_new`) or replaces the one of the same name.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(agent = %logged(&agent.name), is_new = is_new))]
pub async fn save_agent(
    host: State<'_, Host>,
    agent: AgentDto,
    is_new: bool,
) -> Result<(), IpcError> {
    let profile = AgentProfile::try_from(agent)?;
    if is_new {
        Ok(host.add_agent(profile).await?)
    } else {
        Ok(host.update_agent(profile).await?)
    }
}

/// Removes a profile (refused while another one delegates to it).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(agent = %logged(&name)))]
pub async fn remove_agent(host: State<'_, Host>, name: String) -> Result<(), IpcError> {
    let name = Host::agent_name(&name)?;
    Ok(host.remove_agent(&name).await?)
}

/// Every profile as a TOML file.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn export_agents(host: State<'_, Host>) -> Result<String, IpcError> {
    Ok(host.export_agents().await?)
}

/// Saves every profile of a TOML file, or none; a taken name fails unless `replace`.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(replace = replace))]
pub async fn import_agents(
    host: State<'_, Host>,
    toml: String,
    replace: bool,
) -> Result<AgentImportDto, IpcError> {
    Ok(host.import_agents(&toml, replace).await?.into())
}
