//! `switchboard registry`: search and show entries of an MCP Registry, and install one as a
//! server that waits for approval like any other (`server add`, import).
//!
//! The registry is `--registry URL`, else `SWITCHBOARD_REGISTRY_URL`, else the settings'
//! registry URL (the official registry unless the person changed it). Answers are cached in the
//! data directory; when the registry cannot be reached the cached answer is shown and the
//! command says so. Secret inputs are never taken from the
//! command line (other processes can read it): they are asked without echo on a terminal, or
//! read from stdin one per line, in the order `registry show` lists them.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use switchboard_core::escape::escape_for_display;
use switchboard_core::host::AddOptions;
use switchboard_core::redact::Secret;
use switchboard_core::registry::{
    self, Answers, Freshness, InputKind, InputSpec, RegistryClient, SearchQuery,
};

use crate::errors::usage;
use crate::output::{self, inert};
use crate::Ctx;

/// `switchboard registry ...`
#[derive(Subcommand, Debug)]
pub enum RegistryCmd {
    /// Search the registry (without a query: list it), newest versions, active entries only.
    Search(SearchArgs),
    /// Show one entry: its packages and remotes, what each needs, and why any is refused.
    Show(ShowArgs),
    /// Add an entry as a server. It does not start until you approve its exact command.
    Install(InstallArgs),
}

/// Which registry.
#[derive(Args, Debug)]
pub struct Source {
    /// The registry's base URL (default: the one in the settings, else the official MCP
    /// Registry).
    #[arg(long = "registry", env = "SWITCHBOARD_REGISTRY_URL")]
    registry: Option<String>,
}

/// `registry search`
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Text the server names contain.
    query: Option<String>,
    /// The page to fetch (the cursor printed after the previous page).
    #[arg(long)]
    cursor: Option<String>,
    /// Entries per page (at most 100).
    #[arg(long, default_value_t = 30)]
    limit: u32,
    /// Ask the registry even if a fresh answer is cached.
    #[arg(long)]
    refresh: bool,
    #[command(flatten)]
    source: Source,
}

/// `registry show`
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The registry name (`io.github.user/server`).
    name: String,
    /// A version (default: the latest).
    #[arg(long)]
    version: Option<String>,
    #[command(flatten)]
    source: Source,
}

/// `registry install`
#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The registry name (`io.github.user/server`).
    name: String,
    /// A version (default: the latest).
    #[arg(long)]
    version: Option<String>,
    /// The server's name here (default: the part of the registry name after the slash).
    #[arg(long = "as")]
    as_name: Option<String>,
    /// Which package or remote, by the number `registry show` prints (default: the first usable).
    #[arg(long)]
    option: Option<usize>,
    /// An environment variable's value, NAME=VALUE (not for secrets).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// An argument's value, FLAG=VALUE or HINT=VALUE (`--arg root=/srv`).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    arg: Vec<String>,
    /// A header's value, NAME=VALUE (not for secrets).
    #[arg(long = "header", value_name = "NAME=VALUE")]
    header: Vec<String>,
    /// A template variable's value (`{region}` in a URL), NAME=VALUE (not for secrets).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    var: Vec<String>,
    /// Replace secrets already stored under the names this server's values would get.
    #[arg(long)]
    replace_secrets: bool,
    #[command(flatten)]
    source: Source,
}

pub async fn run(ctx: &Ctx, cmd: RegistryCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        RegistryCmd::Search(a) => search(ctx, a).await,
        RegistryCmd::Show(a) => show(ctx, a).await,
        RegistryCmd::Install(a) => install(ctx, a).await,
    }
}

fn client(ctx: &Ctx, source: &Source) -> anyhow::Result<RegistryClient> {
    let url = match &source.registry {
        Some(u) => u.clone(),
        None => ctx.host.settings().settings.registry_url,
    };
    Ok(registry::client_in(ctx.host.data_dir(), &url)?)
}

fn say_freshness(f: &Freshness) {
    match f {
        Freshness::Live => {}
        Freshness::Cached { age_secs } => errln!("(cached {age_secs} s ago)"),
        Freshness::Offline { age_secs, reason } => errln!(
            "the registry could not be reached ({}); showing what was cached {age_secs} s ago",
            escape_for_display(reason)
        ),
    }
}

