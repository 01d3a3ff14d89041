//! The schema itself: upgrading a v1 database, no secret-looking columns, indexed hot paths.

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

use super::*;
use crate::store::conversations::messages::{LOAD_VISIBLE, SWEEP_MESSAGES, SWEEP_TOOL_CALLS};
use crate::store::conversations::search::SEARCH;
use crate::store::conversations::{LIST_ACTIVE, LIST_ALL};

async fn pool(path: &std::path::Path, create: bool) -> sqlx::SqlitePool {
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(
            SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(create),
        )
        .await
        .unwrap()
}

async fn versions(pool: &sqlx::SqlitePool) -> Vec<i64> {
    let v: Vec<(i64,)> = sqlx::query_as("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(pool)
        .await
        .unwrap();
    v.into_iter().map(|(v,)| v).collect()
}

async fn servers(pool: &sqlx::SqlitePool) -> Vec<(String, String)> {
    sqlx::query_as("SELECT id, spec_json FROM servers ORDER BY id")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_v1_database_is_backed_up_then_upgraded_keeping_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.sqlite");
    // A database as the previous release left it: only migration 1 applied.
    let v1 = pool(&path, true).await;
    crate::store::MIGRATOR.run_to(1, &v1).await.unwrap();
    sqlx::query(
        "INSERT INTO servers (id, spec_json, created_at, updated_at)
         VALUES ('fs', '{\"id\":\"fs\"}', 1, 2)",
    )
    .execute(&v1)
    .await
    .unwrap();
    assert_eq!(versions(&v1).await, [1]);
    v1.close().await;

    let store = Store::open(&path).await.unwrap();
    // Every migration the binary carries is applied (5 was never shipped), the newest too.
    let all: Vec<i64> = crate::store::MIGRATOR.iter().map(|m| m.version).collect();
    assert_eq!(all[..5], [1, 2, 3, 4, 6]);
    assert!(
        all.contains(&22),
        "the app actor's migration is missing: {all:?}"
    );
    assert_eq!(versions(store.writer()).await, all);
    let kept = vec![("fs".to_owned(), "{\"id\":\"fs\"}".to_owned())];
    assert_eq!(servers(store.writer()).await, kept);
    let c = store.create_conversation("after upgrade").await.unwrap();
    store.append_message(&c.id, &user("works")).await.unwrap();
    store.close().await;

    // The backup was written before the upgrade: version 1, the same servers, no new tables.
    let backup = dir.path().join("sb.sqlite.v1.bak");
    assert!(backup.is_file());
    let old = pool(&backup, false).await;
    assert_eq!(versions(&old).await, [1]);
    assert_eq!(servers(&old).await, kept);
    let (tables,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('conversations', 'messages')",
    )
    .fetch_one(&old)
    .await
    .unwrap();
    assert_eq!(tables, 0);
    old.close().await;

    // Opening again neither migrates nor writes another backup.
    std::fs::remove_file(&backup).unwrap();
    let again = Store::open(&path).await.unwrap();
    assert_eq!(again.load_messages(&c.id).await.unwrap().len(), 1);
    again.close().await;
    assert!(!backup.exists());
}

#[tokio::test]
async fn no_column_is_named_like_a_secret() {
    let (store, _dir) = open().await;
    let cols: Vec<(String, String)> = sqlx::query_as(
        "SELECT t.name, c.name FROM sqlite_master t, pragma_table_info(t.name) c
         WHERE t.type = 'table' ORDER BY t.name, c.cid",
    )
    .fetch_all(store.reader())
    .await
    .unwrap();
    let tables: std::collections::BTreeSet<_> = cols.iter().map(|(t, _)| t.as_str()).collect();
    for t in [
        "conversations",
        "messages",
        "tool_calls",
        "approvals",
        "messages_fts",
    ] {
        assert!(tables.contains(t), "{t} missing from {tables:?}");
    }
    for (table, col) in &cols {
        let lower = col.to_lowercase();
        for bad in ["key", "token", "secret", "password", "credential", "auth"] {
            assert!(
                !lower.contains(bad),
                "{table}.{col} looks like it holds a secret"
            );
        }
    }
}

async fn plan(store: &Store, sql: &str, binds: usize) -> String {
    let explain = format!("EXPLAIN QUERY PLAN {sql}");
    let mut q = sqlx::query_as::<_, (i64, i64, i64, String)>(sqlx::AssertSqlSafe(explain));
    for _ in 0..binds {
        q = q.bind("x");
    }
    let rows = q.fetch_all(store.reader()).await.unwrap();
    rows.into_iter()
        .map(|(_, _, _, d)| d)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn hot_queries_use_their_indexes() {
    let (store, _dir) = open().await;
    let load = plan(&store, LOAD_VISIBLE, 1).await;
    assert!(
        load.contains(
            "SEARCH messages USING INDEX sqlite_autoindex_messages_1 (conversation_id=?)"
        ),
        "{load}"
    );
    assert!(!load.contains("TEMP B-TREE"), "{load}");

    let list = plan(&store, LIST_ACTIVE, 3).await;
    assert!(
        list.contains("USING INDEX conversations_by_activity"),
        "{list}"
    );
    assert!(!list.contains("TEMP B-TREE"), "{list}");
    assert!(!list.contains("SCAN m"), "preview reads by index: {list}");
    // The unfiltered list sorts (the conversations table is small); it must still not scan
    // messages for previews.
    let all = plan(&store, LIST_ALL, 3).await;
    assert!(!all.contains("SCAN m"), "{all}");

    let sweep = plan(&store, SWEEP_MESSAGES, 1).await;
    assert!(sweep.contains("messages_incomplete"), "{sweep}");
    let sweep = plan(&store, SWEEP_TOOL_CALLS, 1).await;
    assert!(sweep.contains("tool_calls_unfinished"), "{sweep}");

    let search = plan(&store, SEARCH, 4).await;
    assert!(search.contains("VIRTUAL TABLE INDEX"), "{search}");
    assert!(
        search.contains("SEARCH m USING INTEGER PRIMARY KEY"),
        "{search}"
    );
}

/// Migration 11 rebuilds the audit table to take `config` entries: rows written before it keep
/// their ids and hashes (the chain still verifies), and the highest id ever issued survives, so
/// a tail cut before the upgrade is still reported.
#[tokio::test]
async fn the_audit_rebuild_keeps_the_chain_and_the_highest_id() {
    use crate::store::{chain_hash, ChainFields, GENESIS_HASH};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.sqlite");
    let v10 = pool(&path, true).await;
    crate::store::MIGRATOR.run_to(10, &v10).await.unwrap();
    let mut prev = GENESIS_HASH.to_owned();
    for id in 1..=3_i64 {
        let detail = format!("{{\"n\":{id}}}");
        let hash = chain_hash(&ChainFields {
            id,
            at: id,
            kind: "policy",
            server: None,
            tool: None,
            conversation: None,
            call_ref: None,
            actor: "user",
            detail_json: &detail,
            prev_hash: &prev,
        });
        sqlx::query(
            "INSERT INTO audit (id, at, kind, actor, detail_json, prev_hash, hash)
             VALUES (?, ?, 'policy', 'user', ?, ?, ?)",
        )
        .bind(id)
        .bind(id)
        .bind(&detail)
        .bind(&prev)
        .bind(&hash)
        .execute(&v10)
        .await
        .unwrap();
        prev = hash;
    }
    v10.close().await;

    // A copy whose last two rows were cut before the upgrade (ids 4 and 5 were issued).
    let cut = dir.path().join("cut.sqlite");
    std::fs::copy(&path, &cut).unwrap();
    let c = pool(&cut, false).await;
    sqlx::query("UPDATE sqlite_sequence SET seq = 5 WHERE name = 'audit'")
        .execute(&c)
        .await
        .unwrap();
    c.close().await;
    let store = Store::open(&cut).await.unwrap();
    let report = store.verify_audit().await.unwrap();
    assert!(
        !report.ok,
        "the cut tail must still show after the rebuild: {report:?}"
    );
    store.close().await;

    let store = Store::open(&path).await.unwrap();
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.rows, 3);
    // Appends continue the chain after the old rows, with the new kind accepted.
    store
        .append_audit_all(&[crate::store::NewAuditEntry {
            at_ms: 4,
            kind: crate::audit_data::AuditKind::Config,
            context: Default::default(),
            actor: crate::audit_data::Actor::User,
            detail: serde_json::json!({"change": "tags", "detail": {"tags": []}}),
        }])
        .await
        .unwrap();
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok && report.rows == 4, "{report:?}");
    let ids: Vec<(i64,)> = sqlx::query_as("SELECT id FROM audit ORDER BY id")
        .fetch_all(store.reader())
        .await
        .unwrap();
    assert_eq!(ids, [(1,), (2,), (3,), (4,)]);
    // Still append-only.
    assert!(sqlx::query("DELETE FROM audit WHERE id = 4")
        .execute(store.writer())
        .await
        .is_err());
    store.close().await;
}
