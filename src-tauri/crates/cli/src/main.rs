//! `switchboard`: the headless host.
//!
//! A thin shell over `switchboard-core`: each subcommand parses its arguments, calls one or two
//! `Host` methods and prints the result, readable by default and as JSON with `--json`. There is
//! no daemon: commands that need a server start it for the duration of the command and stop its
//! whole process tree before exiting. Errors print one sentence with its cause and exit with a
//! documented code ([`errors`]); with `--json`, stdout then has an error object.

// First: its printing macros are used by every module below.
#[macro_use]
mod output;
mod access_cmds;
mod agent_cmds;
mod agent_runs_cmds;
mod approve;
mod audit_cmds;
mod auth_cmds;
mod catalog_cmds;
mod chat_cmds;
mod cost_cmds;
mod demand_cmds;
mod editor;
mod errors;
mod form;
mod inbox;
mod limits_cmds;
mod link_cmds;
mod models_cmds;
mod pin_cmds;
mod pipeline_cmds;
mod policy_cmds;
mod questions;
mod registry_cmds;
mod run_tree;
mod sandbox_cmds;
mod server_cmds;
mod skill_cmds;
mod state_cmds;
mod stats_cmds;
mod trace_cmds;
mod transfer_cmds;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use switchboard_core::supervisor::SupervisorConfig;

/// `--version`: the package version and the commit it was built from.
const VERSION: &str = switchboard_buildinfo::DESCRIBE;

/// Switchboard: manage MCP servers, browse their tools, resources and prompts, and call them.
#[derive(Parser, Debug)]
#[command(name = "switchboard", version = VERSION, about, after_help = errors::EXIT_CODES_HELP)]
struct Cli {
    /// Where the database, logs and default server working directory live.
    #[arg(long, global = true, env = "SWITCHBOARD_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Logs on stderr: a level (`debug`) for Switchboard itself, with libraries kept at warn,
    /// or a full filter (`switchboard=debug,rmcp=trace`). Without it RUST_LOG is read; without
    /// that, only Switchboard's own warnings and errors are shown.
    #[arg(long, global = true, env = "SWITCHBOARD_LOG")]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Add, inspect, approve and control MCP servers.
    #[command(subcommand)]
    Server(server_cmds::ServerCmd),
    /// Store secrets in the OS keyring.
    #[command(subcommand)]
    Secret(transfer_cmds::SecretCmd),
    /// Import servers from a Claude Desktop, VS Code or Cursor config file.
    Import(transfer_cmds::ImportArgs),
    /// Export servers for Claude Desktop, VS Code or Cursor.
    Export(transfer_cmds::ExportArgs),
    /// Explain what would run for a server and why it fails.
    Doctor(server_cmds::DoctorArgs),
    /// List the tools of the enabled, approved servers.
    Tools(catalog_cmds::ListArgs),
    /// What each server and tool costs in tokens for the configured models.
    Catalog(cost_cmds::CatalogArgs),
    /// Call a tool.
    Call(catalog_cmds::CallArgs),
    /// List resources and resource templates.
    Resources(catalog_cmds::ListArgs),
    /// Read a resource.
    Read(catalog_cmds::ReadArgs),
    /// List prompts.
    Prompts(catalog_cmds::ListArgs),
    /// Expand a prompt.
    Prompt(catalog_cmds::PromptArgs),
    /// Configure model providers (OpenAI, Anthropic, Ollama, ...).
    #[command(subcommand)]
    Provider(chat_cmds::ProviderCmd),
    /// Models: local runtimes found here, each provider's models and their tool support.
    Models(models_cmds::ModelsArgs),
    /// Chat with a model that can call the servers' tools (each call asks first).
    Chat(chat_cmds::ChatArgs),
    /// Past conversations: list, show, search, export.
    #[command(subcommand)]
    History(chat_cmds::HistoryCmd),
    /// The audit log of tool calls and decisions: list, verify, export.
    #[command(subcommand)]
    Audit(audit_cmds::AuditCmd),
    /// Agent profiles: add, list, show, edit, remove, export and import (TOML).
    #[command(subcommand)]
    Agent(agent_cmds::AgentCmd),
    /// Tool pipelines: add, list, show, run, runs, replay.
    #[command(subcommand)]
    Pipeline(pipeline_cmds::PipelineCmd),
    /// A run's shared state, as agents wrote it: list, get, notes.
    #[command(subcommand)]
    State(state_cmds::StateCmd),
    /// Approval rules and grants, and server tags.
    #[command(subcommand)]
    Policy(policy_cmds::PolicyCmd),
    /// Sign in to remote servers (OAuth): login, logout, status.
    #[command(subcommand)]
    Auth(auth_cmds::AuthCmd),
    /// A server's skills: list, show, approve, read (verified).
    #[command(subcommand)]
    Skill(skill_cmds::SkillCmd),
    /// The MCP Registry: search, show, and install entries (each waits for your approval).
    #[command(subcommand)]
    Registry(registry_cmds::RegistryCmd),
    /// Calls, errors by kind, latency, bytes and tokens per server and tool; OTLP export.
    Stats(stats_cmds::StatsArgs),
}

