#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::{json, Value};

use super::*;
use crate::ids::ServerId;

/// `weather/get` returns {temperature: number, conditions: string, tags: [string]};
/// `calc/add` takes {a: number, b: number} (both required, nothing else);
/// `notes/write` takes {text: string} and declares no outputSchema.
fn tools(server: &ServerId, tool: &str) -> Result<ToolSchemas, String> {
    match (server.as_str(), tool) {
        ("weather", "get") => Ok(ToolSchemas {
            input: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            output: Some(json!({
                "type": "object",
                "properties": {
                    "temperature": {"type": "number"},
                    "conditions": {"type": "string"},
                    "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}}
                },
                "$defs": {"tag": {"type": "string"}}
            })),
        }),
        ("calc", "add") => Ok(ToolSchemas {
            input: json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "additionalProperties": false
            }),
            output: Some(json!({"type": "object", "properties": {"sum": {"type": "number"}}})),
        }),
        ("notes", "write") => Ok(ToolSchemas {
            input: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            output: None,
        }),
        _ => Err("no such tool".into()),
    }
}

fn pipeline(steps: Value) -> Pipeline {
    let def = json!({
        "name": "demo",
        "inputs": [{"name": "city", "schema": {"type": "string"}}, {"name": "n", "schema": {"type": "integer"}}],
        "steps": steps,
    });
    parse(&def.to_string(), Format::Json).unwrap()
}

fn errors(steps: Value) -> Vec<MappingError> {
    check(&pipeline(steps), &tools).expect_err("the check should refuse it")
}

#[test]
fn a_good_pipeline_plans_what_flows_where() {
    let p = pipeline(json!([
        {"id": "w", "tool": "weather/get", "args": {"city": {"$input": "city"}}},
        {"id": "s", "tool": "calc/add", "args": {"a": {"$from": "w", "pointer": "/temperature"}, "b": {"$input": "n"}}},
        {"id": "t", "tool": "notes/write", "args": {"text": {"$from": "w", "pointer": "/tags/0"}}},
    ]));
    let plan = check(&p, &tools).unwrap();
    let lines = plan.lines();
    assert!(
        lines.contains(&"step 1 \"w\" weather/get.city <- input city".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines.contains(
            &"step 2 \"s\" calc/add.a <- step 1 \"w\" (weather/get) /temperature".to_owned()
        ),
        "{lines:?}"
    );
    assert!(
        lines.contains(
            &"step 3 \"t\" notes/write.text <- step 1 \"w\" (weather/get) /tags/0".to_owned()
        ),
        "{lines:?}"
    );
}

#[test]
fn a_pointer_that_does_not_resolve_is_refused() {
    let e = errors(json!([
        {"id": "w", "tool": "weather/get", "args": {"city": "Paris"}},
        {"id": "s", "tool": "calc/add", "args": {"a": {"$from": "w", "pointer": "/temprature"}, "b": 1}},
    ]));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].step, e[0].argument.as_deref()), (2, Some("a")));
    assert!(
        e[0].to_string()
            .contains("does not resolve in the outputSchema of weather/get"),
        "{}",
        e[0]
    );
}

#[test]
fn a_step_without_an_output_schema_cannot_be_mapped() {
    let e = errors(json!([
        {"id": "n", "tool": "notes/write", "args": {"text": "x"}},
        {"id": "s", "tool": "calc/add", "args": {"a": {"$from": "n", "pointer": "/x"}, "b": 1}},
    ]));
    assert!(e[0].reason.contains("declares no outputSchema"), "{e:?}");
}

#[test]
fn a_type_mismatch_is_refused() {
    let e = errors(json!([
        {"id": "w", "tool": "weather/get", "args": {"city": "Paris"}},
        {"id": "s", "tool": "calc/add", "args": {"a": {"$from": "w", "pointer": "/conditions"}, "b": "2"}},
    ]));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].reason
            .contains("would get string but calc/add wants number"),
        "{e:?}"
    );
    assert_eq!(e[1].argument.as_deref(), Some("b"));
    // An integer input fits a number argument; a number source does not fit an integer one.
    let p = pipeline(
        json!([{"id": "s", "tool": "calc/add", "args": {"a": {"$input": "n"}, "b": 1.5}}]),
    );
    check(&p, &tools).unwrap();
}

