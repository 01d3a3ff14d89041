//! The protocol inspector: a server's trace (see [`super::logs`]) paired, filtered, searched
//! and exported as JSON lines.
//!
//! Pure functions over [`TraceEntry`]s, so the app (live trace) and the CLI (the trace a run
//! saved) show and export exactly the same thing. Nothing here reads message bodies other
//! than as the trace kept them: bodies were redacted (and cut) when they were recorded, and
//! the export writes them as kept, so an export never holds more than the trace view shows.
//!
//! Pairing: a request is a message with a `method` and an `id`; its response is the next
//! message the other way with the same `id` and no `method`. Both directions are paired (the
//! host asks servers, servers ask the host for sampling, roots or elicitation), responses may
//! arrive in any order, and an id can be reused once its request was answered. The duration
//! is the one the trace measured on its monotonic clock when it has one, else the difference
//! of the wall-clock timestamps; it is shown on the request and on the response.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Host, HostError};
use crate::ids::ServerId;
use crate::server_logs::{Direction, ServerLogs, TraceEntry};

/// What kind of JSON-RPC message an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A request: a method and an id.
    Request,
    /// A response: an id, no method.
    Response,
    /// A notification: a method, no id.
    Notification,
    /// Something the host noted, or a body it could not read (cut or not JSON).
    Other,
}

/// One trace entry as the inspector shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inspected {
    /// Position in the trace (0 = oldest kept).
    pub index: usize,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// Which way it went.
    pub direction: Direction,
    /// What kind of message it is.
    pub kind: Kind,
    /// The method; for a response, its request's method (when the request is still kept).
    pub method: Option<String>,
    /// The JSON-RPC id.
    pub id: Option<String>,
    /// For a request and its response: milliseconds between them.
    pub duration_ms: Option<f64>,
    /// Index of the paired request or response.
    pub pair: Option<usize>,
    /// A JSON-RPC error response.
    pub is_error: bool,
    /// A tool result with `isError: true` (the call ran and failed).
    pub tool_error: bool,
    /// The message as the trace kept it (redacted, possibly cut).
    pub body: String,
}

/// Which entries to keep. Every condition set must hold; the default keeps everything.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceFilter {
    /// Case-insensitive part of the method (`tools/` keeps `tools/list` and `tools/call`).
    /// Responses match by their request's method.
    pub method: Option<String>,
    /// Only messages going this way.
    pub direction: Option<Direction>,
    /// Only error responses: JSON-RPC errors and tool results marked `isError`.
    pub errors_only: bool,
    /// Only requests and responses that took at least this many milliseconds.
    pub slow_ms: Option<f64>,
    /// Case-insensitive text in the message (or its method).
    pub search: Option<String>,
}

#[derive(Deserialize)]
struct Shape {
    #[serde(default)]
    result: Option<ResultShape>,
}