/// What every command gets.
pub struct Ctx {
    host: switchboard_core::host::Host,
    json: bool,
}

/// mimalloc: MCP traffic is allocation-heavy and glibc malloc cost ~15% of CPU under load.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_exit(&e),
    };
    init_logging(cli.log.as_deref());
    let json = cli.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            errln!("error: could not start the async runtime: {e}");
            return ExitCode::from(errors::exit::FAILED);
        }
    };
    let code = match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => errors::report(&e, json),
    };
    // A reader that closed the pipe early wanted no more: that is not a failure. Any other
    // write failure means the output is incomplete, and a script must not take it as whole.
    if output::stdout_state() == output::StdoutState::Failed {
        errln!("error: could not write the output to stdout");
        return ExitCode::from(errors::exit::FAILED);
    }
    code
}

/// Help and version on stdout with 0; a wrong command line on stderr (and with `--json` as an
/// error object on stdout) with the usage code.
fn usage_exit(e: &clap::Error) -> ExitCode {
    // Printing can only fail on a closed stream, where there is no one left to tell.
    let _ = e.print();
    if e.exit_code() == 0 {
        return ExitCode::from(errors::exit::OK);
    }
    let asked_json = std::env::args_os()
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if asked_json {
        // The first paragraph, without colours or the `error:` prefix clap adds.
        let rendered = e.render().to_string();
        let first = rendered
            .split("\n\n")
            .next()
            .unwrap_or_default()
            .trim()
            .trim_start_matches("error:")
            .trim();
        let message = output::bounded(&output::escape_multiline(first), output::QUOTE_MAX);
        errors::print_json_error("usage", &message.replace('\n', " "));
    }
    ExitCode::from(errors::exit::USAGE)
}

/// What stderr shows when no one asked: Switchboard's own warnings and errors. rmcp is silent
/// because every failure it logs comes back to us as an error the CLI prints as a sentence;
/// its own line would repeat it in Rust's debug notation (`reqwest::Error { kind: .. }`).
const DEFAULT_LOG: &str = "warn,rmcp=off";

/// Logs go to stderr, through the process-wide secret redaction, coloured only on a terminal
/// (and not under `NO_COLOR`): in a log file or a pipe escape codes are noise.
fn init_logging(asked: Option<&str>) {
    let spec = match asked.map(str::trim).filter(|s| !s.is_empty()) {
        Some(a) => directives(a),
        None => std::env::var("RUST_LOG")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_LOG.to_owned()),
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&spec)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(switchboard_core::redact::RedactingStderr::default)
        .with_ansi(ansi)
        // A closed stderr must not turn a log line into a panic.
        .log_internal_errors(false)
        .init();
}

