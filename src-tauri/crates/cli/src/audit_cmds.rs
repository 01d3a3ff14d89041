//! `switchboard audit`: list, verify and export the hash-chained audit log (OB-01).
//!
//! `verify` is meant for scripts: exit 0 when the chain is intact, 1 when it is not, with the
//! first bad row named on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use switchboard_core::approval::audit::summarize;
use switchboard_core::store::{iso_utc, AuditQuery};

use crate::{output, Ctx};

#[derive(Subcommand, Debug)]
pub enum AuditCmd {
    /// Entries, newest first.
    List {
        /// Only entries mentioning this text (kind, server, tool, actor or details).
        #[arg(long)]
        search: Option<String>,
        /// How many entries.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only entries older than this id (for paging).
        #[arg(long)]
        before: Option<i64>,
    },
    /// Check the hash chain: exit 0 when intact, 1 naming the first edited or deleted row.
    Verify,
    /// Write every entry as JSON lines, oldest first.
    Export {
        /// The file to write (stdout when omitted).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

pub async fn run(ctx: &Ctx, cmd: AuditCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        AuditCmd::List {
            search,
            limit,
            before,
        } => {
            let page = ctx
                .host
                .audit_page(&AuditQuery {
                    search,
                    before,
                    limit,
                })
                .await?;
            if ctx.json {
                output::json(&page)?;
                return Ok(ExitCode::SUCCESS);
            }
            for e in &page.entries {
                let target = match (&e.server, &e.tool) {
                    (Some(s), Some(t)) => format!("{s} > {t}"),
                    (Some(s), None) => s.clone(),
                    _ => "-".into(),
                };
                outln!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    e.id,
                    iso_utc(e.at),
                    e.kind,
                    output::inert(&target),
                    output::inert(&e.actor),
                    output::inert(&summarize(e.kind, &e.detail_json)),
                );
            }
            if let Some(next) = page.next_before {
                errln!("(more: --before {next})");
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCmd::Verify => {
            let report = ctx.host.verify_audit().await?;
            if ctx.json {
                output::json(&report)?;
            } else if let Some(bad) = &report.first_bad {
                errln!("audit log tampered: row {}: {}", bad.id, bad.why);
            } else {
                outln!(
                    "audit log intact: {}, head {}",
                    output::count(report.rows, "entry", "entries"),
                    report.head.as_deref().unwrap_or("(empty)")
                );
            }
            Ok(if report.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        AuditCmd::Export { out } => {
            let n = match &out {
                Some(path) => {
                    let file = std::fs::File::create(path)
                        .with_context(|| format!("could not create {}", path.display()))?;
                    let mut w = std::io::BufWriter::new(file);
                    let n = ctx.host.export_audit(&mut w).await?;
                    w.flush()
                        .with_context(|| format!("could not write {}", path.display()))?;
                    n
                }
                None => ctx.host.export_audit(&mut output::Stdout).await?,
            };
            if let Some(path) = out {
                errln!(
                    "wrote {} to {}",
                    output::count(n, "entry", "entries"),
                    path.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
