//! `switchboard agent`: agent profiles (issue 15) — add, list, show, edit, remove, and
//! export/import as TOML.
//!
//! `add` and `edit` share one set of flags. A repeatable flag (`--server`, `--tool`,
//! `--ask`/`--deny`, `--delegate`) given on `edit` replaces that whole list; `--clear-*` empties
//! a field. Delegation has three states: `--delegate A` (only these), `--no-delegation`
//! (nobody) and, on `edit`, `--any-delegate` (every agent, the default of a new profile).
//!
//! Profiles may come from someone else's file, so their texts are shown inert (escape
//! sequences made visible). Confirmations go to stderr; stdout carries only what was asked
//! for (a list, a profile, a TOML file), or JSON with `--json`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::json;
use switchboard_core::agent_data::TOML_MAX_BYTES;
use switchboard_core::agent_data::{AgentProfile, Budget, PolicyTightening, Tighten};
use switchboard_core::host::Host;

use crate::errors::{exit, usage};
use crate::{output, Ctx};

/// `switchboard agent ...`.
#[derive(Subcommand, Debug)]
pub enum AgentCmd {
    /// Add an agent profile.
    Add(Box<AddArgs>),
    /// Every agent profile.
    List,
    /// One agent profile in full.
    Show {
        /// The agent.
        name: String,
    },
    /// Change an agent profile; what is not given stays as it is.
    Edit(Box<EditArgs>),
    /// Remove an agent profile.
    Remove {
        /// The agent.
        name: String,
    },
    /// Write every agent profile as TOML.
    Export {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The newest delegation runs, or one run as a tree (who did what, on which model, at
    /// what cost).
    Runs {
        /// The run (`run-...`); without it, the newest runs.
        run: Option<String>,
    },
    /// Add the agent profiles of a TOML file (all of them, or none if one is refused).
    Import {
        /// The file.
        file: PathBuf,
        /// Overwrite profiles whose names are taken (else a taken name fails the import).
        #[arg(long)]
        replace: bool,
    },
}

/// `agent add`.
#[derive(Args, Debug)]
pub struct AddArgs {
    /// Its name: lowercase letters, digits, '-' and '_'.
    name: String,
    #[command(flatten)]
    flags: ProfileFlags,
}

/// `agent edit`.
#[derive(Args, Debug)]
pub struct EditArgs {
    /// The agent.
    name: String,
    #[command(flatten)]
    flags: ProfileFlags,
    #[command(flatten)]
    clear: ClearFlags,
}

/// What `add` and `edit` set.
#[derive(Args, Debug, Default)]
pub struct ProfileFlags {
    /// The configured provider it runs on (`switchboard provider list`).
    #[arg(long)]
    provider: Option<String>,
    /// The model (default: the provider's default model).
    #[arg(long)]
    model: Option<String>,
    /// What it is for; the supervisor reads it when choosing whom to delegate to.
    #[arg(long)]
    description: Option<String>,
    /// Its system prompt.
    #[arg(long, conflicts_with = "system_file")]
    system: Option<String>,
    /// Read its system prompt from this file.
    #[arg(long, value_name = "FILE")]
    system_file: Option<PathBuf>,
    /// A server it may use, or `*` for every server (repeatable; none by default).
    #[arg(long = "server", value_name = "SERVER")]
    servers: Vec<String>,
    /// Only tools matching this `server/tool` pattern (`*` = anything; repeatable; default:
    /// every tool of its servers).
    #[arg(long = "tool", value_name = "PATTERN")]
    tools: Vec<String>,
    /// Always ask before calls to tools matching this `server/tool` pattern (repeatable).
    #[arg(long, value_name = "PATTERN")]
    ask: Vec<String>,
    /// Refuse calls to tools matching this `server/tool` pattern (repeatable).
    #[arg(long, value_name = "PATTERN")]
    deny: Vec<String>,
    /// An agent it may delegate to (repeatable; default: every agent).
    #[arg(
        long = "delegate",
        value_name = "AGENT",
        conflicts_with = "no_delegation"
    )]
    delegates: Vec<String>,
    /// It may not delegate at all.
    #[arg(long)]
    no_delegation: bool,
    /// Progressive discovery: offer it a search over the tools in its scope and the ones it
    /// loads, instead of every definition (for large catalogs).
    #[arg(long)]
    discovery: bool,
    /// Token budget (input plus output).
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Estimated cost budget in US dollars.
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Tool call budget.
    #[arg(long, value_name = "N")]
    max_calls: Option<u32>,
    /// Wall-time budget in seconds.
    #[arg(long, value_name = "SECS")]
    max_time: Option<u64>,
}

