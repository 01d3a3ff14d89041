//! The IPC surface of the desktop app: typed commands and events, generated into
//! `ui/src/ipc/bindings.ts` by tauri-specta. Nobody calls `invoke('...')` by hand.
//!
//! Commands are thin (STYLE 11): parse, call one `Host` method, map to a DTO or an
//! [`IpcError`]. DTOs live here, not in the core, so the core stays free of Tauri and specta.
//! Secret values never appear in any response (SE-05): DTOs carry secret names and "set / not
//! set" only.
//!
//! # The shape of a command
//! A command is about twenty lines: checks on its arguments (small named functions or
//! `TryFrom` impls beside the DTOs), one call into the host (or a short sequence), and a
//! mapping done by `From` impls next to the DTOs. Errors are built with [`IpcError::invalid`]
//! and its siblings, never as struct literals. `thin.rs` holds a test that fails, naming the
//! command, when one grows past 25 lines, lacks its span, or builds an `IpcError` by hand.
//!
//! Every command opens a span, `#[tracing::instrument(skip_all, fields(...))]`, at info, so
//! what the core logs while serving it says which server, tool, conversation or run it was
//! about. `skip_all` is deliberate: the spans name only identifiers (server and tool names,
//! conversation, message and run ids), never message text, tool arguments, search queries,
//! paths, URLs, approval nonces or secrets, because the log file keeps every span's fields
//! with each line. Spans carry no `err`: the window shows the error itself, the core logs real
//! failures where it has their structured cause, and an `IpcError` sentence can quote
//! server-sent or person-typed text that has no place in the log.

pub mod access;
pub mod agent_runs;
pub mod agents;
pub mod apps;
pub mod audit_log;
pub mod catalog;
pub mod catalog_cost;
pub mod chat;
pub mod content;
pub mod conversations;
pub mod discovery;
pub mod events;
pub mod form;
pub mod history;
pub mod inspector;
pub mod links;
pub mod metrics;
pub mod models;
pub mod pins;
pub mod pipelines;
pub mod policy;
pub mod providers;
pub mod questions;
pub mod redaction;
pub mod registry;
pub mod resources;
pub mod run;
pub mod sandbox;
pub mod servers;
pub mod settings;
pub mod signin;
pub mod signin_dto;
pub mod skills;
pub mod startup;
pub mod transfer;

use serde::Serialize;
use specta::Type;
use switchboard_core::host::HostError;
use switchboard_core::status::Reason;
use switchboard_core::store::StoreError;

/// Stable error codes the UI can branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such server.
    NotFound,
    /// The request is invalid (bad name, bad spec).
    Invalid,
    /// The server must be approved first, or what was approved changed.
    NeedsTrust,
    /// The server is not running.
    NotRunning,
    /// The OS keyring failed or is unavailable.
    Keyring,
    /// A secret is already stored where the request would write; repeat it with the person's
    /// confirmation (`replace_secrets`) to replace it.
    SecretExists,
    /// The MCP server failed or misbehaved.
    Server,
    /// The server wants credentials (HTTP 401/403): offer "Sign in" (its header settings).
    AuthRequired,
    /// The server's message was over the host's cap; the message names it.
    MessageTooLarge,
    /// The user or the policy refused a tool call.
    Denied,
    /// The operation was cancelled.
    Cancelled,
    /// Anything else; the message says what.
    Internal,
}

/// The one error type of every command: a code to act on and a sentence to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Type, thiserror::Error)]
#[error("{message}")]
pub struct IpcError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// What happened, for a person.
    pub message: String,
}

/// The one way commands build errors: a code and a sentence, so a failure reads the same
/// whichever command met it (and a test can refuse struct literals outside this file).
impl IpcError {
    /// An error with `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The request is invalid: a malformed id, an over-long field, a value out of range.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Invalid, message)
    }

    /// What the request names does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
}

/// An identifier from the web view as a span field: escaped and cut short. Spans open before a
/// command checks its arguments, so a hostile request must neither forge log lines (a newline
/// in a "server name") nor fill the log with a megabyte "tool name".
pub(crate) fn logged(id: &str) -> String {
    switchboard_core::escape::short_for_display(id, 128)
}

