//! The neutral transcript as an Anthropic Messages request body.
//!
//! The transcript is modelled on Anthropic's, so most parts map one to one (text, base64
//! image, `tool_use`, `tool_result` with text/image content and `is_error`). What the API
//! additionally insists on is enforced here:
//! - Roles alternate: consecutive messages of the same role are merged into one.
//! - In a user turn, `tool_result` blocks come before any other content.
//! - Text blocks must not be empty, and a message must have at least one block.
//! - `tool_use.input` must be an object: arguments kept as raw text (they did not parse) are
//!   sent as `{"_raw_arguments": "<text>"}`, so the model sees what it wrote.
//! - `max_tokens` is required: [`DEFAULT_MAX_TOKENS`] when the request leaves it unset.

use serde_json::{json, Map, Value};

use crate::llm::types::{ChatRequest, Part, ResultPart, Role};

/// The output limit sent when the request has none (Anthropic requires one).
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The request body for `POST {base}/v1/messages`.
pub(crate) fn build_body(req: &ChatRequest) -> Value {
    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let blocks: Vec<Value> = m.parts.iter().filter_map(block).collect();
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((role, existing)) if *role == m.role => existing.extend(blocks),
            _ => turns.push((m.role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, mut blocks)| {
            if role == Role::User {
                // A stable sort: results keep their order, other content keeps its order.
                blocks.sort_by_key(|b| b["type"] != "tool_result");
            }
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": blocks})
        })
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "max_tokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if let Some(system) = req.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn image(mime_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
}

fn block(part: &Part) -> Option<Value> {
    Some(match part {
        Part::Text { text } if text.is_empty() => return None,
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::Image { mime_type, data } => image(mime_type, data),
        Part::ToolCall {
            id,
            name,
            arguments,
        } => {
            let input = match arguments {
                Value::Object(_) => arguments.clone(),
                Value::Null => json!({}),
                other => json!({"_raw_arguments": other}),
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Part::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            let mut b = Map::new();
            b.insert("type".into(), json!("tool_result"));
            b.insert("tool_use_id".into(), json!(call_id));
            let content: Vec<Value> = content
                .iter()
                .filter_map(|c| match c {
                    ResultPart::Text { text } if text.is_empty() => None,
                    ResultPart::Text { text } => Some(json!({"type": "text", "text": text})),
                    ResultPart::Image { mime_type, data } => Some(image(mime_type, data)),
                })
                .collect();
            if !content.is_empty() {
                b.insert("content".into(), Value::Array(content));
            }
            if *is_error {
                b.insert("is_error".into(), json!(true));
            }
            Value::Object(b)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::{Message, ToolSpec};

    fn msg(role: Role, parts: Vec<Part>) -> Message {
        Message { role, parts }
    }

    fn text(t: &str) -> Part {
        Part::Text { text: t.into() }
    }

    fn req(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: "claude-sonnet-4-5".into(),
            system: None,
            messages,
            tools: vec![],
            max_tokens: None,
            temperature: None,
        }
    }

    #[test]
    fn top_level_fields_and_defaults() {
        let mut r = req(vec![Message::user_text("hi")]);
        r.system = Some("Be brief.".into());
        r.tools = vec![ToolSpec {
            name: "fs__read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object"}),
        }];
        let b = build_body(&r);
        assert_eq!(
            b,
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 4096,
                "system": "Be brief.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                "tools": [{"name": "fs__read", "description": "Read a file", "input_schema": {"type": "object"}}],
                "stream": true
            })
        );
        r.max_tokens = Some(99);
        r.temperature = Some(0.25);
        r.system = Some(String::new());
        r.tools.clear();
        let b = build_body(&r);
        assert_eq!(b["max_tokens"], 99);
        assert_eq!(b["temperature"], 0.25);
        assert!(b.get("system").is_none() && b.get("tools").is_none());
    }

    #[test]
    fn every_part_kind_maps_to_its_block() {
        let r = req(vec![
            msg(
                Role::User,
                vec![
                    text("look"),
                    Part::Image {
                        mime_type: "image/png".into(),
                        data: "iVBO".into(),
                    },
                ],
            ),
            msg(
                Role::Assistant,
                vec![
                    text("Calling."),
                    Part::ToolCall {
                        id: "toolu_1".into(),
                        name: "a".into(),
                        arguments: json!({"x": 1}),
                    },
                    Part::ToolCall {
                        id: "toolu_2".into(),
                        name: "b".into(),
                        arguments: Value::String("{\"x\":".into()),
                    },
                ],
            ),
            msg(
                Role::User,
                vec![
                    Part::ToolResult {
                        call_id: "toolu_1".into(),
                        content: vec![
                            ResultPart::Text { text: "ok".into() },
                            ResultPart::Image {
                                mime_type: "image/jpeg".into(),
                                data: "/9j/".into(),
                            },
                        ],
                        is_error: false,
                    },
                    Part::ToolResult {
                        call_id: "toolu_2".into(),
                        content: vec![],
                        is_error: true,
                    },
                ],
            ),
        ]);
        assert_eq!(
            build_body(&r)["messages"],
            json!([
                {"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
                ]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Calling."},
                    {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {"x": 1}},
                    {"type": "tool_use", "id": "toolu_2", "name": "b", "input": {"_raw_arguments": "{\"x\":"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                        {"type": "text", "text": "ok"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}}
                    ]},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true}
                ]}
            ])
        );
    }

    #[test]
    fn same_role_messages_merge_with_results_first_and_empty_ones_vanish() {
        let r = req(vec![
            msg(Role::User, vec![text("one")]),
            msg(Role::User, vec![text("")]),
            msg(Role::User, vec![text("two")]),
            msg(Role::Assistant, vec![text("a")]),
            msg(Role::Assistant, vec![]),
            msg(
                Role::Assistant,
                vec![Part::ToolCall {
                    id: "t1".into(),
                    name: "n".into(),
                    arguments: Value::Null,
                }],
            ),
            msg(Role::User, vec![text("note before result")]),
            msg(
                Role::User,
                vec![Part::ToolResult {
                    call_id: "t1".into(),
                    content: vec![ResultPart::Text { text: "r".into() }],
                    is_error: false,
                }],
            ),
        ]);
        assert_eq!(
            build_body(&r)["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "a"},
                    {"type": "tool_use", "id": "t1", "name": "n", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"}]},
                    {"type": "text", "text": "note before result"}
                ]}
            ])
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
        let b = build_body(&r);
        assert_eq!(b.pointer("/tools/0/input_schema"), Some(&schema), "{b}");
    }
}
