//! Anthropic Messages stream events into [`StreamEvent`]s.
//!
//! The stream is `message_start` (with input usage), then per content block
//! `content_block_start` / `content_block_delta`* / `content_block_stop`, then
//! `message_delta` (stop reason, cumulative output usage) and `message_stop`; `ping`s may
//! appear anywhere and an `error` event may replace the rest. Text blocks give
//! `TextDelta`s; `tool_use` blocks give a `ToolCallStart` and their `input_json_delta`
//! fragments. Blocks the transcript has no place for (thinking, server tools) and event types
//! added later are skipped, as Anthropic's versioning policy asks of clients.
//!
//! Usage: Anthropic's `input_tokens` excludes cache reads and writes, while
//! [`Usage::input_tokens`] counts the whole prompt, so the three are added up.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::llm::classify::{classify_event, VendorError};
use crate::llm::error::{cut, LlmError};
use crate::llm::http::WireDecoder;
use crate::llm::sse::SseEvent;
use crate::llm::types::{StopReason, StreamEvent, Usage};

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: BlockStart,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        delta: MessageDelta,
        usage: Option<WireUsage>,
    },
    MessageStop,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

enum Block {
    Text,
    Tool {
        index: usize,
        got_delta: bool,
        input: Value,
    },
    Skipped,
}

/// The Anthropic stream state.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    blocks: HashMap<u64, Block>,
    tools: usize,
    input: u64,
    cache_write: u64,
    cache_read: u64,
    output: u64,
    stop: Option<StopReason>,
    done: bool,
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_owned()),
    }
}

impl AnthropicDecoder {
    fn usage(&mut self, u: WireUsage, out: &mut Vec<StreamEvent>) {
        // Later events repeat cumulative counts; a field present replaces the earlier value.
        self.input = u.input_tokens.unwrap_or(self.input);
        self.output = u.output_tokens.unwrap_or(self.output);
        self.cache_write = u.cache_creation_input_tokens.unwrap_or(self.cache_write);
        self.cache_read = u.cache_read_input_tokens.unwrap_or(self.cache_read);
        out.push(StreamEvent::Usage {
            usage: Usage {
                input_tokens: self.input + self.cache_write + self.cache_read,
                output_tokens: self.output,
                cached_input_tokens: self.cache_read,
            },
        });
    }

    fn done(&mut self, out: &mut Vec<StreamEvent>) {
        let stop = self.stop.take().unwrap_or(StopReason::EndTurn);
        out.push(StreamEvent::Done { stop });
        self.done = true;
    }

    fn handle(&mut self, ev: Event, out: &mut Vec<StreamEvent>) {
        match ev {
            Event::MessageStart { message } => {
                if let Some(u) = message.usage {
                    self.usage(u, out);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    BlockStart::Text { text } => {
                        if !text.is_empty() {
                            out.push(StreamEvent::TextDelta { text });
                        }
                        Block::Text
                    }
                    BlockStart::ToolUse { id, name, input } => {
                        let i = self.tools;
                        self.tools += 1;
                        out.push(StreamEvent::ToolCallStart { index: i, id, name });
                        Block::Tool {
                            index: i,
                            got_delta: false,
                            input,
                        }
                    }
                    BlockStart::Other => Block::Skipped,
                };
                self.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => match (self.blocks.get_mut(&index), delta)
            {
                (Some(Block::Text) | None, BlockDelta::TextDelta { text }) if !text.is_empty() => {
                    out.push(StreamEvent::TextDelta { text });
                }
                (
                    Some(Block::Tool {
                        index, got_delta, ..
                    }),
                    BlockDelta::InputJsonDelta { partial_json },
                ) if !partial_json.is_empty() => {
                    *got_delta = true;
                    out.push(StreamEvent::ToolCallDelta {
                        index: *index,
                        fragment: partial_json,
                    });
                }
                _ => {}
            },
            Event::ContentBlockStop { index } => {
                // A tool_use block whose input came whole in its start event (no deltas).
                if let Some(Block::Tool {
                    index,
                    got_delta: false,
                    input,
                }) = self.blocks.get(&index)
                {
                    if input.as_object().is_some_and(|o| !o.is_empty()) {
                        out.push(StreamEvent::ToolCallDelta {
                            index: *index,
                            fragment: input.to_string(),
                        });
                    }
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(s) = delta.stop_reason {
                    self.stop = Some(stop_reason(&s));
                }
                if let Some(u) = usage {
                    self.usage(u, out);
                }
            }
            Event::MessageStop => self.done(out),
            Event::Other => {}
        }
    }
}

impl WireDecoder for AnthropicDecoder {
    fn event(&mut self, ev: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::malformed(format!("an event is not valid JSON ({e}): {}", cut(data)))
        })?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref());
        if kind == Some("error") {
            let v = VendorError::from_value(&value).unwrap_or_default();
            return Err(classify_event(&v));
        }
        let parsed: Event = serde_json::from_value(value).map_err(|e| {
            LlmError::malformed(format!(
                "an event does not have the expected shape ({e}): {}",
                cut(data)
            ))
        })?;
        self.handle(parsed, out);
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        // The stop reason arrived; only `message_stop` is missing, so the answer is whole.
        if self.stop.is_some() {
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
