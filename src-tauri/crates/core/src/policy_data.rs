//! Policy rules as data: what a rule says ([`Rule`]: its [`Effect`], what it covers ([`On`]),
//! its [`Condition`]s and [`Limit`]) and where it came from ([`Source`]), with the words each is
//! written as in TOML files, on the CLI and in the stored JSON.
//!
//! A leaf of plain data because two modules need it and must not need each other: `store`
//! keeps rules (as this JSON) in the policy tables, and `approval` checks and evaluates them
//! (`approval::rules`, which re-exports everything here, holds [`Rule::validate`] and the
//! policy file; `approval::policy::decide` evaluates). It used to live in `approval::rules`,
//! which made `store` and `approval` import each other.
//!
//! The serde forms are stored and written to people's policy files: keep them as they are.

use serde::{Deserialize, Serialize};

/// What a matching rule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Run without asking.
    Allow,
    /// Ask the person.
    Ask,
    /// Refuse.
    Deny,
}

impl Effect {
    /// The word used in files and on the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// Where a rule came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Source {
    /// Written by the person as a rule.
    #[default]
    User,
    /// Granted from an approval prompt.
    Grant {
        /// The conversation it is limited to; `None` = always.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation: Option<crate::ids::ConversationId>,
        /// The digest of the tool definition it was granted for.
        tool_digest: String,
        /// The agent whose request it answered: it allows that agent's calls only. A person
        /// who says "always" to agent researcher has not said it to every other agent (one
        /// that reads the web, say) or to the plain chat model. `None` for a plain model's or
        /// the person's own request, and then it covers no agent's call (issue 15).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// The MCP App whose request it answered, by its `ui://` URI (the grant's server is
        /// the app's): it allows that app's calls only, and a grant without one covers no app
        /// (AP-10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<String>,
    },
}

/// The time window of a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// A sliding minute.
    Minute,
    /// A sliding hour.
    Hour,
    /// A sliding day.
    Day,
    /// One conversation (manual runs count as their own "conversation").
    Conversation,
}

impl Per {
    /// The window as a word.
    pub fn word(self) -> &'static str {
        match self {
            Self::Minute => "minute",
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Conversation => "conversation",
        }
    }

    /// The window in milliseconds; `None` for a conversation.
    pub fn millis(self) -> Option<i64> {
        match self {
            Self::Minute => Some(60_000),
            Self::Hour => Some(3_600_000),
            Self::Day => Some(86_400_000),
            Self::Conversation => None,
        }
    }
}

/// "At most `max` calls matched by this rule per `per`"; past it the rule denies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// Calls allowed in the window.
    pub max: u32,
    /// The window.
    pub per: Per,
}

/// One condition on a call; all of a rule's conditions must hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Condition {
    /// Every path-like argument (or the named one) is under one of `prefixes` (after `~`
    /// expansion and `..` normalisation).
    PathUnder {
        /// The argument; `None` = every argument that looks like a path.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arg: Option<String>,
        /// Allowed prefixes.
        prefixes: Vec<String>,
    },
    /// Every URL-like argument (or the named one) is on one of `domains` or a subdomain.
    DomainIn {
        /// The argument; `None` = every argument that looks like a URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arg: Option<String>,
        /// The domains.
        domains: Vec<String>,
    },
    /// The SQL in `arg` is only statements of these kinds (`select`, `insert`, ...).
    SqlOnly {
        /// The argument holding SQL.
        arg: String,
        /// Allowed statement kinds, lowercase.
        operations: Vec<String>,
    },
    /// The string value of `arg` matches `pattern` (a regular expression, whole value).
    Matches {
        /// The argument.
        arg: String,
        /// The pattern.
        pattern: String,
    },
    /// The tool claims `readOnlyHint`, and the server is one the person trusts (TD-01: a claim
    /// from an untrusted server never relaxes anything).
    ReadOnlyHint,
    /// The call is a write: the tool does not claim read-only on a trusted server. For
    /// budgets ("at most 20 write calls per conversation").
    Writes,
}

/// Which kinds of request a rule covers. Rules written before reads and prompts were policy
/// targets have no `on` and cover tool calls, as they always did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    /// Tool calls; `tool` matches the tool's name.
    #[default]
    Tool,
    /// Resource reads; `tool` matches the resource's URI.
    Resource,
    /// Prompt gets and the completions of their arguments; `tool` matches the prompt's name.
    Prompt,
    /// Every kind; `tool` matches the tool's or prompt's name or the resource's URI.
    Any,
}

impl On {
    /// The word used in files and on the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
            Self::Any => "any",
        }
    }
}

/// One rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// A stable name, unique in a policy.
    pub id: String,
    /// What it does.
    pub effect: Effect,
    /// The server it applies to (`*` wildcards); every server when absent.
    #[serde(default = "star")]
    pub server: String,
    /// The kinds of request it covers (tool calls when absent).
    #[serde(default, skip_serializing_if = "is_tool")]
    pub on: On,
    /// The tool it applies to (`*` wildcards); every tool when absent. For resource rules the
    /// resource's URI, for prompt rules the prompt's name.
    #[serde(default = "star")]
    pub tool: String,
    /// `model`, `manual` or `app` to apply to one origin only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Conditions, all of which must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<Condition>,
    /// The limit, for allow rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// Why the rule exists, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "is_user")]
    pub source: Source,
}

fn star() -> String {
    "*".into()
}

fn is_tool(on: &On) -> bool {
    *on == On::Tool
}

fn is_user(s: &Source) -> bool {
    *s == Source::User
}