impl From<HostError> for IpcError {
    fn from(e: HostError) -> Self {
        let code = match &e {
            HostError::UnknownServer(_) | HostError::Store(StoreError::NotFound(_)) => {
                ErrorCode::NotFound
            }
            HostError::Provider { .. } | HostError::Invalid(_) => ErrorCode::Invalid,
            HostError::Spec(_) | HostError::ServerExists(_) | HostError::Import(_) => {
                ErrorCode::Invalid
            }
            HostError::TrustRace(_)
            | HostError::NotApproved { .. }
            | HostError::Held { .. }
            | HostError::PinRace(_) => ErrorCode::NeedsTrust,
            HostError::Secret(_) => ErrorCode::Keyring,
            HostError::SecretExists(_) => ErrorCode::SecretExists,
            HostError::CrossReference { .. } => ErrorCode::Invalid,
            HostError::Mcp(switchboard_core::mcp::McpError::NotRunning { .. }) => {
                ErrorCode::NotRunning
            }
            HostError::Mcp(switchboard_core::mcp::McpError::Cancelled) => ErrorCode::Cancelled,
            HostError::Mcp(
                switchboard_core::mcp::McpError::InvalidArguments { .. }
                | switchboard_core::mcp::McpError::UnknownTool { .. }
                | switchboard_core::mcp::McpError::ToolDisabled { .. },
            )
            | HostError::Approval(_) => ErrorCode::Invalid,
            HostError::Denied { .. } => ErrorCode::Denied,
            HostError::Mcp(m) => match m.reason().root() {
                Reason::AuthRequired(_) => ErrorCode::AuthRequired,
                Reason::MessageTooLarge { .. } => ErrorCode::MessageTooLarge,
                _ => ErrorCode::Server,
            },
            HostError::Launch { .. } => ErrorCode::Server,
            _ => ErrorCode::Internal,
        };
        Self {
            code,
            message: e.to_string(),
        }
    }
}

/// The registry of every command and event: the one place bindings are generated from.
#[allow(clippy::too_many_lines)] // the registry of every command, one a line: the list is the point
pub fn specta_builder<R: tauri::Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .events(tauri_specta::collect_events![
            events::HostChanged,
            links::LinkReceived
        ])
        .commands(tauri_specta::collect_commands![
            servers::list_servers,
            servers::trust_view,
            links::take_links,
            links::propose_link,
            links::approve_link,
            registry::registry_search,
            registry::registry_show,
            registry::registry_install,
            servers::approve_server,
            servers::start_server,
            servers::set_always_on,
            servers::open_server,
            servers::stop_server,
            servers::set_server_enabled,
            servers::remove_server,
            servers::doctor,
            form::add_server,
            servers::server_logs,
            inspector::inspect_trace,
            inspector::export_trace,
            catalog::catalog,
            catalog::set_tool_enabled,
            catalog_cost::catalog_costs,
            discovery::conversation_discovery,
            discovery::set_conversation_discovery,
            redaction::redaction_state,
            redaction::set_conversation_redaction,
            redaction::turn_redactions,
            redaction::get_redaction_settings,
            redaction::save_redaction_settings,
            metrics::metrics_report,
            pins::pin_review,
            pins::approve_pin_changes,
            pins::tool_findings,
            form::update_server,
            form::server_form,
            startup::startup_problem,
            startup::window_ready,
            run::open_run,
            run::run_tool,
            run::cancel_run,
            run::pending_approvals,
            run::answer_approval,
            resources::server_context,
            resources::read_resource,
            resources::get_prompt,
            resources::complete_prompt_argument,
            skills::list_skills,
            skills::approve_skill,
            skills::read_skill,
            transfer::import_preview,
            transfer::import_config,
            transfer::export_config,
            providers::provider_kinds,
            providers::list_providers,
            providers::add_provider,
            providers::set_provider_key,
            providers::remove_provider,
            models::detect_local_models,
            models::list_provider_models,
            models::set_model_tool_mode,
            conversations::list_conversations,
            conversations::load_conversation,
            conversations::rename_conversation,
            conversations::delete_conversation,
            conversations::search_conversations,
            history::conversation_info,
            history::fork_conversation,
            policy::policy_rules,
            policy::remove_policy_rule,
            policy::reset_grants,
            policy::export_policy,
            policy::import_policy,
            policy::server_tags,
            policy::set_server_tags,
            chat::send_message,
            audit_log::audit_entries,
            audit_log::verify_audit,
            questions::pending_questions,
            questions::answer_question,
            access::server_roots,
            access::set_server_roots,
            access::result_review,
            access::set_result_review,
            sandbox::server_sandbox,
            sandbox::set_server_sandbox,
            sandbox::sandbox_findings,
            sandbox::grant_sandbox_finding,
            sandbox::sandbox_credential_store,
            signin::sign_in,
            signin::sign_in_continue,
            signin::sign_out,
            signin::credentials,
            signin::set_client_secret,
            signin::set_allow_insecure,
            apps::open_app_link,
            apps::open_app_frame,
            apps::run_app_tool,
            apps::app_navigated,
            settings::get_settings,
            settings::save_settings,
            agents::list_agents,
            agents::save_agent,
            agents::remove_agent,
            agents::export_agents,
            agents::import_agents,
            agent_runs::conversation_agent_runs,
            pipelines::list_pipelines,
            pipelines::show_pipeline,
            pipelines::run_pipeline,
            pipelines::pipeline_runs,
            pipelines::replay_pipeline_run,
        ])
}

