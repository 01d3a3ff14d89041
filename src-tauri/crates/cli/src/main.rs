//! `switchboard`: the headless host.
//!
//! A thin shell over `switchboard-core`: each subcommand parses its arguments, calls one or two
//! `Host` methods and prints the result, readable by default and as JSON with `--json`. There is
//! no daemon: commands that need a server start it for the duration of the command and stop its
//! whole process tree before exiting. Errors print one sentence with its cause and exit non-zero.

mod access_cmds;
mod approve;
mod audit_cmds;
mod catalog_cmds;
mod chat_cmds;
mod editor;
mod form;
mod output;
mod pin_cmds;
mod policy_cmds;
mod questions;
mod server_cmds;
mod transfer_cmds;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Switchboard: manage MCP servers, browse their tools, resources and prompts, and call them.
#[derive(Parser, Debug)]
#[command(name = "switchboard", version, about)]
struct Cli {
    /// Where the database, logs and default server working directory live.
    #[arg(long, global = true, env = "SWITCHBOARD_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Log verbosity for Switchboard itself (stderr), e.g. `debug`.
    #[arg(long, global = true, env = "SWITCHBOARD_LOG", default_value = "warn")]
    log: String,
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
    /// Chat with a model that can call the servers' tools (each call asks first).
    Chat(chat_cmds::ChatArgs),
    /// Past conversations: list, show, search, export.
    #[command(subcommand)]
    History(chat_cmds::HistoryCmd),
    /// The audit log of tool calls and decisions: list, verify, export.
    #[command(subcommand)]
    Audit(audit_cmds::AuditCmd),
    /// Approval rules and grants, and server tags.
    #[command(subcommand)]
    Policy(policy_cmds::PolicyCmd),
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
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&cli.log)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(switchboard_core::redact::RedactingStderr::default)
        // Colours only on a terminal: in a log file or a pipe they are noise, and there every
        // escape byte then comes from nowhere but a server's text (which is escaped anyway).
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e);
            ExitCode::FAILURE
        }
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
    let host = switchboard_core::host::HostBuilder::new(data_dir)
        .browser(browser)
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
        Command::Call(a) => catalog_cmds::call(&ctx, a).await,
        Command::Resources(a) => catalog_cmds::resources(&ctx, a).await,
        Command::Read(a) => catalog_cmds::read(&ctx, a).await,
        Command::Prompts(a) => catalog_cmds::prompts(&ctx, a).await,
        Command::Prompt(a) => catalog_cmds::prompt(&ctx, a).await,
        Command::Provider(c) => chat_cmds::provider(&ctx, c).await,
        Command::Chat(a) => chat_cmds::chat(&ctx, a).await,
        Command::History(c) => chat_cmds::history(&ctx, c).await,
        Command::Audit(c) => audit_cmds::run(&ctx, c).await,
        Command::Policy(c) => policy_cmds::run(&ctx, c).await,
    };
    // Whatever happened, no server process outlives the command.
    host.shutdown().await;
    result
}
