//! Sign-in inside one process (issue 12, AU-08): a [`Host`] with an in-memory secret store signs
//! in to `switchboard_tests::fake_oauth` through [`Host::sign_in`] with a hand-off that follows
//! the authorization server's redirect (like the conformance client's), then many calls at once
//! find the token expired: exactly one refresh reaches the authorization server, whether the
//! host learns of the expiry from a 401 or from the stored expiry. A restart on the same data
//! dir and store keeps the sign-in and its expiry.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::config::TransportSpec;
use switchboard_core::host::{CallOptions, Host, HostBuilder};
use switchboard_core::ids::{ServerId, ToolRef};
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_tests::fake_oauth::{FakeOAuth, FollowRedirect, OAuthOpts, Side};
use switchboard_tests::*;

fn whoami(id: &ServerId) -> ToolRef {
    ToolRef {
        server: id.clone(),
        tool: "whoami".into(),
    }
}

/// A host on `dir` with `secrets`.
async fn host_on(dir: &std::path::Path, secrets: Secrets) -> Host {
    HostBuilder::new(dir)
        .secrets(secrets)
        .supervisor_config(fast_supervisor())
        .build()
        .await
        .unwrap()
}

/// A fixture, and a host (in-memory keyring) with `name` added, approved and signed in.
async fn signed_in(
    name: &str,
    opts: OAuthOpts,
) -> (FakeOAuth, Host, ServerId, Secrets, tempfile::TempDir) {
    let fake = FakeOAuth::start(opts).await;
    let dir = tempfile::tempdir().unwrap();
    let secrets = Secrets::new(MemoryStore::default());
    let host = host_on(dir.path(), secrets.clone()).await;
    let id = add_trusted(&host, http_spec(name, &fake.mcp_url)).await;
    let handoff = FollowRedirect::default();
    let signed = host.sign_in(&id, None, &handoff).await.unwrap();
    assert!(signed.refreshable, "{signed:?}");
    assert_eq!(handoff.opened(), 1);
    allow_every_call(&host).await;
    let r = host
        .call_allowed(&whoami(&id), Default::default(), CallOptions::default())
        .await
        .unwrap();
    assert!(format!("{r:?}").contains("subject=user-1"), "{r:?}");
    (fake, host, id, secrets, dir)
}

