//! The approval policy as a pure function: [`decide`] takes the rules, the call and what the
//! host knows about its context, and returns allow, ask or deny with the rule or reason. No
//! I/O, no clock: the host gathers the counts and flags first, so every branch is
//! table-tested.
//!
//! Precedence, highest first:
//! 1. hard deny — decided before the policy runs: disabled tools, tools held after a change
//!    (TD-02), arguments that fail the schema (TD-07);
//! 2. user deny — a deny rule that matches, or whose conditions cannot be evaluated on this call
//!    (fail closed); an allow rule past its limit;
//! 3. ask — an ask rule that matches (or cannot be evaluated);
//! 4. allow — an allow rule or grant that matches on every condition;
//! 5. default — ask (AP-01).
//!
//! Claimed annotations never relax anything on their own (TD-01): `read_only_hint` conditions
//! hold only for servers the person marked trusted. Server texts never reach this function.
//! The lethal-trifecta guard (AP-04) turns any allow into an ask, with a warning saying why,
//! when the conversation has read private data, taken in untrusted content, and the tool can
//! send data out.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::rules::{glob, whole_match, Condition, Effect, Rule, Source};
use crate::agent_data::AgentName;
use crate::ids::{ConversationId, ServerId};

/// Who wants the request made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// A person, by hand (the catalog's run form, the resource and prompt pages, the CLI).
    Manual,
    /// A person bringing something into a conversation (a resource attached to a message, a
    /// prompt run as a slash command): by hand, but what comes back will reach a model. It
    /// counts in the conversation's data flow (AP-04) once the message carrying it is sent
    /// (`SendRequest::attached`): only then does the model see it.
    Attach {
        /// The conversation it goes into; `None` for a conversation not started yet.
        conversation: Option<ConversationId>,
    },
    /// A model asked for it during a conversation.
    Model {
        /// The conversation.
        conversation: ConversationId,
        /// The agent whose model asked, when an agent profile runs it (issue 15); `None` for
        /// a plain conversation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<Acting>,
    },
    /// An MCP App asked for it from its frame (AP-10): the app acts as itself. Its grants are
    /// its own, and in a conversation it counts in that conversation's data flow (AP-04).
    App {
        /// The app.
        app: super::app::AppRef,
        /// The conversation it is shown in; `None` for an app shown by a person's own run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation: Option<ConversationId>,
        /// The agent whose conversation shows it (its scope and tightenings apply).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<Acting>,
    },
}

/// An agent making a request, and on whose behalf (issue 15, point 4): what an approval prompt
/// names and the audit log records as the actor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acting {
    /// The agent whose model asked.
    pub agent: AgentName,
    /// The agent that gave it the task; `None` when it works for the person directly (it runs
    /// the conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_agent: Option<AgentName>,
}

impl Acting {
    /// Who asks, in words: "agent researcher, for agent planner" or "agent planner, for you".
    pub fn describe(&self) -> String {
        match &self.for_agent {
            Some(p) => format!("agent {}, for agent {p}", self.agent),
            None => format!("agent {}, for you", self.agent),
        }
    }
}

impl Origin {
    /// The word rules match on (`Rule::origin`): `manual` for a person, `model` for a model,
    /// `app` for an MCP App.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Manual | Self::Attach { .. } => "manual",
            Self::Model { .. } => "model",
            Self::App { .. } => "app",
        }
    }

    /// The MCP App that asks, if one does.
    pub fn app(&self) -> Option<&super::app::AppRef> {
        match self {
            Self::App { app, .. } => Some(app),
            _ => None,
        }
    }

    /// The conversation whatever comes back goes into, if any.
    pub fn conversation(&self) -> Option<&ConversationId> {
        match self {
            Self::Manual => None,
            Self::Attach { conversation } => conversation.as_ref(),
            Self::Model { conversation, .. } => Some(conversation),
            Self::App { conversation, .. } => conversation.as_ref(),
        }
    }

    /// A plain conversation's model (no agent profile).
    pub fn model(conversation: ConversationId) -> Self {
        Self::Model {
            conversation,
            agent: None,
        }
    }

    /// The agent that asks, if an agent does.
    pub fn acting(&self) -> Option<&Acting> {
        match self {
            Self::Model { agent, .. } | Self::App { agent, .. } => agent.as_ref(),
            _ => None,
        }
    }

    /// Whether a person made the request (as opposed to a model or an app).
    pub fn is_person(&self) -> bool {
        !matches!(self, Self::Model { .. } | Self::App { .. })
    }
}

