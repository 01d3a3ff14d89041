#![allow(clippy::unwrap_used)] // test code: a panic is a failed test

use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::ids::{ServerId, ToolRef};
use crate::llm::{Part, Role};

/// A runner with `n` server tools `srv__tool_i` and one local built-in.
struct Fake {
    n: usize,
}

fn tref(i: usize) -> ToolRef {
    ToolRef {
        server: ServerId::new("srv").unwrap(),
        tool: format!("tool_{i}").as_str().into(),
    }
}

impl ToolRunner for Fake {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut v: Vec<ToolSpec> = (0..self.n)
            .map(|i| ToolSpec {
                name: format!("srv__tool_{i}"),
                description: if i == 3 {
                    "Send an e-mail to someone.".into()
                } else {
                    format!("Tool number {i}.")
                },
                input_schema: json!({"type": "object"}),
            })
            .collect();
        v.push(ToolSpec {
            name: "builtin_state".into(),
            description: "local".into(),
            input_schema: json!({"type": "object"}),
        });
        v
    }
    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        let i: usize = llm_name.strip_prefix("srv__tool_")?.parse().ok()?;
        (i < self.n).then(|| tref(i))
    }
    fn run(&self, _call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async { Ok(text("ran".into())) })
    }
    fn is_local(&self, llm_name: &str) -> bool {
        llm_name == "builtin_state"
    }
    fn run_local(
        &self,
        _llm_name: &str,
        _arguments: Map<String, Value>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        Box::pin(async { Ok(text("inner local".into())) })
    }
}

fn names(specs: &[ToolSpec]) -> Vec<String> {
    specs.iter().map(|s| s.name.clone()).collect()
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

async fn local(d: &Discovering<'_>, name: &str, a: Value) -> Result<String, String> {
    d.run_local(name, args(a), CancellationToken::new())
        .await
        .map(|r| match &r.content[0] {
            Content::Text { text } => text.clone(),
            other => panic!("{other:?}"),
        })
}

#[tokio::test]
async fn only_the_built_ins_until_a_tool_is_loaded_then_it_resolves() {
    let inner = Fake { n: 50 };
    let d = Discovering::new(&inner, &[]);
    assert_eq!(d.catalog_len(), 50);
    assert_eq!(
        names(&d.specs()),
        [FIND_TOOL, LOAD_TOOL, "builtin_state"],
        "the inner runner's own built-ins stay offered"
    );
    // Not loaded: not resolvable, answered locally with "load it first".
    assert!(d.resolve("srv__tool_3").is_none());
    assert!(d.is_local("srv__tool_3"));
    let refused = local(&d, "srv__tool_3", json!({})).await.unwrap_err();
    assert!(
        refused.contains("not loaded") && refused.contains(LOAD_TOOL),
        "{refused}"
    );

    let found = local(&d, FIND_TOOL, json!({"query": "send email"}))
        .await
        .unwrap();
    let first = found.lines().nth(1).unwrap();
    assert_eq!(first, "srv/tool_3 — Send an e-mail to someone.");
    let loaded = local(&d, LOAD_TOOL, json!({"tools": ["srv/tool_3", "nope/x"]}))
        .await
        .unwrap();
    assert!(loaded.contains("Loaded: srv__tool_3"), "{loaded}");
    assert!(
        loaded.contains("Unknown or not available here: nope/x"),
        "{loaded}"
    );
    assert_eq!(
        names(&d.specs()),
        [FIND_TOOL, LOAD_TOOL, "builtin_state", "srv__tool_3"]
    );
    assert_eq!(d.resolve("srv__tool_3"), Some(tref(3)));
    assert!(!d.is_local("srv__tool_3"));
    // The inner runner's built-in goes to it.
    assert_eq!(
        local(&d, "builtin_state", json!({})).await.unwrap(),
        "inner local"
    );
    // Loading again says so; the found line says it is loaded.
    let again = local(&d, LOAD_TOOL, json!({"tools": ["srv__tool_3"]}))
        .await
        .unwrap();
    assert!(again.starts_with("Already loaded"), "{again}");
    let found = local(&d, FIND_TOOL, json!({"query": "mail"}))
        .await
        .unwrap();
    assert!(found.contains("srv/tool_3 (loaded)"), "{found}");
}

#[tokio::test]
async fn searches_and_loads_are_bounded() {
    let inner = Fake { n: 100 };
    let d = Discovering::new(&inner, &[]);
    let found = local(&d, FIND_TOOL, json!({"query": "tool", "limit": 500}))
        .await
        .unwrap();
    assert_eq!(found.lines().count(), 1 + FIND_MAX + 1, "{found}");
    assert!(found.starts_with("100 of 100 tools match"), "{found}");
    let many: Vec<String> = (0..=LOAD_MAX).map(|i| format!("srv/tool_{i}")).collect();
    let refused = local(&d, LOAD_TOOL, json!({ "tools": many }))
        .await
        .unwrap_err();
    assert!(refused.contains("at most"), "{refused}");
    assert!(d.loaded().is_empty());
    assert!(local(&d, FIND_TOOL, json!({})).await.is_err());
    let by_server = local(&d, FIND_TOOL, json!({"server": "srv", "limit": 2}))
        .await
        .unwrap();
    assert!(by_server.contains("srv/tool_0 —"), "{by_server}");
    let none = local(&d, FIND_TOOL, json!({"query": "x", "server": "other"}))
        .await
        .unwrap();
    assert!(none.starts_with("No tool matches"), "{none}");
}

fn load_call(id: &str, tools: Value) -> Part {
    Part::ToolCall {
        id: id.into(),
        name: LOAD_TOOL.into(),
        arguments: json!({ "tools": tools }),
    }
}

#[test]
fn the_loaded_set_is_read_back_from_past_load_calls_only() {
    let transcript = vec![
        Message::user_text("find me tools"),
        Message {
            role: Role::Assistant,
            parts: vec![
                load_call("c1", json!(["srv/tool_1", "srv__tool_2"])),
                // A call to a tool is not a load (it may have been refused as not loaded).
                Part::ToolCall {
                    id: "c2".into(),
                    name: "srv__tool_9".into(),
                    arguments: json!({}),
                },
            ],
        },
        Message {
            role: Role::Assistant,
            parts: vec![
                load_call("c3", json!("srv/tool_4")),
                load_call("c4", json!({"not": "a list"})),
            ],
        },
    ];
    assert_eq!(
        loaded_in(&transcript),
        ["srv/tool_1", "srv__tool_2", "srv/tool_4"]
    );
    let inner = Fake { n: 5 };
    // tool_9 does not exist (any more): dropped when the set is rebuilt.
    let mut earlier = loaded_in(&transcript);
    earlier.push("srv/tool_9".into());
    let d = Discovering::new(&inner, &earlier);
    assert_eq!(d.loaded(), ["srv__tool_1", "srv__tool_2", "srv__tool_4"]);
    assert_eq!(
        names(&d.specs()),
        [
            FIND_TOOL,
            LOAD_TOOL,
            "builtin_state",
            "srv__tool_1",
            "srv__tool_2",
            "srv__tool_4"
        ]
    );
}
