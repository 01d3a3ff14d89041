//! Export: exact Markdown and JSON for a fixed conversation, and export from the store.

use serde_json::json;

use super::*;
use crate::ids::{ApprovalId, ServerId, ToolCallRecordId};
use crate::store::conversations::export::iso_utc;
use crate::store::StoreError;
use crate::transcript::{StopReason, Usage};

#[allow(clippy::too_many_lines)] // the fixture conversation, whole
fn sample() -> ConversationExport {
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 5,
        cached_input_tokens: 2,
    };
    let msg = |id: i64, role, parts, status| StoredMessage {
        id: MessageId::new(id),
        seq: id,
        message: Message { role, parts },
        status,
        provider: None,
        model: None,
        usage: None,
        stop: None,
        error: None,
        created_at_ms: 1_700_000_000_000 + id,
        updated_at_ms: 1_700_000_000_000 + id,
        superseded_by: None,
        copied_from: None,
    };
    let mut answer = msg(
        2,
        Role::Assistant,
        vec![
            Part::Text {
                text: "Let me look.".into(),
            },
            Part::ToolCall {
                id: "call_1".into(),
                name: "travel__search".into(),
                arguments: json!({"to": "OSL"}),
            },
        ],
        MessageStatus::Complete,
    );
    answer.provider = Some("openai".into());
    answer.model = Some("gpt-x".into());
    answer.usage = Some(usage);
    answer.stop = Some(StopReason::ToolUse);
    let mut cut = msg(
        4,
        Role::Assistant,
        vec![
            Part::Text {
                text: "Two options:".into(),
            },
            Part::Image {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            },
        ],
        MessageStatus::Failed,
    );
    cut.error = Some("connection\nreset".into());
    ConversationExport {
        conversation: Conversation {
            id: ConversationId::parse("01234567-89ab-4def-8123-456789abcdef").unwrap(),
            title: "Trip\nplanning".into(),
            created_at_ms: 1_700_000_000_000,
            updated_at_ms: 1_700_000_100_000,
            provider: Some("openai".into()),
            model: Some("gpt-x".into()),
            archived: false,
            forked_from_conversation: None,
            forked_from_message: None,
        },
        messages: vec![
            msg(
                1,
                Role::User,
                said("Find flights to Oslo"),
                MessageStatus::Complete,
            ),
            answer,
            msg(
                3,
                Role::User,
                vec![Part::ToolResult {
                    call_id: "call_1".into(),
                    content: vec![ResultPart::Text {
                        text: "3 flights\n```\nSK 4711".into(),
                    }],
                    is_error: false,
                }],
                MessageStatus::Complete,
            ),
            cut,
        ],
        tool_calls: vec![StoredToolCall {
            id: ToolCallRecordId::new(1),
            message: MessageId::new(2),
            call_id: "call_1".into(),
            server: ServerId::new("travel").unwrap(),
            tool: "search".into(),
            arguments: json!({"to": "OSL"}),
            result: Some(json!({"content": [{"type": "text", "text": "3 flights (full)"}]})),
            is_error: false,
            status: ToolCallStatus::Done,
            requested_at_ms: 1_700_000_000_010,
            started_at_ms: Some(1_700_000_000_020),
            finished_at_ms: Some(1_700_000_000_030),
            approvals: vec![StoredApproval {
                id: ApprovalId::new(1),
                decision: ApprovalDecision::Allow,
                decided_by: DecidedBy::User,
                reason: Some("fine".into()),
                decided_at_ms: 1_700_000_000_015,
            }],
        }],
        usage: UsageTotals {
            total: usage,
            by_model: vec![ModelUsage {
                provider: Some("openai".into()),
                model: Some("gpt-x".into()),
                usage,
                answers: 1,
            }],
        },
    }
}

