//! `switchboard state`: read a run's shared state (issue 15) — the entries and notes agents
//! wrote for each other. Read-only: agents write through their built-in tools.
//!
//! Values and notes were written by models, possibly from what an untrusted server returned, so
//! they are shown inert (escape sequences made visible), in JSON too.

use std::process::ExitCode;

use clap::Subcommand;
use switchboard_core::agents::StateEntry;
use switchboard_core::host::Host;
use switchboard_core::store::StoreError;

use crate::{output, Ctx};

/// `switchboard state ...`.
#[derive(Subcommand, Debug)]
pub enum StateCmd {
    /// The keys of a run's state: newest version, author, size.
    List {
        /// The run (`run-` and 32 hex digits).
        run: String,
    },
    /// The newest value of one key (or every version with --history).
    Get {
        /// The run.
        run: String,
        /// The key.
        key: String,
        /// Every version, oldest first.
        #[arg(long)]
        history: bool,
    },
    /// The notes of a run, oldest first.
    Notes {
        /// The run.
        run: String,
    },
}

/// Runs one `state` subcommand.
pub async fn run(ctx: &Ctx, cmd: StateCmd) -> anyhow::Result<ExitCode> {
    let host = &ctx.host;
    match cmd {
        StateCmd::List { run } => {
            let keys = host.state_list(&Host::run_id(&run)?).await?;
            if ctx.json {
                output::json(&keys)?;
            } else if keys.is_empty() {
                errln!("the state of {run} is empty");
            }
            for k in keys.iter().filter(|_| !ctx.json) {
                outln!(
                    "{}\tv{}\t{}\t{} bytes\t{}",
                    k.key,
                    k.version,
                    k.author,
                    k.bytes,
                    output::ago(k.written_ms)
                );
            }
        }
        StateCmd::Get { run, key, history } => {
            let id = Host::run_id(&run)?;
            let entries = if history {
                host.state_history(&id, &key).await?
            } else {
                host.state_get(&id, &key).await?.into_iter().collect()
            };
            if entries.is_empty() {
                return Err(StoreError::NotFound(format!(
                    "the key {} in the state of {run}",
                    output::inert(&key)
                ))
                .into());
            }
            if ctx.json && history {
                output::json(&entries)?;
            } else if ctx.json {
                output::json(&entries[0])?;
            } else {
                for e in &entries {
                    show(e)?;
                }
            }
        }
        StateCmd::Notes { run } => {
            let notes = host.state_notes(&Host::run_id(&run)?).await?;
            if ctx.json {
                output::json(&notes)?;
            } else if notes.is_empty() {
                errln!("{run} has no notes");
            }
            for n in notes.iter().filter(|_| !ctx.json) {
                outln!(
                    "#{} {} ({})\n{}\n",
                    n.seq,
                    n.author,
                    output::ago(n.written_ms),
                    output::inert(&n.text)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show(e: &StateEntry) -> anyhow::Result<()> {
    outln!(
        "{} v{} by {} ({})",
        e.key,
        e.version,
        e.author,
        output::ago(e.written_ms)
    );
    output::json(&e.value)
}
