//! Fork, edit-and-resend and regenerate: history is kept, the visible branch is right.

use serde_json::json;

use super::*;
use crate::ids::ServerId;

/// u1 a1 u2 a2 u3 a3, returning the ids in order.
async fn six(store: &Store, c: &ConversationId) -> Vec<MessageId> {
    let mut ids = Vec::new();
    for i in 1..=3 {
        ids.push(
            store
                .append_message(c, &user(&format!("u{i}")))
                .await
                .unwrap(),
        );
        ids.push(answer(store, c, said(&format!("a{i}"))).await);
    }
    ids
}

#[tokio::test]
async fn fork_copies_exactly_the_prefix() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("source").await.unwrap();
    let ids = six(&store, &c.id).await;
    let call = store
        .record_tool_call(
            ids[1],
            &NewToolCall {
                call_id: "c1",
                server: &ServerId::new("fs").unwrap(),
                tool: "read",
                arguments: &json!({"p": 1}),
            },
        )
        .await
        .unwrap();
    store
        .record_approval(call, ApprovalDecision::Allow, &DecidedBy::User, Some("ok"))
        .await
        .unwrap();
    let before = store.load_history(&c.id).await.unwrap();

    let fork = store
        .fork_conversation(&c.id, ids[3], Some("what if"))
        .await
        .unwrap();
    assert_eq!(fork.title, "what if");
    assert_eq!(fork.forked_from_conversation.as_ref(), Some(&c.id));
    assert_eq!(fork.forked_from_message, Some(ids[3]));
    assert_eq!(
        store.get_conversation(&fork.id).await.unwrap().unwrap(),
        fork
    );

    let copied = store.load_messages(&fork.id).await.unwrap();
    assert_eq!(
        transcript(&copied),
        ["user: u1", "assistant: a1", "user: u2", "assistant: a2"]
    );
    for (copy, orig) in copied.iter().zip(&before) {
        assert_ne!(copy.id, orig.id);
        assert_eq!(copy.copied_from, Some(orig.id));
        assert_eq!(copy.seq, orig.seq);
        assert_eq!(copy.message, orig.message);
        assert_eq!(copy.status, orig.status);
        assert_eq!(copy.stop, orig.stop);
        assert_eq!(copy.created_at_ms, orig.created_at_ms);
        assert_eq!((&copy.provider, &copy.model), (&orig.provider, &orig.model));
    }
    let calls = store.tool_calls(&fork.id).await.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].message, copied[1].id);
    assert_eq!(calls[0].arguments, json!({"p": 1}));
    assert_eq!(calls[0].approvals[0].reason.as_deref(), Some("ok"));
    assert_ne!(calls[0].id, call);

    // The source is untouched, and the fork grows on its own.
    assert_eq!(store.load_history(&c.id).await.unwrap(), before);
    store.append_message(&fork.id, &user("u3'")).await.unwrap();
    assert_eq!(store.load_messages(&fork.id).await.unwrap()[4].seq, 5);
    assert_eq!(store.load_messages(&c.id).await.unwrap().len(), 6);

    // A message of another conversation is not a fork point.
    assert!(matches!(
        store.fork_conversation(&fork.id, ids[0], None).await,
        Err(StoreError::NotFound(_))
    ));
    let plain = store.fork_conversation(&c.id, ids[0], None).await.unwrap();
    assert_eq!(plain.title, "source");
    assert_eq!(
        transcript(&store.load_messages(&plain.id).await.unwrap()),
        ["user: u1"]
    );
}

