//! What tool definitions cost in tokens, as sent to one model (issue 16, point 1).
//!
//! # What is counted
//! Each tool is counted as our providers put it on the wire: for the OpenAI wire
//! `{"type":"function","function":{"name","description","parameters"}}`, for the Anthropic wire
//! `{"name","description","input_schema"}` (the shapes `llm/openai/request.rs` and
//! `llm/anthropic/request.rs` build; [`wire_tool`] mirrors them and its tests pin the shape),
//! serialized as compact JSON. A request with tools also pays a per-request overhead where the
//! vendor documents one: Anthropic adds a tool-use system prompt (346 tokens for Claude 3.7
//! and 4.x with `tool_choice` auto, the choice we send; 530/159/264 for Claude 3
//! Opus/Sonnet/Haiku and 3.5 Haiku). OpenAI documents none.
//!
//! # Exact or estimated
//! - OpenAI models whose tokenizer is published (`tiktoken`: o200k_base for gpt-4o, gpt-4.1,
//!   gpt-5 and the o-series, cl100k_base for gpt-4 and gpt-3.5) are counted with it, exactly.
//!   The BPE files are compiled into the binary (`tiktoken-rs` embeds them): nothing is
//!   downloaded. OpenAI renders tools into its own prompt format before the model sees them;
//!   that rendering is not published, so the count is of what we send.
//! - Claude's tokenizer is not published. The estimate is the cl100k_base count times
//!   [`ANTHROPIC_FACTOR`], rounded up: Claude's tokenizers produce more tokens than OpenAI's
//!   for the same JSON; the factor errs high so a warning comes early rather than late.
//! - Every other model (local, routed, unknown) gets the cl100k_base count, marked as an
//!   estimate: the open-weight families people run (Llama 3, Qwen, Mistral) use BPE
//!   vocabularies of 32k–150k entries, within a few percent of cl100k_base on JSON.

use serde::Serialize;
use serde_json::{json, Value};
use tiktoken_rs::tokenizer::{get_tokenizer, Tokenizer};
use tiktoken_rs::CoreBPE;

use crate::llm::profiles::Wire;
use crate::llm::ToolSpec;

/// Claude estimate: cl100k_base tokens times this (see the module docs).
pub const ANTHROPIC_FACTOR: f64 = 1.2;

/// How a count was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The vendor's tokenizer, o200k_base.
    O200k,
    /// The vendor's tokenizer, cl100k_base.
    Cl100k,
    /// cl100k_base times [`ANTHROPIC_FACTOR`]: Claude's tokenizer is not published.
    AnthropicEstimate,
    /// cl100k_base as a stand-in for an unknown tokenizer.
    Estimate,
}

impl Method {
    /// Whether the count is an estimate.
    pub fn is_estimate(self) -> bool {
        matches!(self, Self::AnthropicEstimate | Self::Estimate)
    }

    /// A short label for people: "o200k_base", "estimate: cl100k_base", ...
    pub fn label(self) -> &'static str {
        match self {
            Self::O200k => "o200k_base",
            Self::Cl100k => "cl100k_base",
            Self::AnthropicEstimate => "estimate: cl100k_base x 1.2",
            Self::Estimate => "estimate: cl100k_base",
        }
    }
}

/// Counts tool definitions for one model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    wire: Wire,
    method: Method,
    request_overhead: u64,
}

impl Counter {
    /// The counter for `model` spoken to over `wire` by a provider of profile `profile_id`.
    /// Only the `openai` profile (and OpenAI model ids routed by name, e.g.
    /// `openai/gpt-4o` on OpenRouter) gets the exact tokenizer: a local server that calls its
    /// model `gpt-4o` is not running OpenAI's.
    pub fn new(profile_id: &str, wire: Wire, model: &str) -> Self {
        if wire == Wire::Anthropic {
            return Self {
                wire,
                method: Method::AnthropicEstimate,
                request_overhead: anthropic_overhead(model),
            };
        }
        let name = match profile_id {
            "openai" | "custom" => Some(model),
            "openrouter" => model.strip_prefix("openai/"),
            _ => None,
        };
        let method = match name.and_then(get_tokenizer) {
            Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => Method::O200k,
            Some(Tokenizer::Cl100kBase) => Method::Cl100k,
            _ => Method::Estimate,
        };
        Self {
            wire,
            method,
            request_overhead: 0,
        }
    }

    /// How this counter counts.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The tokens a request with at least one tool pays once, beyond the tools themselves.
    pub fn request_overhead(&self) -> u64 {
        self.request_overhead
    }

    /// One tool's definition.
    pub fn tool(&self, spec: &ToolSpec) -> u64 {
        self.text(&wire_tool(self.wire, spec).to_string())
    }

    /// A whole set of definitions, with the per-request overhead; 0 for none.
    pub fn tools(&self, specs: &[ToolSpec]) -> u64 {
        if specs.is_empty() {
            return 0;
        }
        specs.iter().map(|s| self.tool(s)).sum::<u64>() + self.request_overhead
    }

    /// Any text.
    pub fn text(&self, text: &str) -> u64 {
        match self.method {
            Method::O200k => count(tiktoken_rs::o200k_base_singleton(), text),
            Method::Cl100k | Method::Estimate => count(tiktoken_rs::cl100k_base_singleton(), text),
            Method::AnthropicEstimate => {
                let base = count(tiktoken_rs::cl100k_base_singleton(), text);
                (base as f64 * ANTHROPIC_FACTOR).ceil() as u64
            }
        }
    }
}

fn count(bpe: &CoreBPE, text: &str) -> u64 {
    bpe.encode_ordinary(text).len() as u64
}

/// Anthropic's documented tool-use system prompt for `tool_choice: auto`.
fn anthropic_overhead(model: &str) -> u64 {
    if model.starts_with("claude-3-opus") {
        530
    } else if model.starts_with("claude-3-sonnet") {
        159
    } else if model.starts_with("claude-3-haiku") || model.starts_with("claude-3-5-haiku") {
        264
    } else {
        346
    }
}

/// One tool as the provider of `wire` sends it.
pub fn wire_tool(wire: Wire, t: &ToolSpec) -> Value {
    match wire {
        Wire::OpenAi => json!({"type": "function", "function": {
            "name": t.name,
            "description": t.description,
            "parameters": t.input_schema,
        }}),
        Wire::Anthropic => {
            json!({"name": t.name, "description": t.description, "input_schema": t.input_schema})
        }
    }
}

/// The share of `window` that `tokens` take, in percent (0 for an empty window).
pub fn share_percent(tokens: u64, window: u32) -> f64 {
    if window == 0 {
        return 0.0;
    }
    tokens as f64 * 100.0 / f64::from(window)
}

#[cfg(test)]
mod tests;
