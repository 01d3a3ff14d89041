//! Rewriting: a request with its findings replaced by placeholders, and a tool call's
//! arguments with placeholders replaced by the values they stand for.
//!
//! The [`Vault`] is the map between the two, rebuilt from each request (see the module docs
//! of [`super`] for why nothing is stored). Its `Debug` shows counts only, so a stray `?vault`
//! in a log line leaks nothing.
//!
//! # Where each value came from (RD-01)
//! The vault also remembers every place of the request a value was seen in ([`Source`]): the
//! conversation's messages, the system prompt, the model's own words, or the result of a tool
//! the model called. A value may be put back silently only into a call to a server whose
//! result held it (that server already has it); anywhere else the seam asks the person
//! (`host::putback`). All the places count, not only the first: a server that echoed a value
//! back knows it, whoever gave it first.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

use serde_json::{Map, Value};

use super::{detect, placeholder, placeholders_in, Counts, Kind, Rules};
use crate::ids::ServerId;
use crate::llm::{ChatRequest, Message, Part, ResultPart, Role};
use crate::redact::Secret;

/// A place in a request a redacted value was seen in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A message to the model: the person's (with attachments), or an agent's task.
    Message,
    /// The system prompt: an agent's instructions or a summary of earlier turns.
    System,
    /// The model's own words: its answer text or its calls' arguments.
    Model,
    /// The result of the tool the model called by this LLM-facing name: one the runner
    /// answers itself (an agent's built-in tools) or no longer knows; a server's tool is
    /// resolved to [`Source::Server`] by [`super::Restoring`].
    Tool(String),
    /// The result of a call to this server.
    Server(ServerId),
}

impl Source {
    /// Where it came from, for a person: "a result of server notes".
    pub fn describe(&self) -> String {
        match self {
            Source::Message => "a message in the conversation".into(),
            Source::System => "the system prompt or a summary of earlier turns".into(),
            Source::Model => "the model's own words".into(),
            Source::Tool(name) => format!(
                "a result of tool {}",
                crate::escape::short_for_display(name, 80)
            ),
            Source::Server(server) => format!("a result of server {server}"),
        }
    }
}

/// Placeholders and the values they stand for, for one request (kept in memory for the turn).
#[derive(Clone, Default)]
pub struct Vault {
    by_value: HashMap<(Kind, String), String>,
    by_placeholder: HashMap<String, String>,
    next: HashMap<Kind, u32>,
    reserved: HashSet<(Kind, u32)>,
    counts: Counts,
    /// By placeholder: every place its value was seen in.
    sources: HashMap<String, BTreeSet<Source>>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Vault({:?})", self.counts)
    }
}

impl Vault {
    /// The placeholder of `value`, numbering it when it is new; `source` is where it was seen.
    fn placeholder_for(&mut self, kind: Kind, value: &str, source: &Source) -> String {
        let p = self.number(kind, value);
        self.sources
            .entry(p.clone())
            .or_default()
            .insert(source.clone());
        p
    }

