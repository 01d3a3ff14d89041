//! What an agent may see ([`ToolScope`]) and how it tightens the person's policy
//! ([`PolicyTightening`]), both by `server/tool` patterns in which `*` stands for any run of
//! characters (`memory/read_*`, `*/search`, `*`).
//!
//! The default scope is empty: an agent sees only what it is given. There is no "allow"
//! tightening, so an agent's overrides can make the person's policy stricter, never looser.

use serde::{Deserialize, Serialize};

use super::{AgentDataError, LIST_MAX};

/// The longest pattern or server entry accepted, in characters.
pub const PATTERN_MAX: usize = 200;

/// Whether `pattern` matches all of `text`; `*` matches any run of characters (also `/` and
/// nothing), every other character only itself. Linear in the sizes, no backtracking blow-up.
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and the text position it matched up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The servers and tools an agent may see.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolScope {
    /// Server names, or `*` for every server. Empty = no server, so no tools.
    #[serde(default)]
    pub servers: Vec<String>,
    /// `server/tool` patterns; empty = every tool of the allowed servers.
    #[serde(default)]
    pub tools: Vec<String>,
}

impl ToolScope {
    /// A scope of every tool of every server.
    pub fn everything() -> Self {
        Self {
            servers: vec!["*".into()],
            tools: Vec::new(),
        }
    }

    /// Whether the agent may see `tool` of `server`.
    pub fn allows(&self, server: &str, tool: &str) -> bool {
        let server_ok = self.servers.iter().any(|s| s == "*" || s == server);
        if !server_ok {
            return false;
        }
        if self.tools.is_empty() {
            return true;
        }
        let full = format!("{server}/{tool}");
        self.tools.iter().any(|p| pattern_matches(p, &full))
    }

    pub(super) fn validate(&self, agent: &str) -> Result<(), AgentDataError> {
        for (field, list) in [
            ("scope.servers", &self.servers),
            ("scope.tools", &self.tools),
        ] {
            if list.len() > LIST_MAX {
                return Err(AgentDataError::field(
                    agent,
                    field,
                    format!("at most {LIST_MAX} entries are allowed"),
                ));
            }
        }
        for (i, s) in self.servers.iter().enumerate() {
            if s != "*" {
                crate::ids::ServerId::new(s).map_err(|e| {
                    AgentDataError::field(
                        agent,
                        &format!("scope.servers[{i}]"),
                        format!(
                            "{:?} is not a server name ({e}); use a name or \"*\"",
                            short(s)
                        ),
                    )
                })?;
            }
        }
        for (i, p) in self.tools.iter().enumerate() {
            check_pattern(agent, &format!("scope.tools[{i}]"), p)?;
        }
        Ok(())
    }
}

fn short(s: &str) -> String {
    s.chars().take(80).collect()
}

/// A `server/tool` pattern: bounded, printable, with a `/` (or a lone `*`).
pub(super) fn check_pattern(agent: &str, field: &str, p: &str) -> Result<(), AgentDataError> {
    let bad = |reason: String| Err(AgentDataError::field(agent, field, reason));
    let n = p.chars().count();
    if n == 0 {
        return bad("the pattern is empty".into());
    }
    if n > PATTERN_MAX {
        return bad(format!(
            "the pattern is {n} characters long; at most {PATTERN_MAX} are allowed"
        ));
    }
    if let Some(c) = p.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return bad(format!("the pattern contains {c:?}"));
    }
    if p != "*" && !p.contains('/') {
        return bad(format!(
            "{:?} is not a \"server/tool\" pattern (for example \"memory/read_*\")",
            short(p)
        ));
    }
    Ok(())
}

/// What a tightening does to a call the person's policy would allow or ask about. Ordered:
/// `Deny` is stricter than `Ask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tighten {
    /// Ask the person, even when their policy would allow the call.
    Ask,
    /// Refuse the call.
    Deny,
}

impl Tighten {
    /// The word used in files and on the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl std::str::FromStr for Tighten {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ask" => Ok(Self::Ask),
            "deny" => Ok(Self::Deny),
            "allow" => Err(
                "an agent's policy overrides only tighten the person's policy, so \
                 \"allow\" is not possible; use \"ask\" or \"deny\""
                    .into(),
            ),
            other => Err(format!(
                "{:?} is not an action; use \"ask\" or \"deny\"",
                short(other)
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Tighten {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One tightening: calls to tools matching `tool` ask (or are denied) whatever the person's
/// policy says, unless that policy is stricter already.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyTightening {
    /// A `server/tool` pattern.
    pub tool: String,
    /// Ask or deny.
    pub action: Tighten,
}

impl PolicyTightening {
    /// Whether it covers `tool` of `server`.
    pub fn covers(&self, server: &str, tool: &str) -> bool {
        pattern_matches(&self.tool, &format!("{server}/{tool}"))
    }
}
