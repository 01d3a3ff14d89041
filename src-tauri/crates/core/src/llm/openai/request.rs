//! The neutral transcript as an OpenAI Chat Completions request body.
//!
//! Mapping rules, each forced by the wire format:
//! - The system text becomes the first `system` message.
//! - A user message's tool results become separate `role: tool` messages (in order, before
//!   the user's own content, because OpenAI wants them right after the assistant message that
//!   asked). Tool messages carry text only, so images in results follow in a user message, and
//!   an error result is prefixed `Error: ` since there is no error flag.
//! - User text-only content is sent as a plain string: several compatible servers reject
//!   content-part arrays, and a string means the same thing.
//! - Assistant tool calls become `tool_calls` with the arguments as JSON text; a call kept as a
//!   raw string (it did not parse) is sent back exactly as the model wrote it.

use serde_json::{json, Map, Value};

use crate::llm::profiles::{MaxTokensField, Quirks};
use crate::llm::types::{ChatRequest, Message, Part, ResultPart, Role};

/// The request body for `POST {base}/chat/completions`.
pub(crate) fn build_body(req: &ChatRequest, quirks: &Quirks) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        match m.role {
            Role::User => user_messages(m, &mut messages),
            Role::Assistant => messages.push(assistant_message(m)),
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    if quirks.stream_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(n) = req.max_tokens {
        let field = match quirks.max_tokens_field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        body.insert(field.into(), json!(n));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    Value::Object(body)
}

fn image_part(mime_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
}

fn user_messages(m: &Message, out: &mut Vec<Value>) {
    let mut content = Vec::new();
    let mut result_images = Vec::new();
    for part in &m.parts {
        match part {
            Part::Text { text } => content.push(json!({"type": "text", "text": text})),
            Part::Image { mime_type, data } => content.push(image_part(mime_type, data)),
            Part::ToolResult {
                call_id,
                content: result,
                is_error,
            } => {
                let mut texts = Vec::new();
                for r in result {
                    match r {
                        ResultPart::Text { text } => texts.push(text.clone()),
                        ResultPart::Image { mime_type, data } => {
                            texts.push(format!("[image {mime_type}: sent in the next message]"));
                            result_images.push(image_part(mime_type, data));
                        }
                    }
                }
                let mut text = texts.join("\n");
                if *is_error {
                    text = format!("Error: {text}");
                }
                out.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
            }
            // Not valid in a user turn; kept visible rather than dropped.
            Part::ToolCall {
                name, arguments, ..
            } => content
                .push(json!({"type": "text", "text": format!("[tool call {name} {arguments}]")})),
        }
    }
    if !result_images.is_empty() {
        let mut with_images =
            vec![json!({"type": "text", "text": "Images returned by the tool calls above:"})];
        with_images.append(&mut result_images);
        with_images.append(&mut content);
        content = with_images;
    }
    if content.is_empty() {
        return;
    }
    let all_text = content.iter().all(|c| c["type"] == "text");
    let content = if all_text {
        let texts: Vec<&str> = content.iter().filter_map(|c| c["text"].as_str()).collect();
        json!(texts.join("\n"))
    } else {
        Value::Array(content)
    };
    out.push(json!({"role": "user", "content": content}));
}

fn assistant_message(m: &Message) -> Value {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for part in &m.parts {
        match part {
            Part::Text { text } => texts.push(text.clone()),
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                let args = match arguments {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                calls.push(json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}));
            }
            Part::Image { mime_type, .. } => texts.push(format!("[image {mime_type}]")),
            Part::ToolResult { call_id, .. } => texts.push(format!("[tool result {call_id}]")),
        }
    }
    let mut msg = Map::new();
    msg.insert("role".into(), json!("assistant"));
    let content = if texts.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        json!(texts.join("\n"))
    };
    msg.insert("content".into(), content);
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::profiles::profile;
    use crate::llm::types::ToolSpec;

    fn quirks(id: &str) -> Quirks {
        profile(id).unwrap().quirks
    }

    fn req(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: "gpt-4o".into(),
            system: Some("Be brief.".into()),
            messages,
            tools: vec![],
            max_tokens: None,
            temperature: None,
        }
    }

    #[test]
    fn top_level_fields_follow_the_quirks() {
        let mut r = req(vec![Message::user_text("hi")]);
        r.max_tokens = Some(100);
        r.temperature = Some(0.5);
        r.tools = vec![ToolSpec {
            name: "fs__read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }];
        let b = build_body(&r, &quirks("openai"));
        assert_eq!(b["model"], "gpt-4o");
        assert_eq!(b["stream"], true);
        assert_eq!(b["stream_options"], json!({"include_usage": true}));
        assert_eq!(b["max_completion_tokens"], 100);
        assert!(b.get("max_tokens").is_none());
        assert_eq!(b["temperature"], 0.5);
        assert_eq!(
            b["tools"],
            json!([{"type": "function", "function": {"name": "fs__read", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
        );
        let b = build_body(&r, &quirks("lmstudio"));
        assert!(b.get("stream_options").is_none());
        assert_eq!(b["max_tokens"], 100);
        // No tools, no field: some servers reject an empty array.
        let b = build_body(&req(vec![]), &quirks("ollama"));
        assert!(b.get("tools").is_none());
        assert_eq!(
            b["messages"],
            json!([{"role": "system", "content": "Be brief."}])
        );
    }

    #[test]
    fn every_part_kind_maps_in_order() {
        let r = req(vec![
            Message {
                role: Role::User,
                parts: vec![
                    Part::Text {
                        text: "What is in this picture?".into(),
                    },
                    Part::Image {
                        mime_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: "Let me look.".into(),
                    },
                    Part::ToolCall {
                        id: "call_1".into(),
                        name: "vision__describe".into(),
                        arguments: json!({"detail": "high"}),
                    },
                    Part::ToolCall {
                        id: "call_2".into(),
                        name: "fs__read".into(),
                        arguments: Value::String("{\"path\": ".into()),
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    Part::ToolResult {
                        call_id: "call_1".into(),
                        content: vec![
                            ResultPart::Text {
                                text: "a cat".into(),
                            },
                            ResultPart::Image {
                                mime_type: "image/jpeg".into(),
                                data: "/9j/".into(),
                            },
                        ],
                        is_error: false,
                    },
                    Part::ToolResult {
                        call_id: "call_2".into(),
                        content: vec![ResultPart::Text {
                            text: "invalid arguments".into(),
                        }],
                        is_error: true,
                    },
                    Part::Text {
                        text: "Thanks".into(),
                    },
                ],
            },
        ]);
        let b = build_body(&r, &quirks("openai"));
        assert_eq!(
            b["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is in this picture?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
                ]},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "vision__describe", "arguments": "{\"detail\":\"high\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "fs__read", "arguments": "{\"path\": "}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "a cat\n[image image/jpeg: sent in the next message]"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: invalid arguments"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images returned by the tool calls above:"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}},
                    {"type": "text", "text": "Thanks"}
                ]}
            ])
        );
    }

    #[test]
    fn assistant_with_only_calls_has_null_content_and_results_only_turn_has_no_user_message() {
        let r = req(vec![
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall {
                    id: "c".into(),
                    name: "t".into(),
                    arguments: json!({}),
                }],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "c".into(),
                    content: vec![ResultPart::Text { text: "ok".into() }],
                    is_error: false,
                }],
            },
        ]);
        let b = build_body(&r, &quirks("openai"));
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[1]["content"], Value::Null);
        assert_eq!(msgs[1]["tool_calls"][0]["function"]["arguments"], "{}");
        assert_eq!(
            msgs[2],
            json!({"role": "tool", "tool_call_id": "c", "content": "ok"})
        );
    }

    /// JSON Schema 2020-12 reaches the model as the server wrote it: `$schema`, `$defs`,
    /// `$anchor`, composition, conditionals and `additionalProperties` (issue 13, point 4).
    #[test]
    fn a_2020_12_schema_goes_to_the_model_verbatim() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"n": {"$anchor": "num", "type": "integer", "minimum": 0}},
            "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "allOf": [{"required": ["a"]}],
            "if": {"properties": {"a": {"const": 0}}},
            "then": {"required": ["b"]},
            "else": {"not": {"required": ["b"]}},
            "additionalProperties": false
        });
        let mut r = req(vec![Message::user_text("hi")]);
        r.tools = vec![ToolSpec {
            name: "s__t".into(),
            description: "d".into(),
            input_schema: schema.clone(),
        }];
        let b = build_body(&r, &quirks("openai"));
        assert_eq!(
            b.pointer("/tools/0/function/parameters"),
            Some(&schema),
            "{b}"
        );
    }
}
