//! Policy rules as data: what a person writes (in the GUI, on the CLI, or in a TOML file) and
//! what [`super::policy::decide`] evaluates.
//!
//! A rule says *allow*, *ask* or *deny* for the calls it matches: a server and tool pattern
//! (`*` wildcards), an optional origin, and conditions on the arguments that must all hold —
//! paths under given prefixes, URLs on given domains, SQL of given kinds only, a value matching
//! a pattern, or the tool claiming to be read-only (counted only for servers the person marked
//! trusted, TD-01). A rule can carry a limit ("at most 5 per hour", "at most 20 per
//! conversation"), after which it denies. Grants made from the approval prompt ("this
//! conversation", "always") are rules too, bound to the exact tool definition they were given
//! for: when the tool changes, the grant no longer applies (TD-02, AP-02).
//!
//! Rules are checked when saved ([`Rule::validate`]); one that still cannot be evaluated on a
//! call (an argument missing, SQL that does not parse) fails closed: an allow rule does not
//! allow, a deny rule denies.

use serde::{Deserialize, Serialize};

pub use crate::policy_data::{Condition, Effect, Limit, On, Per, Rule, Source};

// The types live in the `policy_data` leaf (store keeps them); what a request kind is belongs to
// the policy, so whether a rule covers one is answered here.
impl On {
    /// Whether a rule with this `on` applies to a request of `kind`. A prompt rule covers
    /// the completions of its arguments too: they send what is typed to the same server.
    pub fn covers(self, kind: super::policy::RequestKind) -> bool {
        use super::policy::RequestKind as K;
        matches!(
            (self, kind),
            (Self::Any, _)
                | (Self::Tool, K::Tool)
                | (Self::Resource, K::Resource)
                | (Self::Prompt, K::Prompt | K::Completion)
        )
    }
}

/// Why a rule was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("rule {id}: {reason}")]
pub struct RuleError {
    /// The rule.
    pub id: String,
    /// What is wrong.
    pub reason: String,
}

/// How the ids of grants begin (reserved: a rule the person writes cannot take it).
pub const GRANT_PREFIX: &str = "grant-";

/// The longest pattern accepted.
const PATTERN_MAX: usize = 1_000;
/// Statement kinds [`Condition::SqlOnly`] knows.
pub const SQL_KINDS: &[&str] = &[
    "select", "insert", "update", "delete", "create", "drop", "alter", "truncate", "grant",
    "revoke", "pragma", "attach", "copy", "merge", "call", "explain", "show", "set", "other",
];

