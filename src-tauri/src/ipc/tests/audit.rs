//! IPC audit through Tauri's real invoke path (mock runtime, the app's own capability):
//! - SE-05: no command response ever carries a secret value, whatever it is asked;
//! - TA-05: hostile inputs (traversal, bidi, oversized, wrong JSON) get a typed error, never a
//!   panic, and the app keeps answering.

use serde_json::{json, Value};
use switchboard_core::config::{
    HttpSpec, NamedValue, ServerSpec, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use switchboard_core::host::{Host, HostBuilder};
use switchboard_core::ids::{SecretName, ServerId};
use switchboard_core::redact::Secret;
use switchboard_core::secrets::{MemoryStore, Secrets};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::Manager;

pub(in crate::ipc) const CANARY: &str = "sk-auditCANARY-0123456789abcdefXYZ";

pub(in crate::ipc) struct App {
    _dir: tempfile::TempDir,
    /// The host's secret store, to look behind the IPC.
    pub(in crate::ipc) secrets: Secrets,
    _app: tauri::App<tauri::test::MockRuntime>,
    window: tauri::WebviewWindow<tauri::test::MockRuntime>,
}

fn secret_ref(name: &str) -> ValueSource {
    ValueSource::Secret(SecretName::new(name).unwrap())
}

pub(in crate::ipc) fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Secrets::new(MemoryStore::default());
    let host: Host = tauri::async_runtime::block_on(async {
        let host = HostBuilder::new(dir.path())
            .secrets(secrets.clone())
            .build()
            .await
            .unwrap();
        for (name, transport) in [
            (
                "local",
                TransportSpec::Stdio(StdioSpec {
                    command: "/bin/sh".into(),
                    args: vec!["-c".into(), "exit 3".into()],
                    env: vec![NamedValue {
                        name: "API_KEY".into(),
                        value: secret_ref("local.API_KEY"),
                    }],
                    cwd: None,
                    sandbox: Default::default(),
                }),
            ),
            (
                "remote",
                TransportSpec::Http(HttpSpec {
                    url: "http://127.0.0.1:9/mcp".into(),
                    headers: vec![NamedValue {
                        name: "Authorization".into(),
                        value: secret_ref("remote.Authorization"),
                    }],
                    auth: None,
                    allow_insecure: false,
                }),
            ),
        ] {
            host.add_server(ServerSpec {
                id: ServerId::new(name).unwrap(),
                transport,
                enabled: false,
                timeouts: Timeouts::default(),
            })
            .await
            .unwrap();
        }
        for (server, s) in [
            ("local", "local.API_KEY"),
            ("remote", "remote.Authorization"),
        ] {
            host.set_server_secret(
                &ServerId::new(server).unwrap(),
                &SecretName::new(s).unwrap(),
                Secret::new(CANARY.to_owned()),
                false,
            )
            .await
            .unwrap();
        }
        host
    });
    let builder = crate::ipc::specta_builder::<tauri::test::MockRuntime>();
    let app = mock_builder()
        .manage(host)
        .invoke_handler(builder.invoke_handler())
        .build(tauri::generate_context!())
        .unwrap();
    let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    App {
        _dir: dir,
        secrets,
        _app: app,
        window,
    }
}

/// Invokes `cmd` and returns the response (or error) as text.
pub(in crate::ipc) fn call(app: &App, cmd: &str, args: Value) -> Result<String, String> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    match get_ipc_response(&app.window, request) {
        Ok(tauri::ipc::InvokeResponseBody::Json(s)) => Ok(s),
        Ok(tauri::ipc::InvokeResponseBody::Raw(b)) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(v) => Err(v.to_string()),
    }
}