/// What only `edit` can clear.
#[derive(Args, Debug, Default)]
pub struct ClearFlags {
    /// Use the provider's default model.
    #[arg(long, conflicts_with = "model")]
    clear_model: bool,
    /// Remove the system prompt.
    #[arg(long, conflicts_with_all = ["system", "system_file"])]
    clear_system: bool,
    /// No servers (so no tools).
    #[arg(long, conflicts_with = "servers")]
    clear_servers: bool,
    /// Every tool of its servers.
    #[arg(long, conflicts_with = "tools")]
    clear_tools: bool,
    /// Remove every ask/deny override.
    #[arg(long, conflicts_with_all = ["ask", "deny"])]
    clear_policy: bool,
    /// Remove every limit (then apply the --max-* given).
    #[arg(long)]
    clear_budget: bool,
    /// It may delegate to every agent.
    #[arg(long, conflicts_with_all = ["delegates", "no_delegation"])]
    any_delegate: bool,
    /// Offer it every tool of its scope again (progressive discovery off).
    #[arg(long, conflicts_with = "discovery")]
    no_discovery: bool,
}

/// Runs `switchboard agent ...`.
pub async fn run(ctx: &Ctx, cmd: AgentCmd) -> anyhow::Result<ExitCode> {
    let host = &ctx.host;
    match cmd {
        AgentCmd::Add(a) => {
            let AddArgs { name, flags } = *a;
            let name = Host::agent_name(&name)?;
            let provider = flags
                .provider
                .as_deref()
                .ok_or_else(|| usage("agent add needs --provider"))?;
            let mut p = AgentProfile::new(name, Host::provider_name(provider)?);
            apply(&mut p, &flags)?;
            host.add_agent(p.clone()).await?;
            done(ctx, &p, "added")?;
        }
        AgentCmd::Runs { run } => crate::agent_runs_cmds::runs(ctx, host, run).await?,
        AgentCmd::List => {
            let all = host.list_agents().await?;
            if ctx.json {
                output::json(&all)?;
            } else if all.is_empty() {
                errln!("no agents; add one with `switchboard agent add NAME --provider P`");
            }
            for p in all.iter().filter(|_| !ctx.json) {
                outln!(
                    "{}\t{}\t{}",
                    p.name,
                    model_of(p),
                    output::inert(p.description.lines().next().unwrap_or(""))
                );
            }
        }
        AgentCmd::Show { name } => {
            let p = host.agent(&Host::agent_name(&name)?).await?;
            if ctx.json {
                output::json(&p)?;
            } else {
                show(&p);
            }
        }
        AgentCmd::Edit(a) => {
            let EditArgs { name, flags, clear } = *a;
            let mut p = host.agent(&Host::agent_name(&name)?).await?;
            if let Some(provider) = &flags.provider {
                p.provider = Host::provider_name(provider)?;
            }
            clear_fields(&mut p, &clear);
            apply(&mut p, &flags)?;
            host.update_agent(p.clone()).await?;
            done(ctx, &p, "saved")?;
        }
        AgentCmd::Remove { name } => {
            let name = Host::agent_name(&name)?;
            host.remove_agent(&name).await?;
            if ctx.json {
                output::json(&json!({ "removed": name }))?;
            } else {
                errln!("removed agent {name}");
            }
        }
        AgentCmd::Export { out } => {
            let text = host.export_agents().await?;
            match (&out, ctx.json) {
                (Some(path), _) => {
                    std::fs::write(path, &text)
                        .with_context(|| format!("could not write {}", path.display()))?;
                    if ctx.json {
                        output::json(&json!({ "written": path }))?;
                    } else {
                        errln!("wrote {}", path.display());
                    }
                }
                (None, true) => output::json(&json!({ "toml": text }))?,
                (None, false) => out!("{text}"),
            }
        }
        AgentCmd::Import { file, replace } => {
            let text = read_capped(&file)?;
            let report = host.import_agents(&text, replace).await?;
            if ctx.json {
                output::json(&report)?;
            } else {
                let names = |v: &[switchboard_core::agent_data::AgentName]| {
                    v.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ")
                };
                errln!(
                    "imported {} (added: {}; replaced: {})",
                    output::count(
                        report.added.len() + report.replaced.len(),
                        "agent",
                        "agents"
                    ),
                    or_none(&names(&report.added)),
                    or_none(&names(&report.replaced))
                );
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "none"
    } else {
        s
    }
}

fn done(ctx: &Ctx, p: &AgentProfile, what: &str) -> anyhow::Result<()> {
    if ctx.json {
        output::json(p)?;
    } else {
        errln!("{what} agent {}", p.name);
    }
    Ok(())
}

/// A file read whole, refused past the agents file limit rather than read into memory.
fn read_capped(path: &Path) -> anyhow::Result<String> {
    let f =
        std::fs::File::open(path).with_context(|| format!("could not read {}", path.display()))?;
    let mut bytes = Vec::new();
    f.take(TOML_MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("could not read {}", path.display()))?;
    if bytes.len() > TOML_MAX_BYTES {
        anyhow::bail!(
            "{} is larger than {TOML_MAX_BYTES} bytes, more than an agents file may be",
            path.display()
        );
    }
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
}

fn clear_fields(p: &mut AgentProfile, c: &ClearFlags) {
    if c.clear_model {
        p.model = None;
    }
    if c.clear_system {
        p.system = None;
    }
    if c.clear_servers {
        p.scope.servers.clear();
    }
    if c.clear_tools {
        p.scope.tools.clear();
    }
    if c.clear_policy {
        p.policy.clear();
    }
    if c.clear_budget {
        p.budget = Budget::default();
    }
    if c.any_delegate {
        p.delegates = None;
    }
    if c.no_discovery {
        p.discovery = false;
    }
}

/// Sets what the flags give; a repeatable flag given replaces its whole list.
fn apply(p: &mut AgentProfile, f: &ProfileFlags) -> anyhow::Result<()> {
    if let Some(m) = &f.model {
        p.model = Some(m.clone());
    }
    if let Some(d) = &f.description {
        p.description = d.clone();
    }
    if let Some(s) = &f.system {
        p.system = Some(s.clone());
    }
    if let Some(path) = &f.system_file {
        p.system = Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("could not read {}", path.display()))?,
        );
    }
    if !f.servers.is_empty() {
        p.scope.servers = f.servers.clone();
    }
    if !f.tools.is_empty() {
        p.scope.tools = f.tools.clone();
    }
    if !f.ask.is_empty() || !f.deny.is_empty() {
        let rule = |action: Tighten| {
            move |t: &String| PolicyTightening {
                tool: t.clone(),
                action,
            }
        };
        p.policy = f.ask.iter().map(rule(Tighten::Ask)).collect();
        p.policy.extend(f.deny.iter().map(rule(Tighten::Deny)));
    }
    if f.no_delegation {
        p.delegates = Some(Vec::new());
    } else if !f.delegates.is_empty() {
        p.delegates = Some(
            f.delegates
                .iter()
                .map(|d| Host::agent_name(d))
                .collect::<Result<_, _>>()?,
        );
    }
    if f.discovery {
        p.discovery = true;
    }
    let b = &mut p.budget;
    b.tokens = f.max_tokens.or(b.tokens);
    b.cost_usd = f.max_cost.or(b.cost_usd);
    b.tool_calls = f.max_calls.or(b.tool_calls);
    b.wall_secs = f.max_time.or(b.wall_secs);
    Ok(())
}

