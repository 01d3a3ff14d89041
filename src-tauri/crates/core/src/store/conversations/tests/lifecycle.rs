//! Conversations and messages from creation to deletion, streaming, the startup sweep, tool
//! calls, usage and bulk import.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::ids::{ServerId, ToolCallRecordId};
use crate::transcript::{StopReason, Usage};

async fn tick() {
    // Activity timestamps are milliseconds; keep orderings unambiguous.
    tokio::time::sleep(Duration::from_millis(3)).await;
}

#[tokio::test]
async fn messages_come_back_in_order_with_their_metadata() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("first").await.unwrap();
    assert_eq!(store.get_conversation(&c.id).await.unwrap().unwrap(), c);
    assert!(store.load_messages(&c.id).await.unwrap().is_empty());

    tick().await;
    let u1 = store.append_message(&c.id, &user("one")).await.unwrap();
    let a1 = answer(&store, &c.id, said("two")).await;
    let u2 = store.append_message(&c.id, &user("three")).await.unwrap();
    let msgs = store.load_messages(&c.id).await.unwrap();
    assert_eq!(
        transcript(&msgs),
        ["user: one", "assistant: two", "user: three"]
    );
    assert_eq!(
        msgs.iter().map(|m| (m.id, m.seq)).collect::<Vec<_>>(),
        [(u1, 1), (a1, 2), (u2, 3)]
    );
    assert_eq!(msgs[0].status, MessageStatus::Complete);
    assert_eq!(msgs[0].provider, None);
    assert_eq!(msgs[1].provider.as_deref(), Some("openai"));
    assert_eq!(msgs[1].model.as_deref(), Some("gpt-x"));
    assert_eq!(msgs[1].stop, Some(StopReason::EndTurn));

    let after = store.get_conversation(&c.id).await.unwrap().unwrap();
    assert!(after.updated_at_ms > c.updated_at_ms);
    assert_eq!(after.created_at_ms, c.created_at_ms);
    assert_eq!(
        (after.provider.as_deref(), after.model.as_deref()),
        (Some("openai"), Some("gpt-x"))
    );

    let missing = ConversationId::random();
    assert!(matches!(
        store.append_message(&missing, &user("x")).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.rename_conversation(&missing, "x").await,
        Err(StoreError::NotFound(_))
    ));
    assert!(store.get_conversation(&missing).await.unwrap().is_none());
}

