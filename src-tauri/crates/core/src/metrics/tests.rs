use serde_json::json;

use super::meter::{estimate_tokens, json_bytes};
use crate::catalog::{Content, ToolResult};

#[test]
fn tokens_are_characters_over_four_rounded_up() {
    let text = |t: &str| ToolResult {
        content: vec![Content::Text { text: t.into() }],
        structured_content: None,
        is_error: false,
    };
    assert_eq!(estimate_tokens(&text("")), 0);
    assert_eq!(estimate_tokens(&text("abcd")), 1);
    assert_eq!(estimate_tokens(&text("abcde")), 2);
    assert_eq!(estimate_tokens(&text("ééééé")), 2, "characters, not bytes");
    let structured = ToolResult {
        content: vec![],
        structured_content: Some(json!({"sum": 5})),
        is_error: false,
    };
    assert_eq!(estimate_tokens(&structured), 3); // {"sum":5} is 9 characters
}

#[test]
fn json_bytes_counts_compact_json() {
    assert_eq!(json_bytes(&json!({"text": "hi"})), 13);
}
