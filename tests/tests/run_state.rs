//! A run's shared state (issue 15, point 3) through the real host and its built-in tool
//! handler: what one agent writes another reads back with its author; limits, conflicts and
//! hostile arguments come back as sentences a model can act on; every write is audited without
//! its value; and `switchboard state` reads it all from a data dir the host filled.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::{json, Map, Value};
use switchboard_core::agent_data::AgentName;
use switchboard_core::host::{state_tool_specs, Host, StateAuthor};
use switchboard_core::ids::RunId;
use switchboard_core::store::AuditQuery;
use switchboard_tests::{run_cli, test_host};

fn agent(name: &str) -> StateAuthor {
    StateAuthor::Agent(AgentName::new(name).unwrap())
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// Calls a state tool; panics when the name is not one.
async fn call(
    host: &Host,
    run: &RunId,
    who: &StateAuthor,
    tool: &str,
    a: Value,
) -> Result<String, String> {
    host.run_state_tool(run, who, tool, &args(a))
        .await
        .unwrap_or_else(|| panic!("{tool} is not a state tool"))
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn what_one_agent_writes_another_reads_with_its_author() {
    let (host, _dir) = test_host().await;
    let run = RunId::random();
    let (planner, coder) = (agent("planner"), agent("coder"));
    let finding = json!({"endpoints": ["/a", "/b"], "confidence": 0.8});
    let said = call(
        &host,
        &run,
        &planner,
        "switchboard_state_put",
        json!({"key": "findings/api", "value": finding}),
    )
    .await
    .unwrap();
    assert!(said.contains("version 1"), "{said}");

    let got: Value = serde_json::from_str(
        &call(
            &host,
            &run,
            &coder,
            "switchboard_state_get",
            json!({"key": "findings/api"}),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(got["value"], finding);
    assert_eq!(got["author"], "planner");
    assert_eq!(got["version"], 1);

    // A missing key reads as version 0, which a new write may name.
    let none: Value = serde_json::from_str(
        &call(
            &host,
            &run,
            &coder,
            "switchboard_state_get",
            json!({"key": "nope"}),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (none["found"].clone(), none["version"].clone()),
        (json!(false), json!(0))
    );

    // Another run sees nothing of it.
    let other: Value = serde_json::from_str(
        &call(
            &host,
            &RunId::random(),
            &coder,
            "switchboard_state_get",
            json!({"key": "findings/api"}),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(other["found"], false);

    let list: Value = serde_json::from_str(
        &call(&host, &run, &coder, "switchboard_state_list", json!({}))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(list["keys"][0]["key"], "findings/api");
    assert_eq!(list["keys"][0]["author"], "planner");
    assert_eq!(list["keys"].as_array().unwrap().len(), 1);

    // Notes, with `after` to read only newer ones.
    call(
        &host,
        &run,
        &planner,
        "switchboard_note_add",
        json!({"text": "start with /a"}),
    )
    .await
    .unwrap();
    call(
        &host,
        &run,
        &coder,
        "switchboard_note_add",
        json!({"text": "done /a"}),
    )
    .await
    .unwrap();
    let notes: Value = serde_json::from_str(
        &call(
            &host,
            &run,
            &planner,
            "switchboard_notes_read",
            json!({"after": 1}),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(notes["notes"].as_array().unwrap().len(), 1);
    assert_eq!(notes["notes"][0]["author"], "coder");
    assert_eq!(notes["notes"][0]["text"], "done /a");

    // Every write is audited by author, key and size, never the value or the note's text.
    let page = host
        .audit_page(&AuditQuery {
            search: Some("state_".into()),
            before: None,
            limit: 50,
        })
        .await
        .unwrap();
    let writes: Vec<_> = page
        .entries
        .iter()
        .filter(|e| e.detail_json.contains(run.as_str()))
        .collect();
    assert_eq!(writes.len(), 3, "{:#?}", page.entries);
    let put = writes
        .iter()
        .find(|e| e.detail_json.contains("findings/api"))
        .unwrap();
    assert!(put.actor.contains("planner"), "{}", put.actor);
    let detail: Value = serde_json::from_str(&put.detail_json).unwrap();
    assert_eq!(detail["change"], "state_written");
    assert_eq!(detail["detail"]["bytes"], finding.to_string().len());
    assert_eq!(detail["detail"]["version"], 1);
    for e in &writes {
        assert!(!e.detail_json.contains("/b"), "{}", e.detail_json);
        assert!(!e.detail_json.contains("start with"), "{}", e.detail_json);
    }
    host.shutdown().await;
}

#[tokio::test]
async fn limits_and_conflicts_come_back_as_sentences() {
    let (host, _dir) = test_host().await;
    let run = RunId::random();
    let (planner, coder) = (agent("planner"), agent("coder"));
    let big = json!("z".repeat(70 * 1024));
    let err = call(
        &host,
        &run,
        &planner,
        "switchboard_state_put",
        json!({"key": "page", "value": big}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("the value is 71 KiB of JSON; the limit is 64 KiB: store a summary"),
        "{err}"
    );
    assert!(host.state_get(&run, "page").await.unwrap().is_none());

    call(
        &host,
        &run,
        &planner,
        "switchboard_state_put",
        json!({"key": "plan", "value": 1, "expected_version": 0}),
    )
    .await
    .unwrap();
    call(
        &host,
        &run,
        &coder,
        "switchboard_state_put",
        json!({"key": "plan", "value": 2, "expected_version": 1}),
    )
    .await
    .unwrap();
    let err = call(
        &host,
        &run,
        &planner,
        "switchboard_state_put",
        json!({"key": "plan", "value": 3, "expected_version": 1}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("it is at version 2, written by coder"),
        "{err}"
    );
    let newest = host.state_get(&run, "plan").await.unwrap().unwrap();
    assert_eq!(
        (newest.version, newest.value, newest.author.as_str()),
        (2, json!(2), "coder")
    );

    let err = call(
        &host,
        &run,
        &planner,
        "switchboard_note_add",
        json!({"text": "n".repeat(9000)}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("the limit is 8 KiB"), "{err}");
    host.shutdown().await;
}

#[tokio::test]
async fn hostile_arguments_are_refused_and_other_names_are_not_ours() {
    let (host, _dir) = test_host().await;
    let run = RunId::random();
    let who = agent("mallory");
    assert!(host
        .run_state_tool(&run, &who, "github__search", &Map::new())
        .await
        .is_none());
    assert!(host
        .run_state_tool(&run, &who, "switchboard__state_get", &Map::new())
        .await
        .is_none());
    let long_key = "k".repeat(129);
    let hostile = [
        (
            "switchboard_state_get",
            json!({"key": {"$ne": null}}),
            "must be a string",
        ),
        (
            "switchboard_state_get",
            json!({"key": "a\u{1b}[2J"}),
            "is not valid",
        ),
        (
            "switchboard_state_get",
            json!({"key": "x' OR 1=1 --"}),
            "is not valid",
        ),
        (
            "switchboard_state_put",
            json!({"key": long_key, "value": 1}),
            "at most 128",
        ),
        (
            "switchboard_state_put",
            json!({"key": "k", "value": 1, "expected_version": -3}),
            "whole number",
        ),
        (
            "switchboard_state_put",
            json!({"key": "k"}),
            "needs a value",
        ),
        (
            "switchboard_state_put",
            json!({"key": "k", "value": 1, "author": "person"}),
            "no argument",
        ),
        ("switchboard_note_add", json!({"text": ""}), "empty"),
        (
            "switchboard_note_add",
            json!({"text": 7}),
            "must be a string",
        ),
        (
            "switchboard_notes_read",
            json!({"after": "0"}),
            "whole number",
        ),
    ];
    for (tool, a, want) in hostile {
        let err = call(&host, &run, &who, tool, a.clone()).await.unwrap_err();
        assert!(err.contains(want), "{tool} {a}: {err}");
    }
    // Nothing was written, and the author cannot be chosen through arguments.
    assert!(host.state_list(&run).await.unwrap().is_empty());
    assert!(host.state_notes(&run).await.unwrap().is_empty());
    // Every spec the handler answers to is offered, and nothing else.
    for spec in state_tool_specs() {
        assert!(host
            .run_state_tool(&run, &who, &spec.name, &Map::new())
            .await
            .is_some());
    }
    host.shutdown().await;
}

/// Reads a key of what a CLI printed as JSON.
fn cli_json(data: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = run_cli(data, &all, "", &[]);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[tokio::test]
async fn the_cli_reads_state_the_host_wrote() {
    let (host, dir) = test_host().await;
    let run = RunId::random();
    host.state_put(&run, "plan", &json!({"step": 1}), &agent("planner"), None)
        .await
        .unwrap();
    host.state_put(&run, "plan", &json!({"step": 2}), &agent("coder"), Some(1))
        .await
        .unwrap();
    host.state_put(
        &run,
        "notes/x",
        &json!("\u{1b}[31mred"),
        &StateAuthor::Person,
        None,
    )
    .await
    .unwrap();
    host.state_add_note(&run, &agent("critic"), "check the edge case")
        .await
        .unwrap();
    host.shutdown().await;
    let data = dir.path();
    let r = run.as_str();

    let list = cli_json(data, &["state", "list", r]);
    let keys: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["key"].as_str().unwrap(),
                k["version"].as_u64().unwrap(),
                k["author"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(keys, [("notes/x", 1, "(person)"), ("plan", 2, "coder")]);

    let got = cli_json(data, &["state", "get", r, "plan"]);
    assert_eq!(
        (got["value"].clone(), got["author"].clone()),
        (json!({"step": 2}), json!("coder"))
    );
    let history = cli_json(data, &["state", "get", r, "plan", "--history"]);
    let authors: Vec<_> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["author"].clone())
        .collect();
    assert_eq!(authors, [json!("planner"), json!("coder")]);

    let notes = cli_json(data, &["state", "notes", r]);
    assert_eq!(notes[0]["text"], "check the edge case");
    assert_eq!(notes[0]["author"], "critic");

    // Readable output: the value as JSON, and a model's escape sequence shown, not obeyed.
    let o = run_cli(data, &["state", "get", r, "notes/x"], "", &[]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("notes/x v1 by (person)"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    let o = run_cli(data, &["state", "list", r], "", &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("plan\tv2\tcoder"));

    // A missing key and a malformed run id fail with a reason.
    let o = run_cli(data, &["--json", "state", "get", r, "gone"], "", &[]);
    assert!(!o.status.success());
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["error"]["code"], "not_found", "{e}");
    let o = run_cli(data, &["state", "list", "run-nothex"], "", &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a run id"));
}
