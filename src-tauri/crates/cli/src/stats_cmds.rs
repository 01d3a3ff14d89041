//! `stats`: how each server and each tool behaved over a window (issue 16, point 3): calls,
//! errors by kind, p50/p95/p99 latency, bytes and estimated tokens, as a table or `--json`
//! (the core's `MetricsReport`, series included). Also turns the OpenTelemetry export on or off,
//! since the CLI has no settings page: `--otlp-endpoint URL`, `--otlp-off`, `--export-now`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use switchboard_core::host::Host;
use switchboard_core::settings::{MetricsExport, DEFAULT_EXPORT_INTERVAL_SECS};
use switchboard_core::store::{ErrorCounts, MetricsReport, Stats};

use crate::output;
use crate::Ctx;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// One server (default: every server with recorded calls).
    server: Option<String>,
    /// The window, back from now: a number and s, m, h or d (`30m`, `1h`, `24h`, `7d`).
    #[arg(long, default_value = "24h", value_parser = parse_window)]
    since: Duration,
    /// Send metrics to this OpenTelemetry collector (OTLP/HTTP, e.g. http://localhost:4318)
    /// from now on, every `--otlp-interval` seconds while the app or a chat runs.
    #[arg(long, value_name = "URL", conflicts_with = "otlp_off")]
    otlp_endpoint: Option<String>,
    /// Seconds between two exports (with --otlp-endpoint; default 60).
    #[arg(long, value_name = "SECS", requires = "otlp_endpoint")]
    otlp_interval: Option<u64>,
    /// Stop sending metrics to a collector.
    #[arg(long)]
    otlp_off: bool,
    /// Send what was recorded since the last export to the collector now.
    #[arg(long)]
    export_now: bool,
}

/// `30m`, `1h`, `24h`, `7d`, `90s`.
fn parse_window(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.char_indices().last().map_or(0, |(i, _)| i);
    let (n, unit) = s.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a window like 30m, 1h, 24h or 7d"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("{s:?}: the unit must be s, m, h or d")),
    };
    if secs == 0 {
        return Err("the window must not be empty".into());
    }
    Ok(Duration::from_secs(secs))
}

pub async fn run(ctx: &Ctx, a: StatsArgs) -> anyhow::Result<ExitCode> {
    if a.otlp_off {
        ctx.host.metrics().set_export(None)?;
        errln!("metrics export is off");
    }
    if let Some(url) = a.otlp_endpoint {
        let saved = ctx.host.metrics().set_export(Some(MetricsExport {
            otlp_endpoint: url,
            interval_secs: a.otlp_interval.unwrap_or(DEFAULT_EXPORT_INTERVAL_SECS),
        }))?;
        if let Some(e) = saved {
            errln!(
                "metrics go to {} every {} s",
                e.metrics_url(),
                e.interval_secs
            );
        }
    }
    if a.export_now {
        let done = ctx.host.metrics().export_now().await?;
        errln!(
            "export: {}",
            output::json_inert(&serde_json::to_string(&done)?)
        );
    }
    let server = a.server.as_deref().map(Host::server_id).transpose()?;
    let report = ctx.host.metrics().report(server.as_ref(), a.since).await?;
    if ctx.json {
        output::json(&report)?;
    } else {
        print_table(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(r: &MetricsReport) {
    if r.servers.is_empty() {
        outln!("no calls recorded in this window");
        return;
    }
    outln!(
        "{:<28} {:>7} {:>6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}  ERRORS BY KIND",
        "SERVER / TOOL",
        "CALLS",
        "ERRORS",
        "P50 MS",
        "P95 MS",
        "P99 MS",
        "BYTES IN",
        "BYTES OUT",
        "TOKENS"
    );
    for s in &r.servers {
        row(s.server.as_str(), &s.stats);
        for t in &s.tools {
            let label = match t.kind {
                switchboard_core::store::MetricKind::Tool => output::name(&t.name),
                kind => format!("{} ({})", output::name(&t.name), output::word(&kind)),
            };
            row(&format!("  {label}"), &t.stats);
        }
    }
    let exact = r.total.latency.as_ref().is_none_or(|l| l.exact);
    if !exact {
        outln!("(older than a day: latency percentiles are bucket upper bounds)");
    }
}

fn row(label: &str, s: &Stats) {
    let ms = |f: fn(&switchboard_core::store::Latency) -> f64| {
        s.latency
            .as_ref()
            .map_or_else(|| "-".to_owned(), |l| format!("{:.1}", f(l)))
    };
    outln!(
        "{:<28} {:>7} {:>6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}  {}",
        label,
        s.calls,
        s.errors.total(),
        ms(|l| l.p50_ms),
        ms(|l| l.p95_ms),
        ms(|l| l.p99_ms),
        s.bytes_in,
        s.bytes_out,
        s.tokens,
        kinds(&s.errors)
    );
}

/// `tool_error=2 timeout=1`, or `-`.
fn kinds(e: &ErrorCounts) -> String {
    let all = [
        ("tool_error", e.tool_error),
        ("rpc_error", e.rpc_error),
        ("protocol", e.protocol),
        ("transport", e.transport),
        ("timeout", e.timeout),
        ("cancelled", e.cancelled),
        ("denied", e.denied),
        ("other", e.other),
    ];
    let parts: Vec<String> = all
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse() {
        assert_eq!(parse_window("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_window("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_window("30m"), Ok(Duration::from_secs(1800)));
        assert!(parse_window("0h").is_err());
        assert!(parse_window("1w").is_err());
        assert!(parse_window("h").is_err());
        assert!(parse_window("").is_err());
    }
}