#[tokio::test]
async fn list_is_paginated_by_activity_with_previews() {
    let (store, _dir) = open().await;
    let a = store.create_conversation("a").await.unwrap();
    tick().await;
    let b = store.create_conversation("b").await.unwrap();
    tick().await;
    let c = store.create_conversation("c").await.unwrap();
    tick().await;
    store
        .append_message(&a.id, &user("hello from a"))
        .await
        .unwrap();
    // An answer of tool calls only has no text: the preview keeps the last text.
    answer(
        &store,
        &a.id,
        vec![Part::ToolCall {
            id: "c1".into(),
            name: "fs__read".into(),
            arguments: json!({}),
        }],
    )
    .await;
    store.rename_conversation(&b.id, "b renamed").await.unwrap();

    let first = store
        .list_conversations(&ConversationQuery {
            limit: 2,
            ..ConversationQuery::default()
        })
        .await
        .unwrap();
    let titles: Vec<_> = first
        .items
        .iter()
        .map(|s| s.conversation.title.as_str())
        .collect();
    // Renaming is not activity: b stays behind c.
    assert_eq!(titles, ["a", "c"]);
    assert_eq!(first.items[0].preview.as_deref(), Some("hello from a"));
    assert_eq!(first.items[1].preview, None);
    let next = first.next.clone().unwrap();
    assert_eq!(next.id, c.id);

    let second = store
        .list_conversations(&ConversationQuery {
            limit: 2,
            after: Some(next),
            ..ConversationQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        second
            .items
            .iter()
            .map(|s| s.conversation.title.as_str())
            .collect::<Vec<_>>(),
        ["b renamed"]
    );
    assert_eq!(second.next, None);

    store.set_conversation_archived(&c.id, true).await.unwrap();
    let ids = |p: ConversationPage| {
        p.items
            .into_iter()
            .map(|s| s.conversation.id)
            .collect::<Vec<_>>()
    };
    let active = store
        .list_conversations(&ConversationQuery::default())
        .await
        .unwrap();
    assert_eq!(ids(active), [a.id.clone(), b.id.clone()]);
    let archived = store
        .list_conversations(&ConversationQuery {
            filter: ArchiveFilter::Archived,
            ..ConversationQuery::default()
        })
        .await
        .unwrap();
    assert!(archived.items[0].conversation.archived);
    assert_eq!(ids(archived), std::slice::from_ref(&c.id));
    let all = store
        .list_conversations(&ConversationQuery {
            filter: ArchiveFilter::All,
            ..ConversationQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(all), [a.id, c.id, b.id]);
}

#[tokio::test]
async fn preview_is_cut_to_preview_chars() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("long").await.unwrap();
    store
        .append_message(&c.id, &user(&"é".repeat(PREVIEW_CHARS * 2)))
        .await
        .unwrap();
    let page = store
        .list_conversations(&ConversationQuery::default())
        .await
        .unwrap();
    let preview = page.items[0].preview.clone().unwrap();
    assert_eq!(preview.chars().count(), PREVIEW_CHARS);
}

#[tokio::test]
async fn delete_cascades_to_messages_tool_calls_approvals_and_the_index() {
    let (store, _dir) = open().await;
    let keep = store.create_conversation("keep").await.unwrap();
    store
        .append_message(&keep.id, &user("walrus kept"))
        .await
        .unwrap();
    let c = store.create_conversation("doomed").await.unwrap();
    store
        .append_message(&c.id, &user("walrus doomed"))
        .await
        .unwrap();
    let a = answer(&store, &c.id, said("walrus answer")).await;
    let call = store
        .record_tool_call(
            a,
            &NewToolCall {
                call_id: "c1",
                server: &ServerId::new("fs").unwrap(),
                tool: "read",
                arguments: &json!({"path": "/tmp"}),
            },
        )
        .await
        .unwrap();
    store
        .record_approval(call, ApprovalDecision::Allow, &DecidedBy::User, None)
        .await
        .unwrap();
    let fork = store.fork_conversation(&c.id, a, None).await.unwrap();
    assert_eq!(store.search("walrus", 10).await.unwrap().len(), 5);

    assert!(store.delete_conversation(&c.id).await.unwrap());
    assert!(!store.delete_conversation(&c.id).await.unwrap());
    assert!(store.get_conversation(&c.id).await.unwrap().is_none());
    assert!(store.load_history(&c.id).await.unwrap().is_empty());
    // Left: keep's message, and the fork's two copies with their call and approval.
    assert_eq!(count(&store, "SELECT COUNT(*) FROM messages").await, 3);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tool_calls").await, 1);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM approvals").await, 1);
    let hits = store.search("walrus", 10).await.unwrap();
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| h.conversation != c.id));
    let fork_now = store.get_conversation(&fork.id).await.unwrap().unwrap();
    assert_eq!(fork_now.forked_from_conversation, None);
    assert_eq!(fork_now.forked_from_message, None);
    assert_eq!(store.load_messages(&fork.id).await.unwrap().len(), 2);

    assert!(store.delete_conversation(&fork.id).await.unwrap());
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tool_calls").await, 0);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM approvals").await, 0);
    assert_fts_consistent(&store).await;
}

