//! Vendors as data: each profile is a base URL, an auth style, whether a key is required, a
//! few known model ids and quirk flags over one of two wire implementations.
//!
//! Adding an OpenAI-compatible vendor is a new row in [`PROFILES`], never a new module. The
//! table is Rust rather than embedded JSON so a typo is a compile error, not a runtime one.
//! The `custom` profile covers any other compatible server; its base URL comes from the user.
//! Quirks are flags because vendors differ in small, nameable ways: LM Studio ignores
//! `stream_options` and never sends usage while streaming; OpenAI's newer models refuse
//! `max_tokens` in favour of `max_completion_tokens`; small local models call tools more
//! reliably from a prompt convention than through a native `tools` field they were not
//! trained on.

use serde::Serialize;

use super::anthropic::AnthropicProvider;
use super::http::Endpoint;
use super::openai::OpenAiProvider;
use super::prompt_tools::PromptToolProvider;
use super::provider::{Provider, RetryPolicy};
use crate::redact::Secret;

/// Which wire format a profile speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
}

/// How the API key is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthStyle {
    /// `Authorization: Bearer <key>` (sent only when a key is given).
    Bearer,
    /// `x-api-key: <key>`.
    XApiKey,
    /// Never sent.
    None,
}

/// How tools reach the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    /// The vendor's own tool-calling fields.
    Native,
    /// Described in the system prompt and parsed from text ([`super::prompt_tools`]).
    Prompt,
}

/// The OpenAI request field carrying the output limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_tokens` (most compatible servers).
    MaxTokens,
    /// `max_completion_tokens` (OpenAI; its reasoning models reject `max_tokens`).
    MaxCompletionTokens,
}

/// Small ways a vendor departs from its wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Quirks {
    /// Whether `stream_options: {include_usage: true}` may be sent.
    pub stream_usage: bool,
    /// How tools are offered.
    pub tool_mode: ToolMode,
    /// Which field carries the output limit (OpenAI wire only).
    pub max_tokens_field: MaxTokensField,
}

const OPENAI_QUIRKS: Quirks = Quirks {
    stream_usage: true,
    tool_mode: ToolMode::Native,
    max_tokens_field: MaxTokensField::MaxTokens,
};

/// One vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// Stable id used in settings (`openai`, `ollama`, ...).
    pub id: &'static str,
    /// The name shown to people.
    pub name: &'static str,
    /// The wire format.
    pub wire: Wire,
    /// The default base URL; `None` when the user must give one.
    pub base_url: Option<&'static str>,
    /// How the key is sent.
    pub auth: AuthStyle,
    /// Whether a request without a key is pointless.
    pub key_required: bool,
    /// A few model ids known to work, for suggestions (any id may be used).
    pub models: &'static [&'static str],
    /// Departures from the wire format.
    pub quirks: Quirks,
}

