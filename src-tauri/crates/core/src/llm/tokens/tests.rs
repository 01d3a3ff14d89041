//! Counts on a fixed catalog. The numbers were computed independently with OpenAI's own
//! `tiktoken` 0.14.0 (Python) on the literal wire strings below; these tests check that our
//! counter agrees with it and that the wire strings are what we count.

use serde_json::json;

use super::*;

fn read_file() -> ToolSpec {
    ToolSpec {
        name: "fs__read_file".into(),
        description: "Read the complete contents of a file from the file system. Handles various \
                      text encodings and provides detailed error messages if the file cannot be \
                      read."
            .into(),
        input_schema: json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Absolute path of the file"},
            "head": {"type": "number", "description": "If provided, returns only the first N lines"}},
            "required": ["path"], "additionalProperties": false}),
    }
}

fn search_issues() -> ToolSpec {
    ToolSpec {
        name: "gh__search_issues".into(),
        description: "Search issues and pull requests across GitHub repositories.".into(),
        input_schema: json!({"type": "object", "properties": {
            "q": {"type": "string"},
            "state": {"type": "string", "enum": ["open", "closed", "all"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100}},
            "required": ["q"]}),
    }
}

fn translate() -> ToolSpec {
    ToolSpec {
        name: "i18n__translate".into(),
        description: "Übersetzt Text zwischen Sprachen — 日本語もOK.".into(),
        input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    }
}

const READ_OPENAI: &str = r#"{"function":{"description":"Read the complete contents of a file from the file system. Handles various text encodings and provides detailed error messages if the file cannot be read.","name":"fs__read_file","parameters":{"additionalProperties":false,"properties":{"head":{"description":"If provided, returns only the first N lines","type":"number"},"path":{"description":"Absolute path of the file","type":"string"}},"required":["path"],"type":"object"}},"type":"function"}"#;
const READ_ANTHROPIC: &str = r#"{"description":"Read the complete contents of a file from the file system. Handles various text encodings and provides detailed error messages if the file cannot be read.","input_schema":{"additionalProperties":false,"properties":{"head":{"description":"If provided, returns only the first N lines","type":"number"},"path":{"description":"Absolute path of the file","type":"string"}},"required":["path"],"type":"object"},"name":"fs__read_file"}"#;

#[test]
fn the_wire_shapes_are_the_providers() {
    assert_eq!(
        wire_tool(Wire::OpenAi, &read_file()).to_string(),
        READ_OPENAI
    );
    assert_eq!(
        wire_tool(Wire::Anthropic, &read_file()).to_string(),
        READ_ANTHROPIC
    );
}

#[test]
fn openai_models_are_counted_with_their_tokenizer() {
    let gpt4o = Counter::new("openai", Wire::OpenAi, "gpt-4o");
    assert_eq!(gpt4o.method(), Method::O200k);
    assert!(!gpt4o.method().is_estimate());
    assert_eq!(gpt4o.text(READ_OPENAI), 98);
    assert_eq!(gpt4o.tool(&read_file()), 98);
    assert_eq!(gpt4o.tool(&search_issues()), 94);
    assert_eq!(gpt4o.tool(&translate()), 46);
    assert_eq!(
        gpt4o.tools(&[read_file(), search_issues(), translate()]),
        98 + 94 + 46
    );
    assert_eq!(gpt4o.tools(&[]), 0);
    for m in [
        "gpt-4.1-mini",
        "gpt-5",
        "o3",
        "o4-mini",
        "gpt-4o-2024-08-06",
    ] {
        let c = Counter::new("openai", Wire::OpenAi, m);
        assert_eq!(c.method(), Method::O200k, "{m}");
        assert_eq!(c.tool(&read_file()), 98, "{m}");
    }
    let gpt4 = Counter::new("openai", Wire::OpenAi, "gpt-4");
    assert_eq!(gpt4.method(), Method::Cl100k);
    assert_eq!(gpt4.tool(&read_file()), 96);
    assert_eq!(gpt4.tool(&search_issues()), 86);
    assert_eq!(gpt4.tool(&translate()), 48);
    // Routed by name on OpenRouter: still OpenAI's model.
    let routed = Counter::new("openrouter", Wire::OpenAi, "openai/gpt-4o");
    assert_eq!(routed.method(), Method::O200k);
}

#[test]
fn claude_is_an_estimate_with_the_documented_overhead() {
    let c = Counter::new("anthropic", Wire::Anthropic, "claude-sonnet-4-5");
    assert_eq!(c.method(), Method::AnthropicEstimate);
    assert!(c.method().is_estimate());
    // cl100k_base: 90, 80 and 42 tokens; times 1.2, rounded up.
    assert_eq!(c.tool(&read_file()), 108);
    assert_eq!(c.tool(&search_issues()), 96);
    assert_eq!(c.tool(&translate()), 51);
    assert_eq!(c.request_overhead(), 346);
    assert_eq!(
        c.tools(&[read_file(), search_issues(), translate()]),
        108 + 96 + 51 + 346
    );
    assert_eq!(
        Counter::new("anthropic", Wire::Anthropic, "claude-3-5-haiku-latest").request_overhead(),
        264
    );
}

#[test]
fn local_and_unknown_models_are_estimates() {
    // A local server calling its model gpt-4o is not running OpenAI's tokenizer.
    for (profile, model) in [
        ("ollama", "llama3.1"),
        ("ollama", "gpt-4o"),
        ("openrouter", "meta-llama/llama-3.3-70b"),
        ("deepseek", "deepseek-chat"),
        ("custom", "my-model"),
    ] {
        let c = Counter::new(profile, Wire::OpenAi, model);
        assert_eq!(c.method(), Method::Estimate, "{profile} {model}");
        assert_eq!(c.tool(&read_file()), 96, "{profile} {model}");
        assert_eq!(c.request_overhead(), 0);
    }
}

#[test]
fn share_of_the_window() {
    assert_eq!(share_percent(32_000, 128_000), 25.0);
    assert_eq!(share_percent(1, 0), 0.0);
}
