//! The scenario a fake LLM server plays: what to answer to each request, in order.
//!
//! JSON (the binary's `--scenario FILE` / `--scenario-json TEXT`, or built in Rust):
//!
//! ```json
//! {
//!   "replies": [
//!     {"text": ["Hel", "lo"], "usage": {"input": 12, "output": 3, "cached": 4}},
//!     {"tool_calls": [{"id": "call_1", "name": "weather__get",
//!                      "arguments": ["{\"ci", "ty\": \"Paris\"}"]}]},
//!     {"http_error": {"status": 429, "headers": {"retry-after": "1"},
//!                     "type": "rate_limit_error", "message": "slow down"}, "times": 2},
//!     {"text": ["partial"], "end": "cut"},
//!     {"text": ["partial"], "end": {"error": {"type": "overloaded_error", "message": "Overloaded"}}},
//!     {"text": ["a", "b"], "chunk_delay_ms": 100, "split_bytes": 7},
//!     {"raw": ["data: {\"choices\":[]}\n\n", "data: [DONE]\n\n"]}
//!   ],
//!   "repeat_last": false
//! }
//! ```
//!
//! Request number `n` (0-based, counting POSTs to either endpoint) gets `replies[n]` after
//! `times` expansion; past the end, the last reply again if `repeat_last`, else HTTP 500
//! saying the scenario ran out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The whole script.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Replies in request order.
    #[serde(default)]
    pub replies: Vec<Reply>,
    /// Answer requests past the end with the last reply.
    #[serde(default)]
    pub repeat_last: bool,
}

impl Scenario {
    /// A scenario of these replies.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self {
            replies: replies.into_iter().collect(),
            repeat_last: false,
        }
    }

    /// The reply for request `n`, with `times` expanded.
    pub fn reply_for(&self, n: usize) -> Option<&Reply> {
        let mut seen = 0;
        for r in &self.replies {
            seen += r.times.max(1) as usize;
            if n < seen {
                return Some(r);
            }
        }
        self.replies.last().filter(|_| self.repeat_last)
    }
}

/// One scripted answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reply {
    /// Text deltas, one SSE event each.
    pub text: Vec<String>,
    /// Tool calls, streamed one after the other.
    pub tool_calls: Vec<ScriptedCall>,
    /// Token usage to report (OpenAI: only when the request asked with `stream_options`).
    pub usage: Option<ScriptedUsage>,
    /// The vendor's stop reason string, instead of the natural one (`stop`/`tool_calls`,
    /// `end_turn`/`tool_use`).
    pub stop: Option<String>,
    /// Answer with this HTTP error instead of a stream.
    pub http_error: Option<HttpError>,
    /// Extra response headers on a streamed answer.
    pub headers: BTreeMap<String, String>,
    /// How the stream ends.
    pub end: End,
    /// Milliseconds to wait before each SSE event.
    pub chunk_delay_ms: u64,
    /// How many events go out at once before `chunk_delay_ms` applies (with a long delay: an
    /// answer that starts, then stalls).
    pub immediate_frames: usize,
    /// Write each SSE event in HTTP chunks of this many bytes (0: one chunk per event), so
    /// events and UTF-8 characters straddle reads.
    pub split_bytes: usize,
    /// Send these SSE frames verbatim instead of rendering the fields above (`end` then only
    /// decides how the connection closes: `reset` drops it, anything else ends it cleanly).
    pub raw: Option<Vec<String>>,
    /// How many consecutive requests get this reply (default 1).
    pub times: u32,
}

impl Reply {
    /// A text answer split into these deltas.
    pub fn text(deltas: &[&str]) -> Self {
        Self {
            text: deltas.iter().map(|s| (*s).to_owned()).collect(),
            ..Self::default()
        }
    }