/// Every known profile.
pub const PROFILES: &[Profile] = &[
    Profile {
        id: "openai",
        name: "OpenAI",
        wire: Wire::OpenAi,
        base_url: Some("https://api.openai.com/v1"),
        auth: AuthStyle::Bearer,
        key_required: true,
        models: &[
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4o",
            "gpt-4o-mini",
            "o4-mini",
        ],
        quirks: Quirks {
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            ..OPENAI_QUIRKS
        },
    },
    Profile {
        id: "anthropic",
        name: "Anthropic",
        wire: Wire::Anthropic,
        base_url: Some("https://api.anthropic.com"),
        auth: AuthStyle::XApiKey,
        key_required: true,
        models: &[
            "claude-sonnet-4-5",
            "claude-opus-4-1",
            "claude-3-5-haiku-latest",
        ],
        quirks: OPENAI_QUIRKS,
    },
    Profile {
        id: "ollama",
        name: "Ollama",
        wire: Wire::OpenAi,
        base_url: Some("http://127.0.0.1:11434/v1"),
        auth: AuthStyle::Bearer,
        key_required: false,
        models: &["llama3.1", "qwen2.5", "mistral-nemo"],
        quirks: OPENAI_QUIRKS,
    },
    Profile {
        id: "lmstudio",
        name: "LM Studio",
        wire: Wire::OpenAi,
        base_url: Some("http://127.0.0.1:1234/v1"),
        auth: AuthStyle::Bearer,
        key_required: false,
        models: &["qwen2.5-7b-instruct", "llama-3.2-3b-instruct"],
        quirks: Quirks {
            stream_usage: false,
            ..OPENAI_QUIRKS
        },
    },
    Profile {
        id: "vllm",
        name: "vLLM",
        wire: Wire::OpenAi,
        base_url: Some("http://127.0.0.1:8000/v1"),
        auth: AuthStyle::Bearer,
        key_required: false,
        models: &[],
        quirks: OPENAI_QUIRKS,
    },
    Profile {
        id: "openrouter",
        name: "OpenRouter",
        wire: Wire::OpenAi,
        base_url: Some("https://openrouter.ai/api/v1"),
        auth: AuthStyle::Bearer,
        key_required: true,
        models: &[
            "openai/gpt-4o",
            "anthropic/claude-sonnet-4.5",
            "meta-llama/llama-3.3-70b-instruct",
        ],
        quirks: OPENAI_QUIRKS,
    },
    Profile {
        id: "deepseek",
        name: "DeepSeek",
        wire: Wire::OpenAi,
        base_url: Some("https://api.deepseek.com/v1"),
        auth: AuthStyle::Bearer,
        key_required: true,
        models: &["deepseek-chat", "deepseek-reasoner"],
        quirks: OPENAI_QUIRKS,
    },
    Profile {
        id: "custom",
        name: "Custom (OpenAI-compatible)",
        wire: Wire::OpenAi,
        base_url: None,
        auth: AuthStyle::Bearer,
        key_required: false,
        models: &[],
        quirks: OPENAI_QUIRKS,
    },
];

/// The profile with this id.
pub fn profile(id: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.id == id)
}

/// Why a provider could not be built from a profile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The profile has no default base URL and none was given.
    #[error("the {profile} provider needs a base URL")]
    MissingBaseUrl {
        /// The profile id.
        profile: &'static str,
    },
    /// The base URL does not parse or is not http(s).
    #[error("the base URL for {profile} is invalid: {reason}")]
    InvalidBaseUrl {
        /// The profile id.
        profile: &'static str,
        /// Why.
        reason: String,
    },
    /// The vendor requires a key and none was given.
    #[error("the {profile} provider needs an API key")]
    MissingKey {
        /// The profile id.
        profile: &'static str,
    },
    /// The key holds characters an HTTP header cannot carry (a pasted newline, usually).
    #[error("the API key for {profile} contains characters that cannot be sent in a header")]
    InvalidKey {
        /// The profile id.
        profile: &'static str,
    },
}

/// Everything needed to build a provider; [`ProviderConfig::new`] gives the defaults.
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    /// The vendor (copy and adjust a table row to change a quirk).
    pub profile: Profile,
    /// Overrides the profile's base URL.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<Secret>,
    /// Retries before the first streamed byte.
    pub retry: RetryPolicy,
}

impl ProviderConfig {
    /// A config for `profile` with no override, no key and the default retry policy.
    pub fn new(profile: &Profile) -> Self {
        Self {
            profile: *profile,
            base_url: None,
            api_key: None,
            retry: RetryPolicy::default(),
        }
    }

