//! AP-09 for servers, trust, imports, providers and secrets: every governance change leaves an
//! audit entry of kind `config`, naming what changed and never a secret value. Also SE-04 at
//! the core: a config cannot refer to another namespace's secret, and a refused add writes
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use switchboard_core::approval::audit::AuditKind;
use switchboard_core::config::{
    Binding, HttpSpec, NamedValue, ServerSpec, Timeouts, TransportSpec, ValueSource,
};
use switchboard_core::host::{AddOptions, FieldBinding, HostError};
use switchboard_core::ids::{ProviderName, SecretName};
use switchboard_core::redact::Secret;
use switchboard_core::store::AuditQuery;
use switchboard_tests::*;

const CANARY: &str = "sk-auditCANARY-0123456789abcdefXYZ";

#[tokio::test]
async fn every_governance_change_is_audited_by_name() {
    let (host, _dir) = test_host().await;
    let spec = with_env(
        fake_spec("gov", &[]),
        "API_TOKEN",
        ValueSource::Plain(CANARY.into()),
    );
    let id = spec.id.clone();
    let added = host.add_server(spec.clone()).await.unwrap();
    assert_eq!(added.moved.len(), 1, "the plain token moved to the keyring");
    host.set_enabled(&id, false).await.unwrap();
    host.set_enabled(&id, true).await.unwrap();
    let view = host.trust_view(&id).await.unwrap();
    host.trust_server(&id, &view.fingerprint).await.unwrap();
    host.revoke_trust(&id).await.unwrap();
    let mut edited = host.server(&id).await.unwrap();
    edited.values_mut().push(NamedValue {
        name: "MODE".into(),
        value: ValueSource::Plain("fast".into()),
    });
    host.update_server(edited).await.unwrap();
    let name = SecretName::new("EXTRA").unwrap();
    host.set_server_secret(&id, &name, Secret::new(CANARY), false)
        .await
        .unwrap();
    host.delete_server_secret(&id, &name).await.unwrap();
    let p = ProviderName::new("work").unwrap();
    host.models()
        .add_provider(&p, "openai", None, None, None)
        .await
        .unwrap();
    host.models()
        .set_provider_key(&p, Secret::new(CANARY))
        .await
        .unwrap();
    host.models().delete_provider_key(&p).await.unwrap();
    host.remove_provider(&p).await.unwrap();
    let file = serde_json::json!({"mcpServers": {"imp": {"command": "/bin/true",
        "env": {"GITHUB_TOKEN": CANARY}}}})
    .to_string();
    host.import_config(&file, None).await.unwrap();
    host.remove_server(&id).await.unwrap();

    let page = host
        .audit_page(&AuditQuery {
            limit: 200,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let config: Vec<_> = page
        .entries
        .iter()
        .rev()
        .filter(|e| e.kind == AuditKind::Config)
        .collect();
    let changes: Vec<String> = config
        .iter()
        .map(|e| {
            let d: serde_json::Value = serde_json::from_str(&e.detail_json).unwrap();
            d["change"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        changes,
        [
            "server_added",
            "server_enabled",
            "server_enabled",
            "trusted",
            "trust_revoked",
            "server_updated",
            "secret_set",
            "secret_deleted",
            "provider_saved",
            "secret_set",
            "secret_deleted",
            "provider_removed",
            "imported",
            "server_removed",
        ]
    );
    for e in &config {
        assert!(!e.detail_json.contains("auditCANARY"), "{}", e.detail_json);
    }
    assert_eq!(config[0].server.as_deref(), Some("gov"));
    assert!(
        config[0].detail_json.contains("API_TOKEN"),
        "{}",
        config[0].detail_json
    );
    assert!(
        config[12].detail_json.contains("imp/GITHUB_TOKEN"),
        "{}",
        config[12].detail_json
    );
    host.shutdown().await;
}

fn remote(name: &str, value: ValueSource) -> ServerSpec {
    ServerSpec {
        id: sid(name),
        transport: TransportSpec::Http(HttpSpec {
            url: "https://mcp.example.com/mcp".into(),
            headers: vec![NamedValue {
                name: "Authorization".into(),
                value,
            }],
            auth: None,
            allow_insecure: false,
        }),
        enabled: true,
        timeouts: Timeouts::default(),
    }
}

/// SE-04: pointing server B at server A's secret (or at a provider key) is refused in the
/// config; only a binding made while approving B lends it, and that binding is shown and
/// fingerprinted.
#[tokio::test]
async fn a_config_cannot_point_at_another_servers_secret() {
    let (host, _dir) = test_host().await;
    let a = remote("a", ValueSource::Plain(CANARY.into()));
    host.add_server(a).await.unwrap();
    let lend = Binding::parse("server:a/Authorization").unwrap();
    let b = remote("b", ValueSource::Bound(lend.clone()));
    let err = host
        .add_server_with(
            b.clone(),
            AddOptions {
                secrets: vec![("X".into(), Secret::new("typed"))],
                ..AddOptions::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::CrossReference { .. }), "{err}");
    assert!(host.server(&sid("b")).await.is_err(), "nothing was added");

    // Nor can an edit make such a reference.
    host.add_server(remote(
        "b",
        ValueSource::Secret(SecretName::new("Authorization").unwrap()),
    ))
    .await
    .unwrap();
    let err = host.update_server(b).await.unwrap_err();
    assert!(matches!(err, HostError::CrossReference { .. }), "{err}");

    // The person binds it while approving; the view says so, and the fingerprint differs.
    let own = host.trust_view(&sid("b")).await.unwrap();
    let bind = [FieldBinding {
        field: "Authorization".into(),
        to: Some(lend),
    }];
    let bound = host.trust_view_with(&sid("b"), &bind).await.unwrap();
    assert_ne!(own.fingerprint, bound.fingerprint);
    let text: String = bound
        .lines
        .iter()
        .map(|(k, v)| format!("{k} {v}\n"))
        .collect();
    assert!(
        text.contains("secret Authorization of server a, bound by you"),
        "{text}"
    );
    host.trust_server_with(&sid("b"), &bind, &bound.fingerprint)
        .await
        .unwrap();
    assert_eq!(
        host.trust_view(&sid("b")).await.unwrap().state,
        switchboard_core::host::TrustState::Trusted
    );
    // A binding to something that does not exist is refused.
    let nope = [FieldBinding {
        field: "Authorization".into(),
        to: Some(Binding::Provider(ProviderName::new("nope").unwrap())),
    }];
    assert!(host.trust_view_with(&sid("b"), &nope).await.is_err());
    host.shutdown().await;
}
