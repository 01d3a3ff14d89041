//! SE-08: a sign-in belongs to one server and one issuer, not to a name. Removing a server
//! revokes and deletes its whole sign-in (tokens, registration, the client secret typed for
//! it); a server re-added under the same name, pointing at another authorization server,
//! starts with nothing, and that authorization server, which logs everything it receives,
//! never sees the old client secret.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod oauth_support;

use base64::Engine as _;
use oauth_support::*;
use switchboard_tests::fake_oauth::{
    FakeOAuth, FollowRedirect, OAuthOpts, PreRegistered, Recorded,
};

/// Whether a recorded request carries `secret`: in its body, a header, or inside HTTP Basic.
fn carries(r: &Recorded, secret: &str) -> bool {
    let basic = r
        .header("authorization")
        .and_then(|h| h.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    String::from_utf8_lossy(&r.body).contains(secret)
        || r.headers.iter().any(|(_, v)| v.contains(secret))
        || basic.contains(secret)
        || r.query.iter().any(|(_, v)| v.contains(secret))
}

/// SE-08: sign in with a pre-registered confidential client at A; remove the server (its
/// tokens are revoked at A, `auth status` knows nothing); re-add the same name at another
/// authorization server B with the same client id, sign in: B's log holds no old secret and
/// no old token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_servers_secret_never_reaches_the_next_server_of_that_name() {
    if !keyring_available() {
        return;
    }
    let secret = format!("secret-of-a-{}", std::process::id());
    let a = FakeOAuth::start(OAuthOpts {
        preregistered: Some(PreRegistered {
            client_id: "shared-client".into(),
            client_secret: Some(secret.clone()),
        }),
        ..OAuthOpts::default()
    })
    .await;
    // B knows the same client id as a public client: whatever secret arrives, it accepts the
    // sign-in, and logs what it got.
    let b = FakeOAuth::start(OAuthOpts {
        preregistered: Some(PreRegistered {
            client_id: "shared-client".into(),
            client_secret: None,
        }),
        ..OAuthOpts::default()
    })
    .await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let (url_a, url_b) = (a.mcp_url.clone(), b.mcp_url.clone());
    let (gone, fresh) = blocking({
        let (cli, secret) = (cli.clone(), secret.clone());
        move || {
            cli.add_remote("se08-svc", &url_a);
            let r = cli.run_in(
                &[
                    "auth",
                    "login",
                    "se08-svc",
                    "--client-id",
                    "shared-client",
                    "--client-secret",
                ],
                &secret,
            );
            assert!(r.ok, "sign-in at A failed: {r:?}");
            cli.ok(&["call", "se08-svc", "whoami", "--yes"]);
            cli.ok(&["server", "remove", "se08-svc"]);
            // The name is free: nothing is known of the removed server's sign-in.
            cli.add_remote("se08-svc", &url_b);
            let gone = cli.ok(&["auth", "status", "se08-svc"]);
            cli.ok(&["auth", "login", "se08-svc", "--client-id", "shared-client"]);
            let fresh = cli.ok(&["call", "se08-svc", "whoami", "--yes"]);
            (gone, fresh)
        }
    })
    .await;
    assert!(gone.out.contains("se08-svc: not signed in"), "{}", gone.out);
    assert!(fresh.out.contains("client=shared-client"), "{}", fresh.out);
    // A revoked what it had issued.
    assert!(a.state.counts().revocations >= 1, "nothing revoked at A");
    for t in a.state.refresh_tokens() {
        assert!(
            a.state.is_revoked(&t),
            "A's refresh token {t} is still valid"
        );
    }
    // B never saw A's secret or any of A's tokens.
    let mut old = vec![secret.clone()];
    old.extend(a.state.access_tokens());
    old.extend(a.state.refresh_tokens());
    let seen = b.state.requests();
    assert!(!seen.is_empty());
    for r in &seen {
        for s in &old {
            assert!(
                !carries(r, s),
                "B received {s} in {:?} {} {}",
                r.side,
                r.method,
                r.path
            );
        }
    }
}

/// A fake whose pre-registered `shared-client` has `secret` (`None`: a public client).
async fn fake_with(secret: Option<&str>) -> FakeOAuth {
    FakeOAuth::start(OAuthOpts {
        preregistered: Some(PreRegistered {
            client_id: "shared-client".into(),
            client_secret: secret.map(str::to_owned),
        }),
        ..OAuthOpts::default()
    })
    .await
}

