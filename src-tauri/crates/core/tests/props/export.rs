//! Conversation export (`store::render_json`, `store::render_markdown`) with hostile content.
//!
//! Everything in a conversation came from outside: the person's text, the model's text and
//! tool-call names and ids, servers' tool results, error messages. There is no importer of the
//! export yet, so the JSON side is checked as the round trip an importer would do: the
//! document parses and gives back every field it was made from. The Markdown side is checked
//! with a small CommonMark block scanner (fenced code and ATX headings, the two constructs that
//! give an export its structure):
//! - every tool result and every tool call's arguments come back as a code block whose body is
//!   exactly that content: nothing in the content can close its fence;
//! - every message keeps its `##` heading, in order, whatever the messages before it held
//!   (an answer cut off inside a code block must not swallow the rest of the transcript);
//! - nothing from a single-line field (a tool name, a call id, a model name, an error) starts
//!   a line of its own.

use proptest::prelude::*;
use serde_json::Value;
use switchboard_core::ids::{ApprovalId, ConversationId, MessageId, ServerId, ToolCallRecordId};
use switchboard_core::llm::types::{Message, Part, ResultPart, Role, StopReason, Usage};
use switchboard_core::store::{
    render_json, render_markdown, ApprovalDecision, Conversation, ConversationExport, DecidedBy,
    MessageStatus, ModelUsage, StoredApproval, StoredMessage, StoredToolCall, ToolCallStatus,
    UsageTotals,
};

use crate::hostile_text;

fn text() -> BoxedStrategy<String> {
    hostile_text(8).boxed()
}

