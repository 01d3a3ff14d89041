//! A scripted [`Reply`] as the SSE frames each vendor really sends.
//!
//! Shapes follow the vendors' streams field for field (OpenAI's `chat.completion.chunk` with
//! `logprobs`/`usage: null`, the `[DONE]` sentinel, the usage chunk with empty `choices`;
//! Anthropic's `event:` lines, `ping`, the empty first `input_json_delta`), because the
//! decoders under test must cope with what vendors send, not with a tidy subset.

use serde_json::{json, Value};

use super::scenario::{HttpError, Reply, StreamError};

/// Which wire format a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// `POST /v1/chat/completions`.
    OpenAi,
    /// `POST /v1/messages`.
    Anthropic,
}

/// A reply's frames: the content, then what a complete answer ends with.
pub struct Frames {
    /// Text and tool-call frames.
    pub content: Vec<String>,
    /// The terminal frames (finish, usage, `[DONE]` / `message_delta`, `message_stop`).
    pub terminal: Vec<String>,
}

fn data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn event(name: &str, v: &Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

/// Renders `reply` for `vendor`; `include_usage` is what an OpenAI request asked for.
pub fn render(vendor: Vendor, reply: &Reply, model: &str, include_usage: bool) -> Frames {
    match vendor {
        Vendor::OpenAi => openai(reply, model, include_usage),
        Vendor::Anthropic => anthropic(reply, model),
    }
}

fn openai(reply: &Reply, model: &str, include_usage: bool) -> Frames {
    let chunk = |delta: Value, finish: Value| {
        data(&json!({
            "id": "chatcmpl-fake0001", "object": "chat.completion.chunk", "created": 1_741_569_952,
            "model": model, "service_tier": "default", "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
            "usage": null
        }))
    };
    let mut content = Vec::new();
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        content.push(chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            Value::Null,
        ));
    }
    for t in &reply.text {
        content.push(chunk(json!({"content": t}), Value::Null));
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let id = call.id.clone().unwrap_or_else(|| format!("call_{i}"));
        let mut first = json!({"tool_calls": [{"index": i, "id": id, "type": "function",
            "function": {"name": call.name, "arguments": ""}}]});
        if i == 0 && reply.text.is_empty() {
            first["role"] = json!("assistant");
            first["content"] = Value::Null;
        }
        content.push(chunk(first, Value::Null));
        for frag in &call.arguments {
            content.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}),
                Value::Null,
            ));
        }
    }
    let natural = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let finish = reply.stop.as_deref().unwrap_or(natural);
    let mut terminal = vec![chunk(json!({}), json!(finish))];
    if include_usage {
        let u = reply.usage.unwrap_or_default();
        terminal.push(data(&json!({
            "id": "chatcmpl-fake0001", "object": "chat.completion.chunk", "created": 1_741_569_952,
            "model": model, "service_tier": "default", "system_fingerprint": "fp_fake",
            "choices": [],
            "usage": {"prompt_tokens": u.input, "completion_tokens": u.output,
                "total_tokens": u.input + u.output,
                "prompt_tokens_details": {"cached_tokens": u.cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                    "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
        })));
    }
    terminal.push("data: [DONE]\n\n".to_owned());
    Frames { content, terminal }
}

fn anthropic(reply: &Reply, model: &str) -> Frames {
    let u = reply.usage.unwrap_or_default();
    let mut content = vec![event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": "msg_fake01", "type": "message", "role": "assistant", "content": [],
            "model": model, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": u.input.saturating_sub(u.cached),
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": u.cached,
                "output_tokens": 1}}}),
    )];
    let mut block = 0;
    if !reply.text.is_empty() {
        content.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        ));
        content.push(event("ping", &json!({"type": "ping"})));
        for t in &reply.text {
            content.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": t}}),
            ));
        }
        content.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ));
        block = 1;
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let index = block + i;
        let id = call.id.clone().unwrap_or_else(|| format!("toolu_{i}"));
        content.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}),
        ));
        let fragments = std::iter::once("").chain(call.arguments.iter().map(String::as_str));
        for frag in fragments {
            content.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": frag}}),
            ));
        }
        content.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let natural = if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let stop = reply.stop.as_deref().unwrap_or(natural);
    let terminal = vec![
        event(
            "message_delta",
            &json!({"type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": u.output}}),
        ),
        event("message_stop", &json!({"type": "message_stop"})),
    ];
    Frames { content, terminal }
}

/// A mid-stream error event.
pub fn error_frame(vendor: Vendor, e: &StreamError) -> String {
    match vendor {
        Vendor::OpenAi => data(&json!({"error": {"message": e.message, "type": e.kind,
            "param": null, "code": e.code}})),
        Vendor::Anthropic => event(
            "error",
            &json!({"type": "error", "error": {"type": e.kind, "message": e.message}}),
        ),
    }
}

/// A chunk cut inside its JSON.
pub fn malformed_frame(vendor: Vendor) -> String {
    match vendor {
        Vendor::OpenAi => {
            "data: {\"id\":\"chatcmpl-fake0001\",\"choices\":[{\"index\":0,\"delta\":{\"cont\n\n"
                .to_owned()
        }
        Vendor::Anthropic => {
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_\n\n"
                .to_owned()
        }
    }
}

/// The body of an HTTP error answer.
pub fn error_body(vendor: Vendor, e: &HttpError) -> String {
    if let Some(body) = &e.body {
        return match body {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    }
    let message = e
        .message
        .clone()
        .unwrap_or_else(|| format!("HTTP {}", e.status));
    match vendor {
        Vendor::OpenAi => json!({"error": {"message": message, "type": e.kind,
            "param": null, "code": e.code}}),
        Vendor::Anthropic => json!({"type": "error", "error": {"type": e.kind.clone()
            .unwrap_or_else(|| "api_error".into()), "message": message}}),
    }
    .to_string()
}