#[test]
fn markdown_snapshot() {
    let expected = r#"# Trip planning

- Conversation: `01234567-89ab-4def-8123-456789abcdef`
- Created: 2023-11-14T22:13:20Z
- Model: openai / gpt-x
- Usage: 10 input tokens (2 cached), 5 output tokens

## User

Find flights to Oslo

## Assistant (openai / gpt-x)

Let me look.

**Tool call `travel__search`** (`call_1`)

Ran `search` on server `travel`: done; allowed by the user (fine).

```json
{
  "to": "OSL"
}
```

## Tool results

**Result of `call_1`**

````text
3 flights
```
SK 4711
````

## Assistant — failed

> Error: connection reset

Two options:

*[image: image/png]*
"#;
    assert_eq!(render_markdown(&sample()), expected);
}

/// Found by the property tests (`tests/props/export.rs`): an answer cut off inside a code block
/// turned the rest of the export into code, and a line break in a tool name, call id or model
/// name started a line of its own (a forged heading).
#[test]
fn markdown_keeps_its_structure_whatever_the_content() {
    let mut e = sample();
    e.messages[0].message.parts = said("Here:\n```rust\nfn cut_off(");
    e.messages[1].model = Some("gpt-x\n\n## User".into());
    if let Part::ToolCall { name, id, .. } = &mut e.messages[1].message.parts[1] {
        *name = "x`**\n\n## Tool results\n".into();
        *id = "call_1\r".into();
    }
    let md = render_markdown(&e);
    assert!(
        md.contains("Here:\n```rust\nfn cut_off(\n```\n\n## Assistant"),
        "{md}"
    );
    assert!(md.contains("## Assistant (openai / gpt-x ## User)"), "{md}");
    assert!(
        md.contains("**Tool call `x`** ## Tool results`** (`call_1`)"),
        "{md}"
    );
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings.len(), 4, "{md}");
}

#[test]
fn json_snapshot() {
    let text = render_json(&sample());
    assert!(
        text.starts_with("{\n  \"format\": \"switchboard.conversation\",\n  \"version\": 1,\n"),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let none = serde_json::Value::Null;
    let usage = json!({"input_tokens": 10, "output_tokens": 5, "cached_input_tokens": 2});
    let plain = |id: i64, parts: serde_json::Value| {
        json!({
            "id": id, "seq": id, "role": "user", "status": "complete", "provider": none,
            "model": none, "created_at_ms": 1_700_000_000_000_i64 + id, "usage": none,
            "stop_reason": none, "error": none, "parts": parts, "tool_calls": []
        })
    };
    let answer = json!({
        "id": 2, "seq": 2, "role": "assistant", "status": "complete",
        "provider": "openai", "model": "gpt-x", "created_at_ms": 1_700_000_000_002_i64,
        "usage": usage, "stop_reason": "tool_use", "error": none,
        "parts": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_call", "id": "call_1", "name": "travel__search",
             "arguments": {"to": "OSL"}}
        ],
        "tool_calls": [{
            "id": 1, "message": 2, "call_id": "call_1", "server": "travel",
            "tool": "search", "arguments": {"to": "OSL"},
            "result": {"content": [{"type": "text", "text": "3 flights (full)"}]},
            "is_error": false, "status": "done",
            "requested_at_ms": 1_700_000_000_010_i64,
            "started_at_ms": 1_700_000_000_020_i64,
            "finished_at_ms": 1_700_000_000_030_i64,
            "approvals": [{
                "id": 1, "decision": "allow", "decided_by": {"by": "user"},
                "reason": "fine", "decided_at_ms": 1_700_000_000_015_i64
            }]
        }]
    });
    assert_eq!(
        doc,
        json!({
            "format": "switchboard.conversation",
            "version": 1,
            "conversation": {
                "id": "01234567-89ab-4def-8123-456789abcdef",
                "title": "Trip\nplanning",
                "created_at_ms": 1_700_000_000_000_i64,
                "updated_at_ms": 1_700_000_100_000_i64,
                "provider": "openai",
                "model": "gpt-x",
                "archived": false,
                "forked_from_conversation": none,
                "forked_from_message": none
            },
            "usage": {
                "total": usage,
                "by_model": [{"provider": "openai", "model": "gpt-x", "usage": usage, "answers": 1}]
            },
            "messages": [
                plain(1, json!([{"type": "text", "text": "Find flights to Oslo"}])),
                answer,
                plain(3, json!([{
                    "type": "tool_result", "call_id": "call_1", "is_error": false,
                    "content": [{"type": "text", "text": "3 flights\n```\nSK 4711"}]
                }])),
                {
                    "id": 4, "seq": 4, "role": "assistant", "status": "failed",
                    "provider": none, "model": none, "created_at_ms": 1_700_000_000_004_i64,
                    "usage": none, "stop_reason": none, "error": "connection\nreset",
                    "parts": [
                        {"type": "text", "text": "Two options:"},
                        {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="}
                    ],
                    "tool_calls": []
                }
            ]
        })
    );
}

