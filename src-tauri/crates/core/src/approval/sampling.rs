//! A server's `sampling/createMessage` read into a prompt a person can review and edit (AP-08),
//! and turned into a model request once they approve.
//!
//! What the server cannot get: context from other servers or the conversation (`includeContext`
//! is shown, never honoured), tools (the completion runs without any), a model of its choosing
//! (its hints are shown; the person picks), or more than [`MAX_TOKENS`] tokens. Only text is
//! passed on; a request with images or audio is refused with a clear message rather than
//! silently stripped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::transcript::{ChatRequest, Message, Part, Role};

/// The most tokens a server may have generated per request.
pub const MAX_TOKENS: u32 = 8_192;
/// Messages a request may carry.
pub const MESSAGES_MAX: usize = 100;
/// Characters of text a request may carry in all.
pub const TEXT_MAX: usize = 200_000;

/// Who wrote a message of the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingRole {
    /// The user side.
    User,
    /// The model side.
    Assistant,
}

/// One message of the prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who.
    pub role: SamplingRole,
    /// The text.
    pub text: String,
}

/// A sampling request as a person reviews it, and as they may edit it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingPrompt {
    /// The server's system prompt, if any.
    pub system_prompt: Option<String>,
    /// The messages, in order.
    pub messages: Vec<SamplingMessage>,
    /// Output limit.
    pub max_tokens: u32,
    /// Temperature, if asked.
    pub temperature: Option<f32>,
    /// Models the server would like (shown only).
    pub model_hints: Vec<String>,
    /// The context the server asked to include (`thisServer` / `allServers`), never included.
    pub context_requested: Option<String>,
}

/// Reads `sampling/createMessage` params; the error is what the server is told.
pub fn read(params: &Value) -> Result<SamplingPrompt, String> {
    let messages = params
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("the request has no messages")?;
    if messages.is_empty() || messages.len() > MESSAGES_MAX {
        return Err(format!(
            "a sampling request carries 1 to {MESSAGES_MAX} messages, this one {}",
            messages.len()
        ));
    }
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("user") => SamplingRole::User,
            Some("assistant") => SamplingRole::Assistant,
            _ => return Err("a message has no valid role".into()),
        };
        let items: Vec<&Value> = match m.get("content") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(c) => vec![c],
            None => return Err("a message has no content".into()),
        };
        let mut text = String::new();
        for item in items {
            match item.get("type").and_then(Value::as_str) {
                Some("text") => text.push_str(item.get("text").and_then(Value::as_str).unwrap_or("")),
                Some(other) => {
                    return Err(format!(
                        "Switchboard passes only text to a model for a server; this request has {other} content"
                    ))
                }
                None => return Err("a content item has no type".into()),
            }
        }
        out.push(SamplingMessage { role, text });
    }
    let total: usize = out.iter().map(|m| m.text.chars().count()).sum::<usize>()
        + params
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map_or(0, |s| s.chars().count());
    if total > TEXT_MAX {
        return Err(format!(
            "the request carries {total} characters of text; at most {TEXT_MAX} are reviewed"
        ));
    }
    let max_tokens = params
        .get("maxTokens")
        .and_then(Value::as_u64)
        .ok_or("the request has no maxTokens")?;
    Ok(SamplingPrompt {
        system_prompt: params
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages: out,
        max_tokens: u32::try_from(max_tokens)
            .unwrap_or(u32::MAX)
            .clamp(1, MAX_TOKENS),
        temperature: params
            .get("temperature")
            .and_then(Value::as_f64)
            .map(|t| t.clamp(0.0, 2.0) as f32),
        model_hints: params
            .pointer("/modelPreferences/hints")
            .and_then(Value::as_array)
            .map(|h| {
                h.iter()
                    .filter_map(|x| x.get("name").and_then(Value::as_str))
                    .take(10)
                    .map(|s| s.chars().take(100).collect())
                    .collect()
            })
            .unwrap_or_default(),
        context_requested: params
            .get("includeContext")
            .and_then(Value::as_str)
            .filter(|c| *c != "none")
            .map(|c| c.chars().take(40).collect()),
    })
}