#[test]
fn no_response_carries_a_secret_value() {
    let app = app();
    let form = |kind: &str, name: &str| {
        if kind == "stdio" {
            json!({"kind": "stdio", "name": name, "command": "/bin/true", "args": [], "cwd": "",
                   "env": [{"name": "API_KEY", "value": "", "secret": true}]})
        } else {
            json!({"kind": "http", "name": name, "url": "http://127.0.0.1:9/mcp",
                   "headers": [{"name": "Authorization", "value": "", "secret": true}]})
        }
    };
    let import = json!({"mcpServers": {"x": {"command": "/bin/true",
        "env": {"OPENAI_API_KEY": "sk-importCANARY-0123456789abcdef"}}}})
    .to_string();
    let calls: Vec<(&str, Value)> = vec![
        ("list_servers", json!({})),
        ("trust_view", json!({"name": "local", "bindings": []})),
        ("server_form", json!({"name": "local"})),
        ("server_form", json!({"name": "remote"})),
        ("doctor", json!({"name": "local"})),
        ("doctor", json!({"name": "remote"})),
        ("server_logs", json!({"name": "local"})),
        ("catalog", json!({})),
        ("server_context", json!({})),
        ("pending_approvals", json!({})),
        ("pending_questions", json!({})),
        ("server_roots", json!({"server": "local"})),
        ("result_review", json!({"server": "remote"})),
        ("export_config", json!({"format": "claude"})),
        ("export_config", json!({"format": "vscode"})),
        ("export_config", json!({"format": "cursor"})),
        ("import_preview", json!({"text": import, "format": null})),
        // An edit that keeps the stored secrets answers without echoing them.
        (
            "update_server",
            json!({"replaceSecrets": false, "request": form("stdio", "local"), "replaceSecrets": false}),
        ),
        (
            "update_server",
            json!({"replaceSecrets": false, "request": form("http", "remote"), "replaceSecrets": false}),
        ),
        ("server_form", json!({"name": "local"})),
        (
            "import_config",
            json!({"text": import, "format": "claude", "replaceSecrets": false}),
        ),
        ("list_servers", json!({})),
        ("server_form", json!({"name": "x"})),
    ];
    let mut answered = 0;
    for (cmd, args) in calls {
        let out = call(&app, cmd, args.clone()).unwrap_or_else(|e| e);
        assert!(
            !out.contains(CANARY),
            "{cmd} {args} returned a secret: {out}"
        );
        assert!(
            !out.contains("sk-importCANARY"),
            "{cmd} returned an imported secret: {out}"
        );
        answered += 1;
    }
    assert_eq!(answered, 23);
    // The edit kept the stored secret: the form says "set".
    let local = call(&app, "server_form", json!({"name": "local"})).unwrap();
    let local: Value = serde_json::from_str(&local).unwrap();
    assert_eq!(local["env"][0]["secret_set"], json!(true), "{local}");
    assert_eq!(local["env"][0]["value"], json!(""), "{local}");
}