/// What kind of request is decided on (AP-09: every request with an effect is a policy
/// target, not only tool calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// `tools/call`: the name is the tool's.
    Tool,
    /// `resources/read`: the name is the resource's URI.
    Resource,
    /// `prompts/get`: the name is the prompt's.
    Prompt,
    /// `completion/complete` for a prompt's argument: the name is the prompt's.
    Completion,
    /// A pipeline approved as a whole before its first step (issue 15, point 6): the name is
    /// the pipeline's, the server its first step's. Nothing is sent for it itself; its steps
    /// are tool calls, each decided on its own.
    Pipeline,
}

impl RequestKind {
    /// The word used in rules, the audit log and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
            Self::Completion => "completion",
            Self::Pipeline => "pipeline",
        }
    }
}

/// What the server claims about a tool, read from its annotations struct. Claims relax
/// nothing unless the person marked the server trusted (TD-01).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Claims {
    /// `readOnlyHint: true`.
    pub read_only: bool,
    /// `openWorldHint: true`: it reaches outside (the trifecta's exfiltration leg).
    pub open_world: bool,
}

/// A request to decide on.
#[derive(Clone, Debug)]
pub struct Call<'a> {
    /// The server it goes to.
    pub server: &'a ServerId,
    /// Tool call, resource read, prompt get or completion.
    pub kind: RequestKind,
    /// The tool's or prompt's name, or the resource's URI.
    pub name: &'a str,
    /// Who wants it.
    pub origin: &'a Origin,
    /// The arguments, validated against the schema (a read's are `{"uri": ...}`, a prompt's
    /// its string arguments, a completion's `{argument: value}`).
    pub arguments: &'a Map<String, Value>,
    /// What the server claims about the tool (nothing for other kinds).
    pub claims: Claims,
}

/// What a conversation has done so far, for the lethal-trifecta guard (AP-04).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// A tool of a server tagged as holding private data returned something.
    pub private_read: bool,
    /// A tool of a server tagged as bringing untrusted content (or claiming an open world)
    /// returned something.
    pub untrusted_ingested: bool,
}

/// What the host knows around the call.
#[derive(Clone, Debug, Default)]
pub struct Context<'a> {
    /// The person marked the server trusted (its claims may relax friction).
    pub trusted_server: bool,
    /// The digest of the tool's current definition (grants are bound to it).
    pub tool_digest: Option<&'a str>,
    /// Calls each limited rule already allowed in its window.
    pub counts: HashMap<String, u32>,
    /// The conversation's data flow so far.
    pub flow: Flow,
    /// The tool can send data out (server tagged external, or claims an open world).
    pub can_exfiltrate: bool,
    /// The home directory, for `~` in paths.
    pub home: Option<&'a Path>,
}

/// The rules in force, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// User rules and grants.
    pub rules: Vec<Rule>,
}

/// Why a request may go ahead without asking anyone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "by", content = "id", rename_all = "snake_case")]
pub enum AllowedBy {
    /// A rule the person wrote.
    Rule(String),
    /// A grant the person gave from an approval prompt.
    Grant(String),
    /// Nothing matched and the kind's default allows: a person's own read, prompt get or
    /// completion (tool calls default to asking, AP-01).
    Default,
}

impl AllowedBy {
    /// The rule's or grant's id, if one allowed it.
    pub fn id(&self) -> Option<&str> {
        match self {
            Self::Rule(id) | Self::Grant(id) => Some(id),
            Self::Default => None,
        }
    }
}

/// The verdict for one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Decision {
    /// Run it, because of this rule or grant, or the kind's default.
    Allow {
        /// What allowed it.
        by: AllowedBy,
    },
    /// Ask the person.
    Ask {
        /// Why it asks (shown in the prompt).
        reason: String,
        /// A warning to show prominently (the trifecta guard).
        warning: Option<String>,
        /// The rule that asked, if one did.
        rule: Option<String>,
    },
    /// Refuse.
    Deny {
        /// Why (told to the model).
        reason: String,
        /// The rule that denied.
        rule: Option<String>,
    },
}

