//! Outbound redaction (issue 16, point 5): secrets and personal data in what goes to a cloud
//! model are replaced by placeholders, and put back locally in the model's tool calls.
//!
//! # Where it sits
//! At the provider boundary: [`Redacting`] wraps the real [`Provider`] and rewrites every
//! request of a turn (the system prompt, the person's messages, attachments' text, tool calls
//! and tool results, summaries asked for by compaction) before it leaves; [`Restoring`] wraps
//! the turn's [`crate::chat::ToolRunner`] and puts the real values back into a call's arguments
//! before the call reaches the governed seam, which then asks about, audits and sends the real
//! values (they are the person's own, going to the person's own servers). A server's sampling
//! request goes through the same door (`host/requests.rs`), and the placeholders in the
//! model's answer are put back before the person and the server see it. What each turn had
//! redacted is kept as kinds and counts (`store::TurnRedaction`).
//! docs/redaction.md says all of it for people.
//!
//! # Placeholders without a stored map
//! Nothing maps placeholders to values on disk, in logs or in the web view: the map is
//! rebuilt from the outbound request itself, every time. The request's text is scanned in
//! order (system prompt, then each message) and each distinct value is numbered by its first
//! appearance within its kind: `[REDACTED_EMAIL_1]`, `[REDACTED_API_KEY_2]`. The transcript
//! only ever grows at its end, so a value keeps its number from one request to the next and
//! from one turn to the next, with nothing kept in between (a placeholder the model repeats in
//! its answers is that same numbering). A placeholder in the system prompt comes from a
//! compaction summary stored before answers were unmasked (`unmask`): it reserves its number,
//! so a new value never takes it. The form is upper case in brackets with a
//! `REDACTED_` prefix: models copy such tokens verbatim, and it does not occur in ordinary text.
//! Summaries written now are unmasked like any answer, so they hold the values and are
//! redacted again with the rest; in an older summary that still names a placeholder, a value
//! whose first appearance was summarized away may get a new number, and the old one no longer
//! resolves (it stays literal).
//!
//! # What is not redacted
//! Tool definitions (they are the servers', and rewriting schemas would break calls) and
//! images. A local runtime ([`LOCAL_PROFILES`]) whose base URL is on this machine or on an
//! address the person marked local is exempt ([`exempt`], RD-02).
//!
//! # The answer, back on this machine
//! The placeholders the model writes in its answer text are put back as the answer streams
//! (`unmask`), so the person reads, and the conversation keeps, the real values; the next
//! request redacts them again, with the same numbers.

pub mod config;
mod detect;
mod provider;
mod rewrite;
mod runner;
mod unmask;

use std::collections::BTreeMap;

use regex::Regex;
use serde::{Deserialize, Serialize};

pub use config::{RedactionConfigError, RedactionSettings};
pub use detect::{find, luhn, Span};
pub use provider::{Redacting, Session};
pub use rewrite::{redact_request, restore_arguments, restore_text, Restored, Source, Vault};
pub use runner::{restored_in_this_call, with_restored_note, Restoring, RESTORED_LINE};

/// Profiles of model runtimes a person runs themselves. The same list as `llm::limits`'
/// (private there).
pub const LOCAL_PROFILES: &[&str] = &["ollama", "lmstudio", "vllm"];

/// Whether requests to a provider of `profile_id` at `base_url` go out unredacted because the
/// model runs where nothing leaves the person's hands (RD-02). Both must hold:
/// - the endpoint is local ([`crate::llm::locality`]): a loopback address, or one in
///   `local_hosts`, the addresses the person marked local. The kind alone never exempts: an
///   `ollama` provider at another machine's address is a cloud model to us;
/// - the kind is a local runtime ([`LOCAL_PROFILES`]). A cloud kind on loopback is most often
///   a proxy forwarding to its vendor, so it stays redacted.
///
/// A provider without a base URL (none configured, none by default) is not exempt.
pub fn exempt(profile_id: &str, base_url: Option<&str>, local_hosts: &[String]) -> bool {
    LOCAL_PROFILES.contains(&profile_id)
        && base_url.is_some_and(|u| crate::llm::locality::locality(u, local_hosts).is_local())
}

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A PEM private key block.
    PrivateKey,
    /// A JSON Web Token.
    Jwt,
    /// An API key or bearer token of a known shape.
    ApiKey,
    /// The password part of `scheme://user:password@host`.
    UrlPassword,
    /// An e-mail address.
    Email,
    /// A card number passing the Luhn check.
    Card,
    /// A phone number.
    Phone,
    /// A pattern the person added.
    Custom,
}

