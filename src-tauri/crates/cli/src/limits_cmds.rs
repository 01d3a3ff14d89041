//! `server limits`: a server's time and size limits, shown or changed.
//!
//! The message cap is what a "message too large" failure names: a server whose answers are
//! really that large gets a higher cap here, not a host-wide switch (one hostile server must
//! not make every connection accept gigabyte lines).

use std::process::ExitCode;

use clap::Args;
use switchboard_core::host::Host;

use crate::output;
use crate::Ctx;

#[derive(Args, Debug)]
pub struct LimitsArgs {
    /// The server's name.
    name: String,
    /// Per-request timeout in seconds.
    #[arg(long)]
    timeout: Option<u64>,
    /// Start-up and handshake timeout in seconds.
    #[arg(long)]
    init_timeout: Option<u64>,
    /// The largest message it may send, in MiB (one stdio line, HTTP body or SSE event).
    #[arg(long)]
    max_message_mb: Option<u32>,
}

pub async fn limits(ctx: &Ctx, a: LimitsArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    let mut limits = ctx.host.server(&id).await?.timeouts;
    let change = a.timeout.is_some() || a.init_timeout.is_some() || a.max_message_mb.is_some();
    if let Some(t) = a.timeout {
        limits.request_secs = t;
    }
    if let Some(t) = a.init_timeout {
        limits.init_secs = t;
    }
    if let Some(m) = a.max_message_mb {
        limits.max_message_mib = m;
    }
    if change {
        ctx.host.set_server_limits(&id, limits).await?;
        errln!("{id}: limits changed; a running server restarts under them");
    }
    if ctx.json {
        output::json(&limits)?;
    } else {
        outln!("request timeout   {} s", limits.request_secs);
        outln!("start-up timeout  {} s", limits.init_secs);
        outln!("message cap       {} MiB", limits.max_message_mib);
    }
    Ok(ExitCode::SUCCESS)
}
