//! `switchboard server ...` and `switchboard doctor`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use switchboard_core::config::credentials::{shown_value, text_credentials};
use switchboard_core::config::placeholders::{move_credentials, Moved};
use switchboard_core::config::{
    Binding, HttpSpec, NamedValue, ServerSpec, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use switchboard_core::escape::escape_for_display;
use switchboard_core::host::{AddOptions, CheckLevel, FieldBinding, Host, TrustState};
use switchboard_core::server_logs::{Direction, ServerLogs};
use switchboard_core::supervisor::ServerStatus;

use crate::errors::{usage, CliError};
use crate::output::{self, inert};
use crate::Ctx;

#[derive(Subcommand, Debug)]
pub enum ServerCmd {
    /// Add a server: `add NAME -- COMMAND ARGS...` (stdio) or `add NAME --url URL` (HTTP).
    Add(AddArgs),
    /// List configured servers.
    List,
    /// Show one server's configuration and approval state.
    Show(NameArg),
    /// Remove a server, its approval and its saved logs.
    Remove(NameArg),
    /// Enable a server.
    Enable(NameArg),
    /// Disable a server.
    Disable(NameArg),
    /// Start a server afresh and report whether it comes up.
    Restart(NameArg),
    /// Review and approve exactly what a server runs.
    Trust(TrustArgs),
    /// Withdraw a server's approval.
    Untrust(NameArg),
    /// Show what changed in a server's tools since they were approved, and approve it.
    Review(crate::pin_cmds::ReviewArgs),
    /// Show the stderr tail and protocol trace of a server's last run.
    Logs(LogsArgs),
    /// The protocol inspector on a server's last run: filter by method, direction, errors,
    /// slowness and text; `--jsonl` exports one message per line with its timing.
    Trace(crate::trace_cmds::TraceArgs),
    /// Show or set the folders a server may see (its roots): `roots NAME [--set DIR... | --clear]`.
    Roots(crate::access_cmds::RootsArgs),
    /// Show or set whether a server's tool results wait for you before a model reads them.
    ReviewResults(crate::access_cmds::ReviewArgs),
    /// Show or set a local server's sandbox: `sandbox NAME [--on|--off] [--allow-read PATH]...
    /// [--allow-write PATH]... [--deny PATH]... [--revoke PATH]... [--network on|off]`.
    Sandbox(crate::sandbox_cmds::SandboxArgs),
    /// Show or set a server's limits: `limits NAME [--timeout S] [--init-timeout S]
    /// [--max-message-mb N]`.
    Limits(crate::limits_cmds::LimitsArgs),
    /// "Allow insecure (development)" for a remote server: `insecure NAME on|off`. With it on,
    /// sign-in and its tokens may use plain http to another computer (never to a cloud metadata
    /// address); turning it on asks for the server's approval again.
    Insecure(InsecureArgs),
    /// Print the `switchboard://` link that proposes this server to another Switchboard (no
    /// secrets in it: they become values the receiver is asked for).
    Link(crate::link_cmds::LinkArgs),
    /// Install a `switchboard://` link: shows what it would run, asks for each value it asks
    /// for (one line each on stdin, or without echo on a terminal; they go to the keyring),
    /// then adds and approves exactly that.
    Install(crate::link_cmds::InstallArgs),
    /// Whether the desktop app starts this server at launch and keeps it running (`on`), or
    /// starts it when its tools are needed and stops it when idle (`off`, the default).
    AlwaysOn(crate::demand_cmds::AlwaysOnArgs),
}

#[derive(Args, Debug)]
pub struct NameArg {
    /// The server's name.
    name: String,
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// A name for the server (letters, digits, '-', '_', '.').
    name: String,
    /// Environment variable for the server: K=V, or K=secret:NAME for a secret of this server
    /// (set it with `switchboard secret set --server NAME SECRET`). A value that looks like a
    /// credential goes to the keyring, not the config.
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Working directory for the server.
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// The Streamable HTTP endpoint of a remote server.
    #[arg(long, conflicts_with_all = ["env", "cwd"])]
    url: Option<String>,
    /// HTTP header: K=V, or K=secret:NAME for a secret of this server. A value that looks like
    /// a credential goes to the keyring, not the config.
    #[arg(long = "header", value_name = "K=V", requires = "url")]
    headers: Vec<String>,
    /// Replace secrets already stored under the names this server's values would get (left
    /// over from an earlier server of the same name); without it the add stops.
    #[arg(long)]
    replace_secrets: bool,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Start-up and handshake timeout in seconds.
    #[arg(long, default_value_t = 60)]
    init_timeout: u64,
    /// The largest message it may send, in MiB (one stdio line, HTTP body or SSE event).
    #[arg(long, default_value_t = switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB)]
    max_message_mb: u32,
    /// Add it disabled.
    #[arg(long)]
    disabled: bool,
    /// Keep arguments and URL query values that look like credentials in the keyring: each
    /// becomes `${secret:NAME}` in the config, filled in when the server starts (LK-01).
    #[arg(long)]
    move_credentials: bool,
    /// Run it sandboxed from the start (grant folders with `switchboard server sandbox`).
    #[arg(long, conflicts_with = "url")]
    sandbox: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct TrustArgs {
    /// The server's name.
    name: String,
    /// Approve without asking (for scripts). The launch spec is still printed.
    #[arg(long)]
    yes: bool,
    /// Let a value use a secret that is not this server's own: FIELD=provider:NAME (a model
    /// provider's key) or FIELD=server:SERVER/NAME (another server's secret), or FIELD=own to
    /// go back to the server's own secret. Shown before you approve, and part of the approval.
    #[arg(long = "bind", value_name = "FIELD=TARGET")]
    bind: Vec<String>,
}

#[derive(Args, Debug)]
pub struct LogsArgs {
    /// The server's name.
    name: String,
    /// How many stderr lines and trace entries to show.
    #[arg(long, default_value_t = 50)]
    lines: usize,
    /// Show only stderr.
    #[arg(long, conflicts_with = "trace")]
    stderr: bool,
    /// Show only the protocol trace.
    #[arg(long)]
    trace: bool,
    /// Only entries containing this text.
    #[arg(long)]
    grep: Option<String>,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The server to diagnose; all servers when omitted.
    name: Option<String>,
    /// How long the trial start may take, in seconds.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
}

fn parse_pairs(items: &[String], what: &str) -> anyhow::Result<Vec<NamedValue>> {
    items
        .iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| usage(format!("{what} {kv:?} must look like NAME=VALUE")))?;
            Ok(NamedValue {
                name: k.to_owned(),
                value: ValueSource::parse_cli(v)?,
            })
        })
        .collect()
}