#[test]
fn unknown_and_later_steps_are_refused() {
    let e = errors(json!([
        {"id": "s", "tool": "calc/add", "args": {"a": {"$from": "w", "pointer": "/temperature"}, "b": {"$from": "ghost"}}},
        {"id": "w", "tool": "weather/get", "args": {"city": "Paris"}},
    ]));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e[0].reason.contains("does not run before it"), "{e:?}");
    assert!(e[1].reason.contains("there is no such step"), "{e:?}");
    let e = errors(
        json!([{"id": "s", "tool": "calc/add", "args": {"a": {"$from": "s", "pointer": "/sum"}, "b": 1}}]),
    );
    assert!(e[0].reason.contains("does not run before it"), "{e:?}");
}

#[test]
fn missing_required_unknown_arguments_and_tools_are_refused() {
    let e = errors(json!([
        {"id": "s", "tool": "calc/add", "args": {"a": 1, "c": 2}},
        {"id": "x", "tool": "calc/nope", "args": {}},
        {"id": "i", "tool": "notes/write", "args": {"text": {"$input": "undeclared"}}},
    ]));
    let text: Vec<String> = e.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 4, "{text:?}");
    assert!(
        text[0].starts_with("step 1 (\"s\"), argument \"b\": calc/add requires it"),
        "{text:?}"
    );
    assert!(
        text[1].contains("argument \"c\": calc/add takes no argument of that name"),
        "{text:?}"
    );
    assert!(
        text[2].contains("step 2 (\"x\"): the tool calc/nope is not available"),
        "{text:?}"
    );
    assert!(
        text[3].contains("the input \"undeclared\", which the pipeline does not declare"),
        "{text:?}"
    );
}

#[test]
fn definitions_parse_from_toml_and_json_alike() {
    let toml = r#"
name = "demo"
description = "d"
[[inputs]]
name = "city"
schema = { type = "string" }
[[steps]]
id = "w"
tool = "weather/get"
args = { city = { "$input" = "city" } }
[[steps]]
id = "s"
tool = "calc/add"
args = { a = { "$from" = "w", pointer = "/temperature" }, b = 2 }
"#;
    let p = parse(toml, Format::Toml).unwrap();
    assert_eq!(p.steps.len(), 2);
    check(&p, &tools).unwrap();
    let back = parse(&serde_json::to_string(&p).unwrap(), Format::Json).unwrap();
    assert!(same_definition(&p, &back));
}

#[test]
fn hostile_definitions_are_errors_not_panics() {
    let bad = [
        "",
        "{",
        "[]",
        r#"{"name": "x", "steps": []}"#,
        r#"{"name": "../x", "steps": [{"id": "a", "tool": "s/t"}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t"}], "extra": 1}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {}, "retry": 3}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "st"}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "/t"}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/"}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t"}, {"id": "a", "tool": "s/t"}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {"k": {"$input": 3}}}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {"k": {"$input": "i", "x": 1}}}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {"k": {"$from": "a", "pointer": "no-slash"}}}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {"k": {"$from": "a", "junk": 1}}}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {"k": {"$frm": "a"}}}]}"#,
        r#"{"name": "x", "steps": [{"id": "a", "tool": "s/t", "args": {"k": [{"deep": {"$input": "i"}}]}}]}"#,
        r#"{"name": "x", "version": -1, "steps": [{"id": "a", "tool": "s/t"}]}"#,
        "name = 3",
    ];
    for text in bad {
        let format = if text.starts_with("name =") {
            Format::Toml
        } else {
            Format::Json
        };
        assert!(parse(text, format).is_err(), "accepted: {text}");
    }
    let deep = format!(
        r#"{{"name": "x", "steps": [{{"id": "a", "tool": "s/t", "args": {{"k": {}1{}}}}}]}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    assert!(parse(&deep, Format::Json).is_err());
    let big = format!(
        r#"{{"name": "x", "description": "{}"}}"#,
        "a".repeat(MAX_DEFINITION_BYTES)
    );
    assert!(matches!(
        parse(&big, Format::Json),
        Err(DefinitionError::TooLarge(_))
    ));
}

#[test]
fn a_literal_object_is_written_with_literal_and_reads_back() {
    let s = ArgSource::from_value(&json!({"$literal": {"$input": "not a source"}})).unwrap();
    assert_eq!(s, ArgSource::Literal(json!({"$input": "not a source"})));
    assert_eq!(ArgSource::from_value(&s.to_value()).unwrap(), s);
    let from = ArgSource::from_value(&json!({"$from": "a"})).unwrap();
    assert_eq!(
        from,
        ArgSource::From {
            step: "a".into(),
            pointer: String::new()
        }
    );
}