    /// An answer making these calls.
    pub fn calls(calls: Vec<ScriptedCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::default()
        }
    }

    /// An HTTP error with the vendor's error body built from `kind` and `message`.
    pub fn http_error(status: u16, kind: &str, message: &str) -> Self {
        Self {
            http_error: Some(HttpError {
                status,
                kind: Some(kind.to_owned()),
                message: Some(message.to_owned()),
                ..HttpError::default()
            }),
            ..Self::default()
        }
    }

    /// Sets `usage`.
    pub fn with_usage(mut self, input: u64, output: u64, cached: u64) -> Self {
        self.usage = Some(ScriptedUsage {
            input,
            output,
            cached,
        });
        self
    }

    /// Sets `end`.
    pub fn ending(mut self, end: End) -> Self {
        self.end = end;
        self
    }

    /// Sets `times`.
    pub fn times(mut self, n: u32) -> Self {
        self.times = n;
        self
    }

    /// Adds a header to the HTTP error (or, without one, to the streamed answer).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match &mut self.http_error {
            Some(e) => e.headers.insert(name.to_owned(), value.to_owned()),
            None => self.headers.insert(name.to_owned(), value.to_owned()),
        };
        self
    }
}

/// One scripted tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedCall {
    /// The call id (default `call_<i>` / `toolu_<i>`).
    pub id: Option<String>,
    /// The tool name.
    pub name: String,
    /// The argument JSON text, in the fragments to stream.
    pub arguments: Vec<String>,
}

impl ScriptedCall {
    /// A call whose argument text is streamed in these fragments.
    pub fn new(id: &str, name: &str, fragments: &[&str]) -> Self {
        Self {
            id: Some(id.to_owned()),
            name: name.to_owned(),
            arguments: fragments.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

/// Usage to report, in neutral terms (`input` includes `cached`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedUsage {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cached: u64,
}

/// An HTTP error answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpError {
    /// The status code.
    pub status: u16,
    /// Response headers (`retry-after`, `anthropic-ratelimit-requests-reset`...).
    pub headers: BTreeMap<String, String>,
    /// The body verbatim: a JSON value, or a string sent as-is (an HTML page, say). Without
    /// it, the vendor's error envelope is built from `type`, `message` and `code`.
    pub body: Option<Value>,
    /// The error `type`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The error `message`.
    pub message: Option<String>,
    /// The error `code` (OpenAI only).
    pub code: Option<String>,
}

/// How a streamed answer ends.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The vendor's terminal events (`finish_reason`, usage, `[DONE]`; `message_delta`,
    /// `message_stop`).
    #[default]
    Complete,
    /// The body ends cleanly right after the content, without any terminal event.
    Cut,
    /// The connection is dropped mid-body (no final HTTP chunk): a network failure.
    Reset,
    /// An unparseable chunk after the content, then the normal terminal events.
    Malformed,
    /// A mid-stream error event after the content, then the body ends.
    Error(StreamError),
}

/// A mid-stream error event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StreamError {
    /// The error `type` (`server_error`, `overloaded_error`...).
    #[serde(rename = "type")]
    pub kind: String,
    /// The message.
    pub message: String,
    /// The error `code` (OpenAI only).
    pub code: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_expand_and_repeat_last() {
        let mut s = Scenario::new([
            Reply::http_error(500, "server_error", "x").times(2),
            Reply::text(&["ok"]),
        ]);
        assert_eq!(
            s.reply_for(0).unwrap().http_error.as_ref().unwrap().status,
            500
        );
        assert_eq!(
            s.reply_for(1).unwrap().http_error.as_ref().unwrap().status,
            500
        );
        assert_eq!(s.reply_for(2).unwrap().text, vec!["ok"]);
        assert_eq!(s.reply_for(3), None);
        s.repeat_last = true;
        assert_eq!(s.reply_for(9).unwrap().text, vec!["ok"]);
    }

    #[test]
    fn json_form_parses() {
        let s: Scenario = serde_json::from_str(
            r#"{"replies": [
                {"text": ["a"], "end": "cut"},
                {"text": ["a"], "end": {"error": {"type": "overloaded_error", "message": "Overloaded"}}},
                {"http_error": {"status": 429, "headers": {"retry-after": "1"}, "type": "rate_limit_error"}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(s.replies[0].end, End::Cut);
        assert!(matches!(&s.replies[1].end, End::Error(e) if e.kind == "overloaded_error"));
        assert_eq!(
            s.replies[2].http_error.as_ref().unwrap().headers["retry-after"],
            "1"
        );
        assert!(serde_json::from_str::<Scenario>(r#"{"replies": [{"txt": []}]}"#).is_err());
    }
}
