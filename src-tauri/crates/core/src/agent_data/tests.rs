#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use proptest::prelude::*;

use super::*;

fn name(s: &str) -> AgentName {
    AgentName::new(s).unwrap()
}

fn full() -> AgentProfile {
    AgentProfile {
        name: name("planner"),
        description: "Plans the work and delegates\nto others".into(),
        provider: ProviderName::new("claude").unwrap(),
        model: Some("claude-sonnet-4-5".into()),
        system: Some("You plan.\n\"Quoted\" and 'single' and \\ too.".into()),
        delegates: Some(vec![name("coder"), name("summariser")]),
        discovery: true,
        scope: ToolScope {
            servers: vec!["memory".into()],
            tools: vec!["memory/read_*".into()],
        },
        policy: vec![PolicyTightening {
            tool: "memory/delete_*".into(),
            action: Tighten::Deny,
        }],
        budget: Budget {
            tokens: Some(200_000),
            cost_usd: Some(2.5),
            tool_calls: Some(40),
            wall_secs: Some(600),
        },
    }
}

const SAMPLE: &str = r#"
[[agent]]
name = "planner"
description = "Plans the work and delegates"
provider = "claude"
model = "claude-sonnet-4-5"
system = "You plan."
delegates = ["coder", "summariser"]
discovery = true
[agent.scope]
servers = ["memory"]
tools = ["memory/read_*"]
[[agent.policy]]
tool = "memory/delete_*"
action = "deny"
[agent.budget]
tokens = 200000
cost_usd = 2.5
tool_calls = 40
wall_secs = 600
"#;

fn err(text: &str) -> String {
    from_toml(text).unwrap_err().to_string()
}

#[test]
fn names_are_lowercase_letters_digits_dash_underscore() {
    for ok in ["a", "planner", "code-2_x", &"a".repeat(64)] {
        assert!(AgentName::new(ok).is_ok(), "{ok}");
    }
    for bad in ["", "Planner", "a.b", "a b", "é", &"a".repeat(65), "a/b"] {
        assert!(AgentName::new(bad).is_err(), "{bad:?}");
    }
    assert_eq!("coder".parse::<AgentName>().unwrap().as_str(), "coder");
    assert!(serde_json::from_str::<AgentName>("\"UP\"").is_err());
}

#[test]
fn patterns_match_with_stars() {
    assert!(pattern_matches("*", "memory/read"));
    assert!(pattern_matches("memory/read_*", "memory/read_graph"));
    assert!(pattern_matches("memory/read_*", "memory/read_"));
    assert!(!pattern_matches("memory/read_*", "memory/write"));
    assert!(!pattern_matches("memory/read_*", "xmemory/read_a"));
    assert!(pattern_matches("*/search", "web/search"));
    assert!(!pattern_matches("*/search", "web/search2"));
    assert!(pattern_matches("a*b*c", "aXXbYYc"));
    assert!(!pattern_matches("a*b*c", "aXXbYY"));
    assert!(pattern_matches("memory/read", "memory/read"));
    assert!(!pattern_matches("memory/read", "memory/reads"));
    // No exponential backtracking on a hostile pattern.
    let hostile = "*a".repeat(100);
    assert!(!pattern_matches(&hostile, &"a".repeat(99)));
}

#[test]
fn the_default_scope_sees_nothing_and_stars_widen_it() {
    let none = ToolScope::default();
    assert!(!none.allows("memory", "read"));
    let servers = ToolScope {
        servers: vec!["memory".into()],
        tools: vec![],
    };
    assert!(servers.allows("memory", "anything"));
    assert!(!servers.allows("files", "read"));
    let narrowed = ToolScope {
        servers: vec!["memory".into(), "files".into()],
        tools: vec!["memory/read_*".into(), "files/list".into()],
    };
    assert!(narrowed.allows("memory", "read_graph"));
    assert!(!narrowed.allows("memory", "delete_entities"));
    assert!(narrowed.allows("files", "list"));
    assert!(!narrowed.allows("files", "write"));
    // A tool pattern does not open a server that is not listed.
    let outside = ToolScope {
        servers: vec!["memory".into()],
        tools: vec!["files/*".into()],
    };
    assert!(!outside.allows("files", "read"));
    assert!(ToolScope::everything().allows("any", "tool"));
    let all_reads = ToolScope {
        servers: vec!["*".into()],
        tools: vec!["*/read*".into()],
    };
    assert!(all_reads.allows("x", "read_file"));
    assert!(!all_reads.allows("x", "write"));
}