fn model_of(p: &AgentProfile) -> String {
    match &p.model {
        Some(m) => format!("{}/{}", p.provider, output::inert(m)),
        None => format!("{} (default model)", p.provider),
    }
}

fn list_or(v: &[String], empty: &str) -> String {
    if v.is_empty() {
        empty.to_owned()
    } else {
        output::inert(&v.join(", "))
    }
}

fn show(p: &AgentProfile) {
    outln!("agent {}", p.name);
    outln!("  description: {}", output::inert(&p.description));
    outln!("  model: {}", model_of(p));
    let delegates = match &p.delegates {
        None => "every agent".to_owned(),
        Some(d) if d.is_empty() => "nobody".to_owned(),
        Some(d) => d.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", "),
    };
    outln!("  delegates to: {delegates}");
    if p.discovery {
        outln!("  tools: found and loaded as needed (progressive discovery)");
    }
    outln!(
        "  servers: {}",
        list_or(&p.scope.servers, "none (no tools)")
    );
    if !p.scope.servers.is_empty() {
        outln!(
            "  tools: {}",
            list_or(&p.scope.tools, "every tool of those servers")
        );
    }
    if p.policy.is_empty() {
        outln!("  overrides: none (your policy applies)");
    }
    for t in &p.policy {
        outln!(
            "  override: {} {}",
            t.action.as_str(),
            output::inert(&t.tool)
        );
    }
    let b = &p.budget;
    let mut limits = Vec::new();
    if let Some(t) = b.tokens {
        limits.push(format!("{t} tokens"));
    }
    if let Some(c) = b.cost_usd {
        limits.push(format!("${c:.2}"));
    }
    if let Some(n) = b.tool_calls {
        limits.push(output::count(n, "tool call", "tool calls"));
    }
    if let Some(s) = b.wall_secs {
        limits.push(format!("{s} s"));
    }
    outln!(
        "  budget: {}",
        if limits.is_empty() {
            "no limits".to_owned()
        } else {
            limits.join(", ")
        }
    );
    match &p.system {
        None => outln!("  system prompt: none"),
        Some(s) => {
            outln!("  system prompt:");
            for line in output::inert(s).lines() {
                outln!("    {line}");
            }
        }
    }
}
