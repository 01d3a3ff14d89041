//! Agent profiles as the shells manage them (issue 15, point 1): add, edit, list, remove,
//! and exchange as TOML. The profile types and their own checks are `agent_data`'s; here a
//! profile is also checked against the rest of the host ([`AgentHost::provider_exists`]): its
//! provider must be configured, and
//! the agents it may delegate to must exist (in the store, or in the same import).
//!
//! Those references are checked when a profile is saved, not kept by the database: a provider
//! removed later leaves the agent naming it, and whoever runs the agent reports that then.
//! Removing an agent another one delegates to by name is refused, so a delegation list never
//! names an agent that is gone through this API.
//! Scope entries are not checked against the configured servers: a scope may name a server
//! before it is added, and one that is gone simply offers no tools.
//!
//! Every change is audited like other configuration changes (names and settings; a system
//! prompt by its length only) and announced as [`HostEvent::AgentsChanged`].

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::json;

use super::{AgentHost, Agents};
use crate::agent_data::{self, AgentName, AgentProfile};
use crate::approval::audit::{AuditContext, AuditEvent, ConfigChange};
use crate::error::HostError;
use crate::events::HostEvent;
use crate::store::StoreError;

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AgentImportReport {
    /// Profiles that were new.
    pub added: Vec<AgentName>,
    /// Profiles that replaced one of the same name.
    pub replaced: Vec<AgentName>,
}

/// Which change an audit entry records.
#[derive(Clone, Copy)]
enum Change {
    Added,
    Changed,
    Removed,
    Imported,
}

impl Change {
    fn word(self) -> &'static str {
        match self {
            Self::Added => "agent_added",
            Self::Changed => "agent_changed",
            Self::Removed => "agent_removed",
            Self::Imported => "agents_imported",
        }
    }

    /// The audit kind.
    fn config_change(self) -> ConfigChange {
        match self {
            Self::Added => ConfigChange::AgentAdded,
            Self::Changed => ConfigChange::AgentChanged,
            Self::Removed => ConfigChange::AgentRemoved,
            Self::Imported => ConfigChange::AgentsImported,
        }
    }
}

pub(crate) fn invalid(e: agent_data::AgentDataError) -> HostError {
    HostError::Invalid(e.to_string())
}

/// What the audit log keeps of a profile: everything but the free texts, which it counts.
fn summary(p: &AgentProfile) -> serde_json::Value {
    json!({
        "agent": p.name,
        "provider": p.provider,
        "model": p.model,
        "system_chars": p.system.as_ref().map(|s| s.chars().count()),
        "delegates": p.delegates,
        "scope": p.scope,
        "policy": p.policy,
        // As text: a key named like `tokens` would be redacted as a credential.
        "budget": budget_text(&p.budget),
    })
}

fn budget_text(b: &agent_data::Budget) -> String {
    let parts = [
        b.tokens.map(|n| format!("{n} model tokens")),
        b.cost_usd.map(|c| format!("${c}")),
        b.tool_calls.map(|n| format!("{n} tool calls")),
        b.wall_secs.map(|s| format!("{s} s")),
    ];
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    if parts.is_empty() {
        "unlimited".into()
    } else {
        parts.join(", ")
    }
}

impl Agents {
    /// Every agent profile, by name.
    pub async fn list(&self) -> Result<Vec<AgentProfile>, HostError> {
        Ok(self.store.list_agents().await?)
    }

