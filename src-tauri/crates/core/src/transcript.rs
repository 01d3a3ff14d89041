//! The provider-neutral transcript: what a conversation is, whatever vendor answers it.
//!
//! A conversation stored in SQLite and replayed to OpenAI, then Anthropic, then a local model
//! must mean the same thing to each, tool calls and results included. So the transcript has
//! its own small model, closest to Anthropic's (tool results travel in the user's turn, as
//! blocks), and each wire format in `llm` maps to and from it. Tool names here are the
//! LLM-facing names (`mcp::naming`), never raw server names.
//!
//! A leaf: plain serde data with no I/O, depending on nothing else in the core. It used to be
//! `llm::types`, which made `store` (conversations are rows of these messages) and `approval`
//! (a sampling request becomes a [`ChatRequest`]) depend on the providers module for a few
//! data types (ARCHITECTURE's table: both may depend on leaves, and `approval` on `store`, only).
//! `llm::types` re-exports everything here, so the providers and the shells name it as before.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said it. System text is not a message: it is [`ChatRequest::system`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person, and tool results handed back to the model.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// Its MIME type (`image/png`, ...).
        mime_type: String,
        /// Base64 data.
        data: String,
    },
    /// The model asks for a tool call.
    ToolCall {
        /// The vendor's call id, echoed back in the result.
        id: String,
        /// The LLM-facing tool name.
        name: String,
        /// The arguments as the model sent them (an object when they parse; otherwise the raw
        /// text as a JSON string, so a malformed call is kept and can be answered).
        arguments: Value,
    },
    /// The answer to a tool call.
    ToolResult {
        /// The call answered.
        call_id: String,
        /// What the model sees (text and images); possibly capped, see the chat loop.
        content: Vec<ResultPart>,
        /// Whether the call failed (tool error, denial, invalid arguments, unknown tool).
        is_error: bool,
    },
}

/// One piece of a tool result as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// Base64 data.
        data: String,
    },
}

/// One message of the transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who.
    pub role: Role,
    /// What, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message of plain text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    /// The message's text parts joined, for search and previews.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let Part::Text { text } = p {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls this message asks for.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolCall {
                id,
                name,
                arguments,
            } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
    }
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The LLM-facing name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its JSON Schema for arguments.
    pub input_schema: Value,
}

/// One model request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model id as the vendor names it.
    pub model: String,
    /// System instructions.
    pub system: Option<String>,
    /// The transcript so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Output limit (required by Anthropic; a default is used when unset).
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
}

/// Tokens used by one model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (including cached ones).
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the vendor's cache, when reported.
    pub cached_input_tokens: u64,
}

impl Usage {
    /// Adds another call's usage.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool calls run.
    ToolUse,
    /// It hit the output limit.
    MaxTokens,
    /// The vendor filtered the output.
    ContentFilter,
    /// Something else, as the vendor said it.
    Other(String),
}
