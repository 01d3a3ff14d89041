//! Which models a provider offers, and whether each can call tools natively.
//!
//! A person should pick a model from what their vendor or local runtime actually has, not type
//! an id from memory, and should learn before the first chat turn whether the model takes the
//! `tools` field at all. This module answers both from the vendors' own list endpoints:
//!
//! - [`vendor`]: OpenAI and any OpenAI-compatible base URL (`GET {base}/models`), Anthropic
//!   (`GET /v1/models`, paged with `has_more`/`last_id`).
//! - [`local`]: Ollama (`GET /api/tags`, then `POST /api/show` per model, whose `capabilities`
//!   holds `"tools"` for native tool calling) and LM Studio (`GET /api/v0/models`, whose
//!   `capabilities` holds `"tool_use"`), and detecting either on its default loopback port.
//! - [`families`]: tool support known from a vendor's model family when its list says nothing.
//! - [`route`]: a provider that sends chosen models through the prompt-based tool mode.
//!
//! Tool support is three-valued on purpose: [`ToolSupport::Unknown`] is shown as unknown, never
//! guessed into a yes or a no, because offering the prompt fallback for a model that has native
//! tools (or hiding it for one that has none) is a worse answer than "we do not know".
//!
//! Everything here is a bounded, timed GET or POST: a hostile or broken server can make a list
//! fail with a typed [`ModelsError`], not hang a window or fill memory.

pub mod families;
mod fetch;
pub mod local;
pub mod route;
pub mod vendor;

use serde::Serialize;

pub use fetch::ModelsError;
pub use local::{detect, DetectedRuntime, LocalRuntime};
pub use route::ModelRouted;
pub use vendor::list_models;

/// Whether a model takes native tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSupport {
    /// The vendor or runtime says it does.
    Native,
    /// The runtime says it does not (the prompt-based mode is the way to give it tools).
    None,
    /// Nobody said: neither the list nor a known family.
    Unknown,
}

/// Where a [`ToolSupport`] answer came from, so a shell can say how sure it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSource {
    /// The runtime's own capability list for this model (Ollama, LM Studio).
    Runtime,
    /// The vendor's model family (every current OpenAI chat model, every Claude).
    Family,
    /// No source.
    None,
}

/// One model a provider offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    /// The id to send as `model`.
    pub id: String,
    /// A display name, when the vendor gives one.
    pub display_name: Option<String>,
    /// Native tool calling.
    pub tools: ToolSupport,
    /// Where [`Self::tools`] came from.
    pub tools_source: ToolSource,
}

impl ModelInfo {
    /// A model whose tool support is looked up in [`families`].
    pub fn from_family(profile_id: &str, id: String, display_name: Option<String>) -> Self {
        let tools = families::tool_support(profile_id, &id);
        Self {
            tools_source: if tools == ToolSupport::Unknown {
                ToolSource::None
            } else {
                ToolSource::Family
            },
            id,
            display_name,
            tools,
        }
    }
}

/// The most models one list keeps (a vendor listing more is cut, not trusted to be finite).
pub const MAX_MODELS: usize = 2_000;
