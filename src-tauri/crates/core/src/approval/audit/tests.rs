//! Unit tests of the audit vocabulary: stored names, redaction before capping, digests.
use super::*;
use crate::ids::ConversationId;
use crate::redact::{register_for_logs, Secret};

#[test]
fn kinds_and_actors_round_trip() {
    for k in AuditKind::ALL {
        assert_eq!(AuditKind::parse(k.as_str()), Some(k));
    }
    for a in [
        Actor::User,
        Actor::System,
        Actor::Model { name: None },
        Actor::Model {
            name: Some("gpt".into()),
        },
        Actor::Policy { rule: None },
        Actor::Policy {
            rule: Some("r1".into()),
        },
        Actor::Grant {
            grant_id: "grant-fs-read-abc".into(),
        },
    ] {
        assert_eq!(Actor::parse(&a.to_stored()), Some(a.clone()), "{a}");
    }
    assert_eq!(Actor::parse("grant"), None);
    assert_eq!(Actor::parse("root"), None);
}

#[test]
fn arguments_are_redacted_and_digested_before() {
    register_for_logs(&Secret::new("kr-canary-5150-audit"));
    let args = json!({
        "path": "/tmp/x",
        "api_key": "plain-looking",
        "nested": {"Authorization": "Basic abc", "note": "uses kr-canary-5150-audit here"},
        "list": ["sk-abcdefghijklmnopqrstu", "550e8400-e29b-41d4-a716-446655440000"],
        "password": null,
    });
    let e = AuditEvent::Proposed {
        request: RequestKind::Tool,
        arguments: args.clone(),
        by: Actor::User,
    };
    let d = e.detail();
    let text = d.to_string();
    for leak in [
        "plain-looking",
        "Basic abc",
        "kr-canary-5150",
        "sk-abcdefgh",
    ] {
        assert!(!text.contains(leak), "{leak} leaked: {text}");
    }
    assert_eq!(d["arguments"]["path"], "/tmp/x");
    assert_eq!(
        d["arguments"]["list"][1],
        "550e8400-e29b-41d4-a716-446655440000"
    );
    assert_eq!(d["arguments"]["password"], Value::Null);
    assert_eq!(d["arguments"]["nested"]["note"], "uses [redacted] here");
    assert_eq!(d["arguments_sha256"], arguments_digest(&args));
}

#[test]
fn big_values_are_capped() {
    let big = json!({ "data": "x".repeat(100_000) });
    let d = AuditEvent::Proposed {
        request: RequestKind::Tool,
        arguments: big,
        by: Actor::User,
    }
    .detail();
    assert_eq!(d["arguments"]["truncated"], true);
    assert!(d.to_string().len() < ARGUMENTS_MAX + 1_000);
    assert_eq!(d["arguments_bytes"], 100_011);
    let f = AuditEvent::failed(&"é".repeat(10_000), Duration::from_millis(5)).detail();
    assert!(f["error"].as_str().unwrap().len() <= TEXT_MAX + '…'.len_utf8());
}

#[test]
fn results_are_kept_by_digest_only() {
    let result = json!({"content": [{"type": "text", "text": "the secret plan"}]});
    let e = AuditEvent::finished(&result, false, Duration::from_millis(42));
    let d = e.detail();
    assert!(!d.to_string().contains("secret plan"));
    assert_eq!(d["result_sha256"], arguments_digest(&result));
    assert_eq!(d["duration_ms"], 42);
    assert_eq!(e.actor(), Actor::System);
    assert_eq!(
        summarize(AuditKind::Finished, &d.to_string()),
        format!(
            "ok in 42 ms, result sha256 {} ({} bytes)",
            &arguments_digest(&result)[..12],
            canonical_json(&result).len()
        )
    );
}

#[test]
fn context_from_origin() {
    let tool = ToolRef {
        server: ServerId::new("fs").unwrap(),
        tool: "read".into(),
    };
    let conv = ConversationId::random();
    let r = CallRef::random();
    let ctx = AuditContext::for_call(&tool, &Origin::model(conv.clone()), r.clone());
    assert_eq!(ctx.conversation, Some(conv));
    assert_eq!(ctx.call_ref, Some(r));
    assert_eq!(
        AuditContext::for_call(&tool, &Origin::Manual, CallRef::random()).conversation,
        None
    );
    assert_eq!(Actor::from_origin(&Origin::Manual), Actor::User);
}

#[test]
fn summaries_are_one_line() {
    let d = AuditEvent::Decided {
        decision: Verdict::Deny,
        by: Actor::User,
        reason: Some("no\nway".into()),
    }
    .detail();
    assert_eq!(
        summarize(AuditKind::Decided, &d.to_string()),
        "deny: no way"
    );
    assert_eq!(summarize(AuditKind::Started, "{}"), "sent to the server");
    assert_eq!(summarize(AuditKind::Policy, "not json"), "");
}

#[test]
fn call_refs_are_unique_and_grow_with_time() {
    let a = CallRef::random();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let b = CallRef::random();
    let c = CallRef::random();
    for r in [&a, &b, &c] {
        assert_eq!(r.as_str().len(), 32, "{r}");
        assert!(r.as_str().bytes().all(|x| x.is_ascii_hexdigit()), "{r}");
    }
    assert_ne!(b, c);
    // A later millisecond sorts after an earlier one: index inserts land at the end.
    assert!(a.as_str()[..12] < b.as_str()[..12], "{a} {b}");
    assert!(a < b && a < c);
}

/// The redaction above, end to end: what `into_entry` makes is what the store keeps and
/// exports (moved here from `store::audit`'s tests, which build their rows without approval).
#[tokio::test]
async fn secrets_reach_neither_the_table_nor_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::store::Store::open(&dir.path().join("sb.sqlite"))
        .await
        .unwrap();
    // A value the process read from the keyring, as `Secrets::get` registers it.
    register_for_logs(&Secret::new("keyring-canary-31337"));
    let ctx = AuditContext {
        call_ref: Some(CallRef::random()),
        ..AuditContext::for_tool(&ToolRef {
            server: ServerId::new("fs").unwrap(),
            tool: "read_file".into(),
        })
    };
    let events = [
        AuditEvent::Proposed {
            request: RequestKind::Tool,
            arguments: json!({
                "api_key": "argument-canary-4242",
                "query": "token keyring-canary-31337 inside",
            }),
            by: Actor::Model { name: None },
        },
        AuditEvent::Edited {
            before_digest: "0".repeat(64),
            after: json!({"headers": {"Authorization": "Bearer argument-canary-4242"}}),
        },
        AuditEvent::failed(
            &"server said: bad key keyring-canary-31337",
            std::time::Duration::ZERO,
        ),
    ];
    for e in events {
        store
            .append_audit(&e.into_entry(ctx.clone(), 1))
            .await
            .unwrap();
    }
    let all: Vec<(String,)> = sqlx::query_as("SELECT detail_json FROM audit")
        .fetch_all(store.reader())
        .await
        .unwrap();
    let mut out = Vec::new();
    store.export_audit_jsonl(&mut out).await.unwrap();
    let export = String::from_utf8(out).unwrap();
    for haystack in all.iter().map(|(d,)| d.as_str()).chain([export.as_str()]) {
        assert!(!haystack.contains("keyring-canary"), "{haystack}");
        assert!(!haystack.contains("argument-canary"), "{haystack}");
    }
    assert!(export.contains("[redacted]"));
    assert!(store.verify_audit().await.unwrap().ok);
}