    /// One agent profile.
    pub async fn get(&self, name: &AgentName) -> Result<AgentProfile, HostError> {
        self.store
            .get_agent(name)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("an agent named {name}")).into())
    }

    /// Adds a profile; its name must be free.
    pub async fn add(&self, host: &dyn AgentHost, profile: AgentProfile) -> Result<(), HostError> {
        let known = self.agent_names().await?;
        self.check_agent(host, &profile, &known).await?;
        self.store.insert_agent(&profile).await?;
        self.agents_changed(Change::Added, summary(&profile)).await;
        Ok(())
    }

    /// Replaces the profile of the same name.
    pub async fn update(
        &self,
        host: &dyn AgentHost,
        profile: AgentProfile,
    ) -> Result<(), HostError> {
        let known = self.agent_names().await?;
        self.check_agent(host, &profile, &known).await?;
        self.store.update_agent(&profile).await?;
        self.agents_changed(Change::Changed, summary(&profile))
            .await;
        Ok(())
    }

    /// Removes a profile. Refused while another profile names it among its delegates.
    pub async fn remove(&self, name: &AgentName) -> Result<(), HostError> {
        let all = self.list().await?;
        if !all.iter().any(|p| &p.name == name) {
            self.get(name).await?;
        }
        let users: Vec<&str> = all
            .iter()
            .filter(|p| p.delegates.as_ref().is_some_and(|d| d.contains(name)))
            .map(|p| p.name.as_str())
            .collect();
        if !users.is_empty() {
            return Err(HostError::Invalid(format!(
                "agent {name} cannot be removed: {} may delegate to it; take it out of their \
                 delegates first",
                users.join(", ")
            )));
        }
        if !self.store.delete_agent(name).await? {
            self.get(name).await?;
        }
        self.agents_changed(Change::Removed, json!({ "agent": name }))
            .await;
        Ok(())
    }

    /// Every profile as a TOML file ([`Agents::import`] reads it back).
    pub async fn export(&self) -> Result<String, HostError> {
        agent_data::to_toml(&self.list().await?).map_err(invalid)
    }

    /// Reads a TOML file of profiles and saves them all, or none: every profile is checked
    /// first (its provider, its delegates among the stored agents and the file's), and a name
    /// that is taken fails the import unless `replace`.
    pub async fn import(
        &self,
        host: &dyn AgentHost,
        toml: &str,
        replace: bool,
    ) -> Result<AgentImportReport, HostError> {
        let profiles = agent_data::from_toml(toml).map_err(invalid)?;
        let mut known = self.agent_names().await?;
        known.extend(profiles.iter().map(|p| p.name.clone()));
        for p in &profiles {
            self.check_agent(host, p, &known).await?;
        }
        let done = self
            .store
            .import_agents(&profiles, replace)
            .await
            .map_err(|e| match e {
                StoreError::Exists(what) => HostError::Invalid(format!(
                    "{what} already exists, so nothing was imported; import with replace \
                     (`--replace`) to overwrite it"
                )),
                other => other.into(),
            })?;
        if !profiles.is_empty() {
            let agents: Vec<_> = profiles.iter().map(summary).collect();
            self.agents_changed(
                Change::Imported,
                json!({ "agents": agents, "replace": replace }),
            )
            .await;
        }
        Ok(AgentImportReport {
            added: done.added,
            replaced: done.replaced,
        })
    }

    async fn agent_names(&self) -> Result<BTreeSet<AgentName>, HostError> {
        Ok(self.list().await?.into_iter().map(|p| p.name).collect())
    }

    /// The checks that need the host: the profile's own ([`AgentProfile::validate`]), its
    /// provider is configured, and each delegate is in `known`.
    async fn check_agent(
        &self,
        host: &dyn AgentHost,
        p: &AgentProfile,
        known: &BTreeSet<AgentName>,
    ) -> Result<(), HostError> {
        p.validate().map_err(invalid)?;
        if !host.provider_exists(&p.provider).await? {
            return Err(HostError::Invalid(format!(
                "agent {}, field provider: there is no provider named {}; add it first \
                 (`switchboard provider add`), or see `switchboard provider list`",
                p.name, p.provider
            )));
        }
        for d in p.delegates.iter().flatten() {
            if !known.contains(d) {
                return Err(HostError::Invalid(format!(
                    "agent {}, field delegates: there is no agent named {d}",
                    p.name
                )));
            }
        }
        Ok(())
    }

    async fn agents_changed(&self, change: Change, mut detail: serde_json::Value) {
        if let Some(o) = detail.as_object_mut() {
            o.insert("change".into(), json!(change.word()));
        }
        let event = AuditEvent::Config {
            change: change.config_change(),
            detail,
        };
        self.audit
            .record(vec![(event, AuditContext::default())])
            .await;
        let _ = self.events.send(HostEvent::AgentsChanged);
    }
}
