//! switchboard-core: everything that matters in Switchboard, with no Tauri dependency.
//!
//! # Layout
//! - [`clock`]: the wall clock, a leaf every module may read.
//! - [`ids`]: identity newtypes (`ServerId`, `ToolRef`) so no bare string keys cross modules.
//! - [`config`]: the server spec model, launch resolution and trust fingerprints, and the
//!   importers/exporters for Claude Desktop, VS Code and Cursor files.
//! - [`escape`]: untrusted text made visible before it is shown (ANSI, controls, bidi), a leaf
//!   below `config` and everything that displays server text.
//! - [`sandbox`]: the opt-in sandbox of a local server (bubblewrap, its own network, the
//!   filtering proxy), a leaf whose setting `config` holds; the host composes it.
//! - [`secrets`]: the `SecretStore` seam with the OS keyring and an in-memory store.
//! - [`store`]: SQLite through sqlx with embedded migrations; typed repositories.
//! - [`mcp`]: one supervisor task per server; `mcp::connection` is the only module that touches
//!   `rmcp`; LLM-safe tool naming; stderr ring buffer and protocol trace.
//! - [`approval`]: the approval policy (a pure function) and pending requests released only
//!   by their random nonce.
//! - [`audit_data`], [`policy_data`], [`pin_data`]: the audit log's rows, policy rules and
//!   pinned surfaces as plain data, leaves shared by `store` (which keeps them) and `approval`
//!   (which decides with them and re-exports them).
//! - [`llm`]: model providers (OpenAI, Anthropic, OpenAI-compatible profiles) over a
//!   provider-neutral transcript, streaming first.
//! - [`chat`]: the agent loop (one turn as a state machine emitting `ChatEvent`s).
//! - [`events`]: the `HostEvent` enum published to the CLI and the desktop shell.
//! - [`status`]: what the shells see of a server (`ServerStatus`, the typed `Reason` it is down,
//!   `Progress`), a leaf shared by `events`, `mcp` and the shells.
//! - [`transcript`]: the provider-neutral conversation (`Message`, `Part`, `Usage`,
//!   `ChatRequest`), a leaf of plain data shared by `llm` (which re-exports it), `store` and
//!   `approval`.
//! - [`roots`]: the folders a server may see (`Root`), a leaf shared by `mcp` and `store`.
//! - [`catalog`], [`schema`]: what servers offer in our own types and their compiled input
//!   schemas, leaves shared by `mcp` (which re-exports them) and `approval`.
//! - [`url_check`]: whether a URL a server sent may be shown as openable, a pure leaf used by
//!   `approval` (elicitation) and by [`opener`], which launches the browser.
//! - [`settings`]: the person's app settings (theme, log level, idle-stop time, ...) in a
//!   JSON file of the data directory, a leaf.
//! - [`registry`]: the MCP Registry's v0.1 API (search, cache) and `server.json` turned into a
//!   server proposal that goes through the trust gate; leaves only.
//! - [`pipeline_data`]: tool pipelines as plain data (definitions, argument mappings and the
//!   check they pass before anything runs), a leaf kept by `store` and run by `host`.
//! - [`outbound`]: outbound redaction (issue 16): secrets and personal data replaced by stable
//!   placeholders at the provider boundary, and put back in the model's tool calls locally.
//! - [`agents`]: agent profiles, run trees, a run's shared state and the tools an agent sees
//!   (issue 15), a feature the host holds and reaches through two narrow traits.
//! - [`host`]: the composition root that wires concrete implementations together, and the
//!   one governed seam (`host::run`) every request to a server passes through.
//! - `harness` (feature `harness`, tests and benchmarks only): doors around that seam.
//!
//! Nothing below [`host`] reads global configuration or the environment; it all arrives
//! through [`host::HostBuilder`].
#![deny(missing_docs)]

pub mod agent_data;
pub mod agents;
pub mod approval;
pub mod audit_data;
pub mod catalog;
pub mod catalog_cost;
pub mod chat;
pub mod clock;
pub mod config;
pub mod discovery;
pub mod error;
pub mod escape;
pub mod events;
#[cfg(feature = "harness")]
pub mod harness;
pub mod host;
pub mod hygiene;
pub mod ids;
pub mod llm;
pub mod mcp;
pub mod metrics;
pub mod models;
pub mod oauth;
pub mod opener;
pub mod outbound;
pub mod pin_data;
pub mod pipeline_data;
pub mod pipelines;
pub mod policy_data;
pub mod redact;
pub mod redaction;
pub mod registry;
pub mod roots;
pub mod sandbox;
pub mod schema;
pub mod secrets;
pub mod server_logs;
pub mod server_process;
pub mod settings;
pub mod skill_data;
pub mod skills;
pub mod status;
pub mod store;
pub mod supervisor;
pub mod transcript;
pub mod url_check;

/// The version of this crate, reported as the MCP client version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
