//! The IPC audit (see `audit.rs`) for the Agents page (issue 15): a profile saved through the
//! real invoke path reads back equal, export/import go through TOML, and hostile arguments (a
//! bad name, a fractional or negative budget, an "allow" override, a huge or deeply nested
//! file, wrong JSON) get typed errors, never a panic, and change nothing.

use serde_json::{json, Value};

use super::audit::{app, call};

/// Budgets are JSON numbers the DTO keeps as `f64`, so they come back as `5000.0`.
fn agent(name: &str) -> Value {
    json!({
        "name": name, "description": "Writes code", "provider": "local", "model": "m1",
        "system": "You code.", "servers": ["memory"], "tools": ["memory/read_*"],
        "ask": ["memory/write_*"], "deny": ["memory/delete_*"], "delegates": [],
        "max_tokens": 5000.0, "max_cost_usd": 0.25, "max_tool_calls": 10.0,
        "max_wall_secs": 60.0, "discovery": true
    })
}

fn list(app: &super::audit::App) -> Value {
    serde_json::from_str(&call(app, "list_agents", json!({})).unwrap()).unwrap()
}

#[test]
fn agents_save_list_export_import_and_refuse_hostile_input() {
    let app = app();
    call(
        &app,
        "add_provider",
        json!({"name": "local", "kind": "ollama", "baseUrl": "http://127.0.0.1:9/v1",
               "model": null, "contextWindow": null}),
    )
    .unwrap();
    call(
        &app,
        "save_agent",
        json!({"agent": agent("coder"), "isNew": true}),
    )
    .unwrap();
    assert_eq!(list(&app), json!([agent("coder")]));
    let again = call(
        &app,
        "save_agent",
        json!({"agent": agent("coder"), "isNew": true}),
    );
    assert!(again.unwrap_err().contains("already exists"));

    let mut edited = agent("coder");
    edited["delegates"] = Value::Null;
    edited["max_tokens"] = Value::Null;
    call(&app, "save_agent", json!({"agent": edited, "isNew": false})).unwrap();
    assert_eq!(list(&app), json!([edited]));

    let toml: String =
        serde_json::from_str(&call(&app, "export_agents", json!({})).unwrap()).unwrap();
    call(&app, "remove_agent", json!({"name": "coder"})).unwrap();
    assert_eq!(list(&app), json!([]));
    let report = call(
        &app,
        "import_agents",
        json!({"toml": toml, "replace": false}),
    )
    .unwrap();
    assert!(report.contains("coder"), "{report}");
    assert_eq!(list(&app), json!([edited]));

    let hostile = [
        json!({"agent": agent("Bad Name"), "isNew": true}),
        json!({"agent": with("x", "max_tokens", json!(1.5)), "isNew": true}),
        json!({"agent": with("y", "max_cost_usd", json!(-1.0)), "isNew": true}),
        json!({"agent": with("z", "provider", json!("nope")), "isNew": true}),
        json!({"agent": with("w", "tools", json!(["no-slash"])), "isNew": true}),
        json!({"agent": "not an object", "isNew": true}),
        json!({"agent": agent(&"a".repeat(100_000)), "isNew": true}),
    ];
    for args in hostile {
        assert!(call(&app, "save_agent", args.clone()).is_err(), "{args}");
    }
    let files = [
        toml.replace("action = \"deny\"", "action = \"allow\""),
        format!("x = {}{}", "[".repeat(100_000), "]".repeat(100_000)),
        "#".repeat(2 * 1024 * 1024),
        format!("{toml}\nunknown = 1"),
    ];
    for file in files {
        let r = call(
            &app,
            "import_agents",
            json!({"toml": file, "replace": true}),
        );
        assert!(r.is_err(), "{:?}", file.get(..80));
    }
    assert!(call(&app, "remove_agent", json!({"name": "../x"})).is_err());
    assert_eq!(
        list(&app),
        json!([edited]),
        "a refused request changed something"
    );
}

/// `agent(name)` with one field replaced.
fn with(name: &str, key: &str, value: Value) -> Value {
    let mut a = agent(name);
    a[key] = value;
    a
}
