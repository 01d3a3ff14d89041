//! Agent profiles as plain data (issue 15, point 1): who an agent is ([`AgentName`], a
//! description the supervisor reads when choosing whom to delegate to), which model it runs on
//! (a configured provider and an optional model), what it may see ([`ToolScope`]), how it may
//! only tighten the person's policy ([`PolicyTightening`]), what it may spend ([`Budget`]) and
//! whom it may delegate to.
//!
//! A leaf (it depends on `ids` only) because three layers need the same types and must not need
//! each other: `store` keeps profiles (as this module's JSON), the host validates them against
//! the configured providers and agents, and the agent runtime enforces scopes, tightenings and
//! budgets. The TOML codec ([`to_toml`], [`from_toml`]) is the exchange form people edit and
//! share, so it refuses what it does not know rather than guessing.
//!
//! The serde forms are stored and written to people's files: keep them as they are.

mod codec;
mod scope;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use codec::{from_toml, to_toml, TOML_MAX_BYTES};
pub use scope::{pattern_matches, PolicyTightening, Tighten, ToolScope, PATTERN_MAX};

use crate::ids::ProviderName;

/// The longest description accepted, in characters.
pub const DESCRIPTION_MAX: usize = 2_000;
/// The longest system prompt accepted, in bytes.
pub const SYSTEM_MAX: usize = 64 * 1024;
/// The longest model id accepted, in characters.
pub const MODEL_MAX: usize = 200;
/// The most entries a list (servers, tools, policy, delegates) may have.
pub const LIST_MAX: usize = 256;

/// Why an agent profile (or a file of them) was refused. Every message is one sentence that
/// names the agent and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentDataError {
    /// An agent name is not valid.
    #[error("the agent name {name:?} is not valid: {reason}")]
    Name {
        /// The name as given (cut short).
        name: String,
        /// Why.
        reason: String,
    },
    /// One field of one agent is not valid.
    #[error("agent {agent}, field {field}: {reason}")]
    Field {
        /// The agent (or `#N` for an entry without a readable name).
        agent: String,
        /// The field, dotted (`budget.cost_usd`, `policy[2].action`).
        field: String,
        /// Why.
        reason: String,
    },
    /// Two agents in one file share a name.
    #[error("the agent name {0} is used twice in the file; names must be unique")]
    Duplicate(AgentName),
    /// The file as a whole does not read.
    #[error("the agents file is not valid: {0}")]
    File(String),
}

impl AgentDataError {
    pub(crate) fn field(agent: impl fmt::Display, field: &str, reason: impl fmt::Display) -> Self {
        Self::Field {
            agent: agent.to_string(),
            field: field.to_owned(),
            reason: reason.to_string(),
        }
    }
}

/// The name of an agent profile, unique within a host: lowercase ASCII letters, digits, `-`
/// and `_`, 1 to 64 characters. Safe to show, store and use as a key.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct AgentName(Arc<str>);

impl AgentName {
    /// The longest name accepted.
    pub const MAX_LEN: usize = 64;

