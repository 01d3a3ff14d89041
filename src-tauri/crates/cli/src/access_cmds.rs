//! `switchboard server roots` and `switchboard server review-results`: what a server may see
//! (its roots, the folders it is told about) and whether its tool results wait for the person
//! before a model reads them (AP-05).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use switchboard_core::host::Host;
use switchboard_core::store::ResultReview;

use crate::{output, Ctx};

/// `server roots`.
#[derive(Args, Debug)]
pub struct RootsArgs {
    /// The server's name.
    name: String,
    /// Replace the server's roots with these folders (each must exist).
    #[arg(long, num_args = 1.., value_name = "DIR", conflicts_with = "clear")]
    set: Vec<PathBuf>,
    /// Remove every root: the server is told of no folder.
    #[arg(long)]
    clear: bool,
}

/// `server review-results`.
#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// The server's name.
    name: String,
    /// The new setting; shown when omitted.
    #[arg(value_enum)]
    setting: Option<Setting>,
}

/// When a server's tool results are held for review.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Setting {
    /// When the server is tagged untrusted-content or the tool says it reaches the open world.
    Default,
    /// Every result.
    Always,
    /// Never.
    Never,
}

pub async fn roots(ctx: &Ctx, a: RootsArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    let roots = if a.clear || !a.set.is_empty() {
        let roots = ctx.host.set_server_roots(&id, &a.set).await?;
        if !ctx.json {
            errln!(
                "{id} may now see {} (it reads them whenever it asks)",
                output::count(roots.len(), "folder", "folders")
            );
        }
        roots
    } else {
        ctx.host.server_roots(&id).await?
    };
    if ctx.json {
        let rows: Vec<_> = roots
            .iter()
            .map(|r| serde_json::json!({"uri": r.uri, "name": r.name}))
            .collect();
        output::json(&rows)?;
    } else if roots.is_empty() {
        outln!("{id} has no roots: it is told of no folder");
    } else {
        for r in &roots {
            outln!("{}", output::inert(&r.uri));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn words(r: ResultReview) -> &'static str {
    match r {
        ResultReview::Default => {
            "default (held when the server is tagged untrusted-content or a tool says it reaches the open world)"
        }
        ResultReview::Always => "always (every result is held for review)",
        ResultReview::Never => "never (results go to the model unseen)",
    }
}

pub async fn review_results(ctx: &Ctx, a: ReviewArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    if let Some(s) = a.setting {
        let review = match s {
            Setting::Default => ResultReview::Default,
            Setting::Always => ResultReview::Always,
            Setting::Never => ResultReview::Never,
        };
        ctx.host.set_result_review(&id, review).await?;
    }
    let now = ctx.host.result_review(&id).await?;
    if ctx.json {
        output::json(&serde_json::json!({"server": id, "review_results": now}))?;
    } else {
        outln!("{id}: {}", words(now));
    }
    Ok(ExitCode::SUCCESS)
}
