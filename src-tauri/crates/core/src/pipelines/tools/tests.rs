#![allow(clippy::unwrap_used)] // test code: a panic is a failed test

use super::*;
use crate::ids::{ServerId, ToolRef};
use crate::mcp::naming::{is_valid, ToolNames};
use crate::pipeline_data::{parse, Format};

fn pipeline(name: &str) -> Pipeline {
    let def = json!({
        "name": name,
        "offer": true,
        "inputs": [
            {"name": "city", "schema": {"type": "string"}, "description": "where"},
            {"name": "n", "schema": {}},
        ],
        "steps": [
            {"id": "a", "tool": "calc/echo", "args": {"text": {"$input": "city"}}},
            {"id": "b", "tool": "files/read", "args": {"path": {"$input": "n"}}},
        ],
    });
    parse(&def.to_string(), Format::Json).unwrap()
}

fn names(of: &[&str]) -> Vec<String> {
    name_pipelines(of.iter().map(|n| pipeline(n)).collect())
        .into_iter()
        .map(|o| o.llm_name)
        .collect()
}

#[test]
fn names_are_valid_distinct_and_plain_when_they_can_be() {
    let long = "p".repeat(64);
    let got = names(&["weather-sum", "a.b", "a_b", "A-B", "x", &long]);
    assert_eq!(got[0], "switchboard_pipeline_weather-sum");
    assert_eq!(got[4], "switchboard_pipeline_x");
    // `a.b`, `a_b` and `A-B` all read `a-b`: each gets its hash.
    for n in &got[1..4] {
        assert!(n.starts_with("switchboard_pipeline_"), "{n}");
        assert_eq!(n.len(), "switchboard_pipeline_".len() + 3 + 9, "{n}");
    }
    assert!(got[5].len() <= MAX_LEN, "{}", got[5]);
    let lower: HashSet<String> = got.iter().map(|n| n.to_ascii_lowercase()).collect();
    assert_eq!(lower.len(), got.len(), "{got:?}");
    for n in &got {
        assert!(is_valid(n), "{n}");
        assert!(is_pipeline_tool_name(n), "{n}");
    }
    // Stable: the same set names the same way.
    assert_eq!(
        got,
        names(&["weather-sum", "a.b", "a_b", "A-B", "x", &long])
    );
}

#[test]
fn no_server_tool_is_named_like_a_pipeline_tool() {
    let servers = [
        "switchboard",
        "switchboard_pipeline",
        "switchboard_pipeline_x",
        "SWITCHBOARD_PIPELINE_X",
        "switchboard.pipeline",
        // 31, 47 and 55 characters: the lengths a hashed name's prefix can have.
        &format!("switchboard_pipeline_{}", "x".repeat(10)),
        &format!("switchboard_pipeline_{}", "x".repeat(26)),
        &format!("switchboard_pipeline_{}", "x".repeat(34)),
        &format!("switchboard_pipeline_{}", "x".repeat(43)),
    ];
    let tools = ["x", "pipeline_x", "", "a.b", "-", &"y".repeat(70)];
    let mut refs = Vec::new();
    for s in servers {
        for t in tools {
            refs.push(ToolRef {
                server: ServerId::new(s).unwrap(),
                tool: t.into(),
            });
        }
    }
    let built = ToolNames::build(refs.clone());
    for r in &refs {
        let n = built.llm_name(r).unwrap();
        assert!(!is_pipeline_tool_name(n), "{r:?} is named {n}");
        assert!(
            !is_pipeline_tool_name(&n.to_ascii_lowercase()),
            "{r:?} is named {n}"
        );
    }
}

#[test]
fn the_input_schema_is_the_declared_inputs() {
    let s = input_schema(&pipeline("p"));
    assert_eq!(
        s,
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "where"},
                "n": {},
            },
            "required": ["city", "n"],
            "additionalProperties": false,
        })
    );
}

#[test]
fn an_agent_needs_every_step_in_scope_and_none_denied() {
    let p = pipeline("p");
    let scope = |servers: &[&str], tools: &[&str]| ToolScope {
        servers: servers.iter().map(|s| (*s).to_owned()).collect(),
        tools: tools.iter().map(|s| (*s).to_owned()).collect(),
    };
    assert!(pipeline_in_scope(&p, &ToolScope::everything()));
    assert!(pipeline_in_scope(&p, &scope(&["calc", "files"], &[])));
    assert!(!pipeline_in_scope(&p, &scope(&["calc"], &[])));
    assert!(!pipeline_in_scope(
        &p,
        &scope(&["calc", "files"], &["calc/echo"])
    ));
    let mut profile = AgentProfile::new(
        crate::agent_data::AgentName::new("helper").unwrap(),
        crate::ids::ProviderName::new("oa").unwrap(),
    );
    profile.scope = ToolScope::everything();
    assert_eq!(agent_refusal(&p, &profile), None);
    assert!(agent_asks(&p, &profile).is_empty());
    // A step the profile asks about is asked about; one it denies keeps the pipeline away.
    let tighten = |action| crate::agent_data::PolicyTightening {
        tool: "files/*".into(),
        action,
    };
    profile.policy = vec![tighten(Tighten::Ask)];
    assert_eq!(agent_refusal(&p, &profile), None);
    let asks = agent_asks(&p, &profile);
    assert_eq!(asks.keys().collect::<Vec<_>>(), ["b"]);
    profile.policy = vec![tighten(Tighten::Deny)];
    assert!(agent_refusal(&p, &profile).unwrap().contains("files/read"));
    profile.policy = Vec::new();
    profile.scope = scope(&["calc"], &[]);
    assert!(agent_refusal(&p, &profile).is_some());
}
