//! Unit tests of the audit chain: appends, verification against edits, deletions and
//! reordering made with raw SQL, paging, export and the size guard. Entries are built here as
//! rows, not from `approval::audit`'s events (store does not depend on approval); that rows
//! reach the table redacted is tested there.

use serde_json::json;

use super::*;
use crate::audit_data::CallRef;
use crate::ids::{ServerId, ToolRef};
use crate::store::PolicyRows;

async fn open() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
    (store, dir)
}

fn ctx(call: &CallRef) -> AuditContext {
    AuditContext {
        call_ref: Some(call.clone()),
        ..AuditContext::for_tool(&ToolRef {
            server: ServerId::new("fs").unwrap(),
            tool: "read_file".into(),
        })
    }
}

/// A row of `call` as the system's "started" entry makes it.
fn started(call: &CallRef, at_ms: i64) -> NewAuditEntry {
    NewAuditEntry {
        at_ms,
        kind: AuditKind::Started,
        context: ctx(call),
        actor: Actor::System,
        detail: json!({}),
    }
}

/// Appends `n` entries of one call: proposed, decided, started, finished, ...
async fn fill(store: &Store, n: usize) -> Vec<AuditEntry> {
    let call = CallRef::random();
    let mut out = Vec::new();
    for i in 0..n {
        let at_ms = 1_000 + i as i64;
        let (kind, actor, detail) = match i % 4 {
            0 => (
                AuditKind::Proposed,
                Actor::User,
                json!({"request": "tool", "arguments": {"path": format!("/tmp/{i}")}}),
            ),
            1 => (
                AuditKind::Decided,
                Actor::Policy {
                    rule: Some("r1".into()),
                },
                json!({"decision": "allow", "reason": null}),
            ),
            2 => (AuditKind::Started, Actor::System, json!({})),
            _ => (
                AuditKind::Finished,
                Actor::System,
                json!({"result_bytes": 7, "duration_ms": 7, "is_error": false}),
            ),
        };
        let e = NewAuditEntry {
            at_ms,
            kind,
            context: ctx(&call),
            actor,
            detail,
        };
        out.push(store.append_audit(&e).await.unwrap());
    }
    out
}

async fn raw(store: &Store, sql: &'static str) {
    sqlx::query(sql).execute(store.writer()).await.unwrap();
}

async fn untrigger(store: &Store) {
    raw(store, "DROP TRIGGER audit_no_update").await;
    raw(store, "DROP TRIGGER audit_no_delete").await;
}

fn bad(r: &VerifyReport) -> (i64, Tamper) {
    let b = r.first_bad.clone().unwrap();
    assert!(!r.ok);
    (b.id, b.why)
}

#[tokio::test]
async fn appends_form_a_chain_that_verifies() {
    let (store, _dir) = open().await;
    let empty = store.verify_audit().await.unwrap();
    assert!(empty.ok && empty.rows == 0 && empty.head.is_none());
    let rows = fill(&store, 8).await;
    assert_eq!(
        rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        (1..=8).collect::<Vec<_>>()
    );
    assert_eq!(rows[0].prev_hash, GENESIS_HASH);
    for w in rows.windows(2) {
        assert_eq!(w[1].prev_hash, w[0].hash);
    }
    for r in &rows {
        assert_eq!(r.computed_hash(), r.hash);
    }
    assert_eq!(rows[1].actor, "policy:r1");
    let report = store.verify_audit().await.unwrap();
    assert_eq!(
        report,
        VerifyReport {
            rows: 8,
            ok: true,
            first_bad: None,
            head: Some(rows[7].hash.clone()),
        }
    );
}

#[tokio::test]
async fn concurrent_appends_never_fork_the_chain() {
    let (store, _dir) = open().await;
    let call = CallRef::random();
    let appends = (0..40).map(|i| {
        let store = store.clone();
        let e = started(&call, i);
        async move { store.append_audit(&e).await.unwrap() }
    });
    futures::future::join_all(appends).await;
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.rows, 40);
}

#[tokio::test]
async fn the_table_refuses_updates_and_deletes() {
    let (store, _dir) = open().await;
    fill(&store, 2).await;
    for sql in [
        "UPDATE audit SET detail_json = '{}' WHERE id = 1",
        "DELETE FROM audit WHERE id = 2",
    ] {
        let err = sqlx::query(sql).execute(store.writer()).await.unwrap_err();
        assert!(err.to_string().contains("append-only"), "{err}");
    }
    assert!(store.verify_audit().await.unwrap().ok);
}