#[test]
#[allow(clippy::too_many_lines)] // a table of hostile cases, one per entry
fn hostile_inputs_get_typed_errors_and_the_app_keeps_answering() {
    let app = app();
    let long = "a".repeat(100_000);
    let bidi = "srv\u{202e}txt.exe";
    let cases: Vec<(&str, Value)> = vec![
        (
            "trust_view",
            json!({"bindings": [], "name": "../../etc/passwd"}),
        ),
        ("trust_view", json!({"bindings": [], "name": bidi})),
        ("trust_view", json!({"bindings": [], "name": long})),
        ("trust_view", json!({"bindings": [], "name": 5})),
        ("trust_view", json!({"bindings": []})),
        ("server_form", json!({"name": "名前"})),
        (
            "approve_server",
            json!({"name": "local", "fingerprint": "0".repeat(64), "bindings": []}),
        ),
        ("remove_server", json!({"name": ""})),
        (
            "add_server",
            json!({"replaceSecrets": false, "request": {"kind": "stdio", "name": long, "command": "x", "args": [], "cwd": "", "env": []}}),
        ),
        (
            "add_server",
            json!({"replaceSecrets": false, "request": {"kind": "stdio", "name": "ok", "command": "", "args": [], "cwd": "", "env": []}}),
        ),
        (
            "add_server",
            json!({"replaceSecrets": false, "request": {"kind": "http", "name": "h", "url": "file:///etc/passwd", "headers": []}}),
        ),
        (
            "add_server",
            json!({"replaceSecrets": false, "request": {"kind": "martian"}}),
        ),
        (
            "update_server",
            json!({"replaceSecrets": false, "request": {"kind": "stdio", "name": "nope", "command": "x", "args": [], "cwd": "", "env": []}}),
        ),
        (
            "answer_approval",
            json!({"nonce": "f".repeat(32), "answer": {"kind": "deny", "reason": "x"}}),
        ),
        (
            "answer_approval",
            json!({"nonce": long, "answer": {"kind": "allow", "arguments": null, "scope": "once", "constraints": []}}),
        ),
        (
            "run_tool",
            json!({"runId": "r1", "server": "local", "tool": "t", "argsJson": "{not json", "onProgress": "__CHANNEL__:1"}),
        ),
        (
            "run_tool",
            json!({"runId": "r2", "server": "local", "tool": "t", "argsJson": "[1,2]", "onProgress": "__CHANNEL__:1"}),
        ),
        (
            "run_tool",
            json!({"runId": long, "server": "local", "tool": "t", "argsJson": "{}", "onProgress": "__CHANNEL__:1"}),
        ),
        (
            "read_resource",
            json!({"server": "local", "uri": "file:///etc/passwd"}),
        ),
        (
            "get_prompt",
            json!({"server": bidi, "name": "p", "args": {}}),
        ),
        (
            "complete_prompt_argument",
            json!({"server": "local", "prompt": "p", "argument": "a", "value": long}),
        ),
        (
            "import_preview",
            json!({"text": "{ not json", "format": null}),
        ),
        (
            "import_preview",
            json!({"text": "x".repeat(5 * 1024 * 1024), "format": null}),
        ),
        (
            "import_config",
            json!({"text": "[]", "format": "claude", "replaceSecrets": false}),
        ),
        ("export_config", json!({"format": "notepad"})),
        (
            "set_tool_enabled",
            json!({"server": "local", "tool": long, "enabled": false}),
        ),
        ("pin_review", json!({"server": bidi})),
        (
            "approve_pin_changes",
            json!({"server": "local", "names": [long], "surface": "x"}),
        ),
        ("tool_findings", json!({"server": "local", "tool": long})),
        // Questions: only a waiting nonce is answered, and only with an answer that fits.
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "decline"}}),
        ),
        (
            "answer_question",
            json!({"nonce": long, "reply": {"kind": "send_result"}}),
        ),
        (
            "answer_question",
            json!({"nonce": "", "reply": {"kind": "cancel"}}),
        ),
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "accept", "content": "[1]"}}),
        ),
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "accept", "content": long}}),
        ),
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "open_everything"}}),
        ),
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "send_response", "text": "x".repeat(2 * 1024 * 1024)}}),
        ),
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "run_sampling", "provider": long, "model": null,
                "prompt": {"system_prompt": null, "messages": [{"role": "user", "text": "hi"}], "max_tokens": 5,
                           "temperature": null, "model_hints": [], "context_requested": null}}}),
        ),
        (
            "answer_question",
            json!({"nonce": "f".repeat(32), "reply": {"kind": "run_sampling", "provider": "p", "model": null,
                "prompt": {"system_prompt": null, "messages": [{"role": "system", "text": "hi"}], "max_tokens": 5,
                           "temperature": null, "model_hints": [], "context_requested": null}}}),
        ),
        // Roots: only existing absolute folders, a bounded number, of a known server.
        ("server_roots", json!({"server": bidi})),
        ("server_roots", json!({"server": "nope"})),
        (
            "set_server_roots",
            json!({"server": "local", "folders": ["relative/path"]}),
        ),
        (
            "set_server_roots",
            json!({"server": "local", "folders": ["/no/such/folder/anywhere"]}),
        ),
        (
            "set_server_roots",
            json!({"server": "local", "folders": ["/etc/passwd"]}),
        ),
        (
            "set_server_roots",
            json!({"server": "local", "folders": [long]}),
        ),
        (
            "set_server_roots",
            json!({"server": "local", "folders": vec!["/tmp"; 65]}),
        ),
        (
            "set_server_roots",
            json!({"server": "nope", "folders": ["/tmp"]}),
        ),
        (
            "set_server_roots",
            json!({"server": "local", "folders": "/tmp"}),
        ),
        ("result_review", json!({"server": "../../etc"})),
        (
            "set_result_review",
            json!({"server": "local", "review": "sometimes"}),
        ),
        (
            "set_result_review",
            json!({"server": "nope", "review": "always"}),
        ),
        // Grants with conditions: each must be a valid condition, and "once" carries none.
        (
            "answer_approval",
            json!({"nonce": "f".repeat(32), "answer": {"kind": "allow", "arguments": null, "scope": "always",
                   "constraints": ["{not json"]}}),
        ),
        (
            "answer_approval",
            json!({"nonce": "f".repeat(32), "answer": {"kind": "allow", "arguments": null, "scope": "always",
                   "constraints": [long]}}),
        ),
        (
            "answer_approval",
            json!({"nonce": "f".repeat(32), "answer": {"kind": "allow", "arguments": null, "scope": "once",
                   "constraints": ["{\"kind\":\"writes\"}"]}}),
        ),
    ];
    for (cmd, args) in cases {
        let shown = format!(
            "{cmd} {}",
            &args.to_string()[..args.to_string().len().min(120)]
        );
        match call(&app, cmd, args) {
            Err(e) => {
                assert!(!e.is_empty(), "{shown}: empty error");
                assert!(
                    e.len() < 4096,
                    "{shown}: the error echoes the whole input ({} bytes)",
                    e.len()
                );
            }
            Ok(out) => panic!("{shown}: accepted, answered {out}"),
        }
    }
    // Still answering, and nothing was added by the hostile calls.
    let list = call(&app, "list_servers", json!({})).unwrap();
    let list: Value = serde_json::from_str(&list).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["local", "remote"]);
    // Nothing was stored by the hostile roots and review calls.
    assert_eq!(
        call(&app, "server_roots", json!({"server": "local"})).unwrap(),
        "[]"
    );
    assert_eq!(
        call(&app, "result_review", json!({"server": "local"})).unwrap(),
        "\"default\""
    );
}