    /// Builds the provider: the profile's wire implementation, wrapped in the prompt-based
    /// tool mode when the profile asks for it.
    pub fn build(self, http: reqwest::Client) -> Result<Box<dyn Provider>, ProfileError> {
        let p = self.profile;
        let base = self
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .or(p.base_url)
            .ok_or(ProfileError::MissingBaseUrl { profile: p.id })?;
        let parsed = url::Url::parse(base).map_err(|e| ProfileError::InvalidBaseUrl {
            profile: p.id,
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ProfileError::InvalidBaseUrl {
                profile: p.id,
                reason: format!("the scheme must be http or https, not {}", parsed.scheme()),
            });
        }
        let key = self.api_key.filter(|k| !k.expose().trim().is_empty());
        if p.key_required && key.is_none() {
            return Err(ProfileError::MissingKey { profile: p.id });
        }
        let endpoint = Endpoint::new(p, base.trim_end_matches('/'), key, http, self.retry)
            .ok_or(ProfileError::InvalidKey { profile: p.id })?;
        let wire: Box<dyn Provider> = match p.wire {
            Wire::OpenAi => Box::new(OpenAiProvider::new(endpoint)),
            Wire::Anthropic => Box::new(AnthropicProvider::new(endpoint)),
        };
        Ok(match p.quirks.tool_mode {
            ToolMode::Native => wire,
            ToolMode::Prompt => Box::new(PromptToolProvider::new(wire)),
        })
    }
}

/// Builds a provider for `profile` with the default retry policy; see [`ProviderConfig`] to
/// tune retries.
pub fn build_provider(
    profile: &Profile,
    base_url_override: Option<&str>,
    api_key: Option<Secret>,
    http: reqwest::Client,
) -> Result<Box<dyn Provider>, ProfileError> {
    ProviderConfig {
        base_url: base_url_override.map(str::to_owned),
        api_key,
        ..ProviderConfig::new(profile)
    }
    .build(http)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(id: &str) -> Profile {
        *profile(id).unwrap()
    }

    #[test]
    fn table_has_the_promised_vendors_with_unique_ids() {
        let ids: Vec<_> = PROFILES.iter().map(|p| p.id).collect();
        for id in [
            "openai",
            "anthropic",
            "ollama",
            "lmstudio",
            "vllm",
            "openrouter",
            "deepseek",
            "custom",
        ] {
            assert_eq!(ids.iter().filter(|i| **i == id).count(), 1, "{id}");
        }
        assert_eq!(get("ollama").base_url, Some("http://127.0.0.1:11434/v1"));
        assert!(!get("ollama").key_required);
        assert_eq!(get("anthropic").auth, AuthStyle::XApiKey);
        assert!(!get("lmstudio").quirks.stream_usage);
        assert_eq!(get("custom").base_url, None);
        assert!(profile("nope").is_none());
    }

    #[test]
    fn building_checks_url_and_key() {
        let http = reqwest::Client::new();
        let err = |r: Result<Box<dyn Provider>, ProfileError>| r.err().unwrap();
        assert_eq!(
            err(build_provider(&get("custom"), None, None, http.clone())),
            ProfileError::MissingBaseUrl { profile: "custom" }
        );
        assert!(matches!(
            err(build_provider(
                &get("custom"),
                Some("ftp://x"),
                None,
                http.clone()
            )),
            ProfileError::InvalidBaseUrl { .. }
        ));
        assert_eq!(
            err(build_provider(&get("openai"), None, None, http.clone())),
            ProfileError::MissingKey { profile: "openai" }
        );
        assert_eq!(
            err(build_provider(
                &get("openai"),
                None,
                Some(Secret::new("  ")),
                http.clone()
            )),
            ProfileError::MissingKey { profile: "openai" }
        );
        assert_eq!(
            err(build_provider(
                &get("openai"),
                None,
                Some(Secret::new("sk-a\nb")),
                http.clone()
            )),
            ProfileError::InvalidKey { profile: "openai" }
        );
        let p = build_provider(&get("ollama"), None, None, http.clone()).unwrap();
        assert_eq!(p.profile_id(), "ollama");
        let p =
            build_provider(&get("custom"), Some("http://10.0.0.5:9000/v1/"), None, http).unwrap();
        assert_eq!(p.profile_id(), "custom");
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let p = build_provider(
            &get("anthropic"),
            None,
            Some(Secret::new("sk-ant-canary-123456789")),
            reqwest::Client::new(),
        )
        .unwrap();
        let dbg = format!("{p:?}");
        assert!(!dbg.contains("canary"), "{dbg}");
        assert!(dbg.contains("anthropic"), "{dbg}");
    }
}