/// Whether a rule applies to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Applies {
    Yes,
    No,
    /// A condition could not be evaluated (missing argument, relative path, SQL that does not
    /// parse): counts as a match for deny and ask rules, not for allow rules.
    Unknown,
}

const TRIFECTA: &str = "This conversation has read private data and taken in untrusted \
content, and this tool can send data out: a prompt injection could use it to leak what was \
read. It is asked about even though a rule or grant allows it.";

/// Decides what happens to `call` under `policy` in `ctx`.
pub fn decide(policy: &Policy, call: &Call<'_>, ctx: &Context<'_>) -> Decision {
    let matched: Vec<(&Rule, Applies)> = policy
        .rules
        .iter()
        .map(|r| (r, applies(r, call, ctx)))
        .filter(|(_, a)| *a != Applies::No)
        .collect();
    let trifecta = ctx.flow.private_read && ctx.flow.untrusted_ingested && ctx.can_exfiltrate;
    if let Some((r, a)) = matched.iter().find(|(r, _)| r.effect == Effect::Deny) {
        let how = if *a == Applies::Unknown {
            " (its conditions could not be checked on these arguments, so it denies)"
        } else {
            ""
        };
        return Decision::Deny {
            reason: format!("the policy rule {:?} denies this call{how}", r.id),
            rule: Some(r.id.clone()),
        };
    }
    let allows: Vec<&Rule> = matched
        .iter()
        .filter(|(r, a)| r.effect == Effect::Allow && *a == Applies::Yes)
        .map(|(r, _)| *r)
        .collect();
    let within = |r: &&&Rule| {
        r.limit
            .is_none_or(|l| ctx.counts.get(&r.id).copied().unwrap_or(0) < l.max)
    };
    let usable = allows.iter().find(within);
    if let (None, Some(r)) = (usable, allows.first()) {
        let limit = r
            .limit
            .map(|l| format!(" allows at most {} such calls per {}", l.max, l.per.word()))
            .unwrap_or_default();
        return Decision::Deny {
            reason: format!(
                "the policy rule {:?}{limit}, and that many were already made",
                r.id
            ),
            rule: Some(r.id.clone()),
        };
    }
    let warning = trifecta.then(|| TRIFECTA.to_owned());
    if let Some((r, _)) = matched.iter().find(|(r, _)| r.effect == Effect::Ask) {
        return Decision::Ask {
            reason: match &r.note {
                Some(n) => format!("the policy rule {:?} asks: {n}", r.id),
                None => format!("the policy rule {:?} asks about this call", r.id),
            },
            warning,
            rule: Some(r.id.clone()),
        };
    }
    match usable {
        Some(r) if trifecta => Decision::Ask {
            reason: format!("{:?} would allow it, but the trifecta guard asks", r.id),
            warning,
            rule: Some(r.id.clone()),
        },
        Some(r) => Decision::Allow {
            by: match r.source {
                Source::Grant { .. } => AllowedBy::Grant(r.id.clone()),
                Source::User => AllowedBy::Rule(r.id.clone()),
            },
        },
        // A person's own read, prompt or completion: they asked for it by hand, it changes
        // nothing at the server, and its result is theirs to look at.
        None if !matches!(call.kind, RequestKind::Tool | RequestKind::Pipeline)
            && call.origin.is_person() =>
        {
            Decision::Allow {
                by: AllowedBy::Default,
            }
        }
        None => Decision::Ask {
            reason: format!(
                "no rule or grant allows this {}, so it is asked about",
                match call.kind {
                    RequestKind::Tool => "call",
                    RequestKind::Resource => "read",
                    RequestKind::Prompt => "prompt",
                    RequestKind::Completion => "completion",
                    RequestKind::Pipeline => "pipeline",
                }
            ),
            warning,
            rule: None,
        },
    }
}

