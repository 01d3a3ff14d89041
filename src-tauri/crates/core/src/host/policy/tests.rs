//! The in-memory policy against changes made elsewhere: a decision made from it is stored only
//! while it is still the stored policy, whichever process changed it.

use serde_json::Map;

use super::*;
use crate::approval::{Claims, Limit, Per};
use crate::host::HostBuilder;
use crate::secrets::{MemoryStore, Secrets};
use crate::store::Store;

fn rule(id: &str, effect: Effect, limit: Option<Limit>) -> Rule {
    Rule {
        id: id.into(),
        effect,
        server: "s".into(),
        on: On::Tool,
        tool: "t".into(),
        origin: None,
        when: Vec::new(),
        limit,
        note: None,
        source: Source::User,
    }
}

async fn host(dir: &std::path::Path) -> Host {
    HostBuilder::new(dir)
        .secrets(Secrets::new(MemoryStore::default()))
        .build()
        .await
        .unwrap()
}

/// One entry standing for a call's decision and start.
fn decided() -> Vec<(AuditEvent, AuditContext)> {
    vec![(AuditEvent::Started, AuditContext::default())]
}

/// Decides a manual call of `s/t` from memory.
async fn from_memory(host: &Host) -> Option<(Decision, u64)> {
    let server = ServerId::new("s").unwrap();
    let arguments = Map::new();
    let call = Call {
        server: &server,
        kind: RequestKind::Tool,
        name: "t",
        origin: &Origin::Manual,
        arguments: &arguments,
        claims: Claims::default(),
    };
    host.decide_cached(&call, None).await.unwrap()
}

async fn rows(host: &Host) -> u64 {
    let v = host.verify_audit().await.unwrap();
    assert!(v.ok, "{v:?}");
    v.rows
}

#[tokio::test]
async fn a_change_by_another_process_voids_decisions_made_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    host.put_policy_rule(rule("allow-t", Effect::Allow, None))
        .await
        .unwrap();
    let (decision, generation) = from_memory(&host).await.expect("a policy in memory");
    assert!(matches!(decision, Decision::Allow { .. }), "{decision:?}");
    assert!(host.audit_decided(decided(), generation).await);

    // The CLI, on the same data dir, replaces the rules with a deny.
    let other = Store::open(&dir.path().join("switchboard.sqlite"))
        .await
        .unwrap();
    other
        .replace_user_rules(&[rule("deny-t", Effect::Deny, None)])
        .await
        .unwrap();
    let before = rows(&host).await;
    assert!(
        !host.audit_decided(decided(), generation).await,
        "a decision from the old policy was stored"
    );
    assert_eq!(
        rows(&host).await,
        before,
        "the stale decision reached the log"
    );

    let (decision, newer) = from_memory(&host).await.expect("the policy read again");
    assert!(matches!(decision, Decision::Deny { .. }), "{decision:?}");
    assert!(newer > generation);
    assert!(host.audit_decided(decided(), newer).await);
    other.close().await;
    host.shutdown().await;
}

#[tokio::test]
async fn a_change_in_this_process_voids_decisions_made_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    host.put_policy_rule(rule("allow-t", Effect::Allow, None))
        .await
        .unwrap();
    let (_, generation) = from_memory(&host).await.unwrap();
    // Written on the host's own writer connection, without an audit entry to refresh the view.
    host.inner
        .store
        .put_rule(&rule("deny-t", Effect::Deny, None))
        .await
        .unwrap();
    assert!(!host.audit_decided(decided(), generation).await);
    let (decision, _) = from_memory(&host).await.unwrap();
    assert!(matches!(decision, Decision::Deny { .. }), "{decision:?}");
    host.shutdown().await;
}

#[tokio::test]
async fn other_processes_appending_keep_decisions_valid_and_the_chain_whole() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    host.put_policy_rule(rule("allow-t", Effect::Allow, None))
        .await
        .unwrap();
    let other = Store::open(&dir.path().join("switchboard.sqlite"))
        .await
        .unwrap();
    for i in 0..5 {
        let (_, generation) = from_memory(&host).await.unwrap();
        // Another process appends between every two of ours: the policy is the same, so the
        // decision stands, and each append links to the other's head.
        other
            .append_audit(&AuditEvent::Started.into_entry(AuditContext::default(), i))
            .await
            .unwrap();
        assert!(host.audit_decided(decided(), generation).await);
    }
    assert_eq!(rows(&host).await, 11);
    other.close().await;
    host.shutdown().await;
}

#[tokio::test]
async fn limited_rules_are_decided_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let limit = Limit {
        max: 1,
        per: Per::Hour,
    };
    host.put_policy_rule(rule("allow-once", Effect::Allow, Some(limit)))
        .await
        .unwrap();
    assert!(from_memory(&host).await.is_none());
    host.shutdown().await;
}
