//! Build script for the desktop shell: Tauri's codegen, with capabilities kept under
//! `src-tauri/` although `tauri.conf.json` sits at the repository root. Every app command is
//! declared here so Tauri generates an `allow-*` permission for it, and the capability grants
//! them one by one (TA-01).

/// The app's IPC commands; keep in sync with `ipc::specta_builder` (a unit test checks it).
const COMMANDS: &[&str] = &[
    "list_servers",
    "trust_view",
    "approve_server",
    "start_server",
    "stop_server",
    "set_server_enabled",
    "remove_server",
    "doctor",
    "add_server",
    "server_logs",
    "catalog",
    "set_tool_enabled",
    "pin_review",
    "approve_pin_changes",
    "tool_findings",
    "update_server",
    "server_form",
    "startup_problem",
    "open_run",
    "run_tool",
    "cancel_run",
    "pending_approvals",
    "answer_approval",
    "server_context",
    "read_resource",
    "get_prompt",
    "complete_prompt_argument",
    "import_preview",
    "import_config",
    "export_config",
    "provider_kinds",
    "list_providers",
    "add_provider",
    "set_provider_key",
    "remove_provider",
    "list_conversations",
    "load_conversation",
    "rename_conversation",
    "delete_conversation",
    "search_conversations",
    "conversation_info",
    "fork_conversation",
    "policy_rules",
    "remove_policy_rule",
    "reset_grants",
    "export_policy",
    "import_policy",
    "server_tags",
    "set_server_tags",
    "send_message",
    "audit_entries",
    "verify_audit",
    "pending_questions",
    "answer_question",
    "server_roots",
    "set_server_roots",
    "server_sandbox",
    "set_server_sandbox",
    "sandbox_findings",
    "grant_sandbox_finding",
    "result_review",
    "set_result_review",
    "sign_in",
    "sign_in_continue",
    "sign_out",
    "credentials",
    "set_client_secret",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .capabilities_path_pattern("./src-tauri/capabilities/**/*")
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .unwrap_or_else(|e| panic!("tauri build step failed: {e:#}"));
}
