//! Tool calling for models without native tools: the tools are described in the system prompt
//! and calls are parsed out of the streamed text.
//!
//! # The convention
//! The model writes one block per call, anywhere in its answer:
//!
//! ```text
//! <tool_call>
//! {"name": "weather__get", "arguments": {"city": "Paris"}}
//! </tool_call>
//! ```
//!
//! Results come back in the next user message as text blocks
//! `<tool_result name="weather__get">…</tool_result>` (with `error="true"` for failures);
//! images in results follow as image parts. Earlier calls in the transcript are rendered back
//! into the same `<tool_call>` text, so the model sees its own convention.
//!
//! XML-ish tags were chosen over fenced code blocks because models also write fenced JSON as
//! ordinary answer content; a dedicated tag is unambiguous and is what many open models'
//! chat templates already use. A fence *inside* the tags is tolerated.
//!
//! # Parsing
//! [`PromptToolParser`] works on the stream: text outside blocks passes through as it arrives
//! (only a tail that might be the start of `<tool_call>` is held back); a complete block with
//! a JSON object holding a string `name` becomes `ToolCallStart` + one `ToolCallDelta`. A block
//! that does not parse is passed on as text, tags included: never dropped silently. A block
//! left open at the end of the answer is accepted if its content parses (models often stop
//! right before the closing tag), otherwise passed on as text.

use std::collections::HashMap;

use futures::future::BoxFuture;
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::error::LlmError;
use super::provider::{EventStream, Provider};
use super::types::{ChatRequest, Part, ResultPart, StopReason, StreamEvent, ToolSpec};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// The tool list and calling convention, as appended to the system prompt.
pub fn render_tools(tools: &[ToolSpec]) -> String {
    let mut s = String::from(
        "# Tools\n\nYou can call the tools listed below. To call one, write a block exactly like \
         this, with the arguments as a JSON object matching the tool's schema:\n\n\
         <tool_call>\n{\"name\": \"TOOL_NAME\", \"arguments\": {\"ARGUMENT\": \"VALUE\"}}\n</tool_call>\n\n\
         Write several blocks to make several calls. After your calls, end your answer: the \
         results come back in the next message inside <tool_result name=\"TOOL_NAME\"> blocks. \
         Never write <tool_result> blocks yourself.\n\nAvailable tools:\n",
    );
    for t in tools {
        s.push_str(&format!(
            "\n## {}\n{}\nArguments schema: {}\n",
            t.name, t.description, t.input_schema
        ));
    }
    s
}

fn render_call(name: &str, arguments: &Value) -> String {
    // Written by hand so `name` comes first, as in the convention the model was shown.
    format!(
        "{OPEN}\n{{\"name\": {}, \"arguments\": {arguments}}}\n{CLOSE}",
        Value::String(name.to_owned())
    )
}

/// Rewrites a request for a model without native tools: tools move into the system prompt,
/// past calls and results become text (see the module docs).
pub fn encode_request(mut req: ChatRequest) -> ChatRequest {
    let tools = std::mem::take(&mut req.tools);
    if !tools.is_empty() {
        let rendered = render_tools(&tools);
        req.system = Some(match req.system.take().filter(|s| !s.is_empty()) {
            Some(s) => format!("{s}\n\n{rendered}"),
            None => rendered,
        });
    }
    let mut names: HashMap<String, String> = HashMap::new();
    for m in &mut req.messages {
        let parts = std::mem::take(&mut m.parts);
        for p in parts {
            match p {
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                } => {
                    m.parts.push(Part::Text {
                        text: render_call(&name, &arguments),
                    });
                    names.insert(id, name);
                }
                Part::ToolResult {
                    call_id,
                    content,
                    is_error,
                } => {
                    let name = names.get(&call_id).map_or("unknown", String::as_str);
                    let error = if is_error { " error=\"true\"" } else { "" };
                    let mut text = format!("<tool_result name=\"{name}\"{error}>\n");
                    let mut images = Vec::new();
                    for c in content {
                        match c {
                            ResultPart::Text { text: t } => {
                                text.push_str(&t);
                                text.push('\n');
                            }
                            ResultPart::Image { mime_type, data } => {
                                text.push_str(&format!("[image {mime_type}, attached]\n"));
                                images.push(Part::Image { mime_type, data });
                            }
                        }
                    }
                    text.push_str("</tool_result>");
                    m.parts.push(Part::Text { text });
                    m.parts.extend(images);
                }
                other => m.parts.push(other),
            }
        }
    }
    req
}

/// Turns streamed text into text and tool-call events (see the module docs).
#[derive(Debug, Default)]
pub struct PromptToolParser {
    /// Text that may be the start of an opening tag, held until the next delta decides.
    held: String,
    /// The content of an open `<tool_call>` block.
    call: Option<String>,
    calls: usize,
}