/// Text as a model or a person writes it, fences, headings and all.
fn markdown_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        2 => hostile_text(4),
        1 => prop::sample::select(vec![
            "```", "```rust", "````", "~~~", "~~~~ x", "\n```\n", "\n~~~\n", "\n   ```\n",
            "\n    ```\n", "\n## User\n", "\n# Title\n", "\n> quote\n", "\n- ```\n", "`",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn conversation_id() -> impl Strategy<Value = ConversationId> {
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        .prop_map(|s| ConversationId::parse(&s).unwrap_or_else(|e| panic!("generated id {s}: {e}")))
}

fn usage() -> impl Strategy<Value = Usage> {
    (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(i, o, c)| Usage {
        input_tokens: i,
        output_tokens: o,
        cached_input_tokens: c,
    })
}

fn part() -> impl Strategy<Value = Part> {
    let result_part = prop_oneof![
        3 => markdown_text().prop_map(|text| ResultPart::Text { text }),
        1 => (text(), text()).prop_map(|(mime_type, data)| ResultPart::Image { mime_type, data }),
    ];
    prop_oneof![
        3 => markdown_text().prop_map(|text| Part::Text { text }),
        1 => (text(), text()).prop_map(|(mime_type, data)| Part::Image { mime_type, data }),
        2 => (text(), text(), json_value())
            .prop_map(|(id, name, arguments)| Part::ToolCall { id, name, arguments }),
        2 => (text(), prop::collection::vec(result_part, 0..3), any::<bool>()).prop_map(
            |(call_id, content, is_error)| Part::ToolResult { call_id, content, is_error }
        ),
    ]
}

fn status() -> impl Strategy<Value = MessageStatus> {
    prop::sample::select(vec![
        MessageStatus::Complete,
        MessageStatus::Incomplete,
        MessageStatus::Interrupted,
        MessageStatus::Cancelled,
        MessageStatus::Failed,
    ])
}

fn stop() -> impl Strategy<Value = StopReason> {
    prop_oneof![
        Just(StopReason::EndTurn),
        Just(StopReason::ToolUse),
        Just(StopReason::MaxTokens),
        Just(StopReason::ContentFilter),
        text().prop_map(StopReason::Other),
    ]
}

fn message(i: i64) -> impl Strategy<Value = StoredMessage> {
    (
        prop::sample::select(vec![Role::User, Role::Assistant]),
        prop::collection::vec(part(), 0..4),
        status(),
        prop::option::of((text(), text())),
        prop::option::of(usage()),
        prop::option::of(stop()),
        prop::option::of(text()),
        any::<i64>(),
    )
        .prop_map(
            move |(role, parts, status, by, usage, stop, error, at)| StoredMessage {
                id: MessageId::new(100 + i),
                seq: i + 1,
                message: Message { role, parts },
                status,
                provider: by.as_ref().map(|b| b.0.clone()),
                model: by.map(|b| b.1),
                usage,
                stop,
                error,
                created_at_ms: at,
                updated_at_ms: at,
                superseded_by: None,
                copied_from: None,
            },
        )
}

fn approval() -> impl Strategy<Value = StoredApproval> {
    (
        any::<bool>(),
        prop_oneof![
            Just(DecidedBy::User),
            Just(DecidedBy::Policy),
            text().prop_map(|grant_id| DecidedBy::Grant { grant_id }),
        ],
        prop::option::of(text()),
        any::<i64>(),
    )
        .prop_map(|(allow, decided_by, reason, at)| StoredApproval {
            id: ApprovalId::new(at),
            decision: if allow {
                ApprovalDecision::Allow
            } else {
                ApprovalDecision::Deny
            },
            decided_by,
            reason,
            decided_at_ms: at,
        })
}

/// The record of one tool call asked for in `m`, if it asks for any.
fn record(m: &StoredMessage, n: usize) -> impl Strategy<Value = Option<StoredToolCall>> {
    let calls: Vec<(String, Value)> = m
        .message
        .tool_calls()
        .map(|(id, _, a)| (id.to_owned(), a.clone()))
        .collect();
    let message = m.id;
    let pick = if calls.is_empty() {
        Just(None).boxed()
    } else {
        prop::option::of(prop::sample::select(calls)).boxed()
    };
    (
        pick,
        "[a-z][a-z0-9-]{0,10}",
        text(),
        // A `null` result is no result: JSON has one spelling for both.
        prop::option::of(json_value().prop_filter("not null", |v| !v.is_null())),
        any::<bool>(),
        prop::sample::select(vec![
            ToolCallStatus::Pending,
            ToolCallStatus::Running,
            ToolCallStatus::Done,
            ToolCallStatus::Denied,
            ToolCallStatus::Cancelled,
            ToolCallStatus::Interrupted,
        ]),
        prop::collection::vec(approval(), 0..3),
    )
        .prop_map(
            move |(call, server, tool, result, is_error, status, approvals)| {
                let (call_id, arguments) = call?;
                Some(StoredToolCall {
                    id: ToolCallRecordId::new(n as i64),
                    message,
                    call_id,
                    server: ServerId::new(&server)
                        .unwrap_or_else(|e| panic!("generated server {server}: {e}")),
                    tool,
                    arguments,
                    result,
                    is_error,
                    status,
                    requested_at_ms: 1,
                    started_at_ms: None,
                    finished_at_ms: None,
                    approvals,
                })
            },
        )
}

fn export() -> impl Strategy<Value = ConversationExport> {
    let conversation = (
        conversation_id(),
        text(),
        any::<i64>(),
        prop::option::of(text()),
        prop::option::of(text()),
        any::<bool>(),
        prop::option::of(conversation_id()),
        prop::option::of(any::<i64>().prop_map(MessageId::new)),
    )
        .prop_map(
            |(id, title, at, provider, model, archived, from, from_msg)| Conversation {
                id,
                title,
                created_at_ms: at,
                updated_at_ms: at,
                provider,
                model,
                archived,
                forked_from_conversation: from,
                forked_from_message: from_msg,
            },
        );
    let totals = (
        usage(),
        prop::collection::vec(
            (
                prop::option::of(text()),
                prop::option::of(text()),
                usage(),
                any::<u64>(),
            ),
            0..3,
        ),
    )
        .prop_map(|(total, by)| UsageTotals {
            total,
            by_model: by
                .into_iter()
                .map(|(provider, model, usage, answers)| ModelUsage {
                    provider,
                    model,
                    usage,
                    answers,
                })
                .collect(),
        });
    let messages = (0i64..5).prop_flat_map(|n| (0..n).map(message).collect::<Vec<_>>());
    (conversation, messages, totals)
        .prop_flat_map(|(conversation, messages, usage)| {
            let records: Vec<_> = messages
                .iter()
                .enumerate()
                .map(|(n, m)| record(m, n))
                .collect();
            (Just(conversation), Just(messages), records, Just(usage))
        })
        .prop_map(
            |(conversation, messages, records, usage)| ConversationExport {
                conversation,
                messages,
                tool_calls: records.into_iter().flatten().collect(),
                usage,
            },
        )
}

/// The block structure of a Markdown document: ATX headings and fenced code blocks outside
/// fences, in order (CommonMark's rules for those two; other constructs are not modelled).
#[derive(Debug, Default)]
struct Blocks {
    headings: Vec<String>,
    /// (info string, body with `\n` line ends).
    code: Vec<(String, String)>,
    /// Every line outside code blocks.
    lines: Vec<String>,
}

/// CommonMark line ends: `\n`, `\r\n` or a lone `\r`.
fn lines(doc: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(i) = rest.find(['\n', '\r']) {
        out.push(&rest[..i]);
        let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[i + skip..];
    }
    out.push(rest);
    out
}

/// `(fence char, fence length, rest)` when `line` opens or closes a fence.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = rest.len() - rest.trim_start_matches(c).len();
    let info = &rest[n..];
    (n >= 3 && !(c == '`' && info.contains('`'))).then_some((c, n, info))
}

fn scan(doc: &str) -> Blocks {
    let mut b = Blocks::default();
    let mut open: Option<(char, usize, String, Vec<&str>)> = None;
    for line in lines(doc) {
        if let Some((c, n, info, body)) = &mut open {
            let closes = fence(line)
                .is_some_and(|(fc, fn_, rest)| fc == *c && fn_ >= *n && rest.trim().is_empty());
            if closes {
                b.code.push((info.clone(), body.join("\n")));
                open = None;
            } else {
                body.push(line);
            }
            continue;
        }
        if let Some((c, n, info)) = fence(line) {
            open = Some((c, n, info.trim().to_owned(), Vec::new()));
            continue;
        }
        let t = line.trim_start_matches(' ');
        if line.len() - t.len() <= 3 && t.starts_with('#') {
            let hashes = t.len() - t.trim_start_matches('#').len();
            let after = &t[hashes..];
            if hashes <= 6 && (after.is_empty() || after.starts_with([' ', '\t'])) {
                b.headings.push(t.to_owned());
            }
        }
        b.lines.push(line.to_owned());
    }
    b
}

/// Whether `want` appears in `have` in order (other items may come between).
fn in_order<T: PartialEq>(want: &[T], have: &[T]) -> bool {
    let mut it = have.iter();
    want.iter().all(|w| it.any(|h| h == w))
}

/// Line ends as the scanner reports them.
fn as_lines(s: &str) -> String {
    lines(s).join("\n")
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn json_export_gives_back_everything(e in export()) {
        let doc: Value = serde_json::from_str(&render_json(&e))
            .map_err(|err| TestCaseError::fail(format!("not JSON: {err}")))?;
        prop_assert_eq!(&doc["format"], "switchboard.conversation");
        let back: Conversation = serde_json::from_value(doc["conversation"].clone())
            .map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(&back, &e.conversation);
        let usage: UsageTotals = serde_json::from_value(doc["usage"].clone())
            .map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(&usage, &e.usage);
        let messages = doc["messages"].as_array().cloned().unwrap_or_default();
        prop_assert_eq!(messages.len(), e.messages.len());
        for (m, j) in e.messages.iter().zip(&messages) {
            let parts: Vec<Part> = serde_json::from_value(j["parts"].clone())
                .map_err(|err| TestCaseError::fail(err.to_string()))?;
            prop_assert_eq!(&parts, &m.message.parts);
            prop_assert_eq!(&j["error"], &serde_json::to_value(&m.error).unwrap_or_default());
            prop_assert_eq!(&j["model"], &serde_json::to_value(&m.model).unwrap_or_default());
            let calls: Vec<StoredToolCall> = serde_json::from_value(j["tool_calls"].clone())
                .map_err(|err| TestCaseError::fail(err.to_string()))?;
            let want: Vec<StoredToolCall> =
                e.tool_calls.iter().filter(|t| t.message == m.id).cloned().collect();
            prop_assert_eq!(calls, want);
        }
    }

    #[test]
    fn markdown_content_cannot_break_the_structure(e in export()) {
        let md = render_markdown(&e);
        let b = scan(&md);
        // Tool results and arguments come back whole, each in its own block.
        let mut want_code = Vec::new();
        for m in &e.messages {
            for p in &m.message.parts {
                match p {
                    Part::ToolCall { arguments, .. } => want_code.push((
                        "json".to_owned(),
                        serde_json::to_string_pretty(arguments).unwrap_or_default(),
                    )),
                    Part::ToolResult { content, .. } => {
                        for c in content {
                            if let ResultPart::Text { text } = c {
                                want_code.push((
                                    "text".to_owned(),
                                    as_lines(text.trim_end_matches(['\n', '\r'])),
                                ));
                            }
                        }
                    }
                    Part::Text { .. } | Part::Image { .. } => {}
                }
            }
        }
        prop_assert!(in_order(&want_code, &b.code), "code blocks {:#?}\nin\n{}", b.code, md);
        // Every message keeps its heading (text parts may add headings of their own).
        let kinds: Vec<&str> = e
            .messages
            .iter()
            .map(|m| {
                let only_results = !m.message.parts.is_empty()
                    && m.message.parts.iter().all(|p| matches!(p, Part::ToolResult { .. }));
                match (m.message.role, only_results) {
                    (Role::User, true) => "## Tool results",
                    (Role::User, false) => "## User",
                    (Role::Assistant, _) => "## Assistant",
                }
            })
            .collect();
        let found: Vec<&str> = b
            .headings
            .iter()
            .filter_map(|h| {
                ["## Tool results", "## User", "## Assistant"]
                    .into_iter()
                    .find(|k| h == k || h.starts_with(&format!("{k} ")))
            })
            .collect();
        prop_assert!(in_order(&kinds, &found), "headings {:?}, want {:?}\n{}", found, kinds, md);
        prop_assert!(b.headings.first().is_some_and(|h| h.starts_with("# ")), "{}", md);
    }

    #[test]
    fn single_line_fields_stay_on_their_line(e in export()) {
        let md = render_markdown(&e);
        let b = scan(&md);
        // The lines that carry single-line fields: headings, tool-call and result labels,
        // call outcomes, errors, image labels. Each must start as the renderer starts it.
        let starts = [
            "# ", "## ", "- ", "> Error: ", "**Tool call `", "**Result of `", "Ran `", "*[image: ",
        ];
        let mut texts = String::new();
        for m in &e.messages {
            for p in &m.message.parts {
                if let Part::Text { text } = p {
                    texts.push_str(text.trim_end());
                    texts.push('\n');
                }
            }
        }
        for line in &b.lines {
            if line.is_empty() || starts.iter().any(|s| line.starts_with(s)) {
                continue;
            }
            // Anything else outside code blocks must be a line of some text part.
            prop_assert!(
                lines(&texts).contains(&line.as_str()),
                "a line no text part has: {:?}\n{}",
                line,
                md
            );
        }
    }
}