fn applies(rule: &Rule, call: &Call<'_>, ctx: &Context<'_>) -> Applies {
    if !rule.on.covers(call.kind)
        || !glob(&rule.server, call.server.as_str())
        || !glob(&rule.tool, call.name)
    {
        return Applies::No;
    }
    if !super::app::origin_applies(rule, call.origin) {
        return Applies::No;
    }
    if let Source::Grant {
        conversation,
        tool_digest,
        agent,
        app,
    } = &rule.source
    {
        // Answered to one app: it covers that app's calls only; a grant answered to the person
        // or a model covers no app (AP-10).
        if app.as_deref() != call.origin.app().map(|a| a.uri.as_str()) {
            return Applies::No;
        }
        if conversation
            .as_ref()
            .is_some_and(|c| Some(c) != call.origin.conversation())
        {
            return Applies::No;
        }
        // Granted to one agent: another agent's call, or a plain model's, is not covered; a
        // grant answered to the plain model (or the person) covers no agent either, so a grant
        // made before grants named their agent widens nothing for agents.
        if agent.as_deref() != call.origin.acting().map(|x| x.agent.as_str()) {
            return Applies::No;
        }
        // Bound to the definition it was granted for: a changed tool voids it (AP-02).
        if ctx.tool_digest != Some(tool_digest.as_str()) {
            return Applies::No;
        }
    }
    let mut out = Applies::Yes;
    for c in &rule.when {
        match condition(c, call, ctx) {
            Applies::No => return Applies::No,
            Applies::Unknown => out = Applies::Unknown,
            Applies::Yes => {}
        }
    }
    out
}

/// Whether a call counts as writing, as `Condition::Writes` judges it: anything but a tool a
/// trusted server claims is read-only (claims relax nothing on an untrusted server, TD-01).
pub fn writes(claims: Claims, trusted_server: bool) -> bool {
    !(trusted_server && claims.read_only)
}

fn condition(c: &Condition, call: &Call<'_>, ctx: &Context<'_>) -> Applies {
    let trusted_read_only = ctx.trusted_server && call.claims.read_only;
    match c {
        Condition::ReadOnlyHint => yes(trusted_read_only),
        Condition::Writes => yes(!trusted_read_only),
        Condition::PathUnder { arg, prefixes } => {
            let values = match values(call.arguments, arg.as_deref(), looks_like_path) {
                Values::Absent => return Applies::No,
                Values::Unreadable => return Applies::Unknown,
                Values::Found(v) => v,
            };
            let prefixes: Vec<Option<PathBuf>> =
                prefixes.iter().map(|p| normalize(p, ctx.home)).collect();
            all(values.iter().map(|v| match normalize(v, ctx.home) {
                Some(p) => yes(prefixes.iter().flatten().any(|pre| p.starts_with(pre))),
                None => Applies::Unknown,
            }))
        }
        Condition::DomainIn { arg, domains } => {
            let values = match values(call.arguments, arg.as_deref(), looks_like_url) {
                Values::Absent => return Applies::No,
                Values::Unreadable => return Applies::Unknown,
                Values::Found(v) => v,
            };
            all(values.iter().map(|v| match host_of(v) {
                Some(host) => yes(domains.iter().any(|d| {
                    let d = d.trim_start_matches('.').to_ascii_lowercase();
                    host == d || host.ends_with(&format!(".{d}"))
                })),
                None => Applies::Unknown,
            }))
        }
        Condition::SqlOnly { arg, operations } => match call.arguments.get(arg) {
            Some(Value::String(sql)) => match sql_kinds(sql) {
                Some(kinds) => yes(kinds.iter().all(|k| operations.iter().any(|o| o == k))),
                None => Applies::Unknown,
            },
            None => Applies::No,
            Some(_) => Applies::Unknown,
        },
        Condition::Matches { arg, pattern } => {
            let text = match call.arguments.get(arg) {
                Some(Value::String(s)) => s.clone(),
                Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
                None => return Applies::No,
                Some(_) => return Applies::Unknown,
            };
            match whole_match(pattern) {
                Ok(re) => yes(re.is_match(&text)),
                Err(_) => Applies::Unknown,
            }
        }
    }
}

fn yes(b: bool) -> Applies {
    if b {
        Applies::Yes
    } else {
        Applies::No
    }
}