#[tokio::test]
async fn checkpoint_then_finish() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("stream").await.unwrap();
    store.append_message(&c.id, &user("tell me")).await.unwrap();
    let id = store
        .begin_assistant_message(&c.id, "anthropic", "claude-x")
        .await
        .unwrap();
    let m = &store.load_messages(&c.id).await.unwrap()[1];
    assert_eq!(
        (m.status, m.message.parts.len()),
        (MessageStatus::Incomplete, 0)
    );

    store
        .checkpoint_assistant_message(id, &said("Draft: once upon a tim"))
        .await
        .unwrap();
    let m = &store.load_messages(&c.id).await.unwrap()[1];
    assert_eq!(m.status, MessageStatus::Incomplete);
    assert_eq!(m.message.text(), "Draft: once upon a tim");
    // Checkpoints are searchable, so a crash leaves the partial answer findable.
    assert_eq!(store.search("draft", 5).await.unwrap().len(), 1);

    let usage = Usage {
        input_tokens: 120,
        output_tokens: 30,
        cached_input_tokens: 100,
    };
    store
        .finish_assistant_message(
            id,
            &said("Once upon a time, a heron."),
            MessageEnd::Complete {
                stop: StopReason::MaxTokens,
            },
            Some(usage),
        )
        .await
        .unwrap();
    let m = &store.load_messages(&c.id).await.unwrap()[1];
    assert_eq!(m.status, MessageStatus::Complete);
    assert_eq!(m.message.text(), "Once upon a time, a heron.");
    assert_eq!(m.usage, Some(usage));
    assert_eq!(m.stop, Some(StopReason::MaxTokens));
    assert_eq!(m.error, None);
    // The index follows the update: the checkpoint's words are gone, the final ones are in.
    assert!(store.search("draft", 5).await.unwrap().is_empty());
    assert_eq!(store.search("heron", 5).await.unwrap().len(), 1);
    assert_fts_consistent(&store).await;

    // A finished answer takes no more writes.
    assert!(matches!(
        store.checkpoint_assistant_message(id, &said("x")).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store
            .finish_assistant_message(id, &said("x"), MessageEnd::Cancelled, None)
            .await,
        Err(StoreError::NotFound(_))
    ));
    // Nor does a user message.
    let u = store.load_messages(&c.id).await.unwrap()[0].id;
    assert!(matches!(
        store.checkpoint_assistant_message(u, &said("x")).await,
        Err(StoreError::NotFound(_))
    ));

    let failed = store
        .begin_assistant_message(&c.id, "anthropic", "claude-x")
        .await
        .unwrap();
    store
        .finish_assistant_message(
            failed,
            &said("partial"),
            MessageEnd::Failed {
                error: "rate limited".into(),
            },
            None,
        )
        .await
        .unwrap();
    let m = &store.load_messages(&c.id).await.unwrap()[2];
    assert_eq!(
        (m.status, m.error.as_deref(), m.stop.as_ref()),
        (MessageStatus::Failed, Some("rate limited"), None)
    );
}

