// Generated from ui/src/ipc/bindings.ts by `make bindings`. Do not edit.
// Every app command with its argument names and JSON kinds, for the isolation hook.
self.SWITCHBOARD_IPC_COMMANDS = {
  "add_provider": {
    "baseUrl": "string?",
    "contextWindow": "number?",
    "kind": "string",
    "model": "string?",
    "name": "string"
  },
  "add_server": {
    "replaceSecrets": "boolean",
    "request": "object"
  },
  "answer_approval": {
    "answer": "object",
    "nonce": "string"
  },
  "answer_question": {
    "nonce": "string",
    "reply": "object"
  },
  "app_navigated": {
    "frame": "string"
  },
  "approve_link": {
    "fingerprint": "string",
    "link": "string",
    "secrets": "array"
  },
  "approve_pin_changes": {
    "names": "string_array?",
    "server": "string",
    "surface": "string"
  },
  "approve_server": {
    "bindings": "array",
    "fingerprint": "string",
    "name": "string"
  },
  "approve_skill": {
    "fingerprint": "string",
    "name": "string",
    "server": "string"
  },
  "audit_entries": {
    "beforeId": "string?",
    "limit": "number?",
    "search": "string?"
  },
  "cancel_run": {
    "runId": "string"
  },
  "catalog": {},
  "catalog_costs": {},
  "complete_prompt_argument": {
    "argument": "string",
    "prompt": "string",
    "server": "string",
    "value": "string"
  },
  "conversation_agent_runs": {
    "conversation": "string"
  },
  "conversation_discovery": {
    "conversation": "string"
  },
  "conversation_info": {
    "id": "string"
  },
  "credentials": {},
  "delete_conversation": {
    "id": "string"
  },
  "detect_local_models": {},
  "doctor": {
    "name": "string"
  },
  "export_agents": {},
  "export_config": {
    "format": "string"
  },
  "export_policy": {},
  "export_trace": {
    "filter": "object",
    "name": "string"
  },
  "fork_conversation": {
    "at": "string",
    "id": "string",
    "title": "string?"
  },
  "get_prompt": {
    "args": "string_map",
    "into": "string?",
    "name": "string",
    "server": "string"
  },
  "get_redaction_settings": {},
  "get_settings": {},
  "grant_sandbox_finding": {
    "kind": "string",
    "path": "string?",
    "server": "string"
  },
  "import_agents": {
    "replace": "boolean",
    "toml": "string"
  },
  "import_config": {
    "format": "string?",
    "replaceSecrets": "boolean",
    "text": "string"
  },
  "import_policy": {
    "text": "string"
  },
  "import_preview": {
    "format": "string?",
    "text": "string"
  },
  "inspect_trace": {
    "filter": "object",
    "name": "string"
  },
  "list_agents": {},
  "list_conversations": {},
  "list_pipelines": {},
  "list_provider_models": {
    "name": "string"
  },
  "list_providers": {},
  "list_servers": {},
  "list_skills": {},
  "load_conversation": {
    "id": "string"
  },
  "metrics_report": {
    "window": "string"
  },
  "open_app_frame": {
    "agent": "string?",
    "conversation": "string?",
    "server": "string",
    "uri": "string"
  },
  "open_app_link": {
    "url": "string"
  },
  "open_run": {},
  "open_server": {
    "name": "string"
  },
  "pending_approvals": {},
  "pending_questions": {},
  "pin_review": {
    "server": "string"
  },
  "pipeline_runs": {
    "name": "string?"
  },
  "policy_rules": {},
  "propose_link": {
    "link": "string"
  },
  "provider_kinds": {},
  "read_resource": {
    "into": "string?",
    "server": "string",
    "uri": "string"
  },
  "read_skill": {
    "into": "string",
    "name": "string",
    "server": "string"
  },
  "redaction_state": {
    "conversation": "string?",
    "provider": "string?"
  },
  "registry_install": {
    "request": "object"
  },
  "registry_search": {
    "cursor": "string?",
    "query": "string?",
    "refresh": "boolean"
  },
  "registry_show": {
    "name": "string"
  },
  "remove_agent": {
    "name": "string"
  },
  "remove_policy_rule": {
    "id": "string"
  },
  "remove_provider": {
    "name": "string"
  },
  "remove_server": {
    "name": "string"
  },
  "rename_conversation": {
    "id": "string",
    "title": "string"
  },
  "replay_pipeline_run": {
    "past": "string",
    "runId": "string"
  },
  "reset_grants": {},
  "result_review": {
    "server": "string"
  },
  "run_app_tool": {
    "argsJson": "string",
    "frame": "string",
    "onProgress": "channel",
    "tool": "string"
  },
  "run_pipeline": {
    "inputsJson": "string",
    "name": "string",
    "runId": "string",
    "version": "number?"
  },
  "run_tool": {
    "argsJson": "string",
    "onProgress": "channel",
    "runId": "string",
    "server": "string",
    "tool": "string"
  },
  "sandbox_credential_store": {
    "path": "string"
  },
  "sandbox_findings": {
    "server": "string"
  },
  "save_agent": {
    "agent": "object",
    "isNew": "boolean"
  },
  "save_redaction_settings": {
    "settings": "object"
  },
  "save_settings": {
    "settings": "object"
  },
  "search_conversations": {
    "query": "string"
  },
  "send_message": {
    "agent": "string?",
    "attached": "string_array",
    "conversation": "string?",
    "discovery": "boolean?",
    "input": "object",
    "model": "string?",
    "onEvent": "channel",
    "provider": "string",
    "runId": "string"
  },
  "server_context": {},
  "server_form": {
    "name": "string"
  },
  "server_logs": {
    "name": "string"
  },
  "server_roots": {
    "server": "string"
  },
  "server_sandbox": {
    "server": "string"
  },
  "server_tags": {
    "server": "string"
  },
  "set_allow_insecure": {
    "allow": "boolean",
    "server": "string"
  },
  "set_always_on": {
    "name": "string",
    "on": "boolean"
  },
  "set_client_secret": {
    "server": "string",
    "value": "string"
  },
  "set_conversation_discovery": {
    "conversation": "string",
    "on": "boolean"
  },
  "set_conversation_redaction": {
    "conversation": "string",
    "on": "boolean"
  },
  "set_model_tool_mode": {
    "model": "string",
    "name": "string",
    "prompt": "boolean"
  },
  "set_provider_key": {
    "key": "string",
    "name": "string"
  },
  "set_result_review": {
    "review": "string",
    "server": "string"
  },
  "set_server_enabled": {
    "enabled": "boolean",
    "name": "string"
  },
  "set_server_roots": {
    "folders": "string_array",
    "server": "string"
  },
  "set_server_sandbox": {
    "sandbox": "object",
    "server": "string"
  },
  "set_server_tags": {
    "server": "string",
    "tags": "string_array"
  },
  "set_tool_enabled": {
    "enabled": "boolean",
    "server": "string",
    "tool": "string"
  },
  "show_pipeline": {
    "name": "string",
    "version": "number?"
  },
  "sign_in": {
    "clientId": "string?",
    "onEvent": "channel",
    "server": "string"
  },
  "sign_in_continue": {
    "ticket": "string",
    "yes": "boolean"
  },
  "sign_out": {
    "server": "string"
  },
  "start_server": {
    "name": "string"
  },
  "startup_problem": {},
  "stop_server": {
    "name": "string"
  },
  "take_links": {},
  "tool_findings": {
    "server": "string",
    "tool": "string"
  },
  "trust_view": {
    "bindings": "array",
    "name": "string"
  },
  "turn_redactions": {
    "conversation": "string"
  },
  "update_server": {
    "replaceSecrets": "boolean",
    "request": "object"
  },
  "verify_audit": {},
  "window_ready": {}
};