#[test]
fn overrides_only_tighten_and_deny_wins() {
    let mut p = full();
    p.policy = vec![
        PolicyTightening {
            tool: "memory/*".into(),
            action: Tighten::Ask,
        },
        PolicyTightening {
            tool: "memory/delete_*".into(),
            action: Tighten::Deny,
        },
    ];
    assert_eq!(p.tightening_for("memory", "read"), Some(Tighten::Ask));
    assert_eq!(
        p.tightening_for("memory", "delete_all"),
        Some(Tighten::Deny)
    );
    assert_eq!(p.tightening_for("files", "read"), None);
    p.policy.reverse();
    assert_eq!(
        p.tightening_for("memory", "delete_all"),
        Some(Tighten::Deny)
    );

    let e = "allow".parse::<Tighten>().unwrap_err();
    assert!(e.contains("only tighten"), "{e}");
    let e = err(&SAMPLE.replace("action = \"deny\"", "action = \"allow\""));
    assert!(
        e.contains("agent planner") && e.contains("policy[0]"),
        "{e}"
    );
    assert!(e.contains("only tighten"), "{e}");
}

#[test]
fn delegation_is_never_to_oneself() {
    let mut p = full();
    assert!(p.may_delegate_to(&name("coder")));
    assert!(!p.may_delegate_to(&name("other")));
    p.delegates = None;
    assert!(p.may_delegate_to(&name("other")));
    assert!(!p.may_delegate_to(&name("planner")));
    p.delegates = Some(vec![]);
    assert!(!p.may_delegate_to(&name("coder")));
    p.delegates = Some(vec![name("planner")]);
    assert!(p.validate().unwrap_err().to_string().contains("itself"));
}

#[test]
fn the_documented_shape_reads_and_a_full_profile_round_trips() {
    let read = from_toml(SAMPLE).unwrap();
    let mut expected = full();
    expected.description = "Plans the work and delegates".into();
    expected.system = Some("You plan.".into());
    assert_eq!(read, vec![expected]);

    let mut bare = AgentProfile::new(name("bare"), ProviderName::new("local").unwrap());
    bare.delegates = Some(vec![]);
    let all = vec![
        full(),
        bare,
        AgentProfile::new(name("c"), ProviderName::new("x").unwrap()),
    ];
    let text = to_toml(&all).unwrap();
    assert_eq!(from_toml(&text).unwrap(), all, "{text}");
    // The JSON stored in SQLite round-trips too.
    let json = serde_json::to_string(&all).unwrap();
    assert_eq!(
        serde_json::from_str::<Vec<AgentProfile>>(&json).unwrap(),
        all
    );
    assert!(from_toml("").unwrap().is_empty());
    assert!(from_toml(&to_toml(&[]).unwrap()).unwrap().is_empty());
}

