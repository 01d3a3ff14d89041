//! A full disk (issue 11, point 3): each kind of write fails with [`StoreError::Full`], whose
//! message says what happened and what to do, and everything stored before it stays intact and
//! readable, in this process and after reopening the file.
//!
//! SQLite's `max_page_count` on the one writer connection stands in for the disk: past it,
//! SQLite answers `SQLITE_FULL` exactly as it does for `ENOSPC`. Each write carries enough
//! bytes to need new pages, so it cannot fit in free space left in existing ones.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::audit_data::{Actor, AuditContext, AuditKind};
use crate::config::ServerSpec;
use crate::policy_data::Rule;
use crate::transcript::Message;

/// Bytes in each write: several pages' worth.
const BIG: usize = 40 * 1024;

async fn limit_to_current_size(store: &Store) {
    let (pages,): (i64,) = sqlx::query_as("PRAGMA page_count")
        .fetch_one(store.writer())
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "PRAGMA max_page_count = {pages}"
    )))
    .execute(store.writer())
    .await
    .unwrap();
}

async fn lift_limit(store: &Store) {
    sqlx::query("PRAGMA max_page_count = 1073741823")
        .execute(store.writer())
        .await
        .unwrap();
}

fn server(name: &str) -> ServerSpec {
    let mut spec = ServerSpec::test_stdio(name, "/bin/true", &[]);
    if let crate::config::TransportSpec::Stdio(s) = &mut spec.transport {
        s.args = vec!["x".repeat(BIG)];
    }
    spec
}

fn rule(id: &str) -> Rule {
    serde_json::from_value(json!({
        "id": id,
        "effect": "deny",
        "tool": format!("tool_{id}"),
        "note": "n".repeat(BIG),
    }))
    .unwrap()
}

fn audit_entry(n: i64) -> NewAuditEntry {
    NewAuditEntry {
        at_ms: n,
        kind: AuditKind::Config,
        context: AuditContext::default(),
        actor: Actor::User,
        detail: json!({ "n": n, "pad": "a".repeat(BIG) }),
    }
}

/// What the store holds, in a form to compare before and after.
async fn snapshot(store: &Store) -> serde_json::Value {
    let servers: Vec<String> = store
        .list_servers()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id.to_string())
        .collect();
    let rules: Vec<String> = store
        .policy_rules()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.rule.id)
        .collect();
    let mut conversations = Vec::new();
    for c in store
        .list_conversations(&ConversationQuery::default())
        .await
        .unwrap()
        .items
    {
        let texts: Vec<String> = store
            .load_messages(&c.conversation.id)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.message.text().chars().take(20).collect())
            .collect();
        conversations.push(json!({ "title": c.conversation.title, "messages": texts }));
    }
    let report = store.verify_audit().await.unwrap();
    json!({
        "servers": servers,
        "rules": rules,
        "conversations": conversations,
        "audit_rows": report.rows,
        "audit_ok": report.ok,
        "audit_head": report.head,
    })
}

fn assert_full(err: &StoreError) {
    assert!(matches!(err, StoreError::Full { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("disk is full"), "{text}");
    assert!(text.contains("free some space"), "{text}");
    assert!(text.contains("intact"), "{text}");
    // Not SQLite's own words: the person gets the sentence above.
    assert!(!text.contains("database or disk is full"), "{text}");
}

#[tokio::test]
async fn every_kind_of_write_fails_clearly_on_a_full_disk_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.sqlite");
    let store = Store::open(&path).await.unwrap();
    // Something of every kind, stored before the disk fills.
    store.insert_server(&server("before")).await.unwrap();
    store.put_rule(&rule("before")).await.unwrap();
    let c = store.create_conversation("kept").await.unwrap();
    store
        .append_message(
            &c.id,
            &Message::user_text(format!("first {}", "m".repeat(BIG))),
        )
        .await
        .unwrap();
    store
        .append_audit_all(&[audit_entry(1), audit_entry(2)])
        .await
        .unwrap();
    let before = snapshot(&store).await;
    assert_eq!(before["audit_rows"], 2);
    assert_eq!(before["audit_ok"], true);

    // The limit is set again before each write: a write that fails inside a transaction
    // replaces the writer connection (see `keep_writer`), and the limit is per connection.
    limit_to_current_size(&store).await;
    let err = store.insert_server(&server("after")).await.unwrap_err();
    assert_full(&err);
    limit_to_current_size(&store).await;
    let err = store
        .insert_servers(&[server("import-a"), server("import-b")])
        .await
        .unwrap_err();
    assert_full(&err);
    limit_to_current_size(&store).await;
    let err = store
        .append_message(&c.id, &Message::user_text("m".repeat(BIG)))
        .await
        .unwrap_err();
    assert_full(&err);
    limit_to_current_size(&store).await;
    let err = store
        .append_audit_all(&[audit_entry(3), audit_entry(4)])
        .await
        .unwrap_err();
    assert_full(&err);
    limit_to_current_size(&store).await;
    let err = store.put_rule(&rule("after")).await.unwrap_err();
    assert_full(&err);

    // Nothing of the failed writes, everything from before, readable at once.
    assert_eq!(snapshot(&store).await, before);
    assert_eq!(store.quick_check().await.unwrap(), "ok");

    // With space again, the same connection writes, and the chain goes on from where it was.
    lift_limit(&store).await;
    store.insert_server(&server("after")).await.unwrap();
    let rows = store.append_audit_all(&[audit_entry(3)]).await.unwrap();
    assert_eq!(rows[0].id, 3);
    store.close().await;

    // And the file, reopened, holds the same.
    let store = Store::open(&path).await.unwrap();
    let after = snapshot(&store).await;
    assert_eq!(after["servers"], json!(["after", "before"]));
    assert_eq!(after["rules"], before["rules"]);
    assert_eq!(after["conversations"], before["conversations"]);
    assert_eq!(after["audit_rows"], 3);
    assert_eq!(after["audit_ok"], true);
    assert_eq!(store.quick_check().await.unwrap(), "ok");
    store.close().await;
}

#[test]
fn the_messages_name_the_file_when_known() {
    let path = Path::new("/data/switchboard.sqlite");
    let full = StoreError::Full { path: None }.at(path);
    let text = full.to_string();
    assert!(text.contains("/data/switchboard.sqlite"), "{text}");
    assert!(text.contains("disk is full"), "{text}");
    let busy = StoreError::Busy { path: None }.at(path).to_string();
    assert!(busy.contains("/data/switchboard.sqlite"), "{busy}");
    assert!(busy.contains("try again"), "{busy}");
    assert!(!busy.contains("locked"), "{busy}");
    // A file-system error for lack of space around the database reads the same.
    let io = StoreError::Io {
        context: "could not create /data".into(),
        source: std::io::Error::from_raw_os_error(libc::ENOSPC),
    }
    .at(path);
    assert!(matches!(io, StoreError::Full { .. }), "{io:?}");
}