#[tokio::test]
async fn export_from_the_store_shows_the_visible_branch_with_full_results() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("export").await.unwrap();
    let first = store
        .append_message(&c.id, &user("first try"))
        .await
        .unwrap();
    answer(&store, &c.id, said("old answer")).await;
    store
        .edit_and_resend(&c.id, first, &user("second try"))
        .await
        .unwrap();
    let a = store
        .begin_assistant_message(&c.id, "openai", "gpt-x")
        .await
        .unwrap();
    let call = store
        .record_tool_call(
            a,
            &NewToolCall {
                call_id: "call_9",
                server: &ServerId::new("fs").unwrap(),
                tool: "read",
                arguments: &json!({"path": "/a"}),
            },
        )
        .await
        .unwrap();
    store
        .record_approval(call, ApprovalDecision::Deny, &DecidedBy::Policy, Some("no"))
        .await
        .unwrap();
    let full = json!({"text": "y".repeat(100_000)});
    store
        .finish_tool_call(call, ToolCallEnd::Denied, Some(&full), true)
        .await
        .unwrap();
    store
        .finish_assistant_message(
            a,
            &[Part::ToolCall {
                id: "call_9".into(),
                name: "fs__read".into(),
                arguments: json!({"path": "/a"}),
            }],
            MessageEnd::Complete {
                stop: StopReason::ToolUse,
            },
            Some(Usage {
                input_tokens: 7,
                output_tokens: 3,
                cached_input_tokens: 0,
            }),
        )
        .await
        .unwrap();

    let doc: serde_json::Value =
        serde_json::from_str(&store.export_json(&c.id).await.unwrap()).unwrap();
    let msgs = doc["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2, "superseded messages are not exported");
    assert_eq!(msgs[0]["parts"][0]["text"], "second try");
    assert_eq!(msgs[1]["tool_calls"][0]["result"], full);
    assert_eq!(
        msgs[1]["tool_calls"][0]["approvals"][0]["decided_by"]["by"],
        "policy"
    );
    assert_eq!(doc["usage"]["total"]["input_tokens"], 7);

    let md = store.export_markdown(&c.id).await.unwrap();
    assert!(md.starts_with("# export\n"), "{md}");
    assert!(md.contains("second try") && !md.contains("first try") && !md.contains("old answer"));
    assert!(md.contains("Ran `read` on server `fs`: denied (error); denied by the policy (no)."));
    assert!(
        !md.contains("yyyy"),
        "Markdown shows what the model saw, not the full result"
    );

    assert!(matches!(
        store.export_markdown(&ConversationId::random()).await,
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn utc_timestamps() {
    assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(iso_utc(1_700_000_000_000), "2023-11-14T22:13:20Z");
    assert_eq!(iso_utc(951_782_400_999), "2000-02-29T00:00:00Z");
    assert_eq!(iso_utc(-1), "1969-12-31T23:59:59Z");
    assert_eq!(iso_utc(4_102_444_800_000), "2100-01-01T00:00:00Z");
}
