//! OpenAI Chat Completions stream chunks into [`StreamEvent`]s.
//!
//! A chunk is `data: {"choices":[{"index":0,"delta":{..},"finish_reason":..}],"usage":..}`.
//! Text comes in `delta.content`; tool calls in `delta.tool_calls[]`, where the first
//! fragment of a call carries its `index`, `id` and `function.name` and later fragments only
//! the `index` and a piece of `function.arguments`. Several calls may be open at once and
//! their fragments may interleave. With `stream_options.include_usage`, a last chunk with
//! empty `choices` carries `usage`; then `data: [DONE]` ends the stream.
//!
//! Leniencies for compatible servers, each seen in the wild:
//! - A call fragment without `index` is matched by `id`, else continues the last call.
//! - A call whose `id` never comes gets `call_<n>`; a call whose name comes late is announced
//!   once the name is known (fragments before that are held back, not lost).
//! - `finish_reason: "stop"` with tool calls means `ToolUse` (Ollama does this).
//! - A body that ends after a `finish_reason` but without `[DONE]` is complete; one that ends
//!   before any `finish_reason` is [`LlmError::Malformed`], never a silent success.
//! - `reasoning_content` (DeepSeek) is not part of the transcript and is skipped.

use serde::Deserialize;
use serde_json::Value;

use crate::llm::classify::{classify_event, VendorError};
use crate::llm::error::{cut, LlmError};
use crate::llm::http::WireDecoder;
use crate::llm::sse::SseEvent;
use crate::llm::types::{StopReason, StreamEvent, Usage};

#[derive(Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u32>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<ToolDelta>>,
}

#[derive(Deserialize)]
struct ToolDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

/// One tool call being assembled; its position in `calls` is its event index.
struct Slot {
    wire_index: Option<u64>,
    id: Option<String>,
    name: Option<String>,
    started: bool,
    held: String,
}

/// The OpenAI stream state.
#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    calls: Vec<Slot>,
    finish: Option<String>,
    done: bool,
}

impl OpenAiDecoder {
    fn slot(&mut self, tc: &ToolDelta) -> usize {
        let found = match (tc.index, tc.id.as_deref()) {
            (Some(i), _) => self.calls.iter().position(|s| s.wire_index == Some(i)),
            (None, Some(id)) => self.calls.iter().position(|s| s.id.as_deref() == Some(id)),
            (None, None) => self.calls.len().checked_sub(1),
        };
        found.unwrap_or_else(|| {
            self.calls.push(Slot {
                wire_index: tc.index,
                id: None,
                name: None,
                started: false,
                held: String::new(),
            });
            self.calls.len() - 1
        })
    }

    fn tool_delta(&mut self, tc: ToolDelta, out: &mut Vec<StreamEvent>) {
        let index = self.slot(&tc);
        let slot = &mut self.calls[index];
        if slot.id.is_none() {
            slot.id = tc.id.filter(|s| !s.is_empty());
        }
        let (name, args) = match tc.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        if slot.name.is_none() {
            slot.name = name.filter(|s| !s.is_empty());
        }
        let fragment = match args {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => String::new(),
            // Some servers send the arguments as an object in one piece.
            Some(other) => other.to_string(),
        };
        slot.held.push_str(&fragment);
        if !slot.started && slot.name.is_some() {
            start(index, slot, out);
        } else if slot.started && !slot.held.is_empty() {
            out.push(StreamEvent::ToolCallDelta {
                index,
                fragment: std::mem::take(&mut slot.held),
            });
        }
    }

    /// Announces calls still waiting for a name, so nothing the model sent is lost.
    fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        for (index, slot) in self.calls.iter_mut().enumerate() {
            if !slot.started {
                start(index, slot, out);
            }
        }
    }

    fn done(&mut self, out: &mut Vec<StreamEvent>) {
        self.flush(out);
        let stop = match self.finish.as_deref() {
            None | Some("stop") if !self.calls.is_empty() => StopReason::ToolUse,
            None | Some("stop") => StopReason::EndTurn,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::ContentFilter,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push(StreamEvent::Done { stop });
        self.done = true;
    }
}

fn start(index: usize, slot: &mut Slot, out: &mut Vec<StreamEvent>) {
    slot.started = true;
    out.push(StreamEvent::ToolCallStart {
        index,
        id: slot.id.clone().unwrap_or_else(|| format!("call_{index}")),
        name: slot.name.clone().unwrap_or_default(),
    });
    if !slot.held.is_empty() {
        out.push(StreamEvent::ToolCallDelta {
            index,
            fragment: std::mem::take(&mut slot.held),
        });
    }
}

impl WireDecoder for OpenAiDecoder {
    fn event(&mut self, ev: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.done(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::malformed(format!("a chunk is not valid JSON ({e}): {}", cut(data)))
        })?;
        if value.get("error").is_some_and(|e| !e.is_null()) {
            let v = VendorError::from_value(&value).unwrap_or_default();
            return Err(classify_event(&v));
        }
        let chunk: Chunk = serde_json::from_value(value).map_err(|e| {
            LlmError::malformed(format!(
                "a chunk does not have the expected shape ({e}): {}",
                cut(data)
            ))
        })?;
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta { text });
                }
                for tc in delta.tool_calls.unwrap_or_default() {
                    self.tool_delta(tc, out);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(reason);
            }
        }
        if let Some(u) = chunk.usage {
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: u.prompt_tokens.unwrap_or(0),
                    output_tokens: u.completion_tokens.unwrap_or(0),
                    cached_input_tokens: u
                        .prompt_tokens_details
                        .and_then(|d| d.cached_tokens)
                        .unwrap_or(0),
                },
            });
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if self.finish.is_some() {
            self.done(out);
            return Ok(());
        }
        Err(LlmError::malformed(
            "the stream ended before the model finished its answer",
        ))
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests;
