//! Native tool support known from a vendor's model family, for lists that do not say.
//!
//! OpenAI's and Anthropic's list endpoints carry ids only. What is known about their families
//! is written here as prefixes, narrowly: every Claude model on Anthropic's API takes tools;
//! OpenAI's chat families (`gpt-4*`, `gpt-5*`, `gpt-3.5-turbo`, the `o1`/`o3`/`o4` reasoning
//! models) take tools, while its embedding, audio, image and moderation models are not chat
//! models at all. Anything else (and every id on other compatible servers, where the same name
//! may be a different build) is [`ToolSupport::Unknown`]: a guess shown as fact is worse than
//! "unknown".

use super::ToolSupport;

/// OpenAI id prefixes of chat models with native tools.
const OPENAI_TOOLS: &[&str] = &[
    "gpt-4",
    "gpt-5",
    "gpt-3.5-turbo",
    "o1",
    "o3",
    "o4",
    "chatgpt-",
];
/// OpenAI id parts that mark a model that is not a tool-calling chat model.
const OPENAI_NOT_CHAT: &[&str] = &[
    "embedding",
    "whisper",
    "tts",
    "dall-e",
    "moderation",
    "davinci",
    "babbage",
    "-audio",
    "-realtime",
    "-transcribe",
    "-search-",
    "image",
    "o1-mini",
    "o1-preview",
];

/// What is known of `model`'s native tool support at the vendor behind `profile_id`.
pub fn tool_support(profile_id: &str, model: &str) -> ToolSupport {
    let m = model.to_ascii_lowercase();
    match profile_id {
        "anthropic" if m.starts_with("claude-") => ToolSupport::Native,
        "openai" => {
            if OPENAI_NOT_CHAT.iter().any(|p| m.contains(p)) {
                ToolSupport::Unknown
            } else if OPENAI_TOOLS.iter().any(|p| m.starts_with(p)) {
                ToolSupport::Native
            } else {
                ToolSupport::Unknown
            }
        }
        _ => ToolSupport::Unknown,
    }
}

/// Whether a listed id is plainly not a chat model (embeddings, speech, images), so a model
/// picker can leave it out. Unknown ids stay in.
pub fn is_not_chat(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    [
        "embedding",
        "embed-",
        "whisper",
        "tts-",
        "dall-e",
        "moderation",
    ]
    .iter()
    .any(|p| m.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_families_and_unknown_rest() {
        assert_eq!(
            tool_support("anthropic", "claude-sonnet-4-5"),
            ToolSupport::Native
        );
        assert_eq!(tool_support("openai", "gpt-4.1-mini"), ToolSupport::Native);
        assert_eq!(tool_support("openai", "o4-mini"), ToolSupport::Native);
        assert_eq!(
            tool_support("openai", "gpt-4o-realtime-preview"),
            ToolSupport::Unknown
        );
        assert_eq!(
            tool_support("openai", "text-embedding-3-small"),
            ToolSupport::Unknown
        );
        assert_eq!(tool_support("openai", "my-finetune"), ToolSupport::Unknown);
        // The same name elsewhere may be another build: unknown.
        assert_eq!(tool_support("custom", "gpt-4o"), ToolSupport::Unknown);
        assert_eq!(
            tool_support("openrouter", "anthropic/claude-x"),
            ToolSupport::Unknown
        );
        assert!(is_not_chat("text-embedding-3-large"));
        assert!(!is_not_chat("gpt-4o"));
    }
}
