//! Tool-text hygiene (`hygiene`, TD-04, RN-04) on arbitrary Unicode.
//!
//! Every tool name, title, description and schema string is server text. The checks slice
//! that text by byte offsets mapped through a lowercased, normalised copy (whose length can
//! differ from the original: `İ` lowercases to two characters), which is where a panic would
//! hide. The properties:
//! - `check_tool`, `check_instructions`, `name_outside_spec` and `Finding::describe` never
//!   panic, whatever the text;
//! - `reveal` leaves no character that hides or moves text (controls other than `\n`/`\t`,
//!   ANSI, bidi, zero-width, tags, line separators), is idempotent, and changes nothing else;
//! - every finding's excerpt is revealed text;
//! - `name_outside_spec` is `None` exactly for 1–128 characters of `[A-Za-z0-9_.-]`, and what
//!   it says contains no hidden character.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{json, Value};
use switchboard_core::escape::is_suspicious;
use switchboard_core::hygiene::{
    check_instructions, check_tool, name_outside_spec, reveal, Hidden, TOOL_NAME_MAX,
};
use switchboard_core::mcp::catalog::ToolInfo;

use crate::hostile_text;

/// Whether `c` may not survive `reveal` (`\n` and `\t` stay: text keeps its lines).
fn hides(c: char) -> bool {
    c != '\n' && c != '\t' && (Hidden::of(c).is_some() || is_suspicious(c))
}

/// Hostile text with injection phrases, sensitive paths and tool-like names mixed in, so the
/// matching paths (and their offset arithmetic) run, not only the hidden-character scan.
fn tool_text() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        2 => hostile_text(6),
        1 => prop::sample::select(vec![
            "ignore previous", "IGN\u{200b}ORE   Previous", "do not tell the user",
            "DON\u{2019}T TELL THE USER", "<IMPORTANT>", "~/.ssh", ".env", ".environment",
            "id_rsa", "/etc/passwd", ".ssh/", "send_email", "readFile", "İİİ ignore prior",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(word, 0..6).prop_map(|w| w.join(" "))
}

/// A JSON schema-like value whose strings and keys are hostile.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        tool_text().prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(tool_text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn tool() -> impl Strategy<Value = ToolInfo> {
    (
        tool_text(),
        prop::option::of(tool_text()),
        prop::option::of(tool_text()),
        schema(),
        prop::option::of(schema()),
        prop::option::of(tool_text()),
    )
        .prop_map(|(name, title, description, input, output, ann_title)| {
            let mut v = json!({"name": name, "inputSchema": input});
            if let Some(t) = title {
                v["title"] = json!(t);
            }
            if let Some(d) = description {
                v["description"] = json!(d);
            }
            if let Some(o) = output {
                v["outputSchema"] = o;
            }
            if let Some(t) = ann_title {
                v["annotations"] = json!({"title": t});
            }
            // The catalog reads tools from a server's JSON; build them the same way.
            serde_json::from_value(v).unwrap_or_else(|e| panic!("tool shape: {e}"))
        })
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn reveal_leaves_nothing_hidden_and_keeps_the_rest(s in hostile_text(24)) {
        let shown = reveal(&s);
        prop_assert!(!shown.chars().any(hides), "{:?} -> {:?}", s, shown);
        prop_assert_eq!(reveal(&shown), shown.clone(), "reveal is idempotent");
        // Only hidden characters are replaced: the visible ones remain, in order.
        let kept: String = s.chars().filter(|c| !hides(*c)).collect();
        let mut rest = shown.as_str();
        for c in kept.chars() {
            let at = rest.find(c);
            prop_assert!(at.is_some(), "{:?} lost {:?}", s, c);
            rest = &rest[at.unwrap_or(0) + c.len_utf8()..];
        }
    }

    #[test]
    fn tool_checks_never_panic_and_excerpts_are_revealed(
        t in tool(),
        others in prop::collection::hash_set(
            prop::sample::select(vec!["send_email", "readFile", "a-b.c", "x"]).prop_map(str::to_owned),
            0..4,
        ),
    ) {
        for f in check_tool(&t, &others) {
            prop_assert!(!f.excerpt.chars().any(hides), "{:?}", f);
            let _ = f.describe();
        }
    }

    #[test]
    fn instruction_checks_never_panic_and_excerpts_are_revealed(text in tool_text()) {
        let others: HashSet<String> = ["send_email".to_owned()].into();
        for f in check_instructions(&text, &others) {
            prop_assert!(!f.excerpt.chars().any(hides), "{:?}", f);
            let _ = f.describe();
        }
    }

    #[test]
    fn name_outside_spec_is_exactly_the_spec_charset(
        name in prop_oneof![
            "[A-Za-z0-9_.-]{0,140}",
            hostile_text(12),
        ],
    ) {
        let fits = !name.is_empty()
            && name.chars().count() <= TOOL_NAME_MAX
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        let why = name_outside_spec(&name);
        prop_assert_eq!(why.is_none(), fits, "{:?}: {:?}", name, why);
        if let Some(why) = why {
            prop_assert!(!why.chars().any(|c| hides(c) || c == '\n' || c == '\t'), "{:?}", why);
        }
    }
}