    /// Validates and wraps a name.
    pub fn new(s: impl AsRef<str>) -> Result<Self, AgentDataError> {
        let s = s.as_ref();
        let bad = |reason: String| AgentDataError::Name {
            name: s.chars().take(80).collect(),
            reason,
        };
        let len = s.chars().count();
        if len == 0 {
            return Err(bad("the name is empty".into()));
        }
        if len > Self::MAX_LEN {
            return Err(bad(format!(
                "it is {len} characters long; at most {} are allowed",
                Self::MAX_LEN
            )));
        }
        if let Some(c) = s
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_')))
        {
            return Err(bad(format!(
                "it contains {c:?}; use lowercase letters, digits, '-' or '_'"
            )));
        }
        Ok(Self(Arc::from(s)))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl<'de> Deserialize<'de> for AgentName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(&s).map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for AgentName {
    type Err = AgentDataError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

/// What an agent may spend before it is stopped; `None` = no limit of that kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Input plus output tokens over the agent's whole task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Estimated cost in US dollars (from the model price table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Tool calls (0 = none at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u32>,
    /// Wall-clock time in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_secs: Option<u64>,
}

impl Budget {
    /// Whether no limit is set.
    pub fn is_unlimited(&self) -> bool {
        *self == Self::default()
    }

    /// Checks the limits make sense; `agent` names the profile in the error.
    pub fn validate(&self, agent: &str) -> Result<(), AgentDataError> {
        if self.tokens == Some(0) {
            return Err(AgentDataError::field(
                agent,
                "budget.tokens",
                "a budget of 0 tokens leaves the agent nothing to answer with; give at least 1 or leave it out",
            ));
        }
        if let Some(c) = self.cost_usd {
            if !c.is_finite() || c < 0.0 {
                return Err(AgentDataError::field(
                    agent,
                    "budget.cost_usd",
                    format!("{c} is not a cost; give a number of dollars of 0 or more"),
                ));
            }
        }
        for (field, v) in [
            ("budget.tokens", self.tokens),
            ("budget.wall_secs", self.wall_secs),
        ] {
            if v.is_some_and(|v| i64::try_from(v).is_err()) {
                return Err(AgentDataError::field(
                    agent,
                    field,
                    "the limit is larger than any file can hold; leave it out for no limit",
                ));
            }
        }
        if self.wall_secs == Some(0) {
            return Err(AgentDataError::field(
                agent,
                "budget.wall_secs",
                "a time limit of 0 seconds stops the agent before it starts; give at least 1 or leave it out",
            ));
        }
        Ok(())
    }
}

/// One agent profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentProfile {
    /// Its name.
    pub name: AgentName,
    /// What it is for; the supervisor reads it when choosing whom to delegate to.
    #[serde(default)]
    pub description: String,
    /// The configured provider it runs on.
    pub provider: ProviderName,
    /// The model; `None` = the provider's default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Whom it may delegate to: `None` = every agent, `Some(empty)` = nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegates: Option<Vec<AgentName>>,
    /// Progressive discovery (issue 16): it is offered a search over the tools in its scope
    /// and the ones it loads, instead of every definition. Off by default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub discovery: bool,
    /// The servers and tools it may see (none by default).
    #[serde(default)]
    pub scope: ToolScope,
    /// Tightenings of the person's policy for its calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy: Vec<PolicyTightening>,
    /// What it may spend.
    #[serde(default)]
    pub budget: Budget,
}

impl AgentProfile {
    /// A profile with no tools, no overrides and no limits.
    pub fn new(name: AgentName, provider: ProviderName) -> Self {
        Self {
            name,
            description: String::new(),
            provider,
            model: None,
            system: None,
            delegates: None,
            discovery: false,
            scope: ToolScope::default(),
            policy: Vec::new(),
            budget: Budget::default(),
        }
    }

    /// The strictest tightening that covers `server`/`tool` (deny wins over ask); `None` when
    /// the person's policy applies unchanged.
    pub fn tightening_for(&self, server: &str, tool: &str) -> Option<Tighten> {
        self.policy
            .iter()
            .filter(|p| p.covers(server, tool))
            .map(|p| p.action)
            .max()
    }

    /// Whether it may delegate to `other` (never to itself).
    pub fn may_delegate_to(&self, other: &AgentName) -> bool {
        other != &self.name
            && self
                .delegates
                .as_ref()
                .is_none_or(|list| list.contains(other))
    }

    /// Checks every field on its own (what needs the host, such as whether the provider is
    /// configured, is checked there).
    pub fn validate(&self) -> Result<(), AgentDataError> {
        let me = self.name.as_str();
        text(me, "description", &self.description, DESCRIPTION_MAX, true)?;
        if let Some(m) = &self.model {
            if m.trim().is_empty() {
                return Err(AgentDataError::field(
                    me,
                    "model",
                    "the model is empty; leave it out to use the provider's default",
                ));
            }
            text(me, "model", m, MODEL_MAX, false)?;
        }
        if let Some(s) = &self.system {
            if s.len() > SYSTEM_MAX {
                return Err(AgentDataError::field(
                    me,
                    "system",
                    format!("it is {} bytes; at most {SYSTEM_MAX} are allowed", s.len()),
                ));
            }
        }
        if let Some(list) = &self.delegates {
            if list.len() > LIST_MAX {
                return Err(AgentDataError::field(
                    me,
                    "delegates",
                    format!("at most {LIST_MAX} agents may be listed"),
                ));
            }
            if list.contains(&self.name) {
                return Err(AgentDataError::field(
                    me,
                    "delegates",
                    "an agent may not delegate to itself",
                ));
            }
        }
        self.scope.validate(me)?;
        if self.policy.len() > LIST_MAX {
            return Err(AgentDataError::field(
                me,
                "policy",
                format!("at most {LIST_MAX} overrides are allowed"),
            ));
        }
        for (i, p) in self.policy.iter().enumerate() {
            scope::check_pattern(me, &format!("policy[{i}].tool"), &p.tool)?;
        }
        self.budget.validate(me)
    }
}

/// A one-line (or, with `multiline`, free) text field of bounded length without control
/// characters other than newlines and tabs.
fn text(
    agent: &str,
    field: &str,
    s: &str,
    max: usize,
    multiline: bool,
) -> Result<(), AgentDataError> {
    let n = s.chars().count();
    if n > max {
        return Err(AgentDataError::field(
            agent,
            field,
            format!("it is {n} characters long; at most {max} are allowed"),
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| c.is_control() && !(multiline && matches!(c, '\n' | '\t')))
    {
        return Err(AgentDataError::field(
            agent,
            field,
            format!("it contains the control character {c:?}"),
        ));
    }
    Ok(())
}