/// The longest suffix of `s` that is a proper prefix of `tag`.
fn partial_tag_len(s: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|k| s.ends_with(&tag[..*k]))
        .unwrap_or(0)
}

fn text_event(text: &str, out: &mut Vec<StreamEvent>) {
    if !text.is_empty() {
        out.push(StreamEvent::TextDelta {
            text: text.to_owned(),
        });
    }
}

/// The call in a block's content, if it is one.
fn parse_call(content: &str) -> Option<(String, Value)> {
    let mut body = content.trim();
    if let Some(rest) = body.strip_prefix("```") {
        body = rest.split_once('\n').map_or("", |(_, r)| r);
        body = body.trim_end().strip_suffix("```").unwrap_or(body).trim();
    }
    let v: Value = serde_json::from_str(body).ok()?;
    let name = v
        .get("name")?
        .as_str()
        .filter(|n| !n.is_empty())?
        .to_owned();
    let args = match v.get("arguments").or_else(|| v.get("parameters")) {
        None | Some(Value::Null) => json!({}),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(other) => other.clone(),
    };
    Some((name, args))
}

impl PromptToolParser {
    /// A parser at the start of an answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles one event of the underlying stream; returns the events to pass on.
    pub fn push(&mut self, ev: StreamEvent) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        match ev {
            StreamEvent::TextDelta { text } => self.text(text, &mut out),
            StreamEvent::Done { stop } => {
                self.flush(&mut out);
                let stop = match stop {
                    StopReason::EndTurn if self.calls > 0 => StopReason::ToolUse,
                    other => other,
                };
                out.push(StreamEvent::Done { stop });
            }
            other => out.push(other),
        }
        out
    }

    /// Passes on whatever is held back, as text or as a final call (end of answer or error).
    pub fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some(content) = self.call.take() {
            // The answer may stop inside the closing tag.
            let body = &content[..content.len() - partial_tag_len(&content, CLOSE)];
            if !self.emit_call(body, out) {
                text_event(&format!("{OPEN}{content}"), out);
            }
        }
        text_event(&std::mem::take(&mut self.held), out);
    }

    fn text(&mut self, delta: String, out: &mut Vec<StreamEvent>) {
        let mut input = std::mem::take(&mut self.held);
        input.push_str(&delta);
        loop {
            if let Some(call) = self.call.as_mut() {
                call.push_str(&input);
                let Some(pos) = call.find(CLOSE) else {
                    return;
                };
                let rest = call[pos + CLOSE.len()..].to_owned();
                let content = call[..pos].to_owned();
                self.call = None;
                if !self.emit_call(&content, out) {
                    text_event(&format!("{OPEN}{content}{CLOSE}"), out);
                }
                input = rest;
            } else if let Some(pos) = input.find(OPEN) {
                text_event(&input[..pos], out);
                self.call = Some(String::new());
                input = input[pos + OPEN.len()..].to_owned();
            } else {
                let keep = partial_tag_len(&input, OPEN);
                text_event(&input[..input.len() - keep], out);
                self.held = input[input.len() - keep..].to_owned();
                return;
            }
        }
    }

    fn emit_call(&mut self, content: &str, out: &mut Vec<StreamEvent>) -> bool {
        let Some((name, args)) = parse_call(content) else {
            return false;
        };
        let index = self.calls;
        self.calls += 1;
        out.push(StreamEvent::ToolCallStart {
            index,
            id: format!("call_{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff),
            name,
        });
        out.push(StreamEvent::ToolCallDelta {
            index,
            fragment: args.to_string(),
        });
        true
    }
}

/// Runs a stream through a [`PromptToolParser`].
pub fn decode_stream(inner: EventStream) -> EventStream {
    inner
        .scan(PromptToolParser::new(), |parser, item| {
            let items: Vec<Result<StreamEvent, LlmError>> = match item {
                Ok(ev) => parser.push(ev).into_iter().map(Ok).collect(),
                Err(e) => {
                    let mut held = Vec::new();
                    parser.flush(&mut held);
                    held.into_iter().map(Ok).chain([Err(e)]).collect()
                }
            };
            futures::future::ready(Some(futures::stream::iter(items)))
        })
        .flatten()
        .boxed()
}

/// Wraps a provider so tools go through the prompt convention instead of native fields.
#[derive(Debug)]
pub struct PromptToolProvider {
    inner: Box<dyn Provider>,
}

impl PromptToolProvider {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Provider>) -> Self {
        Self { inner }
    }
}

impl Provider for PromptToolProvider {
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        Box::pin(async move {
            let inner = self.inner.stream(encode_request(req), cancel).await?;
            Ok(decode_stream(inner))
        })
    }

    fn profile_id(&self) -> &str {
        self.inner.profile_id()
    }
}

#[cfg(test)]
mod tests;
