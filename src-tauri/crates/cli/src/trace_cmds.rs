//! `switchboard server trace NAME`: the protocol inspector on the trace a server's last run
//! saved (a CLI process outlives none of its servers), filtered by method, direction, errors,
//! slowness and text, as lines to read or as JSON lines to keep (`--jsonl`).
//!
//! Pairing, filters and the export format live in `switchboard_core::host::inspector`, shared
//! with the app; this file only parses flags and prints. Bodies are printed as the trace kept
//! them (redacted when recorded), through `inert` / `json_inert` so a server's text cannot act
//! on the terminal.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use switchboard_core::host::inspector::{to_jsonl, Inspected, Kind, TraceFilter};
use switchboard_core::host::Host;
use switchboard_core::server_logs::Direction;

use crate::output::{self, inert, json_inert};
use crate::Ctx;

/// Which way a message went, as a person says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Way {
    /// Host to server.
    #[value(alias = "out")]
    Sent,
    /// Server to host.
    #[value(alias = "in")]
    Received,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The server's name.
    name: String,
    /// Only messages whose method contains this (responses count as their request's method).
    #[arg(long)]
    method: Option<String>,
    /// Only messages sent to the server or received from it.
    #[arg(long, value_enum)]
    direction: Option<Way>,
    /// Only error responses (JSON-RPC errors and tool results marked isError).
    #[arg(long)]
    errors: bool,
    /// Only requests and responses that took at least this many milliseconds.
    #[arg(long, value_name = "MS")]
    slow: Option<f64>,
    /// Only messages containing this text (case-insensitive).
    #[arg(long)]
    search: Option<String>,
    /// Only the newest N matching messages.
    #[arg(long, value_name = "N")]
    lines: Option<usize>,
    /// Print JSON lines (one message per line) instead of text.
    #[arg(long)]
    jsonl: bool,
}

pub async fn trace(ctx: &Ctx, a: TraceArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    let filter = TraceFilter {
        method: a.method,
        direction: a.direction.map(|w| match w {
            Way::Sent => Direction::Out,
            Way::Received => Direction::In,
        }),
        errors_only: a.errors,
        slow_ms: a.slow,
        search: a.search,
    };
    let mut shown = ctx.host.inspect_trace(&id, &filter).await?;
    if let Some(n) = a.lines {
        shown.drain(..shown.len().saturating_sub(n));
    }
    if a.jsonl {
        output::write_out(format_args!("{}", json_inert(&to_jsonl(&shown))));
    } else if ctx.json {
        output::json(&shown)?;
    } else if shown.is_empty() {
        outln!("No matching messages in the saved trace of {id}; it is written when a run of the server ends.");
    } else {
        for e in &shown {
            outln!("{}", line(e));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One message for a person: time, arrow, method and id, duration, then the body.
fn line(e: &Inspected) -> String {
    let arrow = match e.direction {
        Direction::Out => "->",
        Direction::In => "<-",
        Direction::Note => "**",
    };
    let what = match (e.kind, &e.method) {
        (Kind::Response, Some(m)) => format!(" {} answer", inert(m)),
        (_, Some(m)) => format!(" {}", inert(m)),
        _ => String::new(),
    };
    let id =
        e.id.as_deref()
            .map(|i| format!(" #{}", inert(i)))
            .unwrap_or_default();
    let dur = e
        .duration_ms
        .map(|d| format!(" ({d:.1} ms)"))
        .unwrap_or_default();
    let err = if e.is_error || e.tool_error {
        " ERROR"
    } else {
        ""
    };
    format!("{} {arrow}{what}{id}{dur}{err} {}", e.at_ms, inert(&e.body))
}