/// Where the generated bindings live, relative to the repository root.
#[cfg(test)]
pub const BINDINGS_PATH: &str = "ui/src/ipc/bindings.ts";

/// Renders the TypeScript bindings (tests check and `make bindings` rewrites them).
#[cfg(test)]
pub fn render_bindings(path: &std::path::Path) -> Result<(), String> {
    specta_builder::<tauri::Wry>()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated by tauri-specta from src-tauri/src/ipc. Do not edit: run `make bindings`.\n// @ts-nocheck"),
            path,
        )
        .map_err(|e| e.to_string())
}

/// The IPC's tests: the bindings and the command list kept current and the error shape pinned
/// (below), and the test files in `ipc/tests/`, named so that they say they are tests and kept
/// out of the `ipc/*.rs` scan of commands: the IPC audit through Tauri's real invoke path
/// (`audit*.rs`), the isolation hook's allowlist (`allowlist.rs`) and the thin-shell check
/// (`thin.rs`).
#[cfg(test)]
mod tests {
    mod allowlist;
    pub(super) mod audit;
    mod audit_agents;
    mod audit_pipelines;
    mod audit_signin;
    mod thin;

    use super::*;

    /// CI fails when the committed bindings differ from what the Rust code generates.
    /// `SWITCHBOARD_WRITE_BINDINGS=1 cargo test -p switchboard-desktop bindings` rewrites them.
    #[test]
    fn bindings_are_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let committed = root.join(BINDINGS_PATH);
        if std::env::var_os("SWITCHBOARD_WRITE_BINDINGS").is_some() {
            render_bindings(&committed).unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("bindings.ts");
        render_bindings(&fresh).unwrap();
        let want = std::fs::read_to_string(&fresh).unwrap();
        let have = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            want == have,
            "{BINDINGS_PATH} is stale: run `make bindings` and commit the result"
        );
    }

    /// The command list lives once, in build.rs; every entry must be granted and generated,
    /// and the bindings must not invoke anything else.
    #[test]
    fn every_command_is_declared_and_granted() {
        let build = include_str!("../../build.rs");
        let list = build
            .split_once("const COMMANDS: &[&str] = &[")
            .and_then(|(_, rest)| rest.split_once("];"))
            .map(|(list, _)| list)
            .unwrap();
        let commands: Vec<&str> = list
            .split(',')
            .map(|c| c.trim().trim_matches('"'))
            .filter(|c| !c.is_empty())
            .collect();
        assert!(commands.len() >= 5, "{commands:?}");
        let caps: serde_json::Value =
            serde_json::from_str(include_str!("../../capabilities/default.json")).unwrap();
        let granted: Vec<&str> = caps["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str())
            .collect();
        let bindings = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(BINDINGS_PATH),
        )
        .unwrap_or_default();
        for cmd in &commands {
            let perm = format!("allow-{}", cmd.replace('_', "-"));
            assert!(granted.contains(&perm.as_str()), "{cmd} is not granted");
            assert!(
                bindings.contains(&format!("__TAURI_INVOKE(\"{cmd}\""))
                    || bindings.contains(&format!(">(\"{cmd}\"")),
                "{cmd} is missing from the bindings"
            );
        }
        assert_eq!(
            bindings.matches("__TAURI_INVOKE(\"").count()
                + bindings.matches("__TAURI_INVOKE<").count(),
            commands.len(),
            "the bindings invoke a command build.rs does not declare"
        );
        assert!(
            caps.get("remote").is_none(),
            "the capability allows remote URLs"
        );
        for p in granted {
            for banned in ["shell:", "fs:", "sql:", "http:", "opener:"] {
                assert!(!p.starts_with(banned), "the capability grants {p}");
            }
        }
    }

    #[test]
    fn ipc_error_shape_is_pinned() {
        let e = IpcError {
            code: ErrorCode::NeedsTrust,
            message: "m".into(),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"code":"needs_trust","message":"m"}"#
        );
    }
}