    /// Every place the value of `placeholder` was seen in, when this request defined it.
    pub fn sources_of(&self, placeholder: &str) -> Vec<Source> {
        self.sources
            .get(placeholder)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn number(&mut self, kind: Kind, value: &str) -> String {
        if let Some(p) = self.by_value.get(&(kind, value.to_owned())) {
            return p.clone();
        }
        let n = self.next.entry(kind).or_insert(0);
        loop {
            *n += 1;
            if !self.reserved.contains(&(kind, *n)) {
                break;
            }
        }
        let p = placeholder(kind, *n);
        self.by_value.insert((kind, value.to_owned()), p.clone());
        self.by_placeholder.insert(p.clone(), value.to_owned());
        *self.counts.entry(kind).or_insert(0) += 1;
        p
    }

    /// The value `placeholder` stands for, when this request defined it.
    pub fn value_of(&self, placeholder: &str) -> Option<&str> {
        self.by_placeholder.get(placeholder).map(String::as_str)
    }

    /// How many distinct values of each kind were replaced.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Whether nothing was replaced.
    pub fn is_empty(&self) -> bool {
        self.by_placeholder.is_empty()
    }

    /// `text` (seen in `source`) with every finding replaced.
    fn redact(&mut self, text: &str, rules: &Rules, source: &Source) -> String {
        let spans = detect::find(text, &rules.custom);
        if spans.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for s in spans {
            out.push_str(&text[at..s.start]);
            out.push_str(&self.placeholder_for(s.kind, &text[s.start..s.end], source));
            at = s.end;
        }
        out.push_str(&text[at..]);
        out
    }

    fn redact_json(&mut self, v: &Value, rules: &Rules, source: &Source) -> Value {
        match v {
            Value::String(s) => Value::String(self.redact(s, rules, source)),
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|x| self.redact_json(x, rules, source))
                    .collect(),
            ),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), self.redact_json(x, rules, source)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn reserve(&mut self, text: &str) {
        for (_, kind, n) in placeholders_in(text) {
            self.reserved.insert((kind, n));
        }
    }

    /// `text` with every placeholder this vault defines replaced by its value, and the
    /// placeholders replaced.
    fn restore(&self, text: &str, restored: &mut Vec<String>) -> String {
        let found = placeholders_in(text);
        if found.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, _, _) in found {
            let p = &text[range.clone()];
            let Some(value) = self.value_of(p) else {
                continue;
            };
            out.push_str(&text[at..range.start]);
            out.push_str(value);
            at = range.end;
            if !restored.iter().any(|r| r == p) {
                restored.push(p.to_owned());
            }
        }
        out.push_str(&text[at..]);
        out
    }

    /// `v` restored; `at` is where `v` sits in the arguments (`to[0]`, `mail.subject`).
    fn restore_json(&self, v: &Value, at: &str, restored: &mut Vec<Restored>) -> Value {
        match v {
            Value::String(s) => {
                let mut found = Vec::new();
                let out = self.restore(s, &mut found);
                for placeholder in found {
                    let r = Restored {
                        kind: placeholders_in(&placeholder)
                            .first()
                            .map_or(Kind::Custom, |(_, k, _)| *k),
                        digest: self.value_of(&placeholder).map(digest).unwrap_or_default(),
                        value: Secret::new(self.value_of(&placeholder).unwrap_or_default()),
                        sources: self.sources_of(&placeholder),
                        placeholder,
                        at: at.to_owned(),
                    };
                    if !restored.contains(&r) {
                        restored.push(r);
                    }
                }
                Value::String(out)
            }
            Value::Array(a) => Value::Array(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| self.restore_json(x, &format!("{at}[{i}]"), restored))
                    .collect(),
            ),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let at = if at.is_empty() {
                            k.clone()
                        } else {
                            format!("{at}.{k}")
                        };
                        (k.clone(), self.restore_json(x, &at, restored))
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// `req` with every finding replaced by its placeholder, and the vault that maps them back.
/// Tool definitions and images are sent as they are (see the module docs of [`super`]).
pub fn redact_request(req: &ChatRequest, rules: &Rules) -> (ChatRequest, Vault) {
    let mut vault = Vault::default();
    // Placeholders in the system prompt come from a compaction summary, numbered in the
    // summary's own request: their numbers are not reused for other values. Placeholders in
    // messages are the model repeating this numbering, so they reserve nothing.
    if let Some(s) = &req.system {
        vault.reserve(s);
    }
    let system = req
        .system
        .as_ref()
        .map(|s| vault.redact(s, rules, &Source::System));
    // A result's source is the tool its call named; calls come before their results.
    let mut called: HashMap<&str, &str> = HashMap::new();
    let messages = req
        .messages
        .iter()
        .map(|m| Message {
            role: m.role,
            parts: m
                .parts
                .iter()
                .map(|p| match p {
                    Part::Text { text } => Part::Text {
                        text: vault.redact(text, rules, &text_source(m.role)),
                    },
                    Part::ToolCall {
                        id,
                        name,
                        arguments,
                    } => {
                        called.insert(id.as_str(), name.as_str());
                        Part::ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments: vault.redact_json(arguments, rules, &Source::Model),
                        }
                    }
                    Part::ToolResult {
                        call_id,
                        content,
                        is_error,
                    } => {
                        // A result whose call is not in the request (cut by compaction) has
                        // no known server: it counts as the model's, which no server is.
                        let source = called
                            .get(call_id.as_str())
                            .map_or(Source::Model, |n| Source::Tool((*n).to_owned()));
                        Part::ToolResult {
                            call_id: call_id.clone(),
                            content: content
                                .iter()
                                .map(|c| match c {
                                    ResultPart::Text { text } => ResultPart::Text {
                                        text: vault.redact(text, rules, &source),
                                    },
                                    other => other.clone(),
                                })
                                .collect(),
                            is_error: *is_error,
                        }
                    }
                    other => other.clone(),
                })
                .collect(),
        })
        .collect();
    (
        ChatRequest {
            system,
            messages,
            ..req.clone()
        },
        vault,
    )
}

