//! Folds a streamed answer into the assistant [`Message`] that goes into the transcript.
//!
//! Parts keep arrival order: consecutive text deltas form one text part, and each tool call is
//! a part placed where it started. A call's argument text is parsed once complete: empty text
//! means no arguments (`{}`); text that does not parse is kept as `Value::String(raw)` (see
//! [`Part::ToolCall`]) so the chat loop can answer it with an error instead of losing it.

use futures::StreamExt;
use serde_json::Value;

use super::error::LlmError;
use super::provider::EventStream;
use super::types::{Message, Part, Role, StopReason, StreamEvent, Usage};

/// A complete answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The assistant message.
    pub message: Message,
    /// The last usage reported.
    pub usage: Usage,
    /// Why the model stopped.
    pub stop: StopReason,
}

enum Slot {
    Text(String),
    Call {
        index: usize,
        id: String,
        name: String,
        args: String,
    },
}

/// Collects [`StreamEvent`]s into an [`Answer`].
#[derive(Default)]
pub struct Assembler {
    slots: Vec<Slot>,
    usage: Usage,
    stop: Option<StopReason>,
}

impl Assembler {
    /// An empty answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one event.
    pub fn push(&mut self, ev: &StreamEvent) {
        match ev {
            StreamEvent::TextDelta { text } => match self.slots.last_mut() {
                Some(Slot::Text(t)) => t.push_str(text),
                _ => self.slots.push(Slot::Text(text.clone())),
            },
            StreamEvent::ToolCallStart { index, id, name } => self.slots.push(Slot::Call {
                index: *index,
                id: id.clone(),
                name: name.clone(),
                args: String::new(),
            }),
            StreamEvent::ToolCallDelta { index, fragment } => {
                let found = self.slots.iter_mut().rev().find_map(|s| match s {
                    Slot::Call { index: i, args, .. } if i == index => Some(args),
                    _ => None,
                });
                match found {
                    Some(args) => args.push_str(fragment),
                    // A fragment for a call never announced: kept, under an empty name, so
                    // the chat loop reports it rather than it vanishing.
                    None => self.slots.push(Slot::Call {
                        index: *index,
                        id: String::new(),
                        name: String::new(),
                        args: fragment.clone(),
                    }),
                }
            }
            StreamEvent::Usage { usage } => self.usage = *usage,
            StreamEvent::Done { stop } => self.stop = Some(stop.clone()),
        }
    }

    /// Whether `Done` was seen.
    pub fn is_done(&self) -> bool {
        self.stop.is_some()
    }

    /// The answer; without a `Done` event it counts as cut short.
    pub fn finish(self) -> Result<Answer, LlmError> {
        let Some(stop) = self.stop else {
            return Err(LlmError::malformed(
                "the stream ended before the model finished its answer",
            ));
        };
        let parts = self
            .slots
            .into_iter()
            .filter_map(|s| match s {
                Slot::Text(text) if text.is_empty() => None,
                Slot::Text(text) => Some(Part::Text { text }),
                Slot::Call { id, name, args, .. } => Some(Part::ToolCall {
                    id,
                    name,
                    arguments: parse_arguments(args),
                }),
            })
            .collect();
        Ok(Answer {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: self.usage,
            stop,
        })
    }
}

/// A call's argument text as a value: `{}` when empty, the raw text when it does not parse.
pub fn parse_arguments(raw: String) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(&raw).unwrap_or(Value::String(raw))
}

/// Reads a whole stream into an [`Answer`], stopping at the first error.
pub async fn collect(mut stream: EventStream) -> Result<Answer, LlmError> {
    let mut a = Assembler::new();
    while let Some(item) = stream.next().await {
        a.push(&item?);
        if a.is_done() {
            break;
        }
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(events: &[StreamEvent]) -> Result<Answer, LlmError> {
        let mut a = Assembler::new();
        for e in events {
            a.push(e);
        }
        a.finish()
    }

    fn text(t: &str) -> StreamEvent {
        StreamEvent::TextDelta { text: t.into() }
    }

    fn start(index: usize, id: &str, name: &str) -> StreamEvent {
        StreamEvent::ToolCallStart {
            index,
            id: id.into(),
            name: name.into(),
        }
    }

    fn frag(index: usize, f: &str) -> StreamEvent {
        StreamEvent::ToolCallDelta {
            index,
            fragment: f.into(),
        }
    }

    #[test]
    fn text_and_interleaved_calls_fold_in_order() {
        let u = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cached_input_tokens: 2,
        };
        let a = answer(&[
            text("Let me "),
            text("check."),
            start(0, "c0", "a"),
            start(1, "c1", "b"),
            frag(1, "{\"y\":"),
            frag(0, "{\"x\":"),
            frag(0, "1}"),
            frag(1, "[1,2]}"),
            start(2, "c2", "empty"),
            StreamEvent::Usage {
                usage: Usage::default(),
            },
            StreamEvent::Usage { usage: u },
            StreamEvent::Done {
                stop: StopReason::ToolUse,
            },
        ])
        .unwrap();
        assert_eq!(a.usage, u);
        assert_eq!(a.stop, StopReason::ToolUse);
        assert_eq!(
            a.message,
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: "Let me check.".into()
                    },
                    Part::ToolCall {
                        id: "c0".into(),
                        name: "a".into(),
                        arguments: json!({"x": 1})
                    },
                    Part::ToolCall {
                        id: "c1".into(),
                        name: "b".into(),
                        arguments: json!({"y": [1, 2]})
                    },
                    Part::ToolCall {
                        id: "c2".into(),
                        name: "empty".into(),
                        arguments: json!({})
                    },
                ]
            }
        );
    }

    #[test]
    fn unparseable_arguments_are_kept_raw() {
        let a = answer(&[
            start(0, "c", "a"),
            frag(0, "{\"x\": "),
            StreamEvent::Done {
                stop: StopReason::MaxTokens,
            },
        ])
        .unwrap();
        assert_eq!(
            a.message.tool_calls().next(),
            Some(("c", "a", &Value::String("{\"x\": ".into())))
        );
    }

    #[test]
    fn text_after_calls_is_a_new_part_and_orphan_fragments_are_kept() {
        let a = answer(&[
            start(0, "c", "a"),
            text("after"),
            frag(7, "{}"),
            StreamEvent::Done {
                stop: StopReason::EndTurn,
            },
        ])
        .unwrap();
        assert_eq!(a.message.parts.len(), 3);
        assert_eq!(
            a.message.parts[1],
            Part::Text {
                text: "after".into()
            }
        );
        assert_eq!(
            a.message.parts[2],
            Part::ToolCall {
                id: String::new(),
                name: String::new(),
                arguments: json!({})
            }
        );
    }

    #[test]
    fn no_done_means_cut_short() {
        assert!(matches!(
            answer(&[text("partial")]),
            Err(LlmError::Malformed { .. })
        ));
    }

    #[tokio::test]
    async fn collect_stops_at_the_first_error() {
        let items: Vec<Result<StreamEvent, LlmError>> =
            vec![Ok(text("a")), Err(LlmError::Cancelled)];
        let s = futures::stream::iter(items).boxed();
        assert_eq!(collect(s).await, Err(LlmError::Cancelled));
    }
}