#[tokio::test]
async fn edit_and_resend_supersedes_the_rest_and_keeps_it() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("edit").await.unwrap();
    let ids = six(&store, &c.id).await;

    let edited = store
        .edit_and_resend(&c.id, ids[2], &user("u2 edited"))
        .await
        .unwrap();
    let visible = store.load_messages(&c.id).await.unwrap();
    assert_eq!(
        transcript(&visible),
        ["user: u1", "assistant: a1", "user: u2 edited"]
    );
    assert_eq!(visible[2].id, edited);
    assert_eq!(visible[2].seq, 7);

    let history = store.load_history(&c.id).await.unwrap();
    assert_eq!(history.len(), 7);
    let superseded: Vec<_> = history
        .iter()
        .filter(|m| m.superseded_by.is_some())
        .map(|m| (m.id, m.superseded_by))
        .collect();
    assert_eq!(
        superseded,
        [
            (ids[2], Some(edited)),
            (ids[3], Some(edited)),
            (ids[4], Some(edited)),
            (ids[5], Some(edited))
        ]
    );
    // Search shows the visible branch only.
    assert!(store.search("a3", 5).await.unwrap().is_empty());
    assert_eq!(store.search("edited", 5).await.unwrap().len(), 1);

    let a = answer(&store, &c.id, said("a2 again")).await;
    assert_eq!(
        transcript(&store.load_messages(&c.id).await.unwrap()),
        [
            "user: u1",
            "assistant: a1",
            "user: u2 edited",
            "assistant: a2 again"
        ]
    );

    // Old branches can still be forked, as they were.
    let old = store.fork_conversation(&c.id, ids[4], None).await.unwrap();
    assert_eq!(
        transcript(&store.load_messages(&old.id).await.unwrap()),
        [
            "user: u1",
            "assistant: a1",
            "user: u2",
            "assistant: a2",
            "user: u3"
        ]
    );
    let at_edit = store.fork_conversation(&c.id, edited, None).await.unwrap();
    assert_eq!(
        transcript(&store.load_messages(&at_edit.id).await.unwrap()),
        ["user: u1", "assistant: a1", "user: u2 edited"]
    );
    let new = store.fork_conversation(&c.id, a, None).await.unwrap();
    assert_eq!(
        transcript(&store.load_messages(&new.id).await.unwrap()),
        [
            "user: u1",
            "assistant: a1",
            "user: u2 edited",
            "assistant: a2 again"
        ]
    );

    // Only visible messages of this conversation can be edited.
    assert!(matches!(
        store.edit_and_resend(&c.id, ids[3], &user("x")).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.edit_and_resend(&old.id, a, &user("x")).await,
        Err(StoreError::NotFound(_))
    ));
    assert_fts_consistent(&store).await;
}

#[tokio::test]
async fn regenerate_supersedes_the_whole_last_turn() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("regen").await.unwrap();
    assert!(matches!(
        store.regenerate(&c.id, "openai", "gpt-x").await,
        Err(StoreError::NotFound(_))
    ));
    store.append_message(&c.id, &user("u1")).await.unwrap();
    answer(&store, &c.id, said("a1")).await;
    let u2 = store.append_message(&c.id, &user("u2")).await.unwrap();
    // The turn: a tool call, its result, the final answer.
    let call = answer(
        &store,
        &c.id,
        vec![Part::ToolCall {
            id: "c1".into(),
            name: "fs__read".into(),
            arguments: json!({}),
        }],
    )
    .await;
    let result = store
        .append_message(&c.id, &tool_results("c1", "file body"))
        .await
        .unwrap();
    let last = answer(&store, &c.id, said("a2")).await;

    let fresh = store
        .regenerate(&c.id, "anthropic", "claude-x")
        .await
        .unwrap();
    let visible = store.load_messages(&c.id).await.unwrap();
    assert_eq!(
        transcript(&visible),
        ["user: u1", "assistant: a1", "user: u2", "assistant: "]
    );
    assert_eq!(visible[3].id, fresh);
    assert_eq!(visible[3].status, MessageStatus::Incomplete);
    assert_eq!(visible[3].provider.as_deref(), Some("anthropic"));
    let conv = store.get_conversation(&c.id).await.unwrap().unwrap();
    assert_eq!(conv.model.as_deref(), Some("claude-x"));

    let history = store.load_history(&c.id).await.unwrap();
    let gone: Vec<_> = history
        .iter()
        .filter(|m| m.superseded_by == Some(fresh))
        .map(|m| m.id)
        .collect();
    assert_eq!(gone, [call, result, last]);
    assert!(history
        .iter()
        .any(|m| m.id == u2 && m.superseded_by.is_none()));

    // Regenerating again replaces only the new answer.
    let again = store.regenerate(&c.id, "openai", "gpt-x").await.unwrap();
    let history = store.load_history(&c.id).await.unwrap();
    assert_eq!(
        history
            .iter()
            .find(|m| m.id == fresh)
            .unwrap()
            .superseded_by,
        Some(again)
    );
    assert_eq!(
        history.iter().find(|m| m.id == last).unwrap().superseded_by,
        Some(fresh),
        "earlier supersessions stay as they were"
    );
    assert_eq!(store.load_messages(&c.id).await.unwrap().len(), 4);

    // With nothing after the last question, regenerate just answers it again.
    let d = store.create_conversation("unanswered").await.unwrap();
    store.append_message(&d.id, &user("q")).await.unwrap();
    store.regenerate(&d.id, "openai", "gpt-x").await.unwrap();
    assert_eq!(store.load_history(&d.id).await.unwrap().len(), 2);
}
