//! SP-11: nothing of a sign-in leaves the machine for a server the person has not approved, or
//! that changed since they did. `auth login` and `auth client-credentials` (and the app's Sign
//! in, which runs the same `Host::sign_in`) refuse, say how to approve, and every endpoint of
//! the server and its authorization server counts zero requests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod oauth_support;

use oauth_support::*;
use switchboard_tests::fake_oauth::{FakeOAuth, OAuthOpts, PreRegistered};

/// SP-11: an unapproved server, and one changed since approval: `auth login` and
/// `auth client-credentials` refuse with the way to approve, and neither the MCP server nor
/// its authorization server receives a single request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_to_an_unapproved_server_sends_nothing() {
    if !keyring_available() {
        return;
    }
    let fake = FakeOAuth::start(OAuthOpts {
        preregistered: Some(PreRegistered {
            client_id: "machine-1".into(),
            client_secret: Some("cc-secret-consent-1".into()),
        }),
        ..OAuthOpts::default()
    })
    .await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let url = fake.mcp_url.clone();
    let runs = blocking({
        let cli = cli.clone();
        move || {
            cli.ok(&["server", "add", "sp11-remote", "--url", &url]);
            let login = cli.fails(&["--json", "auth", "login", "sp11-remote"]);
            let cc = cli.run_in(
                &[
                    "auth",
                    "client-credentials",
                    "sp11-remote",
                    "--client-id",
                    "machine-1",
                ],
                "cc-secret-consent-1",
            );
            // Approved, then changed (allow insecure is part of what is approved).
            cli.ok(&["server", "add", "sp11-changed", "--url", &url]);
            cli.ok(&["server", "trust", "sp11-changed", "--yes"]);
            cli.ok(&["server", "insecure", "sp11-changed", "on"]);
            let changed = cli.fails(&["auth", "login", "sp11-changed"]);
            (login, cc, changed)
        }
    })
    .await;
    let (login, cc, changed) = runs;
    assert_eq!(
        login.error_code().as_deref(),
        Some("needs_approval"),
        "{login:?}"
    );
    let message = login.error_message().unwrap();
    assert!(
        message.contains("is not approved yet")
            && message.contains("nothing was sent")
            && message.contains("switchboard server trust sp11-remote"),
        "{message}"
    );
    assert!(!cc.ok, "client credentials went ahead: {cc:?}");
    assert!(
        cc.err.contains("switchboard server trust sp11-remote")
            && !cc.err.contains("getting a token"),
        "{}",
        cc.err
    );
    assert!(
        changed.err.contains("changed since you approved it")
            && changed
                .err
                .contains("switchboard server trust sp11-changed"),
        "{}",
        changed.err
    );
    assert!(cli.browsed().is_empty(), "a browser opened");
    let received = fake.state.requests();
    assert_eq!(
        received.len(),
        0,
        "requests reached the servers: {:?}",
        received
            .iter()
            .map(|r| format!("{:?} {} {}", r.side, r.method, r.path))
            .collect::<Vec<_>>()
    );
    // The client secret typed for the unapproved server was not kept either.
    let status = cli.ok(&["auth", "status", "sp11-remote"]);
    assert!(status.out.contains("not signed in"), "{}", status.out);
}