async fn search(ctx: &Ctx, a: SearchArgs) -> anyhow::Result<ExitCode> {
    let c = client(ctx, &a.source)?;
    let page = c
        .search(&SearchQuery {
            text: a.query,
            cursor: a.cursor,
            limit: a.limit,
            refresh: a.refresh,
        })
        .await?;
    if ctx.json {
        let entries: Vec<_> = page
            .entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.server.name,
                    "title": e.server.title,
                    "version": e.server.version,
                    "description": registry::wire::cut(&e.server.description, 300),
                    "options": registry::options(&e.server).len(),
                    "installable": registry::default_option(&e.server).is_some(),
                })
            })
            .collect();
        output::json(&serde_json::json!({
            "registry": c.base_url(),
            "entries": entries,
            "next_cursor": page.next_cursor,
            "hidden_not_active": page.hidden,
            "skipped_malformed": page.skipped,
            "freshness": page.freshness,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    say_freshness(&page.freshness);
    if page.entries.is_empty() {
        errln!("no active entries found");
    }
    for e in &page.entries {
        let usable = if registry::default_option(&e.server).is_some() {
            ""
        } else {
            "  (not installable)"
        };
        outln!(
            "{} {}{usable}",
            escape_for_display(&e.server.name),
            escape_for_display(&e.server.version)
        );
        let desc = registry::wire::cut(&e.server.description, 160);
        if !desc.is_empty() {
            outln!("    {}", inert(&desc.replace('\n', " ")));
        }
    }
    if page.hidden > 0 || page.skipped > 0 {
        errln!(
            "{} not shown: {} deprecated or deleted, {} not valid server.json",
            page.hidden + page.skipped,
            page.hidden,
            page.skipped
        );
    }
    if let Some(next) = &page.next_cursor {
        errln!("more: --cursor {}", escape_for_display(next));
    }
    Ok(ExitCode::SUCCESS)
}

async fn show(ctx: &Ctx, a: ShowArgs) -> anyhow::Result<ExitCode> {
    let c = client(ctx, &a.source)?;
    let (entry, freshness) = c.server(&a.name, a.version.as_deref()).await?;
    let opts = registry::options(&entry.server);
    if ctx.json {
        output::json(&serde_json::json!({
            "server": entry.server,
            "status": entry.status,
            "options": opts,
            "freshness": freshness,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    say_freshness(&freshness);
    let s = &entry.server;
    outln!(
        "{} {}",
        escape_for_display(&s.name),
        escape_for_display(&s.version)
    );
    if let Some(t) = &s.title {
        outln!("  title: {}", escape_for_display(t));
    }
    outln!(
        "  {}",
        inert(&registry::wire::cut(&s.description, 1000).replace('\n', " "))
    );
    if let Some(r) = &s.repository {
        outln!("  source: {}", escape_for_display(&r.url));
    }
    for o in &opts {
        outln!("  [{}] {}", o.index, escape_for_display(&o.label));
        if let Some(why) = &o.refused {
            outln!("      refused: {}", escape_for_display(why));
        }
        for i in &o.inputs {
            outln!("      {}", input_line(i));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn input_line(i: &InputSpec) -> String {
    let flag = match i.kind {
        InputKind::Env => "--env",
        InputKind::Arg => "--arg",
        InputKind::Header => "--header",
        InputKind::Var => "--var",
    };
    let mut line = format!(
        "{} {}{}",
        if i.secret { "(secret, asked)" } else { flag },
        escape_for_display(&i.name),
        if i.required { " (required)" } else { "" }
    );
    if let Some(d) = &i.default {
        line.push_str(&format!(" default {}", escape_for_display(d)));
    }
    if !i.choices.is_empty() {
        let c: Vec<String> = i.choices.iter().map(|c| escape_for_display(c)).collect();
        line.push_str(&format!(" one of {}", c.join(", ")));
    }
    if !i.description.is_empty() {
        line.push_str(&format!(": {}", escape_for_display(&i.description)));
    }
    line
}

async fn install(ctx: &Ctx, a: InstallArgs) -> anyhow::Result<ExitCode> {
    let c = client(ctx, &a.source)?;
    let (entry, freshness) = c.server(&a.name, a.version.as_deref()).await?;
    if !ctx.json {
        say_freshness(&freshness);
    }
    let opts = registry::options(&entry.server);
    let index = match a.option {
        Some(i) => i,
        None => registry::default_option(&entry.server)
            .ok_or_else(|| registry::nothing_usable(&entry.server))?,
    };
    let inputs = opts
        .get(index)
        .map(|o| o.inputs.clone())
        .unwrap_or_default();
    let answers = collect_answers(&a, &inputs)?;
    let id = match &a.as_name {
        Some(n) => switchboard_core::ids::ServerId::new(n)
            .map_err(|e| usage(format!("{n:?} is not a usable server name: {e}")))?,
        None => registry::suggested_id(&entry.server.name).ok_or_else(|| {
            usage("no server name can be made from the registry name; give one with --as NAME")
        })?,
    };
    let proposal = registry::propose(&entry.server, index, id.clone(), &answers)?;
    let summary = proposal.spec.summary();
    let outcome = ctx
        .host
        .add_server_with(
            proposal.spec,
            AddOptions {
                secrets: proposal.secrets,
                replace_secrets: a.replace_secrets,
            },
        )
        .await?;
    if ctx.json {
        output::json(&serde_json::json!({
            "added": id,
            "registry_name": entry.server.name,
            "version": entry.server.version,
            "option": index,
            "runs": summary,
            "secrets_stored": outcome.secrets_stored,
            "moved": outcome.moved,
        }))?;
    } else {
        errln!(
            "added {id} from {} {}",
            escape_for_display(&entry.server.name),
            escape_for_display(&entry.server.version)
        );
        errln!("  runs: {summary}");
        for s in &outcome.secrets_stored {
            errln!("  secret {s} went to the keyring, not into the config");
        }
        errln!(
            "it will not start until you approve what it runs or where it connects: switchboard server trust {id}"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The answers from the flags, then the secrets from the terminal or stdin.
fn collect_answers(a: &InstallArgs, inputs: &[InputSpec]) -> anyhow::Result<Answers> {
    let mut answers = Answers::new();
    let groups = [
        (InputKind::Env, &a.env, "--env"),
        (InputKind::Arg, &a.arg, "--arg"),
        (InputKind::Header, &a.header, "--header"),
        (InputKind::Var, &a.var, "--var"),
    ];
    for (kind, items, flag) in groups {
        for kv in items {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| usage(format!("{flag} {kv:?} must look like NAME=VALUE")))?;
            let input = inputs
                .iter()
                .find(|i| i.kind == kind && same_name(kind, &i.name, k))
                .ok_or_else(|| {
                    usage(format!(
                        "the entry has no input {k:?} for {flag}; `switchboard registry show` lists them"
                    ))
                })?;
            if input.secret {
                return Err(usage(format!(
                    "{} is a secret: it is read from stdin or asked for, never taken from the command line",
                    escape_for_display(&input.name)
                )));
            }
            answers.set(kind, input.name.clone(), Secret::new(v));
        }
    }
    for i in inputs.iter().filter(|i| !i.secret) {
        let given = groups.iter().any(|(k, items, _)| {
            *k == i.kind
                && items.iter().any(|kv| {
                    kv.split_once('=')
                        .is_some_and(|(n, _)| same_name(*k, &i.name, n))
                })
        });
        if i.required && i.default.is_none() && !given {
            let flag = groups
                .iter()
                .find(|(k, _, _)| *k == i.kind)
                .map(|(_, _, f)| *f)
                .unwrap_or("--arg");
            return Err(usage(format!(
                "{} is required: give it with {flag} {}=VALUE",
                escape_for_display(&i.name),
                escape_for_display(i.name.trim_start_matches('-'))
            )));
        }
    }
    let secrets: Vec<&InputSpec> = inputs.iter().filter(|i| i.secret).collect();
    if secrets.is_empty() {
        return Ok(answers);
    }
    if std::io::stdin().is_terminal() {
        for i in secrets {
            let prompt = format!(
                "{} {}{}: ",
                escape_for_display(&i.name),
                if i.required {
                    "(required)"
                } else {
                    "(optional, Enter to skip)"
                },
                if i.description.is_empty() {
                    String::new()
                } else {
                    format!(
                        " — {}",
                        escape_for_display(&registry::wire::cut(&i.description, 120))
                    )
                }
            );
            let v = rpassword::prompt_password(prompt)?;
            answers.set(i.kind, i.name.clone(), Secret::new(v));
        }
    } else {
        let mut text = String::new();
        std::io::stdin().take(64 * 1024).read_to_string(&mut text)?;
        let mut lines = text.lines();
        for i in secrets {
            let v = lines.next().unwrap_or("").trim_end_matches('\r');
            answers.set(i.kind, i.name.clone(), Secret::new(v));
        }
    }
    Ok(answers)
}

/// Whether a name typed after `--arg` means input `name`: exactly, or a flag without its dashes.
fn same_name(kind: InputKind, name: &str, typed: &str) -> bool {
    name == typed
        || (kind == InputKind::Arg && name.trim_start_matches('-') == typed.trim_start_matches('-'))
}