/// Eight calls at once; every one must succeed.
async fn eight_calls(host: &Host, id: &ServerId) {
    let calls = (0..8).map(|_| {
        let (host, tool) = (host.clone(), whoami(id));
        tokio::spawn(async move {
            host.call_allowed(&tool, Default::default(), CallOptions::default())
                .await
        })
    });
    for (i, r) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        let r = r.unwrap();
        assert!(r.is_ok(), "call {i}: {r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_calls_on_a_token_the_server_expired_refresh_once() {
    // The token endpoint takes 500 ms: every call gets its 401 before the first refresh lands.
    let (fake, host, id, _, _dir) = signed_in(
        "conc-401",
        OAuthOpts {
            token_delay: Duration::from_millis(500),
            ..OAuthOpts::default()
        },
    )
    .await;
    fake.state.expire_access_tokens();
    let before = fake.state.counts();
    eight_calls(&host, &id).await;
    let after = fake.state.counts();
    assert_eq!(
        after.token_refresh - before.token_refresh,
        1,
        "refresh requests for eight concurrent calls on one token the server refused \
         (each 401 must use the token another call just got, not refresh again)"
    );
    assert_eq!(after.refreshes - before.refreshes, 1);
    assert_eq!(after.authorizations, 1, "no new sign-in");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_calls_on_a_token_known_to_expire_refresh_once() {
    // A 4 s token: rmcp refreshes once less than half of its life is left, from the stored
    // expiry, before any request.
    let (fake, host, id, _, _dir) = signed_in(
        "conc-exp",
        OAuthOpts {
            access_ttl_secs: 4,
            ..OAuthOpts::default()
        },
    )
    .await;
    let before = fake.state.counts();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    eight_calls(&host, &id).await;
    let after = fake.state.counts();
    assert_eq!(
        after.token_refresh - before.token_refresh,
        1,
        "refresh requests for eight concurrent calls on one expiring token"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_the_sign_in_and_its_expiry() {
    let (fake, host, id, secrets, dir) = signed_in(
        "restart",
        OAuthOpts {
            access_ttl_secs: 600,
            ..OAuthOpts::default()
        },
    )
    .await;
    let status = host.sign_in_status(&id).await.unwrap().unwrap();
    host.shutdown().await;
    drop(host);

    let host = host_on(dir.path(), secrets).await;
    let again = host.sign_in_status(&id).await.unwrap().unwrap();
    assert_eq!(again.expires_at, status.expires_at, "the expiry changed");
    assert_eq!(again.signed_in_at, status.signed_in_at);
    let expires = again.expires_at.expect("an expiry");
    assert!(
        expires.abs_diff(again.signed_in_at + 600) <= 5,
        "expires_at {expires} is not the fixture's ttl (600 s) after the sign-in at {}",
        again.signed_in_at
    );
    fake.state.expire_access_tokens();
    allow_every_call(&host).await;
    let status = host
        .start_server(&id)
        .await
        .unwrap()
        .wait_settled(Duration::from_secs(30))
        .await;
    assert!(
        matches!(
            status,
            switchboard_core::supervisor::ServerStatus::Running { .. }
        ),
        "after a restart the signed-in server did not start: {status}"
    );
    let r = host
        .call_allowed(&whoami(&id), Default::default(), CallOptions::default())
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(fake.state.counts().refreshes, 1);
    assert_eq!(fake.state.counts().authorizations, 1, "no new sign-in");
    // AU-06: the bearer token went to the MCP endpoint only.
    assert!(fake.state.tokens_in_query().is_empty());
    for r in fake.state.requests() {
        let bearer = r
            .header("authorization")
            .is_some_and(|h| h.to_ascii_lowercase().starts_with("bearer "));
        assert!(
            !bearer || (r.side == Side::Resource && r.path == "/mcp"),
            "a bearer token went to {:?} {}",
            r.side,
            r.path
        );
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_in_one_process_asks_for_the_union_of_scopes() {
    // A 403 on a tool call leaves the server running, so its challenge (scope "mcp:read
    // mcp:admin") is not in the server's status: the core remembers it in the sign-in record,
    // and the next sign-in asks for it plus what was granted.
    // The resource metadata names only mcp:read: `admin` needs a second, wider sign-in.
    let (fake, host, id, _, _dir) = signed_in(
        "stepup",
        OAuthOpts {
            prm_scopes: vec!["mcp:read".into()],
            ..OAuthOpts::default()
        },
    )
    .await;
    let admin = ToolRef {
        server: id.clone(),
        tool: "admin".into(),
    };
    let first = fake.state.authorize_requests()[0]
        .query_param("scope")
        .unwrap_or_default()
        .to_owned();
    assert!(
        !first.contains("mcp:admin"),
        "first sign-in asked for {first:?}"
    );
    let denied = host
        .call_allowed(&admin, Default::default(), CallOptions::default())
        .await;
    let text = match &denied {
        Ok(r) => panic!("admin ran without mcp:admin: {r:?}"),
        Err(e) => e.to_string(),
    };
    assert!(text.contains("more permissions"), "{text}");
    let handoff = FollowRedirect::default();
    host.sign_in(&id, None, &handoff).await.unwrap();
    let asks = fake.state.authorize_requests();
    assert_eq!(asks.len(), 2);
    let scope = asks[1].query_param("scope").unwrap_or_default().to_owned();
    let scopes: Vec<&str> = scope.split_whitespace().collect();
    assert!(
        scopes.contains(&"mcp:read") && scopes.contains(&"mcp:admin"),
        "the second sign-in asked for {scope:?}, not the union of mcp:read and mcp:admin"
    );
    let r = host
        .call_allowed(&admin, Default::default(), CallOptions::default())
        .await;
    assert!(format!("{r:?}").contains("admin ok"), "{r:?}");
    host.shutdown().await;
}

/// AU-10: a server at a plain http address on another computer gets no sign-in (its tokens
/// would cross the network in clear text) until the person turns on "allow insecure
/// (development)" for it; with it on, the sign-in's requests still never reach a reserved or
/// cloud-metadata address.
#[tokio::test]
async fn plain_http_to_another_computer_needs_the_insecure_toggle() {
    let (host, _dir) = test_host().await;
    // 192.0.2.0/24 is documentation space: never routed, and blocked by the guard.
    let id = add_trusted(&host, http_spec("lan", "http://192.0.2.10/mcp")).await;
    let handoff = FollowRedirect::default();
    let e = host
        .sign_in(&id, None, &handoff)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("clear text") && e.contains("server insecure lan on"),
        "{e}"
    );

    host.set_allow_insecure(&id, true).await.unwrap();
    // The toggle is a governance change: it is in the audit log.
    let page = host
        .audit_page(&switchboard_core::store::AuditQuery {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        page.entries.iter().any(|e| e.kind.as_str() == "config"
            && e.server.as_deref() == Some("lan")
            && e.detail_json.contains("\"allow_insecure\":true")),
        "{:?}",
        page.entries
    );
    let spec = host.server(&id).await.unwrap();
    match &spec.transport {
        TransportSpec::Http(h) => assert!(h.allow_insecure),
        other => panic!("{other:?}"),
    }
    // Turning it on asks for approval again (SP-11): refused, nothing sent, until approved.
    let e = host
        .sign_in(&id, None, &handoff)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed since you approved it"), "{e}");
    let view = host.trust_view(&id).await.unwrap();
    host.trust_server(&id, &view.fingerprint).await.unwrap();
    // Now the sign-in starts, and the guard refuses the reserved address itself.
    let e = host
        .sign_in(&id, None, &handoff)
        .await
        .unwrap_err()
        .to_string();
    assert!(!e.contains("clear text"), "{e}");
    assert!(e.contains("192.0.2.10"), "{e}");
    assert_eq!(handoff.opened(), 0);
    host.shutdown().await;
}
