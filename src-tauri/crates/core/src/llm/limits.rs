//! What is known about a model from its id alone: its context window (for compaction) and its
//! list price (for the cost shown per conversation).
//!
//! Vendors do not report either on their chat endpoints, so this is a table of model-id
//! prefixes, longest match first. Prices are the vendors' published list prices in US dollars
//! per million tokens as last checked (2025–2026); they are an estimate shown as such, never a
//! bill. Unknown models get a conservative window and no price; a user who knows better sets
//! the window on the provider (`provider add --context-window`). Models behind a local profile
//! (Ollama, LM Studio, vLLM) cost nothing.

use serde::Serialize;

/// The window assumed for a model this table does not know: small enough for most local
/// models' default context.
pub const UNKNOWN_WINDOW: u32 = 8_192;

/// Dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Price {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
}

impl Price {
    /// What a local model costs.
    pub const FREE: Self = Self {
        input: 0.0,
        output: 0.0,
    };

    /// The cost of `input` and `output` tokens, in dollars.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input + output as f64 * self.output) / 1_000_000.0
    }
}

/// One table row: (model-id prefix, context window, list price in/out per million tokens).
type Row = (&'static str, u32, Option<(f64, f64)>);

/// The known models; order does not matter: the longest matching prefix wins.
const MODELS: &[Row] = &[
    // OpenAI
    ("gpt-5-nano", 400_000, Some((0.05, 0.40))),
    ("gpt-5-mini", 400_000, Some((0.25, 2.00))),
    ("gpt-5", 400_000, Some((1.25, 10.00))),
    ("gpt-4.1-nano", 1_047_576, Some((0.10, 0.40))),
    ("gpt-4.1-mini", 1_047_576, Some((0.40, 1.60))),
    ("gpt-4.1", 1_047_576, Some((2.00, 8.00))),
    ("gpt-4o-mini", 128_000, Some((0.15, 0.60))),
    ("gpt-4o", 128_000, Some((2.50, 10.00))),
    ("o4-mini", 200_000, Some((1.10, 4.40))),
    ("o3-mini", 200_000, Some((1.10, 4.40))),
    ("o3", 200_000, Some((2.00, 8.00))),
    // Anthropic
    ("claude-opus-4-5", 200_000, Some((5.00, 25.00))),
    ("claude-opus-4", 200_000, Some((15.00, 75.00))),
    ("claude-sonnet-4", 200_000, Some((3.00, 15.00))),
    ("claude-haiku-4-5", 200_000, Some((1.00, 5.00))),
    ("claude-3-7-sonnet", 200_000, Some((3.00, 15.00))),
    ("claude-3-5-sonnet", 200_000, Some((3.00, 15.00))),
    ("claude-3-5-haiku", 200_000, Some((0.80, 4.00))),
    // DeepSeek
    ("deepseek-chat", 128_000, Some((0.28, 0.42))),
    ("deepseek-reasoner", 128_000, Some((0.28, 0.42))),
    // Open-weight families, as served locally or by a router
    ("llama3.1", 131_072, None),
    ("llama3.2", 131_072, None),
    ("llama3.3", 131_072, None),
    ("llama-3.1", 131_072, None),
    ("llama-3.3", 131_072, None),
    ("qwen2.5", 32_768, None),
    ("qwen3", 40_960, None),
    ("mistral", 32_768, None),
    ("gemma3", 131_072, None),
];

/// Profiles whose models run on the user's own hardware.
const LOCAL_PROFILES: &[&str] = &["ollama", "lmstudio", "vllm"];

/// The table row for `model`: the id as given, or after a router's `vendor/` prefix.
fn lookup(model: &str) -> Option<&'static Row> {
    let bare = model.rsplit_once('/').map_or(model, |(_, m)| m);
    let bare = bare.to_ascii_lowercase();
    MODELS
        .iter()
        .filter(|(prefix, ..)| bare.starts_with(prefix))
        .max_by_key(|(prefix, ..)| prefix.len())
}

/// The context window of `model` in tokens: the user's setting, else the table, else
/// [`UNKNOWN_WINDOW`].
pub fn context_window(model: &str, configured: Option<u32>) -> u32 {
    configured
        .or_else(|| lookup(model).map(|(_, w, _)| *w))
        .unwrap_or(UNKNOWN_WINDOW)
}

/// The list price of `model` served through `profile`, when known.
pub fn price(profile: &str, model: &str) -> Option<Price> {
    if LOCAL_PROFILES.contains(&profile) {
        return Some(Price::FREE);
    }
    lookup(model)
        .and_then(|(_, _, p)| *p)
        .map(|(input, output)| Price { input, output })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_routers_are_unwrapped() {
        assert_eq!(context_window("gpt-4o-mini-2024-07-18", None), 128_000);
        assert_eq!(
            price("openai", "gpt-4o-mini").map(|p| p.input),
            Some(0.15),
            "not gpt-4o's price"
        );
        assert_eq!(
            price("openrouter", "anthropic/claude-sonnet-4.5").map(|p| p.output),
            Some(15.0)
        );
        assert_eq!(context_window("Meta/Llama3.1:8b", None), 131_072);
    }

    #[test]
    fn unknown_local_and_configured() {
        assert_eq!(context_window("my-own-model", None), UNKNOWN_WINDOW);
        assert_eq!(
            context_window("gpt-4.1", Some(4_000)),
            4_000,
            "the user knows"
        );
        assert_eq!(price("custom", "my-own-model"), None);
        assert_eq!(price("ollama", "gpt-4o"), Some(Price::FREE));
        let p = price("openai", "gpt-4.1").unwrap();
        assert!((p.cost(1_000_000, 500_000) - 6.0).abs() < 1e-9);
    }
}
