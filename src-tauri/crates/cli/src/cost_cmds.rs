//! `catalog`: what each server and tool costs in tokens, as sent to the configured models
//! (issue 16, point 1).
//!
//! By default nothing starts: running servers are priced from their live catalog, the others
//! (stopped, or added and not yet enabled) from the tools they listed when they last ran. With
//! `--start` the enabled servers start first, so the numbers are current.

use std::process::ExitCode;

use clap::Args;
use switchboard_core::escape::escape_for_display;
use switchboard_core::host::{CatalogCosts, CostModel, CostTarget, Host};
use switchboard_core::ids::ServerId;

use crate::output::{self, inert};
use crate::Ctx;

#[derive(Args, Debug)]
pub struct CatalogArgs {
    /// Only this server.
    #[arg(long)]
    server: Option<String>,
    /// Price for this model: PROVIDER or PROVIDER:MODEL (repeatable). Default: every
    /// configured provider's default model.
    #[arg(long = "model", value_name = "PROVIDER[:MODEL]")]
    models: Vec<String>,
    /// Start the enabled servers first, so their catalogs are live.
    #[arg(long)]
    start: bool,
}

fn target(s: &str) -> anyhow::Result<CostTarget> {
    let (p, m) = match s.split_once(':') {
        Some((p, m)) => (p, Some(m.trim().to_owned()).filter(|m| !m.is_empty())),
        None => (s, None),
    };
    Ok(CostTarget {
        provider: Host::provider_name(p.trim())?,
        model: m,
    })
}

fn model_label(m: &CostModel) -> String {
    format!(
        "{}:{} ({}; window {} tokens)",
        m.provider,
        inert(&m.model),
        m.method.label(),
        m.context_window
    )
}

fn tokens(list: &[u64]) -> String {
    list.iter()
        .map(|n| format!("{n:>8}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub async fn catalog(ctx: &Ctx, a: CatalogArgs) -> anyhow::Result<ExitCode> {
    let targets = a
        .models
        .iter()
        .map(|s| target(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if a.start {
        crate::catalog_cmds::bring_up(ctx, a.server.as_deref()).await?;
    }
    let mut costs = ctx.host.catalog_costs(&targets).await?;
    if let Some(only) = &a.server {
        let id = Host::server_id(only)?;
        costs.servers.retain(|s| s.server == id);
    }
    if ctx.json {
        output::json(&costs)?;
        return Ok(ExitCode::SUCCESS);
    }
    print(&costs);
    Ok(ExitCode::SUCCESS)
}

fn print(costs: &CatalogCosts) {
    if costs.models.is_empty() {
        errln!(
            "no model to price for: add a provider with a default model (`switchboard provider \
             add`) or pass --model PROVIDER:MODEL"
        );
    }
    for (i, m) in costs.models.iter().enumerate() {
        outln!("[{}] {}", i + 1, model_label(m));
    }
    for s in &costs.servers {
        outln!();
        if !s.known {
            // Listed, not left out: enabling it adds definitions nobody has priced yet.
            let state = if s.running {
                "no tools listed yet"
            } else {
                "never ran: no catalog to price until it starts"
            };
            outln!("{} ({state})  unknown (never ran)", s.server);
            continue;
        }
        let state = match (s.running, s.enabled, s.last_known_ms) {
            (true, _, _) => "running".to_owned(),
            (false, _, None) => "never ran".to_owned(),
            (false, enabled, Some(at)) => format!(
                "{}, tools as listed {}",
                if enabled { "stopped" } else { "disabled" },
                output::ago(at)
            ),
        };
        outln!(
            "{} ({}, {state})  {}",
            s.server,
            output::count(s.tools.len(), "tool", "tools"),
            tokens(&s.tokens)
        );
        for t in &s.tools {
            let off = if t.offered { "" } else { "  (not offered)" };
            outln!(
                "  {:<32} {}{off}",
                escape_for_display(&t.tool),
                tokens(&t.tokens)
            );
        }
    }
    outln!();
    outln!(
        "next turn's tool definitions: {}",
        costs
            .models
            .iter()
            .zip(&costs.offered_tokens)
            .enumerate()
            .map(|(i, (m, n))| {
                let pct = *n as f64 * 100.0 / f64::from(m.context_window.max(1));
                format!("[{}] {n} tokens ({pct:.1}% of {})", i + 1, m.context_window)
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// What approving or enabling `id` adds to every turn, in one line for the `server trust`
/// and `server enable` output (issue 16: the cost shows before a server is enabled). Known
/// from its live catalog or the tools it last listed; a server that never ran is not started
/// to find out (an unapproved server never runs), so its line says the cost is unknown.
pub fn enable_cost_line(costs: &CatalogCosts, id: &ServerId) -> Option<String> {
    let s = costs.servers.iter().find(|s| &s.server == id)?;
    if !s.known {
        return Some(
            "unknown until it starts (it never ran): it will add its tools' definitions to \
             every turn"
                .into(),
        );
    }
    let n = output::count(s.tools.len(), "tool", "tools");
    let from = match (s.running, s.last_known_ms) {
        (false, Some(at)) => format!(" as listed {}", output::ago(at)),
        _ => String::new(),
    };
    if costs.models.is_empty() {
        return Some(format!(
            "{n}{from}; no model to price them for (`switchboard provider add`)"
        ));
    }
    let per_model = costs
        .models
        .iter()
        .zip(&s.tokens)
        .map(|(m, t)| {
            let pct = *t as f64 * 100.0 / f64::from(m.context_window.max(1));
            let approx = if m.method.is_estimate() { "~" } else { "" };
            format!(
                "{approx}{t} tokens for {}:{} ({pct:.1}% of its context)",
                m.provider,
                inert(&m.model)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "{n}{from}: {per_model} on every turn while enabled"
    ))
}

/// Prints `enable_cost_line` for `id` on stderr, under `label`. The cost is information, not a
/// gate: when it cannot be worked out, nothing is printed and the command goes on.
pub async fn print_enable_cost(ctx: &Ctx, id: &ServerId, label: &str) {
    match ctx.host.catalog_costs(&[]).await {
        Ok(costs) => {
            if let Some(line) = enable_cost_line(&costs, id) {
                errln!("{label}{line}");
            }
        }
        Err(e) => tracing::debug!(error = %e, "no catalog cost for the prompt"),
    }
}