pub async fn run(ctx: &Ctx, cmd: ServerCmd) -> anyhow::Result<ExitCode> {
    let host = &ctx.host;
    match cmd {
        ServerCmd::Add(a) => add(ctx, a).await,
        ServerCmd::List => list(ctx).await,
        ServerCmd::Show(n) => show(ctx, &n.name).await,
        ServerCmd::Remove(n) => {
            host.remove_server(&Host::server_id(&n.name)?).await?;
            errln!("removed {}", n.name);
            Ok(ExitCode::SUCCESS)
        }
        ServerCmd::Enable(n) => {
            let id = Host::server_id(&n.name)?;
            host.set_enabled(&id, true).await?;
            errln!("enabled {}", n.name);
            crate::cost_cmds::print_enable_cost(ctx, &id, "  its tools: ").await;
            Ok(ExitCode::SUCCESS)
        }
        ServerCmd::Disable(n) => {
            host.set_enabled(&Host::server_id(&n.name)?, false).await?;
            errln!("disabled {}", n.name);
            Ok(ExitCode::SUCCESS)
        }
        ServerCmd::Restart(n) => restart(ctx, &n.name).await,
        ServerCmd::Trust(t) => trust(ctx, t).await,
        ServerCmd::Untrust(n) => {
            host.revoke_trust(&Host::server_id(&n.name)?).await?;
            errln!("approval of {} withdrawn", n.name);
            Ok(ExitCode::SUCCESS)
        }
        ServerCmd::Logs(l) => logs(ctx, l),
        ServerCmd::Trace(t) => crate::trace_cmds::trace(ctx, t).await,
        ServerCmd::Review(r) => crate::pin_cmds::review(ctx, r).await,
        ServerCmd::Roots(r) => crate::access_cmds::roots(ctx, r).await,
        ServerCmd::ReviewResults(r) => crate::access_cmds::review_results(ctx, r).await,
        ServerCmd::Sandbox(a) => crate::sandbox_cmds::sandbox(ctx, a).await,
        ServerCmd::Limits(a) => crate::limits_cmds::limits(ctx, a).await,
        ServerCmd::Insecure(a) => insecure(ctx, a).await,
        ServerCmd::Link(a) => crate::link_cmds::link(ctx, a).await,
        ServerCmd::Install(a) => crate::link_cmds::install(ctx, a).await,
        ServerCmd::AlwaysOn(a) => crate::demand_cmds::always_on(ctx, a).await,
    }
}