/// Where text of a message in `role` comes from.
fn text_source(role: Role) -> Source {
    match role {
        Role::User => Source::Message,
        _ => Source::Model,
    }
}

/// The SHA-256 of a value put back, in hex: what the audit log records of it (RD-01).
fn digest(value: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(value.as_bytes()))
}

/// A placeholder put back in a call's arguments, and where: names, the kind, the places its
/// value came from and its digest; the value itself only as a [`Secret`] (the approval
/// prompt shows it from the arguments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// The placeholder the model wrote (`[REDACTED_EMAIL_1]`).
    pub placeholder: String,
    /// The argument it was in: a key, with `.key` and `[i]` for nested ones (`to[0]`).
    pub at: String,
    /// What the value is.
    pub kind: Kind,
    /// Every place of the request its value was seen in.
    pub sources: Vec<Source>,
    /// The SHA-256 of the value, in hex.
    pub digest: String,
    /// The value, for the seam to mask it in what the audit log keeps of the call (`Debug`
    /// shows nothing of it).
    pub value: Secret,
}

/// `arguments` with every placeholder `vault` defines replaced by its value, and which
/// placeholders were replaced where, in order of appearance.
pub fn restore_arguments(
    arguments: &Map<String, Value>,
    vault: &Vault,
) -> (Map<String, Value>, Vec<Restored>) {
    let mut restored = Vec::new();
    let out = arguments
        .iter()
        .map(|(k, v)| (k.clone(), vault.restore_json(v, k, &mut restored)))
        .collect();
    (out, restored)
}