/// SE-04 / issue 10: a form that is refused writes nothing, a typed or credential-looking value
/// goes to the server's own namespace, and the form cannot bind another namespace's secret.
#[test]
fn a_refused_form_writes_nothing() {
    let app = app();
    let key = |server: &str, name: &str| {
        switchboard_core::secrets::SecretKey::server(
            &ServerId::new(server).unwrap(),
            &SecretName::new(name).unwrap(),
        )
    };
    let is_set = |server: &str, name: &str| {
        tauri::async_runtime::block_on(app.secrets.is_set(key(server, name))).unwrap()
    };
    let refused = [
        // The name is taken.
        json!({"kind": "stdio", "name": "local", "command": "/bin/true", "args": [], "cwd": "",
               "env": [{"name": "NEW_TOKEN", "value": "typed-CANARY-1", "secret": true}]}),
        // A secret header to another machine over plain http.
        json!({"kind": "http", "name": "cleartext", "url": "http://example.com/mcp",
               "headers": [{"name": "Authorization", "value": "typed-CANARY-2", "secret": true}]}),
        // A credential typed as plain text is a secret too, and so refused over plain http.
        json!({"kind": "http", "name": "cleartext2", "url": "http://example.com/mcp",
               "headers": [{"name": "X-Api-Key", "value": "sk-CANARY0123456789abcdef", "secret": false}]}),
        // Duplicate names.
        json!({"kind": "stdio", "name": "dupes", "command": "/bin/true", "args": [], "cwd": "",
               "env": [{"name": "A_TOKEN", "value": "typed-CANARY-3", "secret": true},
                       {"name": "A_TOKEN", "value": "x", "secret": false}]}),
    ];
    for request in refused {
        let out = call(
            &app,
            "add_server",
            json!({"request": request, "replaceSecrets": false}),
        );
        assert!(out.is_err(), "{request}: accepted");
    }
    for (server, name) in [
        ("local", "NEW_TOKEN"),
        ("cleartext", "Authorization"),
        ("cleartext2", "X-Api-Key"),
        ("dupes", "A_TOKEN"),
    ] {
        assert!(!is_set(server, name), "{server}/{name} was written");
    }
    // Accepted: the plain credential moves to the keyring, and the form never shows it.
    let ok = json!({"kind": "stdio", "name": "gh", "command": "/bin/true", "args": [], "cwd": "",
        "env": [{"name": "GITHUB_PERSONAL_ACCESS_TOKEN", "value": "ghp_CANARYform0123456789", "secret": false},
                {"name": "LOG_LEVEL", "value": "debug", "secret": false}]});
    call(
        &app,
        "add_server",
        json!({"request": ok, "replaceSecrets": false}),
    )
    .unwrap();
    assert!(is_set("gh", "GITHUB_PERSONAL_ACCESS_TOKEN"));
    let form = call(&app, "server_form", json!({"name": "gh"})).unwrap();
    assert!(!form.contains("CANARY"), "{form}");
    let form: Value = serde_json::from_str(&form).unwrap();
    assert_eq!(form["env"][0]["secret"], json!(true), "{form}");
    // A leftover secret under the name a new server's value would get stops the add until the
    // person confirms.
    tauri::async_runtime::block_on(app.secrets.set(key("again", "API_KEY"), Secret::new("old")))
        .unwrap();
    let again = json!({"kind": "stdio", "name": "again", "command": "/bin/true", "args": [], "cwd": "",
        "env": [{"name": "API_KEY", "value": "new-value", "secret": true}]});
    let err = call(
        &app,
        "add_server",
        json!({"request": again, "replaceSecrets": false}),
    )
    .unwrap_err();
    assert!(err.contains("secret_exists"), "{err}");
    let old = tauri::async_runtime::block_on(app.secrets.get(key("again", "API_KEY"))).unwrap();
    assert_eq!(old.expose(), "old");
    call(
        &app,
        "add_server",
        json!({"request": again, "replaceSecrets": true}),
    )
    .unwrap();
    let new = tauri::async_runtime::block_on(app.secrets.get(key("again", "API_KEY"))).unwrap();
    assert_eq!(new.expose(), "new-value");
}

