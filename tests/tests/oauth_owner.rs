//! SE-08: a sign-in belongs to one server and one issuer, not to a name. Removing a server
//! revokes and deletes its whole sign-in (tokens, registration, the client secret typed for
//! it); a server re-added under the same name, pointing at another authorization server,
//! starts with nothing, and that authorization server, which logs everything it receives,
//! never sees the old client secret.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod oauth_support;

use base64::Engine as _;
use oauth_support::*;
use switchboard_tests::fake_oauth::{FakeOAuth, OAuthOpts, PreRegistered, Recorded};

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
