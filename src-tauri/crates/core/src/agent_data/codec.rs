//! The TOML exchange form of agent profiles: one `[[agent]]` table per profile, with
//! `[agent.scope]`, `[[agent.policy]]` and `[agent.budget]` under it.
//!
//! Reading is field by field so every error names the agent and the field; unknown keys are
//! refused (a misspelt `budjet` must not silently mean "no budget"), and so are duplicate
//! names. A file is read whole into memory, so its size is capped first; the parser's own
//! nesting limit keeps a deeply nested file from exhausting the stack.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{AgentDataError, AgentName, AgentProfile, Budget, PolicyTightening, ToolScope};
use crate::ids::ProviderName;

/// The largest agents file read, in bytes.
pub const TOML_MAX_BYTES: usize = 1024 * 1024;

/// The deepest nesting of arrays and inline tables read. The profile shape needs 2; the
/// parser's own limit (128) is too deep for a 2 MiB thread stack in a debug build.
pub const NESTING_MAX: usize = 16;

/// The keys an `[[agent]]` table may have.
const KEYS: &[&str] = &[
    "name",
    "description",
    "provider",
    "model",
    "system",
    "delegates",
    "discovery",
    "scope",
    "policy",
    "budget",
];

/// Writes profiles as a TOML file [`from_toml`] reads back equal.
pub fn to_toml(profiles: &[AgentProfile]) -> Result<String, AgentDataError> {
    #[derive(Serialize)]
    struct File<'a> {
        agent: &'a [AgentProfile],
    }
    let body = toml::to_string(&File { agent: profiles })
        .map_err(|e| AgentDataError::File(format!("could not write the profiles: {e}")))?;
    Ok(format!(
        "# Switchboard agent profiles; import with `switchboard agent import FILE`.\n\n{body}"
    ))
}

/// Reads a TOML file of profiles, each validated on its own ([`AgentProfile::validate`]) and
/// with unique names. Never panics on hostile input; every error is a sentence.
pub fn from_toml(text: &str) -> Result<Vec<AgentProfile>, AgentDataError> {
    if text.len() > TOML_MAX_BYTES {
        return Err(AgentDataError::File(format!(
            "it is {} bytes; at most {TOML_MAX_BYTES} are read",
            text.len()
        )));
    }
    nesting(text)?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| AgentDataError::File(one_line(&e.to_string())))?;
    if let Some(k) = table.keys().find(|k| *k != "agent") {
        return Err(AgentDataError::File(format!(
            "unknown top-level key {:?}; the file holds [[agent]] tables only",
            short(k)
        )));
    }
    let entries = match table.get("agent") {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(_) => {
            return Err(AgentDataError::File(
                "`agent` must be a list of [[agent]] tables".into(),
            ))
        }
    };
    let mut out: Vec<AgentProfile> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let profile = one(i, entry)?;
        if out.iter().any(|p| p.name == profile.name) {
            return Err(AgentDataError::Duplicate(profile.name));
        }
        out.push(profile);
    }
    Ok(out)
}

fn one(i: usize, entry: &toml::Value) -> Result<AgentProfile, AgentDataError> {
    let numbered = format!("#{} in the file", i + 1);
    let toml::Value::Table(t) = entry else {
        return Err(AgentDataError::field(
            numbered,
            "agent",
            "each agent must be a table ([[agent]])",
        ));
    };
    let name: AgentName = match t.get("name") {
        None => {
            return Err(AgentDataError::field(
                numbered,
                "name",
                "the name is missing",
            ))
        }
        Some(v) => field(&numbered, "name", v)?,
    };
    let label = name.to_string();
    if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(AgentDataError::field(
            &label,
            &short(k),
            format!("unknown field; an agent has {}", KEYS.join(", ")),
        ));
    }
    let provider: ProviderName = match t.get("provider") {
        None => {
            return Err(AgentDataError::field(
                &label,
                "provider",
                "the provider is missing",
            ))
        }
        Some(v) => field(&label, "provider", v)?,
    };
    let opt = |key: &str| t.get(key);
    let profile = AgentProfile {
        name,
        provider,
        description: opt("description")
            .map(|v| field(&label, "description", v))
            .transpose()?
            .unwrap_or_default(),
        model: opt("model")
            .map(|v| field(&label, "model", v))
            .transpose()?,
        system: opt("system")
            .map(|v| field(&label, "system", v))
            .transpose()?,
        delegates: opt("delegates")
            .map(|v| field::<Vec<AgentName>>(&label, "delegates", v))
            .transpose()?,
        discovery: opt("discovery")
            .map(|v| field::<bool>(&label, "discovery", v))
            .transpose()?
            .unwrap_or_default(),
        scope: opt("scope")
            .map(|v| field::<ToolScope>(&label, "scope", v))
            .transpose()?
            .unwrap_or_default(),
        policy: policy(&label, opt("policy"))?,
        budget: opt("budget")
            .map(|v| field::<Budget>(&label, "budget", v))
            .transpose()?
            .unwrap_or_default(),
    };
    profile.validate()?;
    Ok(profile)
}

/// `[[agent.policy]]`, entry by entry so an error names the entry.
fn policy(label: &str, v: Option<&toml::Value>) -> Result<Vec<PolicyTightening>, AgentDataError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let toml::Value::Array(items) = v else {
        return Err(AgentDataError::field(
            label,
            "policy",
            "it must be a list of [[agent.policy]] tables",
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| field(label, &format!("policy[{i}]"), item))
        .collect()
}

fn field<T: DeserializeOwned>(
    agent: &str,
    name: &str,
    v: &toml::Value,
) -> Result<T, AgentDataError> {
    T::deserialize(v.clone())
        .map_err(|e| AgentDataError::field(agent, name, one_line(&e.to_string())))
}

fn one_line(s: &str) -> String {
    let joined = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    joined.chars().take(500).collect()
}

fn short(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Refuses text whose arrays and inline tables nest deeper than [`NESTING_MAX`], before the
/// recursive parser sees it. A lexical scan: brackets inside strings and comments do not count.
fn nesting(text: &str) -> Result<(), AgentDataError> {
    #[derive(PartialEq)]
    enum In {
        Code,
        Comment,
        Basic,
        Literal,
        MultiBasic,
        MultiLiteral,
    }
    let b = text.as_bytes();
    let (mut i, mut depth, mut state) = (0, 0usize, In::Code);
    while i < b.len() {
        let c = b[i];
        let rest = &b[i..];
        match state {
            In::Code => match c {
                b'#' => state = In::Comment,
                b'"' if rest.starts_with(b"\"\"\"") => {
                    state = In::MultiBasic;
                    i += 2;
                }
                b'\'' if rest.starts_with(b"\'\'\'") => {
                    state = In::MultiLiteral;
                    i += 2;
                }
                b'"' => state = In::Basic,
                b'\'' => state = In::Literal,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > NESTING_MAX {
                        return Err(AgentDataError::File(format!(
                            "lists and tables nest deeper than {NESTING_MAX} levels"
                        )));
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            },
            In::Comment if c == b'\n' => state = In::Code,
            In::Basic | In::MultiBasic if c == b'\\' => i += 1,
            In::Basic if c == b'"' || c == b'\n' => state = In::Code,
            In::Literal if c == b'\'' || c == b'\n' => state = In::Code,
            In::MultiBasic if rest.starts_with(b"\"\"\"") => {
                state = In::Code;
                i += 2;
            }
            In::MultiLiteral if rest.starts_with(b"\'\'\'") => {
                state = In::Code;
                i += 2;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}
