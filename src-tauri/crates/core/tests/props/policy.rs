//! The policy TOML (`approval::rules::PolicyFile`): a file a person edits, or copies from
//! somewhere, and that decides what runs without asking.
//!
//! The properties:
//! - any text, and text made of policy-file fragments, parses or is refused, never panics; what
//!   parses is valid (every rule passes `Rule::validate`, ids are unique);
//! - any valid policy renders to TOML that parses back to the same policy, whatever its
//!   strings hold (quotes, backslashes, control characters, any Unicode). A render that lost a
//!   rule would silently drop a deny.

use proptest::prelude::*;
use switchboard_core::approval::rules::{
    Condition, Effect, Limit, On, Per, PolicyFile, Rule, Source, SQL_KINDS,
};
use switchboard_core::ids::ConversationId;

use crate::hostile_text;

/// A server or tool pattern: 1 to 200 bytes without control characters.
fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just("*".to_owned()),
        3 => hostile_text(8).prop_map(|s| {
            let mut p: String = s.chars().filter(|c| !c.is_control()).collect();
            while p.len() > 200 {
                p.pop();
            }
            if p.is_empty() {
                "*".to_owned()
            } else {
                p
            }
        }),
    ]
}

fn condition() -> impl Strategy<Value = Condition> {
    let text = || hostile_text(4);
    prop_oneof![
        (
            prop::option::of(text()),
            prop::collection::vec(text(), 1..3)
        )
            .prop_map(|(arg, prefixes)| Condition::PathUnder { arg, prefixes }),
        (
            prop::option::of(text()),
            prop::collection::vec(text(), 1..3)
        )
            .prop_map(|(arg, domains)| Condition::DomainIn { arg, domains }),
        (
            text(),
            prop::collection::vec(prop::sample::select(SQL_KINDS.to_vec()), 1..4)
        )
            .prop_map(|(arg, ops)| Condition::SqlOnly {
                arg,
                operations: ops.into_iter().map(str::to_owned).collect(),
            }),
        // An escaped literal always compiles; the pattern itself is hostile text.
        (text(), hostile_text(4)).prop_map(|(arg, lit)| Condition::Matches {
            arg,
            pattern: regex::escape(&lit),
        }),
        Just(Condition::ReadOnlyHint),
        Just(Condition::Writes),
    ]
}

fn conversation_id() -> impl Strategy<Value = ConversationId> {
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        .prop_map(|s| ConversationId::parse(&s).unwrap_or_else(|e| panic!("generated id {s}: {e}")))
}

/// A rule that passes `Rule::validate`; `i` makes its id unique in the file.
fn rule(i: usize) -> impl Strategy<Value = Rule> {
    let effect = prop::sample::select(vec![Effect::Allow, Effect::Ask, Effect::Deny]);
    let on = prop::sample::select(vec![On::Tool, On::Resource, On::Prompt, On::Any]);
    let per = prop::sample::select(vec![Per::Minute, Per::Hour, Per::Day, Per::Conversation]);
    let source = prop_oneof![
        2 => Just(Source::User),
        1 => (
            prop::option::of(conversation_id()),
            hostile_text(4),
            prop::option::of("[a-z][a-z0-9-]{0,12}")
        )
            .prop_map(|(conversation, tool_digest, agent)| Source::Grant {
                conversation,
                tool_digest,
                agent,
                app: None,
            }),
    ];
    (
        "[A-Za-z0-9._-]{0,40}",
        effect,
        pattern(),
        on,
        pattern(),
        prop::sample::select(vec![None, Some("model"), Some("manual")]),
        prop::collection::vec(condition(), 0..3),
        prop::option::of((1u32.., per)),
        prop::option::of(hostile_text(8)),
        source,
    )
        .prop_map(
            move |(tail, effect, server, on, tool, origin, when, limit, note, source)| {
                let prefix = match source {
                    Source::Grant { .. } => "grant-",
                    Source::User => "r",
                };
                Rule {
                    id: format!("{prefix}{i}{tail}"),
                    effect,
                    server,
                    on,
                    tool,
                    origin: origin.map(str::to_owned),
                    when,
                    limit: limit
                        .filter(|_| effect == Effect::Allow)
                        .map(|(max, per)| Limit { max, per }),
                    note,
                    source,
                }
            },
        )
}

fn policy() -> impl Strategy<Value = PolicyFile> {
    (0usize..5)
        .prop_flat_map(|n| (0..n).map(rule).collect::<Vec<_>>())
        .prop_map(|rules| PolicyFile { version: 1, rules })
}

/// Text made of what policy files are made of, in any order.
fn policy_like_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(vec![
            "[[rule]]\n", "id = \"a\"\n", "id = \"grant-x\"\n", "effect = \"allow\"\n",
            "effect = \"deny\"\n", "effect = \"maybe\"\n", "server = \"fs\"\n",
            "tool = \"read_*\"\n", "on = \"resource\"\n", "origin = \"model\"\n",
            "when = [{ kind = \"path_under\", prefixes = [\"~/x\"] }]\n",
            "when = [{ kind = \"matches\", arg = \"a\", pattern = \"(\" }]\n",
            "when = [{ kind = \"sql_only\", arg = \"q\", operations = [] }]\n",
            "limit = { max = 0, per = \"hour\" }\n", "limit = { max = 4294967296, per = \"day\" }\n",
            "source = { kind = \"grant\", tool_digest = \"d\" }\n",
            "source = { kind = \"grant\", conversation = \"nope\", tool_digest = \"d\" }\n",
            "version = 1\n", "version = 2\n", "version = -1\n", "[rule]\n", "rule = 1\n",
            "\"\"\"", "'''", "=", "[", "]", "{", "}", "#", "\\u0000", "\n",
        ])
        .prop_map(str::to_owned),
        1 => hostile_text(3),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

/// What a parse that succeeded must satisfy.
fn check_parsed(file: &PolicyFile) -> Result<(), TestCaseError> {
    prop_assert_eq!(file.version, 1);
    let mut ids = std::collections::HashSet::new();
    for r in &file.rules {
        prop_assert!(r.validate().is_ok(), "{:?}", r);
        prop_assert!(ids.insert(r.id.clone()), "duplicate id {}", r.id);
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn any_text_parses_or_is_refused(text in prop_oneof![hostile_text(32), policy_like_text()]) {
        if let Ok(file) = PolicyFile::parse(&text) {
            check_parsed(&file)?;
        }
    }

    #[test]
    fn valid_policies_round_trip_through_toml(file in policy()) {
        for r in &file.rules {
            prop_assert!(r.validate().is_ok(), "generator made an invalid rule: {:?}", r);
        }
        let text = file.render();
        let again = PolicyFile::parse(&text);
        prop_assert!(again.is_ok(), "{:?}\n{}", again, text);
        prop_assert_eq!(again.ok(), Some(file));
    }
}