#[tokio::test]
async fn an_edited_row_is_named() {
    let (store, _dir) = open().await;
    fill(&store, 6).await;
    untrigger(&store).await;
    raw(
        &store,
        r#"UPDATE audit SET detail_json = '{"decision":"deny"}' WHERE id = 3"#,
    )
    .await;
    let report = store.verify_audit().await.unwrap();
    assert_eq!(bad(&report), (3, Tamper::Edited));
    assert!(report.head.is_none());
}

#[tokio::test]
async fn a_rehashed_edit_breaks_the_next_link() {
    let (store, _dir) = open().await;
    let rows = fill(&store, 5).await;
    untrigger(&store).await;
    // The tamperer edits row 2 and gives it a hash that matches its new contents.
    let mut forged = rows[1].clone();
    forged.actor = "user".into();
    forged.hash = forged.computed_hash();
    sqlx::query("UPDATE audit SET actor = ?, hash = ? WHERE id = 2")
        .bind(&forged.actor)
        .bind(&forged.hash)
        .execute(store.writer())
        .await
        .unwrap();
    assert_eq!(
        bad(&store.verify_audit().await.unwrap()),
        (3, Tamper::Unlinked)
    );
}

#[tokio::test]
async fn deleted_rows_are_found() {
    let (store, _dir) = open().await;
    fill(&store, 6).await;
    untrigger(&store).await;
    raw(&store, "DELETE FROM audit WHERE id IN (3, 4)").await;
    assert_eq!(
        bad(&store.verify_audit().await.unwrap()),
        (5, Tamper::Missing { from: 3, to: 4 })
    );

    // A cut tail is found too, before and after the next append.
    let (store, _dir) = open().await;
    fill(&store, 4).await;
    untrigger(&store).await;
    raw(&store, "DELETE FROM audit WHERE id = 4").await;
    assert_eq!(
        bad(&store.verify_audit().await.unwrap()),
        (4, Tamper::Truncated { highest: 4 })
    );
    fill(&store, 1).await;
    assert_eq!(
        bad(&store.verify_audit().await.unwrap()),
        (5, Tamper::Missing { from: 4, to: 4 })
    );

    // The first row gone: the chain no longer starts at 1.
    let (store, _dir) = open().await;
    fill(&store, 3).await;
    untrigger(&store).await;
    raw(&store, "DELETE FROM audit WHERE id = 1").await;
    assert_eq!(
        bad(&store.verify_audit().await.unwrap()),
        (2, Tamper::Missing { from: 1, to: 1 })
    );
}

#[tokio::test]
async fn reordered_rows_are_found() {
    let (store, _dir) = open().await;
    fill(&store, 4).await;
    untrigger(&store).await;
    // Swap the contents of rows 2 and 3 (ids stay in place).
    raw(&store, "UPDATE audit SET id = -2 WHERE id = 2").await;
    raw(&store, "UPDATE audit SET id = 2 WHERE id = 3").await;
    raw(&store, "UPDATE audit SET id = 3 WHERE id = -2").await;
    assert_eq!(
        bad(&store.verify_audit().await.unwrap()),
        (2, Tamper::Edited)
    );
}

