//! `server link NAME`: the `switchboard://` link that proposes a configured server to another
//! Switchboard (docs/links.md).
//!
//! The link never carries a secret: the server's own secrets, bound secrets and plain values
//! that look like credentials all become "ask" fields, which the receiving app asks its person
//! for. What a link cannot carry (a working directory, the sandbox, limits) is said on stderr,
//! so whoever shares the link knows the other side starts from the defaults.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use switchboard_core::config::link::make_link;
use switchboard_core::host::Host;

use crate::output;
use crate::Ctx;

#[derive(Args, Debug)]
pub struct LinkArgs {
    /// The server's name.
    name: String,
}

pub async fn link(ctx: &Ctx, a: LinkArgs) -> anyhow::Result<ExitCode> {
    let spec = ctx.host.server(&Host::server_id(&a.name)?).await?;
    let made = make_link(&spec)?;
    if ctx.json {
        output::json(&json!({ "link": made.url, "left_out": made.left_out }))?;
    } else {
        outln!("{}", made.url);
        for what in &made.left_out {
            errln!("note: the link does not carry {what}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
