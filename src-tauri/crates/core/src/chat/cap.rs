//! What the model sees of a tool's output is capped (a 2 MB log must not fill the context
//! window); the whole output stays with the host, and the model gets a marker naming a
//! built-in tool that pages through or searches it.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::llm::{ResultPart, ToolSpec};
use crate::mcp::catalog::{Content, ToolResult};

/// The built-in tool's LLM-facing name (double underscore: no MCP server's name can produce
/// it, see `mcp::naming`).
pub const READ_OUTPUT_TOOL: &str = "switchboard__read_tool_output";

/// Default characters of one tool output the model sees.
pub const DEFAULT_CAP: usize = 16_000;

/// The built-in tool's spec.
pub fn read_output_spec() -> ToolSpec {
    ToolSpec {
        name: READ_OUTPUT_TOOL.into(),
        description: "Read more of a tool output that was cut short. Give the call_id from the \
            marker, and either offset (characters) and length, or a search string to get the \
            lines that contain it."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "call_id": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "length": {"type": "integer", "minimum": 1, "maximum": 100000},
                "search": {"type": "string"}
            },
            "required": ["call_id"]
        }),
    }
}

/// A tool result as model-facing parts: text and images, resources and links as text.
pub fn to_parts(r: &ToolResult) -> Vec<ResultPart> {
    let mut out = Vec::new();
    for c in &r.content {
        match c {
            Content::Text { text } => out.push(ResultPart::Text { text: text.clone() }),
            Content::Image { data, mime_type } => out.push(ResultPart::Image {
                mime_type: mime_type.clone(),
                data: data.clone(),
            }),
            Content::Audio { mime_type, data } => out.push(ResultPart::Text {
                text: format!("[audio {mime_type}, {} bytes base64]", data.len()),
            }),
            Content::ResourceLink { uri, name, .. } => out.push(ResultPart::Text {
                text: format!("[resource link {name}: {uri}]"),
            }),
            Content::Resource { resource } => out.push(ResultPart::Text {
                text: resource
                    .text
                    .clone()
                    .unwrap_or_else(|| format!("[binary resource {}]", resource.uri)),
            }),
        }
    }
    if let Some(s) = &r.structured_content {
        if out.is_empty() {
            out.push(ResultPart::Text {
                text: s.to_string(),
            });
        }
    }
    out
}

/// Keeps the model's view of one output under `cap` characters of text. Returns the capped
/// parts and, when something was cut, the whole text for [`Outputs`].
pub fn cap_parts(
    call_id: &str,
    parts: Vec<ResultPart>,
    cap: usize,
) -> (Vec<ResultPart>, Option<String>) {
    let total: usize = parts
        .iter()
        .map(|p| match p {
            ResultPart::Text { text } => text.chars().count(),
            ResultPart::Image { .. } => 0,
        })
        .sum();
    if total <= cap {
        return (parts, None);
    }
    let full: String = parts
        .iter()
        .filter_map(|p| match p {
            ResultPart::Text { text } => Some(text.as_str()),
            ResultPart::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut left = cap;
    let mut out = Vec::new();
    for p in parts {
        match p {
            ResultPart::Text { text } if left > 0 => {
                let n = text.chars().count();
                if n <= left {
                    left -= n;
                    out.push(ResultPart::Text { text });
                } else {
                    out.push(ResultPart::Text {
                        text: text.chars().take(left).collect(),
                    });
                    left = 0;
                }
            }
            ResultPart::Text { .. } => {}
            image => out.push(image),
        }
    }
    out.push(ResultPart::Text {
        text: format!(
            "[output cut at {cap} of {total} characters; call {READ_OUTPUT_TOOL} with call_id \"{call_id}\" and offset/length or search to read more]"
        ),
    });
    (out, Some(full))
}

/// Whole outputs that were cut, by call id, for the built-in tool.
#[derive(Debug, Default)]
pub struct Outputs {
    full: HashMap<String, String>,
}

impl Outputs {
    /// Keeps the whole text of a cut output.
    pub fn keep(&mut self, call_id: &str, text: String) {
        self.full.insert(call_id.to_owned(), text);
    }

    /// Answers a call of the built-in tool: `(text, is_error)`.
    pub fn read(&self, args: &Value) -> (String, bool) {
        let Some(id) = args.get("call_id").and_then(Value::as_str) else {
            return ("call_id is required".into(), true);
        };
        let Some(text) = self.full.get(id) else {
            return (format!("no cut output with call_id {id:?}"), true);
        };
        if let Some(needle) = args.get("search").and_then(Value::as_str) {
            let hits: Vec<String> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| l.contains(needle))
                .take(200)
                .map(|(i, l)| format!("{}: {l}", i + 1))
                .collect();
            return if hits.is_empty() {
                (format!("no line contains {needle:?}"), false)
            } else {
                (hits.join("\n"), false)
            };
        }
        let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let length = args
            .get("length")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_CAP as u64)
            .min(100_000) as usize;
        let total = text.chars().count();
        let slice: String = text.chars().skip(offset).take(length).collect();
        let end = (offset + length).min(total);
        (
            format!("[characters {offset}..{end} of {total}]\n{slice}"),
            false,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> ResultPart {
        ResultPart::Text { text: t.into() }
    }

    #[test]
    fn small_outputs_pass_untouched() {
        let (parts, full) = cap_parts("c1", vec![text("hello")], 10);
        assert_eq!(parts, vec![text("hello")]);
        assert!(full.is_none());
    }

    #[test]
    fn big_outputs_are_cut_with_a_marker_and_readable_through_the_tool() {
        let big: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let (parts, full) = cap_parts("c9", vec![text(&big)], 50);
        assert_eq!(parts.len(), 2);
        let ResultPart::Text { text: head } = &parts[0] else {
            panic!()
        };
        assert_eq!(head.chars().count(), 50);
        let ResultPart::Text { text: marker } = &parts[1] else {
            panic!()
        };
        assert!(
            marker.contains(READ_OUTPUT_TOOL) && marker.contains("\"c9\""),
            "{marker}"
        );
        let mut outputs = Outputs::default();
        outputs.keep("c9", full.unwrap());
        let (page, err) = outputs.read(&json!({"call_id": "c9", "offset": 50, "length": 7}));
        assert!(!err);
        assert!(page.ends_with(&big[50..57]), "{page}");
        let (hits, _) = outputs.read(&json!({"call_id": "c9", "search": "line 777"}));
        assert_eq!(hits, "778: line 777");
        assert!(outputs.read(&json!({"call_id": "nope"})).1);
        assert!(outputs.read(&json!({})).1);
    }
}