/// No if any is no; else unknown if any is unknown; else yes (vacuously for none).
fn all(items: impl Iterator<Item = Applies>) -> Applies {
    let mut out = Applies::Yes;
    for a in items {
        match a {
            Applies::No => return Applies::No,
            Applies::Unknown => out = Applies::Unknown,
            Applies::Yes => {}
        }
    }
    out
}

/// The string values a condition checks.
enum Values {
    /// The named argument is not there: the condition does not hold (for any effect).
    Absent,
    /// The named argument is there but not a string or list of strings: unknowable.
    Unreadable,
    /// The values (possibly none, for "every path-like argument").
    Found(Vec<String>),
}

/// The named argument's string values, or every string in the arguments that `looks` right.
fn values(args: &Map<String, Value>, arg: Option<&str>, looks: fn(&str, &str) -> bool) -> Values {
    match arg {
        Some(name) => match args.get(name) {
            None => Values::Absent,
            Some(Value::String(s)) => Values::Found(vec![s.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map_or(Values::Unreadable, Values::Found),
            Some(_) => Values::Unreadable,
        },
        None => {
            let mut out = Vec::new();
            collect(args, "", looks, &mut out, 0);
            Values::Found(out)
        }
    }
}

fn collect(
    map: &Map<String, Value>,
    _parent: &str,
    looks: fn(&str, &str) -> bool,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    for (k, v) in map {
        match v {
            Value::String(s) if looks(k, s) => out.push(s.clone()),
            Value::Array(items) => {
                for i in items {
                    match i {
                        Value::String(s) if looks(k, s) => out.push(s.clone()),
                        Value::Object(m) => collect(m, k, looks, out, depth + 1),
                        _ => {}
                    }
                }
            }
            Value::Object(m) => collect(m, k, looks, out, depth + 1),
            _ => {}
        }
    }
}

const PATH_KEYS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filepath",
    "file_path",
    "dir",
    "directory",
    "folder",
    "source",
    "destination",
    "target",
    "cwd",
    "root",
];

pub(super) fn looks_like_path(key: &str, value: &str) -> bool {
    let key = key.to_ascii_lowercase();
    value.starts_with('/')
        || value.starts_with("~/")
        || value == "~"
        || value.starts_with("file://")
        || PATH_KEYS.contains(&key.as_str())
        || key.ends_with("_path")
        || key.ends_with("path")
}

pub(super) fn looks_like_url(key: &str, value: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let v = value.trim_start().to_ascii_lowercase();
    v.starts_with("http://")
        || v.starts_with("https://")
        || matches!(key.as_str(), "url" | "uri" | "href" | "endpoint" | "link")
}

/// An absolute, lexically normalised path (`~` expanded, `file://` removed, `.` and `..`
/// resolved); `None` for a relative path (its base is unknowable here).
pub(super) fn normalize(raw: &str, home: Option<&Path>) -> Option<PathBuf> {
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    let expanded = if raw == "~" {
        home?.to_path_buf()
    } else if let Some(rest) = raw.strip_prefix("~/") {
        home?.join(rest)
    } else {
        PathBuf::from(raw)
    };
    if !expanded.is_absolute() {
        return None;
    }
    let mut out = PathBuf::new();
    for c in expanded.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out)
}

/// The lowercase host of an http(s) URL.
pub(super) fn host_of(raw: &str) -> Option<String> {
    let u = url::Url::parse(raw.trim()).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    u.host_str()
        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
}

/// The kinds of the statements in `sql` (`select`, `insert`, ...); `None` when it does not
/// parse.
pub(super) fn sql_kinds(sql: &str) -> Option<Vec<String>> {
    use sqlparser::ast::Statement;
    let statements =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::GenericDialect {}, sql).ok()?;
    if statements.is_empty() {
        return None;
    }
    Some(
        statements
            .iter()
            .map(|s| match s {
                Statement::Query(_) => "select".to_owned(),
                other => {
                    let text = other.to_string();
                    let word = text
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_ascii_lowercase();
                    if super::rules::SQL_KINDS.contains(&word.as_str()) {
                        word
                    } else {
                        "other".to_owned()
                    }
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod app_tests;
