//! `server link NAME` and `server install LINK`: the `switchboard://` link that proposes a
//! configured server to another Switchboard, and taking one in (docs/links.md).
//!
//! The link never carries a secret (LK-01): the server's own secrets, bound secrets and
//! `${secret:NAME}` placeholders in its arguments or URL become values the receiver is asked
//! for, and a server with a plain credential in an argument, its URL query, an env var or a
//! header gets no link at all: the core refuses and names each. What a link cannot carry (a
//! working directory, the sandbox, limits) is said on stderr, so whoever shares the link knows
//! the other side starts from the defaults.
//!
//! `install` is the CLI's side of the app's link dialog: the same proposal, the same plan
//! shown, the same one step that adds and approves exactly that plan. The asked values are read
//! one line each from stdin (or without echo on a terminal) and go to the keyring.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use switchboard_core::config::link::make_link;
use switchboard_core::host::Host;
use switchboard_core::redact::Secret;

use crate::errors::CliError;
use crate::output;
use crate::Ctx;

#[derive(Args, Debug)]
pub struct LinkArgs {
    /// The server's name.
    name: String,
}

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The `switchboard://add?config=...` link.
    link: String,
    /// Add and approve without asking (for scripts). The plan is still printed.
    #[arg(long)]
    yes: bool,
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

pub async fn install(ctx: &Ctx, a: InstallArgs) -> anyhow::Result<ExitCode> {
    let view = ctx.host.propose_link(&a.link).await?;
    let id = view.trust.server.clone();
    if let Some(from) = &view.renamed_from {
        errln!("you already have a server named {from}: this one would be added as {id}");
    }
    errln!("{id} would run or connect exactly like this (nothing is stored or started yet):");
    for (k, v) in &view.trust.lines {
        errln!("  {k:<10} {v}");
    }
    for w in &view.trust.warnings {
        errln!("  WARNING:   {w}");
    }
    let mut typed = Vec::with_capacity(view.asked.len());
    for field in &view.asked {
        typed.push((field.clone(), read_value(field)?));
    }
    if !a.yes && !confirmed(&id.to_string())? {
        return Err(CliError::Declined(format!("not added; nothing of {id} was stored")).into());
    }
    let added = ctx
        .host
        .add_from_link(&a.link, typed, &view.trust.fingerprint)
        .await?;
    if ctx.json {
        output::json(&json!({ "added": added, "stored_in_keyring": view.asked }))?;
    } else {
        errln!("added and approved {added}");
        for field in &view.asked {
            errln!("  the value you gave for {field} is in the keyring, not the config");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One asked value: without echo on a terminal, else one line of stdin. An empty one stops
/// the install (nothing stored): a server given an empty key fails later, less clearly.
fn read_value(field: &str) -> anyhow::Result<Secret> {
    let stdin = std::io::stdin();
    let value = if stdin.is_terminal() {
        rpassword::prompt_password(format!("value for {field} (kept in the keyring): "))?
    } else {
        let mut line = String::new();
        stdin.lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if value.is_empty() {
        return Err(CliError::NeedsConfirmation(format!(
            "the link asks for a value for {field} and none was given (give one line per asked value on stdin); nothing was added"
        ))
        .into());
    }
    Ok(Secret::new(value))
}

fn confirmed(id: &str) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::NeedsConfirmation(
            "adding a server from a link needs a yes on a terminal; run it interactively or pass --yes".into(),
        )
        .into());
    }
    err!("Add {id} and approve it to run this? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
