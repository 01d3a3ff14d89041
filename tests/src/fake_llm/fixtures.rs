//! Shared requests and transcripts for LLM tests.

use serde_json::{json, Value};
use switchboard_core::llm::{ChatRequest, Message, Part, ResultPart, Role, ToolSpec};

/// A request for `test-model` with a system prompt, one user text and the `weather__get` tool.
pub fn request(text: &str) -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: Some("You are terse.".into()),
        messages: vec![Message::user_text(text)],
        tools: vec![ToolSpec {
            name: "weather__get".into(),
            description: "Current weather for a city".into(),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        }],
        max_tokens: None,
        temperature: None,
    }
}

/// A tool-call part.
pub fn call(id: &str, name: &str, args: Value) -> Part {
    Part::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args,
    }
}

/// A transcript using every part kind: user text + image, assistant text + two calls
/// (`ids`), then the user's results for them (the second an error).
pub fn conversation(ids: [&str; 2]) -> Vec<Message> {
    vec![
        Message {
            role: Role::User,
            parts: vec![
                Part::Text {
                    text: "Weather in Oslo and Rome? See map.".into(),
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
                    text: "Checking both.".into(),
                },
                call(ids[0], "weather__get", json!({"city": "Oslo"})),
                call(ids[1], "weather__get", json!({"city": "Rome"})),
            ],
        },
        Message {
            role: Role::User,
            parts: vec![
                Part::ToolResult {
                    call_id: ids[0].into(),
                    content: vec![ResultPart::Text {
                        text: "-3 C, snow".into(),
                    }],
                    is_error: false,
                },
                Part::ToolResult {
                    call_id: ids[1].into(),
                    content: vec![ResultPart::Text {
                        text: "service unavailable".into(),
                    }],
                    is_error: true,
                },
            ],
        },
    ]
}
