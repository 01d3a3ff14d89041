//! The state tools' names and arguments (the host round trip is in tests/tests/run_state.rs).

use serde_json::{json, Map, Value};

use super::tools::{parse, Call, NOTES_READ, NOTE_ADD, STATE_GET, STATE_LIST, STATE_PUT};
use super::{state_tool_specs, STATE_TOOLS};
use crate::ids::{ServerId, ToolRef};
use crate::mcp::naming::{is_valid, ToolNames};

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn specs_are_valid_llm_tools() {
    let specs = state_tool_specs();
    let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, STATE_TOOLS);
    for s in &specs {
        assert!(is_valid(&s.name), "{}", s.name);
        assert_eq!(s.input_schema["type"], "object");
    }
}

#[test]
fn no_server_tool_is_named_like_a_state_tool() {
    let mut tools = Vec::new();
    let servers = [
        "switchboard",
        "Switchboard",
        "SWITCHBOARD",
        "switchboard_state",
        "switchboard_note",
        "switchboard_notes",
        "switchboard.state",
        "s",
    ];
    let names = [
        "state_get",
        "STATE_GET",
        "_state_get",
        "get",
        "state.get",
        "note_add",
        "notes_read",
        "state_list",
        "state_put",
        "add",
        "read",
        "",
    ];
    for server in servers {
        for tool in names {
            tools.push(ToolRef {
                server: ServerId::new(server).unwrap(),
                tool: tool.into(),
            });
        }
    }
    // Long names that get truncated and hashed.
    let long = format!("switchboard_state_get{}", "x".repeat(60));
    tools.push(ToolRef {
        server: ServerId::new("switchboard").unwrap(),
        tool: long.as_str().into(),
    });
    let built = ToolNames::build(tools.clone());
    for t in &tools {
        let n = built.llm_name(t).unwrap().to_ascii_lowercase();
        assert!(
            !STATE_TOOLS.contains(&n.as_str()),
            "{t} was named {n}, a state tool's name"
        );
    }
}

#[test]
fn arguments_are_parsed_or_refused_with_a_sentence() {
    assert_eq!(parse("github__search", &Map::new()), None);
    assert_eq!(
        parse(STATE_GET, &args(json!({"key": "a/b"}))),
        Some(Ok(Call::Get { key: "a/b".into() }))
    );
    assert_eq!(
        parse(
            STATE_PUT,
            &args(json!({"key": "k", "value": null, "expected_version": 3}))
        ),
        Some(Ok(Call::Put {
            key: "k".into(),
            value: Value::Null,
            expected_version: Some(3)
        }))
    );
    assert_eq!(parse(STATE_LIST, &Map::new()), Some(Ok(Call::List)));
    assert_eq!(
        parse(NOTES_READ, &args(json!({"after": 4}))),
        Some(Ok(Call::NotesRead { after: 4 }))
    );
    let refused = [
        (STATE_GET, json!({}), "needs key"),
        (
            STATE_GET,
            json!({"key": 5}),
            "key must be a string, not a number",
        ),
        (STATE_GET, json!({"key": ["a"]}), "not a list"),
        (
            STATE_GET,
            json!({"key": "k", "extra": 1}),
            "no argument \"extra\"",
        ),
        (STATE_PUT, json!({"key": "k"}), "needs a value"),
        (
            STATE_PUT,
            json!({"key": "k", "value": 1, "expected_version": -1}),
            "whole number from 0 up",
        ),
        (
            STATE_PUT,
            json!({"key": "k", "value": 1, "expected_version": 1.5}),
            "whole number from 0 up",
        ),
        (
            STATE_PUT,
            json!({"key": "k", "value": 1, "expected_version": 4_294_967_296u64}),
            "whole number from 0 up",
        ),
        (
            STATE_PUT,
            json!({"key": "k", "value": 1, "expected_version": "2"}),
            "not a string",
        ),
        (STATE_LIST, json!({"x": 1}), "takes no arguments"),
        (NOTE_ADD, json!({"text": {"a": 1}}), "not an object"),
        (NOTES_READ, json!({"after": true}), "not true or false"),
    ];
    for (tool, a, want) in refused {
        match parse(tool, &args(a.clone())) {
            Some(Err(sentence)) => assert!(sentence.contains(want), "{tool} {a}: {sentence}"),
            other => panic!("{tool} {a}: {other:?}"),
        }
    }
}
