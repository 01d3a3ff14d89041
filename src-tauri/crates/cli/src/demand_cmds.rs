//! `switchboard server always-on NAME on|off`: whether the desktop app keeps a server running
//! whenever it runs, or starts it when its tools are needed and stops it when idle (issue 14).
//! The CLI itself starts what each command uses, whatever this says.

use std::process::ExitCode;

use clap::Args;
use switchboard_core::host::Host;

use crate::Ctx;

#[derive(Args, Debug)]
pub struct AlwaysOnArgs {
    /// The server's name.
    name: String,
    /// `on` (start with the app) or `off` (start when needed, stop when idle).
    #[arg(value_parser = ["on", "off"])]
    state: String,
}

pub async fn always_on(ctx: &Ctx, a: AlwaysOnArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    let on = a.state == "on";
    ctx.host.set_always_on(&id, on).await?;
    if on {
        errln!("{id}: always on: the app starts it at launch and keeps it running");
    } else {
        errln!("{id}: starts when needed: the app starts it when its tools are needed and stops it when idle");
    }
    Ok(ExitCode::SUCCESS)
}