/// Fails if any request `fake` received carries one of `old`.
fn assert_received_none(fake: &FakeOAuth, what: &str, old: &[String]) {
    let seen = fake.state.requests();
    assert!(!seen.is_empty(), "{what} saw nothing");
    for r in &seen {
        for s in old {
            assert!(
                !carries(r, s),
                "{what} received {s} in {:?} {} {}",
                r.side,
                r.method,
                r.path
            );
        }
    }
}

/// SE-08, in one process (in-memory keyring): a client secret typed for the server at A is not
/// sent when the server's URL now leads to another authorization server B (same client id),
/// and after the server is removed, a link that reuses its name (pointing at C) starts with
/// nothing: C sees no secret or token of A or B, and B revoked what it had issued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_url_or_a_link_reusing_the_name_gets_no_old_secret() {
    use switchboard_core::config::{HttpAuth, TransportSpec};
    use switchboard_core::host::HostBuilder;
    use switchboard_core::redact::Secret;
    use switchboard_core::secrets::{MemoryStore, Secrets};
    use switchboard_tests::*;

    let secret = format!("typed-for-a-{}", std::process::id());
    let (a, b, c) = (
        fake_with(Some(&secret)).await,
        fake_with(None).await,
        fake_with(None).await,
    );
    let dir = tempfile::tempdir().unwrap();
    let host = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .supervisor_config(fast_supervisor())
        .build()
        .await
        .unwrap();
    let id = add_trusted(&host, http_spec("svc", &a.mcp_url)).await;
    let client = HttpAuth::SignIn {
        client_id: "shared-client".into(),
    };
    host.set_http_auth(&id, Some(client)).await.unwrap();
    host.set_client_secret(&id, Secret::new(secret.clone()))
        .await
        .unwrap();
    host.sign_in(&id, None, &FollowRedirect::default())
        .await
        .unwrap();
    assert!(a.state.token_requests().iter().any(|r| carries(r, &secret)));
    // Connected with A's token: the host now holds an authorizer for A under the name.
    let settle = std::time::Duration::from_secs(30);
    host.start_server(&id)
        .await
        .unwrap()
        .wait_settled(settle)
        .await;
    assert!(!a.state.access_tokens().is_empty());

    // The URL now leads to B, whose metadata names another issuer.
    let mut spec = host.server(&id).await.unwrap();
    if let TransportSpec::Http(h) = &mut spec.transport {
        h.url = b.mcp_url.clone();
    }
    host.update_server(spec).await.unwrap();
    let view = host.trust_view(&id).await.unwrap();
    host.trust_server(&id, &view.fingerprint).await.unwrap();
    let mut old = vec![secret.clone()];
    old.extend(a.state.access_tokens());
    old.extend(a.state.refresh_tokens());
    // Connecting to B before any sign-in there sends nothing made for A.
    host.start_server(&id)
        .await
        .unwrap()
        .wait_settled(settle)
        .await;
    assert_received_none(&b, "B before sign-in", &old);
    host.sign_in(&id, None, &FollowRedirect::default())
        .await
        .unwrap();
    assert_received_none(&b, "B", &old);

    // Removed: B revokes, nothing is left under the name.
    host.remove_server(&id).await.unwrap();
    assert!(b.state.counts().revocations >= 1, "nothing revoked at B");
    for t in b.state.refresh_tokens() {
        assert!(
            b.state.is_revoked(&t),
            "B's refresh token {t} is still valid"
        );
    }
    // A link that reuses the name, pointing at C.
    let link = switchboard_core::config::link::make_link(&http_spec("svc", &c.mcp_url))
        .unwrap()
        .url;
    let proposed = host.propose_link(&link).await.unwrap();
    let id = host
        .add_from_link(&link, vec![], &proposed.trust.fingerprint)
        .await
        .unwrap();
    assert_eq!(id.as_str(), "svc");
    assert_eq!(host.sign_in_status(&id).await.unwrap(), None);
    host.sign_in(
        &id,
        Some("shared-client".into()),
        &FollowRedirect::default(),
    )
    .await
    .unwrap();
    old.extend(b.state.access_tokens());
    old.extend(b.state.refresh_tokens());
    assert_received_none(&c, "C", &old);
    host.shutdown().await;
}
