//! `switchboard server review NAME [--approve [--tool T]...]`: what changed on a server since
//! its tools were approved (TD-02), field by field with hidden characters made visible, and
//! approving it.

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use switchboard_core::approval::pins::{Change, ItemKind};
use switchboard_core::host::{Host, PinReview};
use switchboard_core::hygiene::reveal;

use crate::catalog_cmds::bring_up;
use crate::output::{self, inert};
use crate::Ctx;

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// The server's name.
    name: String,
    /// Approve the changes shown (all of them, or those named with --tool).
    #[arg(long)]
    approve: bool,
    /// With --approve: approve only this tool, prompt or template (repeatable).
    #[arg(long = "tool", value_name = "NAME", requires = "approve")]
    tools: Vec<String>,
}

pub async fn review(ctx: &Ctx, a: ReviewArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    // Started so the review is of what the server offers now; a server that cannot start is
    // reviewed from the record of its last catalog.
    if let Err(e) = bring_up(ctx, Some(&a.name)).await {
        errln!(
            "{}; showing the changes recorded when it last ran",
            inert(&e.to_string())
        );
    }
    let review = ctx.host.pin_review(&id).await?;
    if ctx.json && !a.approve {
        output::json(&review)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_review(&review);
    if !a.approve {
        return Ok(ExitCode::SUCCESS);
    }
    if review.diff.is_empty() {
        bail!("{id} has nothing to approve");
    }
    let names = (!a.tools.is_empty()).then_some(a.tools);
    let n = ctx
        .host
        .approve_reviewed(&id, names, Some(&review.surface))
        .await?;
    if ctx.json {
        output::json(&serde_json::json!({"server": id, "approved": n}))?;
    } else {
        errln!("approved {} of {id}", output::count(n, "change", "changes"));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_review(r: &PinReview) {
    let d = &r.diff;
    if d.is_empty() {
        outln!(
            "{}: nothing changed since its tools were approved",
            r.server
        );
        return;
    }
    if !r.live {
        outln!("(from the last catalog seen; the server is not running)");
    }
    for (label, changes) in [
        ("CHANGED", &d.changed),
        ("NEW", &d.added),
        ("REMOVED", &d.removed),
    ] {
        for c in changes {
            print_change(r, label, c);
        }
    }
    if d.instructions_changed {
        outln!("The server's instructions are not sent to models until approved.");
    }
    outln!(
        "Changed and new tools are not offered to models and cannot run until approved: \
         switchboard server review {} --approve [--tool NAME]...",
        r.server
    );
}

fn print_change(r: &PinReview, label: &str, c: &Change) {
    let what = match c.kind {
        ItemKind::Tool => format!("tool {}", reveal(&c.name)),
        ItemKind::Prompt => format!("prompt {}", reveal(&c.name)),
        ItemKind::ResourceTemplate => format!("resource template {}", reveal(&c.name)),
        ItemKind::Instructions => "instructions".to_owned(),
    };
    outln!("{label} {what}");
    for f in &c.fields {
        outln!("  {}:", reveal(&f.field.to_string()));
        if let Some(b) = &f.before {
            outln!("    - {}", indent(&reveal(b)));
        }
        if let Some(a) = &f.after {
            outln!("    + {}", indent(&reveal(a)));
        }
    }
    for f in r.findings.get(&c.name).into_iter().flatten() {
        outln!("  WARNING: {}", reveal(&f.describe()));
        outln!("           {}", indent(&f.excerpt));
    }
}

/// Continuation lines line up under the first; ANSI never reaches the terminal (`reveal`
/// already turned ESC into a visible marker).
fn indent(s: &str) -> String {
    s.replace('\n', "\n      ")
}
