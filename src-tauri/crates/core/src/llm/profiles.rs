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
//!
//! This file is data only and depends on nothing else in `llm`: the wire implementations read
//! their profile's quirks, and [`super::construct`] picks the implementation for a profile, so
//! the table sits below both (it used to build providers itself, which made a ring with the
//! wire formats that read it).

use serde::Serialize;

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
}