#[test]
fn roots_and_result_review_round_trip() {
    let app = app();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("my notes");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.to_string_lossy().into_owned();
    let out = call(
        &app,
        "set_server_roots",
        json!({"server": "local", "folders": [path, path]}),
    )
    .unwrap();
    let roots: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(roots.as_array().unwrap().len(), 1, "{roots}");
    assert_eq!(roots[0]["name"], json!("my notes"));
    assert!(roots[0]["uri"].as_str().unwrap().starts_with("file:///"));
    let listed: Value =
        serde_json::from_str(&call(&app, "server_roots", json!({"server": "local"})).unwrap())
            .unwrap();
    assert_eq!(listed, roots);
    call(
        &app,
        "set_result_review",
        json!({"server": "local", "review": "always"}),
    )
    .unwrap();
    assert_eq!(
        call(&app, "result_review", json!({"server": "local"})).unwrap(),
        "\"always\""
    );
    assert_eq!(call(&app, "pending_questions", json!({})).unwrap(), "[]");
}

const PROVIDER_CANARY: &str = "sk-providerCANARY-0123456789abcdefXYZ";

#[test]
fn provider_keys_never_come_back() {
    let app = app();
    call(
        &app,
        "add_provider",
        json!({"name": "work", "kind": "openai", "baseUrl": null, "model": "gpt-4.1"}),
    )
    .unwrap();
    call(
        &app,
        "set_provider_key",
        json!({"name": "work", "key": PROVIDER_CANARY}),
    )
    .unwrap();
    // A conversation to list and load (no model is called).
    let id = tauri::async_runtime::block_on(async {
        let state = app.window.state::<Host>();
        let c = state.create_conversation("what is **up**?").await.unwrap();
        c.id.to_string()
    });
    let calls: Vec<(&str, Value)> = vec![
        ("list_providers", json!({})),
        ("provider_kinds", json!({})),
        ("list_conversations", json!({})),
        ("load_conversation", json!({"id": id})),
        ("search_conversations", json!({"query": "up"})),
        ("rename_conversation", json!({"id": id, "title": "renamed"})),
        (
            "add_provider",
            json!({"name": "work", "kind": "openai", "baseUrl": null, "model": null}),
        ),
        (
            "set_provider_key",
            json!({"name": "nope", "key": PROVIDER_CANARY}),
        ),
        ("list_servers", json!({})),
        ("export_config", json!({"format": "claude"})),
    ];
    for (cmd, args) in calls {
        let out = call(&app, cmd, args.clone()).unwrap_or_else(|e| e);
        assert!(
            !out.contains(PROVIDER_CANARY) && !out.contains("providerCANARY"),
            "{cmd} {args} returned the provider key: {out}"
        );
    }
    let list: Value =
        serde_json::from_str(&call(&app, "list_providers", json!({})).unwrap()).unwrap();
    assert_eq!(list[0]["name"], json!("work"), "{list}");
    assert_eq!(list[0]["key_set"], json!(true), "{list}");
    assert_eq!(list[0]["kind"], json!("openai"), "{list}");
    let convs: Value =
        serde_json::from_str(&call(&app, "list_conversations", json!({})).unwrap()).unwrap();
    assert_eq!(convs[0]["title"], json!("renamed"), "{convs}");
    let msgs: Value =
        serde_json::from_str(&call(&app, "load_conversation", json!({"id": id})).unwrap()).unwrap();
    // Empty: messages reach the store only through a turn (the e2e chat tests load real ones).
    assert_eq!(msgs, json!([]), "{msgs}");
    // Removing the provider removes the key.
    call(&app, "remove_provider", json!({"name": "work"})).unwrap();
    assert_eq!(call(&app, "list_providers", json!({})).unwrap(), "[]");
    assert_eq!(
        call(&app, "delete_conversation", json!({"id": id})).unwrap(),
        "true"
    );
}

