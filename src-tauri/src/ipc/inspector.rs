//! The protocol inspector: a server's trace paired, filtered and exported as JSON lines.
//!
//! Thin over `switchboard_core::host::inspector` (the same functions `switchboard server trace`
//! uses). The export is returned as text for the app to show and copy, as the other exports
//! (servers, agents, policy) are: the web view writes no files. Bodies are as the trace kept
//! them, redacted when recorded, so an export holds nothing the trace view hides.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::host::inspector::{to_jsonl, Inspected, Kind, TraceFilter};
use switchboard_core::host::Host;
use switchboard_core::server_logs::Direction;
use tauri::State;

use super::{logged, IpcError};

/// Which way a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum WayDto {
    /// Host to server.
    Out,
    /// Server to host.
    In,
    /// Something the host noted about the stream.
    Note,
}

/// Which trace entries to show; every condition set must hold.
#[derive(Clone, Debug, Default, Deserialize, Type)]
pub struct TraceFilterDto {
    /// Case-insensitive part of the method; responses count as their request's method.
    pub method: Option<String>,
    /// Only messages going this way.
    pub direction: Option<WayDto>,
    /// Only error responses (JSON-RPC errors and tool results marked isError).
    pub errors_only: bool,
    /// Only requests and responses that took at least this many milliseconds.
    pub slow_ms: Option<f64>,
    /// Case-insensitive text in the message.
    pub search: Option<String>,
}

/// One inspected trace entry.
#[derive(Clone, Debug, Serialize, Type)]
pub struct InspectedDto {
    /// Position in the trace (0 = oldest kept).
    pub index: u32,
    /// Milliseconds since the Unix epoch.
    pub at_ms: f64,
    /// Which way it went.
    pub direction: WayDto,
    /// `request`, `response`, `notification` or `other`.
    pub kind: String,
    /// The method; for a response, its request's.
    pub method: Option<String>,
    /// The JSON-RPC id.
    pub id: Option<String>,
    /// Milliseconds between a request and its response (on both).
    pub duration_ms: Option<f64>,
    /// Index of the paired request or response.
    pub pair: Option<u32>,
    /// A JSON-RPC error response.
    pub is_error: bool,
    /// A tool result marked isError.
    pub tool_error: bool,
    /// The message (redacted, possibly cut; shown as text).
    pub body: String,
}

fn way(d: Direction) -> WayDto {
    match d {
        Direction::Out => WayDto::Out,
        Direction::In => WayDto::In,
        Direction::Note => WayDto::Note,
    }
}

impl From<TraceFilterDto> for TraceFilter {
    fn from(f: TraceFilterDto) -> Self {
        Self {
            method: f.method,
            direction: f.direction.map(|d| match d {
                WayDto::Out => Direction::Out,
                WayDto::In => Direction::In,
                WayDto::Note => Direction::Note,
            }),
            errors_only: f.errors_only,
            slow_ms: f.slow_ms,
            search: f.search,
        }
    }
}

impl From<Inspected> for InspectedDto {
    fn from(e: Inspected) -> Self {
        Self {
            index: u32::try_from(e.index).unwrap_or(u32::MAX),
            at_ms: e.at_ms as f64,
            direction: way(e.direction),
            kind: match e.kind {
                Kind::Request => "request",
                Kind::Response => "response",
                Kind::Notification => "notification",
                Kind::Other => "other",
            }
            .into(),
            method: e.method,
            id: e.id,
            duration_ms: e.duration_ms,
            pair: e.pair.map(|p| u32::try_from(p).unwrap_or(u32::MAX)),
            is_error: e.is_error,
            tool_error: e.tool_error,
            body: e.body,
        }
    }
}

/// A server's trace (live when it runs, else its last run's), paired, timed and filtered.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn inspect_trace(
    host: State<'_, Host>,
    name: String,
    filter: TraceFilterDto,
) -> Result<Vec<InspectedDto>, IpcError> {
    let shown = host
        .inspect_trace(&Host::server_id(&name)?, &filter.into())
        .await?;
    Ok(shown.into_iter().map(Into::into).collect())
}

/// The filtered trace as JSON lines, one message per line with its timing.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn export_trace(
    host: State<'_, Host>,
    name: String,
    filter: TraceFilterDto,
) -> Result<String, IpcError> {
    let shown = host
        .inspect_trace(&Host::server_id(&name)?, &filter.into())
        .await?;
    Ok(to_jsonl(&shown))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use serde_json::json;

    use super::super::tests::audit::{app, call};

    #[test]
    fn answers_through_the_real_invoke_path_and_refuses_hostile_input() {
        let app = app();
        let f = json!({"method": "tools/", "direction": "in", "errors_only": true,
                       "slow_ms": 5.0, "search": "x"});
        let args = json!({"name": "local", "filter": f});
        // Never started: no trace, and no error.
        assert_eq!(call(&app, "inspect_trace", args.clone()).unwrap(), "[]");
        assert_eq!(call(&app, "export_trace", args).unwrap(), "\"\"");
        for bad in [
            json!({"name": "nobody", "filter": f}),
            json!({"name": "../etc", "filter": f}),
            json!({"name": "local", "filter": {"direction": "sideways", "errors_only": false}}),
            json!({"name": "local", "filter": {"errors_only": "yes"}}),
            json!({"name": "local"}),
        ] {
            assert!(call(&app, "inspect_trace", bad.clone()).is_err(), "{bad}");
            assert!(call(&app, "export_trace", bad.clone()).is_err(), "{bad}");
        }
        let none = json!({"name": "local", "filter": {"errors_only": false}});
        assert_eq!(call(&app, "inspect_trace", none).unwrap(), "[]");
    }
}