#[tokio::test]
async fn incomplete_answers_become_interrupted_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.sqlite");
    let (c, id, call) = {
        let store = Store::open(&path).await.unwrap();
        let c = store.create_conversation("crash").await.unwrap();
        store.append_message(&c.id, &user("go")).await.unwrap();
        let id = store
            .begin_assistant_message(&c.id, "openai", "gpt-x")
            .await
            .unwrap();
        store
            .checkpoint_assistant_message(id, &said("half an ans"))
            .await
            .unwrap();
        let call = store
            .record_tool_call(
                id,
                &NewToolCall {
                    call_id: "c1",
                    server: &ServerId::new("fs").unwrap(),
                    tool: "read",
                    arguments: &json!({}),
                },
            )
            .await
            .unwrap();
        store.start_tool_call(call).await.unwrap();
        // Dropped without finishing or closing: the process died.
        (c.id, id, call)
    };

    let store = Store::open(&path).await.unwrap();
    let m = &store.load_messages(&c).await.unwrap()[1];
    assert_eq!(m.status, MessageStatus::Incomplete);
    assert_eq!(
        store.mark_interrupted_on_startup().await.unwrap(),
        Recovered {
            messages: 1,
            tool_calls: 1
        }
    );
    let msgs = store.load_messages(&c).await.unwrap();
    assert_eq!(msgs.len(), 2, "nothing is deleted");
    assert_eq!(msgs[1].id, id);
    assert_eq!(msgs[1].status, MessageStatus::Interrupted);
    assert_eq!(msgs[1].message.text(), "half an ans");
    let calls = store.tool_calls(&c).await.unwrap();
    assert_eq!(calls[0].status, ToolCallStatus::Interrupted);
    assert!(calls[0].finished_at_ms.is_some());
    assert_eq!(
        store.mark_interrupted_on_startup().await.unwrap(),
        Recovered::default()
    );

    // The stream that was wrongly swept (another process ran the sweep) can still finish.
    store
        .checkpoint_assistant_message(id, &said("half an answer"))
        .await
        .unwrap();
    assert_eq!(
        store.load_messages(&c).await.unwrap()[1].status,
        MessageStatus::Incomplete
    );
    store
        .finish_assistant_message(id, &said("whole"), MessageEnd::Cancelled, None)
        .await
        .unwrap();
    store
        .finish_tool_call(call, ToolCallEnd::Cancelled, None, true)
        .await
        .unwrap();
    assert_eq!(
        store.load_messages(&c).await.unwrap()[1].status,
        MessageStatus::Cancelled
    );
    assert_eq!(store.quick_check().await.unwrap(), "ok");
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn tool_calls_keep_arguments_full_results_and_decisions() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("tools").await.unwrap();
    store
        .append_message(&c.id, &user("list /tmp"))
        .await
        .unwrap();
    let a = store
        .begin_assistant_message(&c.id, "openai", "gpt-x")
        .await
        .unwrap();
    let fs = ServerId::new("fs").unwrap();
    let args = json!({"path": "/tmp", "depth": 2});
    let call = store
        .record_tool_call(
            a,
            &NewToolCall {
                call_id: "call_1",
                server: &fs,
                tool: "list_dir",
                arguments: &args,
            },
        )
        .await
        .unwrap();
    let denied = store
        .record_tool_call(
            a,
            &NewToolCall {
                call_id: "call_2",
                server: &fs,
                tool: "delete",
                arguments: &json!({"path": "/"}),
            },
        )
        .await
        .unwrap();
    store
        .record_approval(
            call,
            ApprovalDecision::Allow,
            &DecidedBy::Grant {
                grant_id: "g-7".into(),
            },
            None,
        )
        .await
        .unwrap();
    store.start_tool_call(call).await.unwrap();
    assert!(matches!(
        store.start_tool_call(call).await,
        Err(StoreError::NotFound(_))
    ));
    let big = json!({"content": [{"type": "text", "text": "x".repeat(300_000)}]});
    store
        .finish_tool_call(call, ToolCallEnd::Done, Some(&big), false)
        .await
        .unwrap();
    store
        .record_approval(
            denied,
            ApprovalDecision::Deny,
            &DecidedBy::User,
            Some("not the root"),
        )
        .await
        .unwrap();
    store
        .finish_tool_call(denied, ToolCallEnd::Denied, None, true)
        .await
        .unwrap();
    assert!(matches!(
        store
            .finish_tool_call(denied, ToolCallEnd::Done, None, false)
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store
            .record_tool_call(
                MessageId::new(9999),
                &NewToolCall {
                    call_id: "x",
                    server: &fs,
                    tool: "t",
                    arguments: &json!({}),
                },
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store
            .record_approval(
                ToolCallRecordId::new(9999),
                ApprovalDecision::Allow,
                &DecidedBy::Policy,
                None
            )
            .await,
        Err(StoreError::NotFound(_))
    ));

    let calls = store.tool_calls(&c.id).await.unwrap();
    assert_eq!(calls.len(), 2);
    let (one, two) = (&calls[0], &calls[1]);
    assert_eq!(
        (one.id, one.message, one.call_id.as_str()),
        (call, a, "call_1")
    );
    assert_eq!((one.server.as_str(), one.tool.as_str()), ("fs", "list_dir"));
    assert_eq!(one.arguments, args);
    assert_eq!(one.result.as_ref(), Some(&big), "stored uncapped");
    assert_eq!((one.status, one.is_error), (ToolCallStatus::Done, false));
    assert!(one.started_at_ms.is_some() && one.finished_at_ms.is_some());
    assert_eq!(one.approvals.len(), 1);
    assert_eq!(
        one.approvals[0].decided_by,
        DecidedBy::Grant {
            grant_id: "g-7".into()
        }
    );
    assert_eq!((two.status, two.is_error), (ToolCallStatus::Denied, true));
    assert_eq!(two.started_at_ms, None);
    assert_eq!(two.result, None);
    assert_eq!(two.approvals[0].decision, ApprovalDecision::Deny);
    assert_eq!(two.approvals[0].reason.as_deref(), Some("not the root"));
}