#[test]
#[allow(clippy::too_many_lines)] // a table of hostile cases, one per entry
fn hostile_chat_inputs_get_typed_errors() {
    let app = app();
    let long = "a".repeat(100_000);
    let unknown_conv = "0123abcd-0000-4000-8000-000000000000";
    let ch = "__CHANNEL__:1";
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "load_conversation",
            json!({"id": "../../etc/passwd"}),
            "invalid",
        ),
        ("load_conversation", json!({"id": long}), "invalid"),
        (
            "load_conversation",
            json!({"id": unknown_conv}),
            "not_found",
        ),
        (
            "rename_conversation",
            json!({"id": unknown_conv, "title": long}),
            "invalid",
        ),
        (
            "rename_conversation",
            json!({"id": unknown_conv, "title": "ok"}),
            "not_found",
        ),
        (
            "rename_conversation",
            json!({"id": "x", "title": "ok"}),
            "invalid",
        ),
        (
            "delete_conversation",
            json!({"id": "'; DROP TABLE conversations; --"}),
            "invalid",
        ),
        ("search_conversations", json!({"query": long}), "invalid"),
        (
            "add_provider",
            json!({"name": long, "kind": "openai", "baseUrl": null, "model": null}),
            "invalid",
        ),
        (
            "add_provider",
            json!({"name": "p", "kind": "martian", "baseUrl": null, "model": null}),
            "invalid",
        ),
        (
            "add_provider",
            json!({"name": "p", "kind": long, "baseUrl": null, "model": null}),
            "invalid",
        ),
        (
            "add_provider",
            json!({"name": "p", "kind": "openai", "baseUrl": "file:///etc/passwd", "model": null}),
            "invalid",
        ),
        (
            "set_provider_key",
            json!({"name": "nope", "key": "k"}),
            "invalid",
        ),
        (
            "set_provider_key",
            json!({"name": "nope", "key": ""}),
            "invalid",
        ),
        ("remove_provider", json!({"name": "nope"}), "invalid"),
        (
            "remove_provider",
            json!({"name": "srv\u{202e}txt"}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": "c1", "conversation": null, "provider": "nope", "model": null, "input": {"kind": "message", "text": "hi", "images": []}, "attached": [], "onEvent": ch}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": "c2", "conversation": "bad", "provider": "nope", "model": null, "input": {"kind": "message", "text": "hi", "images": []}, "attached": [], "onEvent": ch}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": "c3", "conversation": null, "provider": "nope", "model": null, "input": {"kind": "message", "text": "  ", "images": []}, "attached": [], "onEvent": ch}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": "c4", "conversation": null, "provider": "nope", "model": null, "input": {"kind": "edit", "message": "12; DROP TABLE messages", "text": "x"}, "attached": [], "onEvent": ch}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": "c5", "conversation": null, "provider": "nope", "model": null, "input": {"kind": "message", "text": "x", "images": vec![json!({"mime_type": "image/png", "data": "AA=="}); 9]}, "attached": [], "onEvent": ch}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": "c6", "conversation": null, "provider": "nope", "model": null, "input": {"kind": "regenerate"}, "attached": [], "onEvent": ch}),
            "invalid",
        ),
        ("conversation_info", json!({"id": "../../etc"}), "invalid"),
        (
            "fork_conversation",
            json!({"id": "00000000-0000-4000-8000-000000000000", "at": "x", "title": null}),
            "invalid",
        ),
        (
            "fork_conversation",
            json!({"id": "00000000-0000-4000-8000-000000000000", "at": "1", "title": long}),
            "invalid",
        ),
        (
            "send_message",
            json!({"runId": long, "conversation": null, "provider": "nope", "model": null, "input": {"kind": "message", "text": "hi", "images": []}, "attached": [], "onEvent": ch}),
            "",
        ),
    ];
    for (cmd, args, code) in cases {
        let shown = format!(
            "{cmd} {}",
            &args.to_string()[..args.to_string().len().min(120)]
        );
        match call(&app, cmd, args) {
            Err(e) => {
                assert!(
                    e.len() < 4096,
                    "{shown}: the error echoes the input ({} bytes)",
                    e.len()
                );
                assert!(e.contains("\"code\""), "{shown}: untyped error {e}");
                if !code.is_empty() {
                    assert!(e.contains(&format!("\"{code}\"")), "{shown}: {e}");
                }
            }
            Ok(out) => panic!("{shown}: accepted, answered {out}"),
        }
    }
    assert_eq!(
        call(&app, "cancel_run", json!({"runId": "c1"})).unwrap(),
        "false"
    );
    assert_eq!(call(&app, "list_conversations", json!({})).unwrap(), "[]");
    assert_eq!(call(&app, "list_providers", json!({})).unwrap(), "[]");
}