/// Checks a (possibly edited) prompt before it is sent.
pub fn check(prompt: &SamplingPrompt) -> Result<(), String> {
    if prompt.messages.is_empty() || prompt.messages.len() > MESSAGES_MAX {
        return Err(format!("the prompt needs 1 to {MESSAGES_MAX} messages"));
    }
    if prompt.messages.iter().all(|m| m.text.trim().is_empty()) {
        return Err("the prompt is empty".into());
    }
    if prompt.max_tokens == 0 || prompt.max_tokens > MAX_TOKENS {
        return Err(format!("max tokens must be 1 to {MAX_TOKENS}"));
    }
    let total: usize = prompt
        .messages
        .iter()
        .map(|m| m.text.chars().count())
        .sum::<usize>()
        + prompt
            .system_prompt
            .as_deref()
            .map_or(0, |s| s.chars().count());
    if total > TEXT_MAX {
        return Err(format!(
            "the prompt has {total} characters of text; at most {TEXT_MAX}"
        ));
    }
    if prompt
        .temperature
        .is_some_and(|t| !(0.0..=2.0).contains(&t))
    {
        return Err("the temperature must be between 0 and 2".into());
    }
    if prompt.model_hints.len() > 10
        || prompt.model_hints.iter().any(|h| h.chars().count() > 100)
        || prompt
            .context_requested
            .as_deref()
            .is_some_and(|c| c.chars().count() > 40)
    {
        return Err("the model hints or the context note are too long".into());
    }
    Ok(())
}

/// The model request for an approved prompt: no tools, nothing else added.
pub fn request(prompt: &SamplingPrompt, model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_owned(),
        system: prompt
            .system_prompt
            .clone()
            .filter(|s| !s.trim().is_empty()),
        messages: prompt
            .messages
            .iter()
            .map(|m| Message {
                role: match m.role {
                    SamplingRole::User => Role::User,
                    SamplingRole::Assistant => Role::Assistant,
                },
                parts: vec![Part::Text {
                    text: m.text.clone(),
                }],
            })
            .collect(),
        tools: Vec::new(),
        max_tokens: Some(prompt.max_tokens),
        temperature: prompt.temperature,
    }
}

/// The `sampling/createMessage` result for the text a person let through.
pub fn result(model: &str, text: &str) -> Value {
    serde_json::json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": "endTurn",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_is_read_with_limits() {
        let p = read(&json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}},
                         {"role": "assistant", "content": [{"type": "text", "text": "Yes?"}]}],
            "systemPrompt": "Be brief", "maxTokens": 1_000_000, "includeContext": "allServers",
            "modelPreferences": {"hints": [{"name": "claude-x"}]}, "temperature": 9.0
        }))
        .unwrap();
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.messages[1].role, SamplingRole::Assistant);
        assert_eq!(p.max_tokens, MAX_TOKENS, "capped");
        assert_eq!(p.temperature, Some(2.0));
        assert_eq!(p.model_hints, ["claude-x"]);
        assert_eq!(p.context_requested.as_deref(), Some("allServers"));
        let req = request(&p, "m");
        assert!(req.tools.is_empty(), "never any tools");
        assert_eq!(req.system.as_deref(), Some("Be brief"));
        assert_eq!(
            req.messages.len(),
            2,
            "nothing added: no other server's context"
        );
    }

    #[test]
    fn odd_requests_are_refused_with_a_reason() {
        for (params, says) in [
            (json!({"maxTokens": 5}), "no messages"),
            (json!({"messages": [], "maxTokens": 5}), "1 to"),
            (
                json!({"messages": [{"role": "user", "content": {"type": "image", "data": "x", "mimeType": "image/png"}}], "maxTokens": 5}),
                "only text",
            ),
            (
                json!({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}),
                "role",
            ),
            (
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]}),
                "maxTokens",
            ),
            (
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x".repeat(TEXT_MAX + 1)}}], "maxTokens": 5}),
                "characters",
            ),
        ] {
            let e = read(&params).unwrap_err();
            assert!(e.contains(says), "{e} should say {says}");
        }
        let mut p = read(&json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}], "maxTokens": 5})).unwrap();
        assert!(check(&p).is_ok());
        p.messages[0].text = "  ".into();
        assert!(check(&p).is_err());
        p.messages[0].text = "x".repeat(TEXT_MAX + 1);
        assert!(check(&p).is_err(), "an edit cannot grow past the cap");
        p.messages[0].text = "x".into();
        p.temperature = Some(3.0);
        assert!(check(&p).is_err());
    }
}