#[test]
fn errors_name_the_agent_and_the_field() {
    let e = err(&SAMPLE.replace("wall_secs = 600", "wall_secs = 600\nwall_minutes = 3"));
    assert!(
        e.contains("planner") && e.contains("budget") && e.contains("wall_minutes"),
        "{e}"
    );
    let e = err(&SAMPLE.replace("system = ", "sytem = "));
    assert!(e.contains("agent planner") && e.contains("sytem"), "{e}");
    let e = err(&SAMPLE.replace("tokens = 200000", "tokens = \"lots\""));
    assert!(e.contains("agent planner, field budget"), "{e}");
    let e = err(&SAMPLE.replace("cost_usd = 2.5", "cost_usd = -1.0"));
    assert!(e.contains("budget.cost_usd"), "{e}");
    let e = err(&SAMPLE.replace("cost_usd = 2.5", "cost_usd = nan"));
    assert!(e.contains("budget.cost_usd"), "{e}");
    let e = err(&SAMPLE.replace("tokens = 200000", "tokens = -5"));
    assert!(e.contains("budget"), "{e}");
    let e = err(&SAMPLE.replace("tools = [\"memory/read_*\"]", "tools = [\"read\"]"));
    assert!(e.contains("scope.tools[0]"), "{e}");
    let e = err(&SAMPLE.replace("servers = [\"memory\"]", "servers = [\"bad name\"]"));
    assert!(e.contains("scope.servers[0]"), "{e}");
    let e = err(&SAMPLE.replace("provider = \"claude\"\n", ""));
    assert!(e.contains("agent planner, field provider"), "{e}");
    let e = err(&SAMPLE.replace("name = \"planner\"", "name = \"Planner\""));
    assert!(e.contains("#1") && e.contains("name"), "{e}");
    let e = err(&SAMPLE.replace(
        "delegates = [\"coder\", \"summariser\"]",
        "delegates = [\"planner\"]",
    ));
    assert!(e.contains("itself"), "{e}");
    let e = err(&format!("{SAMPLE}{SAMPLE}"));
    assert!(e.contains("planner") && e.contains("twice"), "{e}");
    let e = err("[agents]\nname = \"x\"");
    assert!(e.contains("agents"), "{e}");
    let e = err("agent = 3");
    assert!(e.contains("[[agent]]"), "{e}");
    let e = err("agent = [1]");
    assert!(e.contains("#1"), "{e}");
}

#[test]
fn hostile_files_give_errors_not_panics() {
    let huge = format!("# {}\n", "x".repeat(TOML_MAX_BYTES));
    assert!(err(&huge).contains("bytes"));
    let deep = format!("x = {}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(from_toml(&deep).is_err());
    let deep_inline = format!("x = {}1{}", "{a=".repeat(50_000), "}".repeat(50_000));
    assert!(from_toml(&deep_inline).is_err());
    let dotted = format!("{}b = 1", "a.".repeat(200_000));
    assert!(from_toml(&dotted).is_err());
    let header = format!("[{}b]\nc = 1", "a.".repeat(200_000));
    assert!(from_toml(&header).is_err());
    let quoted = format!("[{}b]\nc = 1", "'a'.".repeat(100_000));
    assert!(from_toml(&quoted).is_err());
    // Brackets in strings and comments are not nesting.
    let in_text =
        SAMPLE.replace("You plan.", &"[{".repeat(100)) + &format!("# {}\n", "[".repeat(100));
    assert!(from_toml(&in_text).is_ok());
    assert!(from_toml("[[agent]]\nname = \"a\"\nprovider = \"p\"\nsystem = 5").is_err());
    assert!(from_toml("[[agent]]\nname = \"a\"\nprovider = \"p\"\nscope = \"all\"").is_err());
    assert!(
        from_toml("[[agent]]\nname = \"a\"\nprovider = \"p\"\npolicy = {tool=\"a/b\"}").is_err()
    );
    assert!(from_toml("[[agent]]\nname = \"a\"\nprovider = \"p\"\nmodel = \"m\u{7}\"").is_err());
    assert!(from_toml("\u{0}").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_reads_or_fails_without_panicking(s in "\\PC{0,400}") {
        let _ = from_toml(&s);
    }

    #[test]
    fn any_text_inside_the_shape_reads_or_fails_without_panicking(
        a in "[a-z\\[\\]{}=\" .*/_0-9\n-]{0,200}"
    ) {
        let _ = from_toml(&format!("{SAMPLE}\n{a}"));
        let _ = from_toml(&SAMPLE.replace("memory/read_*", &a));
    }

    #[test]
    fn valid_profiles_round_trip(
        desc in "\\PC{0,60}",
        system in proptest::option::of("\\PC{0,60}"),
        tokens in proptest::option::of(1u64..i64::MAX as u64),
        cost in proptest::option::of(0.0f64..1e9),
        servers in proptest::collection::vec("[a-z][a-z0-9_-]{0,10}", 0..4),
    ) {
        let mut p = full();
        p.description = desc;
        p.system = system;
        p.budget.tokens = tokens;
        p.budget.cost_usd = cost;
        p.scope.servers = servers;
        prop_assume!(p.validate().is_ok());
        let back = from_toml(&to_toml(std::slice::from_ref(&p)).unwrap()).unwrap();
        prop_assert_eq!(back, vec![p]);
    }
}
