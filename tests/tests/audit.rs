//! The audit log end to end (OB-01): entries recorded through the host, then `switchboard audit
//! list / verify / export` on the same data directory, before and after someone edits or
//! deletes rows in the SQLite file behind Switchboard's back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::json;
use switchboard_core::approval::audit::{Actor, AuditContext, AuditEvent, CallRef, Verdict};
use switchboard_core::approval::Origin;
use switchboard_core::ids::ToolRef;
use switchboard_core::redact::Secret;
use switchboard_core::store::AuditEntry;
use switchboard_tests::*;

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn cli(dir: &Path, args: &[&str]) -> Output {
    run_cli(dir, args, "", &[])
}

/// A host on `dir` with an in-memory keyring.
async fn host_on(dir: &Path) -> switchboard_core::host::Host {
    switchboard_core::host::HostBuilder::new(dir)
        .secrets(switchboard_core::secrets::Secrets::new(
            switchboard_core::secrets::MemoryStore::default(),
        ))
        .build()
        .await
        .unwrap()
}

async fn tamper(dir: &Path, sql: &[&'static str]) {
    use sqlx::ConnectOptions as _;
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.join("switchboard.sqlite"))
        .connect()
        .await
        .unwrap();
    for s in [
        "DROP TRIGGER IF EXISTS audit_no_update",
        "DROP TRIGGER IF EXISTS audit_no_delete",
    ]
    .iter()
    .chain(sql)
    {
        sqlx::query(*s).execute(&mut conn).await.unwrap();
    }
}

#[tokio::test]
async fn verify_passes_then_names_the_tampered_row() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_on(dir.path()).await;
    // A secret the host read from the keyring (as it does to start a server) is registered
    // for redaction; reading one does exactly this.
    switchboard_core::redact::register_for_logs(&Secret::new("kr-canary-77aa-audit"));

    let tool = ToolRef {
        server: sid("fs"),
        tool: "write_file".into(),
    };
    let call = CallRef::random();
    let ctx = AuditContext::for_call(&tool, &Origin::Manual, call.clone());
    let args =
        json!({"path": "/tmp/a", "api_key": "arg-canary-99bb", "note": "kr-canary-77aa-audit"});
    let proposed = AuditEvent::proposed(
        switchboard_core::approval::RequestKind::Tool,
        args.as_object().unwrap(),
        &Origin::Manual,
    );
    assert!(host.audit(proposed, ctx.clone()).await);
    let n = host
        .audit_all(vec![
            (
                AuditEvent::Decided {
                    decision: Verdict::Allow,
                    by: Actor::User,
                    reason: None,
                },
                ctx.clone(),
            ),
            (AuditEvent::Started, ctx.clone()),
        ])
        .await;
    assert_eq!(n, 2);
    host.audit(
        AuditEvent::finished(&json!({"ok": true}), false, Duration::from_millis(12)),
        ctx,
    )
    .await;
    host.shutdown().await;
    assert_no_file_contains(dir.path(), "kr-canary-77aa");
    assert_no_file_contains(dir.path(), "arg-canary-99bb");

    // Intact.
    let o = cli(dir.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("intact: 4 entries"), "{}", out(&o));

    let o = cli(dir.path(), &["audit", "list", "--search", "write_file"]);
    assert!(o.status.success(), "{}", err(&o));
    let listed = out(&o);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out(&o));
    assert!(lines[0].contains("finished") && lines[0].contains("fs > write_file"));
    assert!(lines[3].starts_with("1\t") && lines[3].contains("proposed"));
    let o = cli(
        dir.path(),
        &["audit", "list", "--limit", "1", "--search", "decided"],
    );
    assert_eq!(out(&o).lines().count(), 1, "{}", out(&o));

    // The export is self-verifying and free of secrets.
    let file = dir.path().join("audit.jsonl");
    let o = cli(
        dir.path(),
        &["audit", "export", "--out", file.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", err(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("canary"), "{text}");
    let rows: Vec<AuditEntry> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.computed_hash() == r.hash));
    assert!(rows
        .iter()
        .all(|r| r.call_ref.as_deref() == Some(call.as_str())));
    std::fs::remove_file(&file).unwrap();

    // An edited row is named, with exit code 1.
    tamper(
        dir.path(),
        &[r#"UPDATE audit SET detail_json = '{"decision":"deny"}' WHERE id = 2"#],
    )
    .await;
    let o = cli(dir.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        err(&o).contains("row 2") && err(&o).contains("edited"),
        "{}",
        err(&o)
    );
    let o = cli(dir.path(), &["--json", "audit", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(report["first_bad"]["id"], 2);
    assert_eq!(report["first_bad"]["why"]["kind"], "edited");
}

#[tokio::test]
async fn a_deleted_row_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_on(dir.path()).await;
    for i in 0..5 {
        host.audit(
            AuditEvent::Started,
            AuditContext {
                call_ref: Some(CallRef::random()),
                ..AuditContext::for_tool(&ToolRef {
                    server: sid("fs"),
                    tool: format!("t{i}").into(),
                })
            },
        )
        .await;
    }
    host.shutdown().await;
    assert_eq!(cli(dir.path(), &["audit", "verify"]).status.code(), Some(0));

    tamper(dir.path(), &["DELETE FROM audit WHERE id = 3"]).await;
    let o = cli(dir.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("row 4") && err(&o).contains("row 3 before it is missing"),
        "{}",
        err(&o)
    );

    // Cutting the tail is caught as well.
    let dir = tempfile::tempdir().unwrap();
    let host = host_on(dir.path()).await;
    for _ in 0..3 {
        host.audit(AuditEvent::Started, AuditContext::default())
            .await;
    }
    host.shutdown().await;
    tamper(dir.path(), &["DELETE FROM audit WHERE id = 3"]).await;
    let o = cli(dir.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("row 3"), "{}", err(&o));
}

#[test]
fn an_empty_log_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let o = cli(dir.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("intact: 0 entries"));
    let o = cli(dir.path(), &["audit", "export"]);
    assert!(o.status.success());
    assert_eq!(out(&o), "");
}