#[derive(Deserialize)]
struct ResultShape {
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

fn kind(e: &TraceEntry) -> Kind {
    match (e.direction, &e.method, &e.id) {
        (Direction::Note, _, _) => Kind::Other,
        (_, Some(_), Some(_)) => Kind::Request,
        (_, Some(_), None) => Kind::Notification,
        (_, None, Some(_)) => Kind::Response,
        (_, None, None) => Kind::Other,
    }
}

fn other_way(d: Direction) -> Direction {
    match d {
        Direction::In => Direction::Out,
        Direction::Out => Direction::In,
        Direction::Note => Direction::Note,
    }
}

/// The trace with kinds, pairs and durations worked out, oldest first.
pub fn inspect(trace: &[TraceEntry]) -> Vec<Inspected> {
    let mut out: Vec<Inspected> = Vec::with_capacity(trace.len());
    // (direction of the request, id) -> index of the request waiting for its answer.
    let mut waiting: HashMap<(Direction, &str), usize> = HashMap::new();
    for (index, e) in trace.iter().enumerate() {
        let kind = kind(e);
        let mut item = Inspected {
            index,
            at_ms: e.at_ms,
            direction: e.direction,
            kind,
            method: e.method.clone(),
            id: e.id.clone(),
            duration_ms: None,
            pair: None,
            is_error: e.is_error,
            tool_error: kind == Kind::Response
                && !e.is_error
                && serde_json::from_str::<Shape>(&e.body)
                    .ok()
                    .and_then(|s| s.result?.is_error)
                    .unwrap_or(false),
            body: e.body.clone(),
        };
        match (kind, e.id.as_deref()) {
            (Kind::Request, Some(id)) => {
                waiting.insert((e.direction, id), index);
            }
            (Kind::Response, Some(id)) => {
                if let Some(req) = waiting.remove(&(other_way(e.direction), id)) {
                    let asked = &mut out[req];
                    let d = e
                        .duration_ms
                        .unwrap_or_else(|| (e.at_ms - asked.at_ms).max(0) as f64);
                    asked.pair = Some(index);
                    asked.duration_ms = Some(d);
                    item.pair = Some(req);
                    item.duration_ms = Some(d);
                    item.method = asked.method.clone();
                } else {
                    // Its request fell out of the kept window: keep what the trace timed.
                    item.duration_ms = e.duration_ms;
                }
            }
            _ => {}
        }
        out.push(item);
    }
    out
}

fn contains_ci(haystack: &str, needle_lower: &str) -> bool {
    haystack.to_lowercase().contains(needle_lower)
}

impl TraceFilter {
    /// Whether `e` passes every condition set.
    pub fn keeps(&self, e: &Inspected) -> bool {
        if let Some(m) = self
            .method
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            let m = m.to_lowercase();
            if !e.method.as_deref().is_some_and(|x| contains_ci(x, &m)) {
                return false;
            }
        }
        if self.direction.is_some_and(|d| d != e.direction) {
            return false;
        }
        if self.errors_only && !(e.is_error || e.tool_error) {
            return false;
        }
        if let Some(ms) = self.slow_ms {
            if !e.duration_ms.is_some_and(|d| d >= ms) {
                return false;
            }
        }
        if let Some(q) = self.search.as_deref().filter(|q| !q.is_empty()) {
            let q = q.to_lowercase();
            let in_method = e.method.as_deref().is_some_and(|m| contains_ci(m, &q));
            if !in_method && !contains_ci(&e.body, &q) {
                return false;
            }
        }
        true
    }

    /// The entries of `all` this filter keeps, oldest first.
    pub fn apply(&self, all: Vec<Inspected>) -> Vec<Inspected> {
        all.into_iter().filter(|e| self.keeps(e)).collect()
    }
}

impl Host {
    /// A server's protocol trace, inspected and filtered: live when it runs in this process,
    /// else as its last run saved it (a CLI process outlives none of its servers). An unknown
    /// server is an error rather than an empty trace.
    pub async fn inspect_trace(
        &self,
        id: &ServerId,
        filter: &TraceFilter,
    ) -> Result<Vec<Inspected>, HostError> {
        self.server(id).await?;
        let trace = match self.handle(id) {
            Some(h) => h.logs().trace(),
            None => ServerLogs::load_persisted(&self.data_dir().join("logs").join(id.as_str())).1,
        };
        Ok(filter.apply(inspect(&trace)))
    }
}

/// One line of the JSON-lines export.
#[derive(Serialize)]
struct Line<'a> {
    at_ms: i64,
    direction: Direction,
    kind: Kind,
    method: Option<&'a str>,
    id: Option<&'a str>,
    duration_ms: Option<f64>,
    is_error: bool,
    tool_error: bool,
    /// The message as JSON when the kept body is whole JSON, else the kept text.
    message: serde_json::Value,
}

/// `entries` as JSON lines, one message per line, each ending in a newline.
pub fn to_jsonl(entries: &[Inspected]) -> String {
    let mut out = String::new();
    for e in entries {
        let message = serde_json::from_str::<serde_json::Value>(&e.body)
            .unwrap_or_else(|_| serde_json::Value::String(e.body.clone()));
        let line = Line {
            at_ms: e.at_ms,
            direction: e.direction,
            kind: e.kind,
            method: e.method.as_deref(),
            id: e.id.as_deref(),
            duration_ms: e.duration_ms,
            is_error: e.is_error,
            tool_error: e.tool_error,
            message,
        };
        // Serializing plain data into a String cannot fail; a line that somehow did is left out
        // rather than breaking the file.
        if let Ok(s) = serde_json::to_string(&line) {
            out.push_str(&s);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests;