impl Kind {
    /// Every kind, in detector priority order.
    pub const ALL: [Kind; 8] = [
        Kind::PrivateKey,
        Kind::Jwt,
        Kind::ApiKey,
        Kind::UrlPassword,
        Kind::Email,
        Kind::Card,
        Kind::Phone,
        Kind::Custom,
    ];

    /// The stable id (`api_key`), as serialized.
    pub fn id(self) -> &'static str {
        match self {
            Kind::PrivateKey => "private_key",
            Kind::Jwt => "jwt",
            Kind::ApiKey => "api_key",
            Kind::UrlPassword => "url_password",
            Kind::Email => "email",
            Kind::Card => "card",
            Kind::Phone => "phone",
            Kind::Custom => "custom",
        }
    }

    /// The tag inside a placeholder (`API_KEY`).
    fn tag(self) -> &'static str {
        match self {
            Kind::PrivateKey => "PRIVATE_KEY",
            Kind::Jwt => "JWT",
            Kind::ApiKey => "API_KEY",
            Kind::UrlPassword => "URL_PASSWORD",
            Kind::Email => "EMAIL",
            Kind::Card => "CARD",
            Kind::Phone => "PHONE",
            Kind::Custom => "CUSTOM",
        }
    }

    /// The kind with stable id `id` (as [`Kind::id`] gives it).
    pub fn from_id(id: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.id() == id)
    }

    fn from_tag(tag: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.tag() == tag)
    }

    /// How a person reads `count` of them: "1 API key", "2 e-mail addresses".
    pub fn describe(self, count: u32) -> String {
        let (one, many) = match self {
            Kind::PrivateKey => ("private key", "private keys"),
            Kind::Jwt => ("JWT", "JWTs"),
            Kind::ApiKey => ("API key", "API keys"),
            Kind::UrlPassword => ("password in a URL", "passwords in URLs"),
            Kind::Email => ("e-mail address", "e-mail addresses"),
            Kind::Card => ("card number", "card numbers"),
            Kind::Phone => ("phone number", "phone numbers"),
            Kind::Custom => ("custom match", "custom matches"),
        };
        format!("{count} {}", if count == 1 { one } else { many })
    }
}

/// The placeholder for the `n`th value of `kind`.
pub fn placeholder(kind: Kind, n: u32) -> String {
    format!("[REDACTED_{}_{n}]", kind.tag())
}

/// Every placeholder in `text`, with its kind and number.
pub(crate) fn placeholders_in(text: &str) -> Vec<(std::ops::Range<usize>, Kind, u32)> {
    static RE: std::sync::LazyLock<Option<Regex>> =
        std::sync::LazyLock::new(|| Regex::new(r"\[REDACTED_([A-Z_]+?)_(\d{1,6})\]").ok());
    let Some(re) = RE.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let kind = Kind::from_tag(c.get(1)?.as_str())?;
            let n = c.get(2)?.as_str().parse().ok()?;
            Some((whole.range(), kind, n))
        })
        .collect()
}

/// What to redact: the person's extra patterns (built-ins always apply).
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// Compiled custom patterns.
    pub custom: Vec<Regex>,
}

impl Rules {
    /// Rules with the person's patterns; a pattern that does not compile is skipped and named
    /// in the returned list (settings validation refuses them, so this is a file edited by
    /// hand).
    pub fn new(patterns: &[String]) -> (Self, Vec<String>) {
        let mut custom = Vec::new();
        let mut bad = Vec::new();
        for p in patterns {
            match Regex::new(p) {
                Ok(re) => custom.push(re),
                Err(_) => bad.push(p.clone()),
            }
        }
        (Self { custom }, bad)
    }
}

/// How many distinct values of each kind a request carried.
pub type Counts = BTreeMap<Kind, u32>;

/// "2 e-mail addresses, 1 API key", or `None` for nothing.
pub fn describe(counts: &Counts) -> Option<String> {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| k.describe(*n))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}