/// `--log LEVEL` is about Switchboard (the `switchboard*` targets); libraries stay at warn, or
/// quieter when a quieter level was asked for. Anything else is a filter used as written.
fn directives(asked: &str) -> String {
    use tracing_subscriber::filter::LevelFilter;
    match asked.parse::<LevelFilter>() {
        Ok(level) => format!("{},switchboard={level}", level.min(LevelFilter::WARN)),
        Err(_) => asked.to_owned(),
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let data_dir = cli
        .data_dir
        .unwrap_or_else(switchboard_core::host::default_data_dir);
    // Where URLs a person agreed to open go: the system browser, or (tests, unusual setups) a
    // program named here that gets the URL as its only argument.
    let browser = std::env::var_os("SWITCHBOARD_BROWSER")
        .filter(|b| !b.is_empty())
        .map(PathBuf::from);
    // Every command but a chat session is one-shot: a server that cannot start is not worth
    // five tries and their backoff before the command says so.
    let one_shot = !matches!(cli.command, Command::Chat(_));
    let supervisor = SupervisorConfig {
        one_try: one_shot,
        // The answer is printed by the time servers are stopped: a server that ignores the
        // end of its input gets half a second before SIGTERM, not two.
        stop_grace: if one_shot {
            std::time::Duration::from_millis(500)
        } else {
            SupervisorConfig::default().stop_grace
        },
        ..SupervisorConfig::default()
    };
    let host = switchboard_core::host::HostBuilder::new(data_dir)
        .browser(browser)
        .supervisor_config(supervisor)
        .build()
        .await?;
    let ctx = Ctx {
        host: host.clone(),
        json: cli.json,
    };
    let result = match cli.command {
        Command::Server(c) => server_cmds::run(&ctx, c).await,
        Command::Secret(c) => transfer_cmds::secret(&ctx, c).await,
        Command::Import(a) => transfer_cmds::import(&ctx, a).await,
        Command::Export(a) => transfer_cmds::export(&ctx, a).await,
        Command::Doctor(a) => server_cmds::doctor(&ctx, a).await,
        Command::Tools(a) => catalog_cmds::tools(&ctx, a).await,
        Command::Catalog(a) => cost_cmds::catalog(&ctx, a).await,
        Command::Call(a) => catalog_cmds::call(&ctx, a).await,
        Command::Resources(a) => catalog_cmds::resources(&ctx, a).await,
        Command::Read(a) => catalog_cmds::read(&ctx, a).await,
        Command::Prompts(a) => catalog_cmds::prompts(&ctx, a).await,
        Command::Prompt(a) => catalog_cmds::prompt(&ctx, a).await,
        Command::Provider(c) => chat_cmds::provider(&ctx, c).await,
        Command::Models(a) => models_cmds::run(&ctx, a).await,
        Command::Chat(a) => chat_cmds::chat(&ctx, a).await,
        Command::History(c) => chat_cmds::history(&ctx, c).await,
        Command::Audit(c) => audit_cmds::run(&ctx, c).await,
        Command::Agent(c) => agent_cmds::run(&ctx, c).await,
        Command::Pipeline(c) => pipeline_cmds::run(&ctx, c).await,
        Command::State(c) => state_cmds::run(&ctx, c).await,
        Command::Policy(c) => policy_cmds::run(&ctx, c).await,
        Command::Auth(c) => auth_cmds::run(&ctx, c).await,
        Command::Skill(c) => skill_cmds::run(&ctx, c).await,
        Command::Registry(c) => registry_cmds::run(&ctx, c).await,
        Command::Stats(a) => stats_cmds::run(&ctx, a).await,
    };
    // Whatever happened, no server process outlives the command.
    host.shutdown().await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_level_is_for_switchboard_and_keeps_libraries_at_warn() {
        assert_eq!(directives("debug"), "warn,switchboard=debug");
        assert_eq!(directives("INFO"), "warn,switchboard=info");
        assert_eq!(directives("error"), "error,switchboard=error");
        assert_eq!(directives("off"), "off,switchboard=off");
        assert_eq!(directives("rmcp=trace"), "rmcp=trace");
    }

    #[test]
    fn the_help_lists_the_exit_codes() {
        use clap::CommandFactory;
        let help = Cli::command().render_help().to_string();
        assert!(
            help.contains("Exit codes:") && help.contains("130"),
            "{help}"
        );
    }
}
