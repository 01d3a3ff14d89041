//! Full-text search: what is indexed, ranking, snippets, hostile input, staying in sync.

use serde_json::json;

use super::*;
use crate::transcript::StopReason;

#[tokio::test]
async fn fts5_is_compiled_in() {
    let (store, _dir) = open().await;
    let (fts5,): (i64,) = sqlx::query_as("SELECT sqlite_compileoption_used('ENABLE_FTS5')")
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(fts5, 1);
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'messages_fts'"
        )
        .await,
        1
    );
}

#[tokio::test]
async fn finds_words_in_text_parts_only_ranked_with_snippets() {
    let (store, _dir) = open().await;
    let zoo = store.create_conversation("zoo").await.unwrap();
    let m = store
        .append_message(
            &zoo.id,
            &user("The zebra crossed the road; nobody expected a zebra there."),
        )
        .await
        .unwrap();
    let once = answer(
        &store,
        &zoo.id,
        vec![
            Part::Text {
                text: "A zebra is a horse in pyjamas, mostly harmless and fond of long walks \
                       across the savanna when the grass is tall and the lions are asleep."
                    .into(),
            },
            Part::ToolCall {
                id: "c1".into(),
                name: "zoo__find".into(),
                arguments: json!({"animal": "giraffe"}),
            },
        ],
    )
    .await;
    store
        .append_message(&zoo.id, &tool_results("c1", "an okapi was found"))
        .await
        .unwrap();
    let other = store.create_conversation("cafés").await.unwrap();
    let cafe = store
        .append_message(&other.id, &user("Meet me at the café, naïvely early"))
        .await
        .unwrap();

    let hits = store.search("zebra", 10).await.unwrap();
    assert_eq!(
        hits.iter().map(|h| h.message).collect::<Vec<_>>(),
        [m, once],
        "two mentions in a short message rank first"
    );
    assert!(hits[0].rank < hits[1].rank);
    assert_eq!(hits[0].conversation, zoo.id);
    assert_eq!(hits[0].title, "zoo");
    assert_eq!(
        hits[0].snippet,
        "The \u{2}zebra\u{3} crossed the road; nobody expected a \u{2}zebra\u{3} there."
    );
    assert!(
        hits[1].snippet.starts_with("A \u{2}zebra\u{3} is a horse")
            && hits[1].snippet.ends_with('…'),
        "{}",
        hits[1].snippet
    );

    // Tool arguments and tool results are not searchable text.
    assert!(store.search("giraffe", 10).await.unwrap().is_empty());
    assert!(store.search("okapi", 10).await.unwrap().is_empty());
    assert!(store.search("zoo__find", 10).await.unwrap().is_empty());

    // Diacritics fold, every word must match, the last word is a prefix.
    assert_eq!(store.search("cafe", 10).await.unwrap()[0].message, cafe);
    assert_eq!(store.search("NAIVELY", 10).await.unwrap()[0].message, cafe);
    assert_eq!(store.search("zebra road", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("zeb", 10).await.unwrap().len(), 2);
    assert!(store.search("zebra okapi", 10).await.unwrap().is_empty());
    assert_eq!(store.search("zebra", 1).await.unwrap().len(), 1);
    assert!(store.search("   ", 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn hostile_queries_neither_fail_nor_act_as_syntax() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("syntax").await.unwrap();
    store
        .append_message(
            &c.id,
            &user("near zebra, not \"quoted\" text and a-b (parens)"),
        )
        .await
        .unwrap();
    store
        .append_message(&c.id, &user("unrelated"))
        .await
        .unwrap();
    let long = "zebra ".repeat(5_000);
    let hostile = [
        "\"",
        "\"\"",
        "\"zebra",
        "zebra\"",
        "*",
        "zebra*",
        "-",
        "-zebra",
        "zebra -quoted",
        "NEAR",
        "NEAR(zebra quoted)",
        "NEAR(zebra quoted, 2)",
        "zebra NEAR/2 quoted",
        "(",
        ")",
        "((zebra",
        "zebra)",
        "AND",
        "OR",
        "NOT",
        "zebra OR",
        "zebra NOT quoted",
        "^zebra",
        "text:zebra",
        "messages_fts:zebra",
        "{text}: zebra",
        "+",
        "'",
        "\\",
        "\u{0}",
        "zebra\u{0}",
        "\u{2}\u{3}",
        "💥",
        ";DROP TABLE messages;--",
        long.as_str(),
    ];
    for q in hostile {
        let res = store.search(q, 10).await;
        assert!(res.is_ok(), "{q:?}: {res:?}");
    }
    // Operators are words: the search for "zebra NOT quoted" requires all three words.
    assert_eq!(store.search("zebra NOT quoted", 10).await.unwrap().len(), 1);
    assert_eq!(
        store.search("zebra OR unrelated", 10).await.unwrap().len(),
        0
    );
    assert_eq!(store.search("-zebra", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("\"quoted\"", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("(parens", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("NEAR(zebra", 10).await.unwrap().len(), 1);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM messages").await, 2);
}

#[tokio::test]
async fn index_follows_updates_deletes_and_empty_text() {
    let (store, _dir) = open().await;
    let c = store.create_conversation("sync").await.unwrap();
    let id = store
        .begin_assistant_message(&c.id, "p", "m")
        .await
        .unwrap();
    // Empty answers are not indexed at all.
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM messages_fts_docsize").await,
        0
    );
    store
        .checkpoint_assistant_message(id, &said("alpha"))
        .await
        .unwrap();
    store
        .checkpoint_assistant_message(id, &said("alpha beta"))
        .await
        .unwrap();
    store.checkpoint_assistant_message(id, &[]).await.unwrap();
    assert!(store.search("alpha", 5).await.unwrap().is_empty());
    store
        .finish_assistant_message(
            id,
            &said("gamma"),
            MessageEnd::Complete {
                stop: StopReason::EndTurn,
            },
            None,
        )
        .await
        .unwrap();
    assert!(store.search("beta", 5).await.unwrap().is_empty());
    assert_eq!(store.search("gamma", 5).await.unwrap()[0].message, id);
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM messages_fts_docsize").await,
        1
    );
    assert_fts_consistent(&store).await;

    store.delete_conversation(&c.id).await.unwrap();
    assert!(store.search("gamma", 5).await.unwrap().is_empty());
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM messages_fts_docsize").await,
        0
    );
    assert_fts_consistent(&store).await;
}
