//! Tokens are what they claim, and never written down (issue 25, point 12; SE-06): a token
//! endpoint answering a `token_type` other than Bearer is refused and nothing is stored, and an
//! MCP server that echoes its access token back in a tool result leaves it in no file of the
//! data dir (the protocol trace, the audit log, the database).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod oauth_support;

use oauth_support::*;
use switchboard_tests::fake_oauth::{FakeOAuth, Mode, OAuthOpts, PreRegistered};
use switchboard_tests::*;

/// SE-06 (point 12): a `mac` token, from the browser sign-in and from client credentials, is
/// refused with a clear error, reported as no sign-in, stored nowhere and never sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mac_token_is_refused_and_nothing_is_stored() {
    if !keyring_available() {
        return;
    }
    let fake = FakeOAuth::start(OAuthOpts {
        mode: Mode::TokenType("mac".into()),
        preregistered: Some(PreRegistered {
            client_id: "machine-1".into(),
            client_secret: Some("cc-secret-mac-1".into()),
        }),
        ..OAuthOpts::default()
    })
    .await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let url = fake.mcp_url.clone();
    let (login, cc, status) = blocking({
        let cli = cli.clone();
        move || {
            cli.add_remote("tt-mac", &url);
            cli.add_remote("tt-mac-m2m", &url);
            let login = cli.fails(&["--json", "auth", "login", "tt-mac"]);
            let cc = cli.run_in(
                &[
                    "--json",
                    "auth",
                    "client-credentials",
                    "tt-mac-m2m",
                    "--client-id",
                    "machine-1",
                ],
                "cc-secret-mac-1",
            );
            let status = cli.ok(&["auth", "status"]);
            (login, cc, status)
        }
    })
    .await;
    assert_eq!(fake.state.counts().token_authorization_code, 1);
    assert_eq!(fake.state.counts().token_client_credentials, 1);
    for r in [&login, &cc] {
        assert!(!r.ok, "a mac token was taken: {r:?}");
        assert_eq!(
            r.error_code().as_deref(),
            Some("unsupported_token_type"),
            "{r:?}"
        );
        let m = r.error_message().unwrap();
        assert!(
            m.contains("\"mac\"") && m.contains("nothing was saved"),
            "{m}"
        );
    }
    assert!(
        status.out.contains("tt-mac: not signed in")
            && status.out.contains("tt-mac-m2m: not signed in"),
        "{}",
        status.out
    );
    let sent = fake.state.authorization_headers();
    for t in fake.state.access_tokens() {
        assert!(
            !sent.iter().any(|h| h.contains(&t)),
            "the mac token was sent as a bearer token"
        );
        assert_no_file_contains(&cli.dir, &t);
    }
}

/// SE-06 (point 12): a server echoes the access token it was called with into a tool result;
/// the token is registered with the redactor when it is obtained, so it is in no file under
/// the data dir (the trace holds the redacted result), nor in `server logs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_echoed_by_the_server_is_in_no_file() {
    if !keyring_available() {
        return;
    }
    let fake = FakeOAuth::start(OAuthOpts::default()).await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let url = fake.mcp_url.clone();
    let logs = blocking({
        let cli = cli.clone();
        move || {
            cli.add_remote("tt-leaky", &url);
            cli.ok(&["auth", "login", "tt-leaky"]);
            let called = cli.ok(&["call", "tt-leaky", "echo_token", "--yes"]);
            assert!(called.out.contains("you called with"), "{}", called.out);
            cli.ok(&["--json", "server", "logs", "tt-leaky"])
        }
    })
    .await;
    let trace = cli.dir.join("logs/tt-leaky/trace.jsonl");
    let kept = std::fs::read_to_string(&trace).unwrap();
    assert!(
        kept.contains("you called with"),
        "the trace holds the result: {kept}"
    );
    let tokens = canaries(&fake.state);
    assert!(!fake.state.access_tokens().is_empty());
    assert_no_canary("server logs", &logs.out, &tokens);
    for t in &tokens {
        assert_no_file_contains(&cli.dir, t);
    }
}