async fn add(ctx: &Ctx, a: AddArgs) -> anyhow::Result<ExitCode> {
    let id = switchboard_core::ids::ServerId::new(&a.name)
        .map_err(|e| usage(format!("{:?} is not a usable server name: {e}", a.name)))?;
    let transport = match (a.url, a.command.split_first()) {
        (Some(url), None) => TransportSpec::Http(HttpSpec {
            url,
            headers: parse_pairs(&a.headers, "header")?,
            auth: None,
            allow_insecure: false,
        }),
        (None, Some((command, args))) => TransportSpec::Stdio(StdioSpec {
            command: absolutize(command)?,
            args: args.to_vec(),
            env: parse_pairs(&a.env, "environment variable")?,
            cwd: a.cwd,
            sandbox: if a.sandbox {
                switchboard_core::sandbox::SandboxSpec::on()
            } else {
                Default::default()
            },
        }),
        (Some(_), Some(_)) => {
            return Err(usage(
                "give either --url or a command after --, not both",
            ))
        }
        (None, None) => {
            return Err(usage("say how to reach the server: `-- COMMAND ARGS...` for a local server or `--url URL` for a remote one"))
        }
    };
    let is_stdio = matches!(transport, TransportSpec::Stdio(_));
    let spec = ServerSpec {
        id: id.clone(),
        transport,
        enabled: !a.disabled,
        timeouts: Timeouts {
            request_secs: a.timeout,
            init_secs: a.init_timeout,
            max_message_mib: a.max_message_mb,
        },
    };
    let mut spec = spec;
    let in_text = text_credentials(&spec);
    let moved = if a.move_credentials || (!in_text.is_empty() && offer_to_move(&in_text)?) {
        move_credentials(&mut spec)
    } else {
        Moved::default()
    };
    let outcome = ctx
        .host
        .add_server_with(
            spec,
            AddOptions {
                replace_secrets: a.replace_secrets,
                secrets: moved
                    .secrets
                    .into_iter()
                    .map(|(n, v)| (n.to_string(), v))
                    .collect(),
            },
        )
        .await?;
    if ctx.json {
        output::json(
            &serde_json::json!({"added": id, "moved": outcome.moved, "sandboxed": is_stdio.then_some(a.sandbox)}),
        )?;
    } else {
        errln!("added {id}");
        for (what, secret) in &moved.moved {
            errln!("  {what} looks like a credential: it went to the keyring as {id}'s secret {secret}; the config says ${{secret:{secret}}} and the server gets the value when it starts");
        }
        if moved.moved.is_empty() {
            for what in &in_text {
                errln!("  {what} looks like a credential; it is stored in the config as it is, not in the keyring, and a link cannot carry it. Add the server with --move-credentials to keep it in the keyring instead");
            }
        }
        for (field, secret) in &outcome.moved {
            errln!(
                "  the value of {} looks like a credential: it went to the keyring as {id}'s secret {secret}, not into the config",
                escape_for_display(field)
            );
        }
        if is_stdio {
            errln!(
                "{}",
                if a.sandbox {
                    format!("it runs sandboxed: grant folders with `switchboard server sandbox {id} --allow-read PATH`")
                } else {
                    format!("it runs unsandboxed, with all your rights; `switchboard server sandbox {id} --on` confines it")
                }
            );
        }
        errln!(
            "it will not start until you approve what it runs or where it connects: switchboard server trust {id}"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks on a terminal whether to move the credentials `found` to the keyring; elsewhere (a
/// script) the answer is no and the warnings after the add say how.
fn offer_to_move(found: &[String]) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    err!(
        "{} look{} like a credential. Keep {} in the keyring instead of the config? [Y/n] ",
        found.join(", "),
        if found.len() == 1 { "s" } else { "" },
        if found.len() == 1 { "it" } else { "them" }
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(!matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "n" | "no"
    ))
}

/// A relative path typed on the command line means "relative to where I am", so it is made
/// absolute now, visibly, rather than resolved later against the server's working directory.
/// Bare names (`npx`) stay bare and are looked up on PATH at each start.
fn absolutize(command: &str) -> anyhow::Result<String> {
    let p = std::path::Path::new(command);
    if !command.contains('/') || p.is_absolute() {
        return Ok(command.to_owned());
    }
    let abs = std::env::current_dir()
        .context("could not read the current directory to resolve the command path")?
        .join(p);
    Ok(abs.to_string_lossy().into_owned())
}

async fn list(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let servers = ctx.host.list_servers().await?;
    let mut rows = Vec::new();
    for s in &servers {
        let trust = ctx.host.trust_view(&s.spec.id).await.map(|v| v.state).ok();
        rows.push((s, trust));
    }
    if ctx.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(s, t)| {
                serde_json::json!({"spec": masked(&s.spec), "trust": t, "sandboxed": sandboxed(&s.spec)})
            })
            .collect();
        output::json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    if servers.is_empty() {
        outln!("No servers yet. Add one with `switchboard server add NAME -- COMMAND ARGS...` or import a config with `switchboard import FILE`.");
    }
    for (s, t) in rows {
        let kind = match &s.spec.transport {
            TransportSpec::Stdio(_) => "stdio",
            TransportSpec::Http(_) => "http",
        };
        let trust = match t {
            Some(TrustState::Trusted) => "approved",
            Some(TrustState::NotApproved) => "NOT APPROVED",
            Some(TrustState::Changed) => "CHANGED since approval",
            None => "cannot resolve",
        };
        let enabled = if s.spec.enabled {
            "enabled"
        } else {
            "disabled"
        };
        let sandbox = match sandboxed(&s.spec) {
            Some(true) => "sandboxed",
            Some(false) => "unsandboxed",
            None => "-",
        };
        outln!(
            "{:<20} {:<5} {:<8} {:<22} {:<11} {}",
            s.spec.id,
            kind,
            enabled,
            trust,
            sandbox,
            s.spec.summary()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn show(ctx: &Ctx, name: &str) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(name)?;
    let spec = ctx.host.server(&id).await?;
    let view = ctx.host.trust_view(&id).await;
    let last = ctx.host.last_peer(&id);
    if ctx.json {
        output::json(&serde_json::json!({
            "spec": masked(&spec),
            "launch": view.as_ref().ok(),
            "launch_error": view.as_ref().err().map(|e| e.to_string()),
            "last_handshake": last,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("name:     {}", spec.id);
    outln!("enabled:  {}", spec.enabled);
    outln!(
        "timeouts: request {}s, start-up {}s",
        spec.timeouts.request_secs,
        spec.timeouts.init_secs
    );
    let values = match &spec.transport {
        TransportSpec::Stdio(s) => {
            outln!("command:  {}", spec.summary());
            if let Some(cwd) = &s.cwd {
                outln!("cwd:      {}", escape_for_display(&cwd.to_string_lossy()));
            }
            &s.env
        }
        TransportSpec::Http(h) => {
            outln!("url:      {}", escape_for_display(&h.url));
            if h.allow_insecure {
                outln!("insecure: ALLOWED (development): sign-in tokens may cross the network over plain http");
            }
            &h.headers
        }
    };
    let status = ctx.host.value_status(&spec).await;
    for (v, st) in values.iter().zip(&status) {
        let set = match st.set {
            None => "",
            Some(true) => " [set]",
            Some(false) => " [NOT SET]",
        };
        outln!(
            "  {} = {}{set}",
            escape_for_display(&v.name),
            shown_value(&v.name, &v.value)
        );
    }
    match view {
        Ok(v) => {
            outln!("approval: {}", output::word(&v.state));
            print_plan(&v.lines, &v.warnings);
        }
        Err(e) => outln!("launch:   cannot resolve: {e}"),
    }
    match last {
        Some(last) => outln!(
            "protocol: {} (negotiated at the last start, {}; server {} {})",
            escape_for_display(&last.peer.protocol_version),
            output::ago(last.at_ms),
            escape_for_display(&last.peer.server_name),
            escape_for_display(&last.peer.server_version),
        ),
        None => outln!("protocol: not known yet (never started)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a local server runs sandboxed; `None` for a remote one (SP-07).
pub fn sandboxed(spec: &ServerSpec) -> Option<bool> {
    match &spec.transport {
        TransportSpec::Stdio(s) => Some(s.sandbox.enabled),
        TransportSpec::Http(_) => None,
    }
}

pub(crate) fn print_plan(lines: &[(String, String)], warnings: &[String]) {
    outln!("what would run:");
    for (k, v) in lines {
        outln!("  {k:<10} {v}");
    }
    for w in warnings {
        outln!("  WARNING:   {w}");
    }
}

/// A spec for printing: plain values that look like credentials (which only a database from
/// before they were moved to the keyring can hold) are hidden.
fn masked(spec: &ServerSpec) -> ServerSpec {
    let mut spec = spec.clone();
    for v in spec.values_mut() {
        if let ValueSource::Plain(p) = &v.value {
            if switchboard_core::config::credentials::looks_like_credential(&v.name, p) {
                v.value = ValueSource::Plain("(hidden)".into());
            }
        }
    }
    spec
}

fn parse_bindings(items: &[String]) -> anyhow::Result<Vec<FieldBinding>> {
    items
        .iter()
        .map(|b| {
            let (field, target) = b
                .split_once('=')
                .ok_or_else(|| usage(format!("--bind {b:?} must look like FIELD=provider:NAME, FIELD=server:SERVER/NAME or FIELD=own")))?;
            let to = match target {
                "own" => None,
                other => Some(Binding::parse(other)?),
            };
            Ok(FieldBinding {
                field: field.to_owned(),
                to,
            })
        })
        .collect()
}

async fn trust(ctx: &Ctx, t: TrustArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&t.name)?;
    let bindings = parse_bindings(&t.bind)?;
    let view = ctx.host.trust_view_with(&id, &bindings).await?;
    // The plan goes to stderr so stdout stays clean for --json.
    match view.plan {
        switchboard_core::config::launch::LaunchPlan::Stdio { .. } => {
            errln!("{id} would run exactly this:")
        }
        _ => {
            errln!("{id} would connect exactly like this (nothing is sent before you approve):")
        }
    }
    for (k, v) in &view.lines {
        errln!("  {k:<10} {v}");
    }
    for w in &view.warnings {
        errln!("  WARNING:   {w}");
    }
    // What its tools add to every turn, when known (issue 16); nothing starts to find out.
    crate::cost_cmds::print_enable_cost(ctx, &id, "  tools      ").await;
    errln!("  fingerprint {}", view.fingerprint);
    if !t.yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Err(CliError::NeedsConfirmation(
                "approval needs a yes on a terminal; run it interactively or pass --yes".into(),
            )
            .into());
        }
        err!("Approve and allow {id} to run this? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        stdin.lock().read_line(&mut answer)?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            return Err(CliError::Declined(format!("not approved; {id} will not start")).into());
        }
    }
    ctx.host
        .trust_server_with(&id, &bindings, &view.fingerprint)
        .await?;
    if ctx.json {
        output::json(&serde_json::json!({"trusted": id, "fingerprint": view.fingerprint}))?;
    } else {
        errln!("approved {id}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn restart(ctx: &Ctx, name: &str) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(name)?;
    let spec = ctx.host.server(&id).await?;
    let handle = ctx.host.start_server(&id).await?;
    let status = handle
        .wait_settled(spec.timeouts.init() + Duration::from_secs(5))
        .await;
    if ctx.json {
        output::json(&status)?;
    } else {
        outln!("{id}: {}", crate::catalog_cmds::status_text(&status));
        // What to do about it, from the typed reason (a sign-in, the cap it broke).
        if let Some(hint) = status.reason().and_then(|r| crate::errors::hint(&id, r)) {
            errln!("  {hint}");
        }
    }
    Ok(match status {
        ServerStatus::Running { .. } => ExitCode::SUCCESS,
        ServerStatus::Failed { stderr_tail, .. } => {
            for l in stderr_tail {
                errln!(
                    "  stderr: {}",
                    output::bounded(&inert(&l), output::QUOTE_MAX)
                );
            }
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    })
}

fn logs(ctx: &Ctx, l: LogsArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&l.name)?;
    let dir = ctx.host.data_dir().join("logs").join(id.as_str());
    let (stderr, trace) = ServerLogs::load_persisted(&dir);
    let keep = |s: &str| l.grep.as_deref().is_none_or(|g| s.contains(g));
    let stderr: Vec<_> = stderr.into_iter().filter(|s| keep(s)).collect();
    let trace: Vec<_> = trace.into_iter().filter(|e| keep(&e.body)).collect();
    let stderr = &stderr[stderr.len().saturating_sub(l.lines)..];
    let trace = &trace[trace.len().saturating_sub(l.lines)..];
    if ctx.json {
        output::json(&serde_json::json!({"stderr": stderr, "trace": trace}))?;
        return Ok(ExitCode::SUCCESS);
    }
    if stderr.is_empty() && trace.is_empty() {
        outln!("No saved logs for {id} yet; they are written when a run of the server ends.");
    }
    if !l.trace && !stderr.is_empty() {
        outln!("== stderr (last run) ==");
        for s in stderr {
            outln!("{}", inert(s));
        }
    }
    if !l.stderr && !trace.is_empty() {
        outln!("== protocol trace (last run) ==");
        for e in trace {
            let arrow = match e.direction {
                Direction::Out => "->",
                Direction::In => "<-",
                Direction::Note => "**",
            };
            let dur = e
                .duration_ms
                .map(|d| format!(" ({d:.1} ms)"))
                .unwrap_or_default();
            outln!("{} {arrow} {}{dur}", e.at_ms, inert(&e.body));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn doctor(ctx: &Ctx, a: DoctorArgs) -> anyhow::Result<ExitCode> {
    let ids = match a.name {
        Some(n) => vec![Host::server_id(&n)?],
        None => ctx
            .host
            .list_servers()
            .await?
            .into_iter()
            .map(|s| s.spec.id)
            .collect(),
    };
    let mut failed = false;
    let mut reports = Vec::new();
    for id in ids {
        let r = ctx.host.doctor(&id, Duration::from_secs(a.timeout)).await?;
        failed |= r.failed();
        if !ctx.json {
            outln!("{}:", r.server);
            if let Some(plan) = &r.plan {
                for (k, v) in plan {
                    outln!("  {k:<10} {v}");
                }
            }
            for c in &r.checks {
                let mark = match c.level {
                    CheckLevel::Ok => "ok  ",
                    CheckLevel::Warn => "warn",
                    CheckLevel::Fail => "FAIL",
                    CheckLevel::Skipped => "skip",
                };
                outln!("  [{mark}] {}: {}", c.name, inert(&c.detail));
            }
            if !r.stderr_tail.is_empty() {
                outln!("  stderr:");
                for l in &r.stderr_tail {
                    outln!("    {}", inert(l));
                }
            }
        }
        reports.push(r);
    }
    if ctx.json {
        output::json(&reports)?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Args, Debug)]
pub struct InsecureArgs {
    /// The server's name.
    name: String,
    /// `on` or `off`.
    #[arg(value_parser = ["on", "off"])]
    state: String,
}

async fn insecure(ctx: &Ctx, a: InsecureArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    let on = a.state == "on";
    ctx.host.set_allow_insecure(&id, on).await?;
    if on {
        errln!(
            "{id}: insecure (development) allowed: its sign-in tokens may cross the network in \
             clear text; approve it again with `switchboard server trust {id}`"
        );
    } else {
        errln!("{id}: insecure (development) off");
    }
    Ok(ExitCode::SUCCESS)
}
