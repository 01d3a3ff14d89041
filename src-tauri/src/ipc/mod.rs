//! The IPC surface of the desktop app: typed commands and events, generated into
//! `ui/src/ipc/bindings.ts` by tauri-specta. Nobody calls `invoke('...')` by hand.
//!
//! Commands are thin (STYLE 11): parse, call one `Host` method, map to a DTO or an
//! [`IpcError`]. DTOs live here, not in the core, so the core stays free of Tauri and specta.
//! Secret values never appear in any response (SE-05): DTOs carry secret names and "set / not
//! set" only.

pub mod access;
#[cfg(test)]
mod allowlist;
#[cfg(test)]
mod audit;
pub mod audit_log;
pub mod catalog;
pub mod chat;
pub mod content;
pub mod conversations;
pub mod events;
pub mod form;
pub mod history;
pub mod pins;
pub mod policy;
pub mod providers;
pub mod questions;
pub mod resources;
pub mod run;
pub mod servers;
pub mod startup;
pub mod transfer;

use serde::Serialize;
use specta::Type;
use switchboard_core::host::HostError;
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
            HostError::TrustRace(_) | HostError::Held { .. } | HostError::PinRace(_) => {
                ErrorCode::NeedsTrust
            }
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
            HostError::Mcp(_) | HostError::Launch { .. } => ErrorCode::Server,
            _ => ErrorCode::Internal,
        };
        Self {
            code,
            message: e.to_string(),
        }
    }
}

/// The registry of every command and event: the one place bindings are generated from.
pub fn specta_builder<R: tauri::Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .events(tauri_specta::collect_events![events::HostChanged])
        .commands(tauri_specta::collect_commands![
            servers::list_servers,
            servers::trust_view,
            servers::approve_server,
            servers::start_server,
            servers::stop_server,
            servers::set_server_enabled,
            servers::remove_server,
            servers::doctor,
            form::add_server,
            servers::server_logs,
            catalog::catalog,
            catalog::set_tool_enabled,
            pins::pin_review,
            pins::approve_pin_changes,
            pins::tool_findings,
            form::update_server,
            form::server_form,
            startup::startup_problem,
            run::open_run,
            run::run_tool,
            run::cancel_run,
            run::pending_approvals,
            run::answer_approval,
            resources::server_context,
            resources::read_resource,
            resources::get_prompt,
            resources::complete_prompt_argument,
            transfer::import_preview,
            transfer::import_config,
            transfer::export_config,
            providers::provider_kinds,
            providers::list_providers,
            providers::add_provider,
            providers::set_provider_key,
            providers::remove_provider,
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

#[cfg(test)]
mod tests {
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