impl Rule {
    /// Checks the rule can be evaluated: a sane id, patterns that compile, non-empty lists,
    /// known SQL kinds and a limit only where it means something.
    pub fn validate(&self) -> Result<(), RuleError> {
        let bad = |reason: String| {
            Err(RuleError {
                id: crate::escape::short_for_display(&self.id, 64),
                reason,
            })
        };
        if self.id.is_empty()
            || self.id.len() > 64
            || !self
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return bad("an id is 1 to 64 letters, digits, '-', '_' or '.'".into());
        }
        // What a rule is comes from its source, never its name; the prefix is still kept for
        // grants so that a list of rules cannot show a rule that looks like one.
        let grant = matches!(self.source, Source::Grant { .. });
        if !grant && self.id.to_ascii_lowercase().starts_with(GRANT_PREFIX) {
            return bad(format!(
                "ids starting with `{GRANT_PREFIX}` are reserved for grants"
            ));
        }
        for (what, p) in [("server", &self.server), ("tool", &self.tool)] {
            if p.is_empty() || p.len() > 200 || p.chars().any(char::is_control) {
                return bad(format!(
                    "the {what} pattern must be 1 to 200 visible characters"
                ));
            }
        }
        if let Some(o) = &self.origin {
            if o != "model" && o != "manual" && o != "app" {
                return bad("origin is `model`, `manual` or `app`".into());
            }
        }
        if self.limit.is_some() && self.effect != Effect::Allow {
            return bad("only allow rules take a limit (past it they deny)".into());
        }
        if self.limit.is_some_and(|l| l.max == 0) {
            return bad("a limit of 0 is a deny rule; write that instead".into());
        }
        for c in &self.when {
            match c {
                Condition::PathUnder { prefixes, .. } if prefixes.is_empty() => {
                    return bad("path_under needs at least one prefix".into())
                }
                Condition::DomainIn { domains, .. } if domains.is_empty() => {
                    return bad("domain_in needs at least one domain".into())
                }
                Condition::SqlOnly { operations, .. } => {
                    if operations.is_empty() {
                        return bad("sql_only needs at least one operation".into());
                    }
                    if let Some(op) = operations.iter().find(|o| !SQL_KINDS.contains(&o.as_str())) {
                        return bad(format!(
                            "unknown SQL operation {op:?}; use {}",
                            SQL_KINDS.join(", ")
                        ));
                    }
                }
                Condition::Matches { pattern, .. } => {
                    if pattern.len() > PATTERN_MAX {
                        return bad("the pattern is longer than 1,000 characters".into());
                    }
                    if let Err(e) = whole_match(pattern) {
                        return bad(format!("the pattern does not compile: {e}"));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// `pattern` anchored to the whole value, with a size limit on the compiled program.
pub(super) fn whole_match(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(1 << 20)
        .build()
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
pub fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return true;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty(); // no '*': exact
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// A policy file: the rules, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyFile {
    /// The file format's version.
    #[serde(default = "version")]
    pub version: u32,
    /// The rules.
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

fn version() -> u32 {
    1
}

impl PolicyFile {
    /// Reads a TOML policy file; every rule is validated and ids must be unique.
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let file: Self = toml::from_str(text).map_err(|e| RuleError {
            id: "(file)".into(),
            reason: e.to_string(),
        })?;
        if file.version != 1 {
            return Err(RuleError {
                id: "(file)".into(),
                reason: format!(
                    "version {} is newer than this build reads (1)",
                    file.version
                ),
            });
        }
        let mut seen = std::collections::HashSet::new();
        for r in &file.rules {
            r.validate()?;
            if !seen.insert(r.id.as_str()) {
                return Err(RuleError {
                    id: r.id.clone(),
                    reason: "two rules have this id".into(),
                });
            }
        }
        Ok(file)
    }

    /// Writes the rules as TOML.
    pub fn render(&self) -> String {
        let head =
            "# Switchboard approval policy. Precedence: deny > ask > allow > default (tool calls: ask;\n\
                    # a person's own reads, prompts and completions: allow).\n\
                    # Grants made from approval prompts are listed with their source.\n";
        format!("{head}{}", toml::to_string_pretty(self).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("*", "anything"));
        assert!(glob("read_*", "read_file"));
        assert!(!glob("read_*", "write_file"));
        assert!(glob("*_file", "read_file"));
        assert!(glob("a*c*e", "abcde"));
        assert!(!glob("a*c*e", "abcd"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
    }

    #[test]
    fn toml_round_trip_and_validation() {
        let text = r#"
[[rule]]
id = "reads-in-projects"
effect = "allow"
server = "fs"
tool = "read_*"
when = [{ kind = "path_under", prefixes = ["~/projects"] }]
limit = { max = 5, per = "hour" }

[[rule]]
id = "sql-reads"
effect = "allow"
server = "db"
tool = "query"
when = [{ kind = "sql_only", arg = "sql", operations = ["select"] }]

[[rule]]
id = "no-ssh"
effect = "deny"
when = [{ kind = "path_under", prefixes = ["~/.ssh"] }]
"#;
        let file = PolicyFile::parse(text).unwrap();
        assert_eq!(file.rules.len(), 3);
        assert_eq!(file.rules[2].server, "*");
        let again = PolicyFile::parse(&file.render()).unwrap();
        assert_eq!(again, file);

        for (bad, why) in [
            ("[[rule]]\nid = \"x\"\neffect = \"allow\"\nwhen = [{ kind = \"matches\", arg = \"a\", pattern = \"(\" }]", "does not compile"),
            ("[[rule]]\nid = \"x\"\neffect = \"deny\"\nlimit = { max = 5, per = \"hour\" }", "only allow rules"),
            ("[[rule]]\nid = \"x y\"\neffect = \"deny\"", "an id is"),
            ("[[rule]]\nid = \"x\"\neffect = \"allow\"\nwhen = [{ kind = \"sql_only\", arg = \"q\", operations = [\"selekt\"] }]", "unknown SQL"),
            ("[[rule]]\nid = \"x\"\neffect = \"maybe\"", "unknown variant"),
            ("[[rule]]\nid = \"x\"\neffect = \"deny\"\n[[rule]]\nid = \"x\"\neffect = \"ask\"", "two rules"),
            ("version = 2", "newer"),
        ] {
            let e = PolicyFile::parse(bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }
}