/// `text` with every placeholder `vault` defines replaced by its value, and which were (a
/// sampling answer a server gets back, see [`super::Session::restore_text`]).
pub fn restore_text(text: &str, vault: &Vault) -> (String, Vec<String>) {
    let mut restored = Vec::new();
    let out = vault.restore(text, &mut restored);
    (out, restored)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llm::Role;

    fn req(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            system: Some("be brief".into()),
            messages,
            tools: Vec::new(),
            max_tokens: None,
            temperature: None,
        }
    }

    #[test]
    fn numbering_is_stable_as_the_transcript_grows() {
        let first = vec![Message::user_text(
            "mail a@example.com and b@example.com, again a@example.com",
        )];
        let (out, vault) = redact_request(&req(first.clone()), &Rules::default());
        assert_eq!(
            out.messages[0].text(),
            "mail [REDACTED_EMAIL_1] and [REDACTED_EMAIL_2], again [REDACTED_EMAIL_1]"
        );
        assert_eq!(vault.counts().get(&Kind::Email), Some(&2));
        let mut more = first;
        more.push(Message {
            role: Role::Assistant,
            parts: vec![Part::Text {
                text: "I wrote to [REDACTED_EMAIL_2].".into(),
            }],
        });
        more.push(Message::user_text("also c@example.com and b@example.com"));
        let (out, vault) = redact_request(&req(more), &Rules::default());
        assert_eq!(
            out.messages[2].text(),
            "also [REDACTED_EMAIL_3] and [REDACTED_EMAIL_2]"
        );
        assert_eq!(vault.value_of("[REDACTED_EMAIL_3]"), Some("c@example.com"));
        assert!(!format!("{vault:?}").contains("example"));
    }

    #[test]
    fn placeholders_of_a_summary_reserve_their_numbers() {
        let mut r = req(vec![Message::user_text("new d@example.com")]);
        r.system = Some("Summary so far: wrote to [REDACTED_EMAIL_1].".into());
        let (out, _) = redact_request(&r, &Rules::default());
        assert_eq!(out.messages[0].text(), "new [REDACTED_EMAIL_2]");
    }

    /// RD-01: each placeholder keeps every place its value was seen in, a result by the
    /// tool its call named.
    #[test]
    fn each_value_remembers_where_it_was_seen() {
        let (_, vault) = redact_request(
            &req(vec![
                Message::user_text("mine is me@example.org"),
                Message {
                    role: Role::Assistant,
                    parts: vec![Part::ToolCall {
                        id: "c1".into(),
                        name: "notes__read".into(),
                        arguments: serde_json::json!({}),
                    }],
                },
                Message {
                    role: Role::User,
                    parts: vec![Part::ToolResult {
                        call_id: "c1".into(),
                        content: vec![ResultPart::Text {
                            text: "owner@example.org and me@example.org".into(),
                        }],
                        is_error: false,
                    }],
                },
            ]),
            &Rules::default(),
        );
        assert_eq!(
            vault.sources_of("[REDACTED_EMAIL_1]"),
            [Source::Message, Source::Tool("notes__read".into())]
        );
        assert_eq!(
            vault.sources_of("[REDACTED_EMAIL_2]"),
            [Source::Tool("notes__read".into())]
        );
        let args: Map<String, Value> =
            serde_json::from_value(serde_json::json!({ "to": "[REDACTED_EMAIL_2]" })).unwrap();
        let (_, restored) = restore_arguments(&args, &vault);
        assert_eq!(restored[0].kind, Kind::Email);
        assert_eq!(restored[0].value.expose(), "owner@example.org");
        assert_eq!(restored[0].digest.len(), 64);
        assert!(!format!("{restored:?}").contains("owner@"), "{restored:?}");
    }

    #[test]
    fn arguments_are_restored_and_unknown_placeholders_stay() {
        let (_, vault) = redact_request(
            &req(vec![Message::user_text("key sk-abcdefghijklmnop123456")]),
            &Rules::default(),
        );
        let args: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "auth": "Bearer [REDACTED_API_KEY_1]",
            "list": ["[REDACTED_API_KEY_1]", "[REDACTED_EMAIL_9]"],
            "n": 3
        }))
        .unwrap();
        let (out, restored) = restore_arguments(&args, &vault);
        assert_eq!(out["auth"], "Bearer sk-abcdefghijklmnop123456");
        assert_eq!(out["list"][0], "sk-abcdefghijklmnop123456");
        assert_eq!(out["list"][1], "[REDACTED_EMAIL_9]");
        assert_eq!(out["n"], 3);
        let named: Vec<(&str, &str)> = restored
            .iter()
            .map(|r| (r.placeholder.as_str(), r.at.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("[REDACTED_API_KEY_1]", "auth"),
                ("[REDACTED_API_KEY_1]", "list[0]")
            ]
        );
    }
}