#[tokio::test]
async fn pages_newest_first_with_search() {
    let (store, _dir) = open().await;
    fill(&store, 9).await;
    let p1 = store
        .audit_page(&AuditQuery {
            limit: 4,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        p1.entries.iter().map(|e| e.id).collect::<Vec<_>>(),
        [9, 8, 7, 6]
    );
    assert_eq!(p1.next_before, Some(6));
    let p3 = store
        .audit_page(&AuditQuery {
            limit: 4,
            before: Some(2),
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(p3.entries.len(), 1);
    assert_eq!(p3.next_before, None);

    let find = |s: &str| {
        let store = store.clone();
        let q = AuditQuery {
            search: Some(s.into()),
            ..AuditQuery::default()
        };
        async move {
            store
                .audit_page(&q)
                .await
                .unwrap()
                .entries
                .into_iter()
                .map(|e| e.id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(find("DECIDED").await, [6, 2]);
    assert_eq!(find("/tmp/8").await, [9]);
    assert_eq!(find("read_file").await.len(), 9);
    assert_eq!(find("policy:r1").await, [6, 2]);
    // LIKE wildcards are literal.
    assert!(find("%").await.is_empty());
    assert!(find("read%file").await.is_empty());
    assert_eq!(find("  ").await.len(), 9);
}

#[tokio::test]
async fn export_round_trips_and_verifies_on_its_own() {
    let (store, _dir) = open().await;
    let rows = fill(&store, 7).await;
    let mut out = Vec::new();
    assert_eq!(store.export_audit_jsonl(&mut out).await.unwrap(), 7);
    let text = String::from_utf8(out).unwrap();
    let back: Vec<AuditEntry> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(back, rows);
    let mut prev = GENESIS_HASH.to_owned();
    for e in &back {
        assert_eq!(e.prev_hash, prev);
        assert_eq!(e.computed_hash(), e.hash);
        prev = e.hash.clone();
    }
}

#[tokio::test]
async fn oversized_details_are_replaced_by_a_marker() {
    let (store, _dir) = open().await;
    let e = NewAuditEntry {
        at_ms: 1,
        kind: AuditKind::Policy,
        context: AuditContext::default(),
        actor: Actor::User,
        detail: json!({"blob": "x".repeat(DETAIL_MAX * 2)}),
    };
    let row = store.append_audit(&e).await.unwrap();
    assert!(row.detail_json.len() < 100);
    assert_eq!(row.detail()["truncated"], true);
    assert_eq!(row.server, None);
    assert!(store.verify_audit().await.unwrap().ok);
}

/// Entries of one call, for the guarded-append tests.
fn call_entries(n: usize) -> Vec<NewAuditEntry> {
    let call = CallRef::random();
    (0..n).map(|i| started(&call, i as i64)).collect()
}

/// A transactional append that returns its stamp and the policy rows it read.
async fn refresh(store: &Store, n: usize) -> Refreshed {
    let entries = call_entries(n);
    store.append_audit_refreshing(|_| entries).await.unwrap()
}

#[tokio::test]
async fn guarded_appends_chain_on_while_nothing_else_writes() {
    let (store, _dir) = open().await;
    let first = refresh(&store, 2).await;
    assert_eq!(first.rows.len(), 2);
    let mut stamp = first.stamp.expect("a stamp after an append");
    for _ in 0..5 {
        let (rows, next) = store
            .append_audit_guarded(&call_entries(3), &stamp)
            .await
            .unwrap()
            .expect("nothing changed, so the guarded append goes in");
        assert_eq!(rows.len(), 3);
        stamp = next;
    }
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.rows, 17);
}

#[tokio::test]
async fn a_guarded_append_refuses_after_another_connection_commits() {
    let (store, dir) = open().await;
    let stamp = refresh(&store, 1).await.stamp.unwrap();
    // Another process appends to the same file (the CLI next to the app).
    let other = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
    fill(&other, 2).await;
    let stale = store
        .append_audit_guarded(&call_entries(1), &stamp)
        .await
        .unwrap();
    assert!(stale.is_none(), "linked to a stale head");
    // The transactional path links to the other process's head.
    let again = refresh(&store, 1).await;
    assert_eq!(again.rows[0].id, 4);
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok && report.rows == 4, "{report:?}");
    other.close().await;
}

#[tokio::test]
async fn a_guarded_append_refuses_after_any_other_write_on_its_connection() {
    let (store, _dir) = open().await;
    let stamp = refresh(&store, 1).await.stamp.unwrap();
    // A rule written through the same (single) writer connection: data_version cannot see it.
    store.record_rule_hit("some-rule", None).await.unwrap();
    assert!(store
        .append_audit_guarded(&call_entries(1), &stamp)
        .await
        .unwrap()
        .is_none());
    // So does an append that did not go through the stamp's holder.
    let stamp = refresh(&store, 1).await.stamp.unwrap();
    fill(&store, 1).await;
    assert!(store
        .append_audit_guarded(&call_entries(1), &stamp)
        .await
        .unwrap()
        .is_none());
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok && report.rows == 3, "{report:?}");
}

#[tokio::test]
async fn a_guarded_append_refuses_a_cut_tail() {
    let (store, _dir) = open().await;
    let stamp = refresh(&store, 3).await.stamp.unwrap();
    untrigger(&store).await;
    raw(&store, "DELETE FROM audit WHERE id = 3").await;
    assert!(store
        .append_audit_guarded(&call_entries(1), &stamp)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn the_refreshing_append_reads_the_policy_in_its_transaction() {
    let (store, _dir) = open().await;
    let before = refresh(&store, 1).await.policy;
    assert_eq!(before, PolicyRows::default());
    sqlx::query(
        "INSERT INTO policy_rules (id, position, rule_json, is_grant, created_at)
         VALUES ('r', 1, '{}', 0, 0)",
    )
    .execute(store.writer())
    .await
    .unwrap();
    let after = refresh(&store, 1).await.policy;
    assert_eq!(after.rules, vec![("r".to_owned(), "{}".to_owned())]);
}