#[tokio::test]
async fn usage_totals_count_every_paid_answer_once() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("usage").await.unwrap();
    let u = |i, o, k| Usage {
        input_tokens: i,
        output_tokens: o,
        cached_input_tokens: k,
    };
    let stop = || MessageEnd::Complete {
        stop: StopReason::EndTurn,
    };
    store.append_message(&c.id, &user("q")).await.unwrap();
    let a = store
        .begin_assistant_message(&c.id, "openai", "gpt-x")
        .await
        .unwrap();
    store
        .finish_assistant_message(a, &said("a"), stop(), Some(u(100, 10, 50)))
        .await
        .unwrap();
    // Regenerated: the first answer is superseded but was paid for.
    let b = store
        .regenerate(&c.id, "anthropic", "claude-x")
        .await
        .unwrap();
    store
        .finish_assistant_message(b, &said("b"), stop(), Some(u(200, 20, 0)))
        .await
        .unwrap();
    store.append_message(&c.id, &user("q2")).await.unwrap();
    let d = store
        .begin_assistant_message(&c.id, "openai", "gpt-x")
        .await
        .unwrap();
    store
        .finish_assistant_message(d, &said("d"), stop(), Some(u(300, 30, 250)))
        .await
        .unwrap();

    let totals = store.usage_totals(&c.id).await.unwrap();
    assert_eq!(totals.total, u(600, 60, 300));
    assert_eq!(
        totals.by_model,
        [
            ModelUsage {
                provider: Some("anthropic".into()),
                model: Some("claude-x".into()),
                usage: u(200, 20, 0),
                answers: 1
            },
            ModelUsage {
                provider: Some("openai".into()),
                model: Some("gpt-x".into()),
                usage: u(400, 40, 300),
                answers: 2
            },
        ]
    );
    // A fork copies the answers and their usage, but its totals start at zero.
    let fork = store.fork_conversation(&c.id, d, None).await.unwrap();
    assert_eq!(
        store.load_messages(&fork.id).await.unwrap()[3].usage,
        Some(u(300, 30, 250))
    );
    assert_eq!(
        store.usage_totals(&fork.id).await.unwrap(),
        UsageTotals::default()
    );
}

#[tokio::test]
async fn import_appends_in_order_across_batches() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("bulk").await.unwrap();
    store.append_message(&c.id, &user("before")).await.unwrap();
    let batch: Vec<ImportedMessage> = (0..600)
        .map(|i| ImportedMessage {
            message: if i % 2 == 0 {
                user(&format!("question {i}"))
            } else {
                Message {
                    role: Role::Assistant,
                    parts: said(&format!("answer {i}")),
                }
            },
            status: if i == 599 {
                MessageStatus::Incomplete
            } else {
                MessageStatus::Complete
            },
            provider: None,
            model: None,
            usage: None,
            created_at_ms: 1_000 + i,
        })
        .collect();
    assert_eq!(store.import_messages(&c.id, &batch).await.unwrap(), 600);
    let msgs = store.load_messages(&c.id).await.unwrap();
    assert_eq!(msgs.len(), 601);
    assert!(msgs.iter().zip(1..).all(|(m, seq)| m.seq == seq));
    assert_eq!(msgs[300].message.text(), "answer 299");
    assert_eq!(msgs[300].created_at_ms, 1_299);
    assert_eq!(msgs[600].status, MessageStatus::Interrupted);
    let hits = store.search("question 298", 5).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message, msgs[299].id);
    assert_fts_consistent(&store).await;
}
