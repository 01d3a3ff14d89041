//! Signing in to a hostile or broken authorization server from the CLI (issue 12, AU-01/02/05/09):
//! each misbehaviour of `switchboard_tests::fake_oauth` makes `switchboard auth login` fail
//! with a sentence naming the problem and the `--json` error code of `SignInError::code`; a
//! failure found before the browser step opens no browser (`fake-browser`'s log stays empty);
//! nothing is left signed in (`auth status` says so) and no token was issued. Real keyring, like
//! `oauth_cli.rs`; each test uses its own server name because the keyring is shared by every
//! data dir.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod oauth_support;

use std::time::Duration;

use oauth_support::*;
use switchboard_tests::fake_oauth::{FakeOAuth, Mode, OAuthOpts, Side};

/// What a refused sign-in must look like.
struct Expect {
    /// The `--json` error code.
    code: &'static str,
    /// Words the message must contain (case-insensitive).
    says: &'static [&'static str],
    /// Whether the browser was opened before the failure.
    browser: bool,
}

/// A refused sign-in, for more checks.
struct Refusal {
    fake: FakeOAuth,
    ran: Ran,
    _root: tempfile::TempDir,
}

/// Signs in to a fixture in `mode` and checks the refusal.
async fn refused(name: &'static str, mode: Mode, expect: Expect) -> Refusal {
    let fake = FakeOAuth::start(OAuthOpts {
        mode,
        ..OAuthOpts::default()
    })
    .await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let url = fake.mcp_url.clone();
    let (ran, status, status_json) = blocking({
        let cli = cli.clone();
        move || {
            cli.add_remote(name, &url);
            let ran = cli.run(&["auth", "login", name, "--json"]);
            let status = cli.ok(&["auth", "status", name]);
            let status_json = cli.ok(&["auth", "status", name, "--json"]);
            (ran, status, status_json)
        }
    })
    .await;
    let all = format!("{}\n{}", ran.out, ran.err);
    assert!(!ran.ok, "{name}: the sign-in succeeded:\n{all}");
    assert_eq!(ran.code, Some(1), "{name}: exit code\n{all}");
    assert_eq!(
        ran.error_code().as_deref(),
        Some(expect.code),
        "{name}: --json code\n{all}"
    );
    let message = ran.error_message().unwrap_or_default().to_lowercase();
    for w in expect.says {
        assert!(
            message.contains(&w.to_lowercase()),
            "{name}: the message does not say {w:?}: {message}"
        );
    }
    let browsed = cli.browsed();
    if expect.browser {
        assert_eq!(
            browsed.len(),
            1,
            "{name}: one browser hand-off: {browsed:?}"
        );
    } else {
        assert!(
            browsed.is_empty(),
            "{name}: the browser opened before the failure: {browsed:?}"
        );
        assert!(
            !ran.err.contains("browser: opening"),
            "{name}: the CLI announced a browser: {}",
            ran.err
        );
        assert_eq!(fake.state.counts().authorizations, 0, "{name}: /authorize");
    }
    // Nothing issued, nothing left.
    assert!(
        fake.state.access_tokens().is_empty(),
        "{name}: a token was issued"
    );
    // A sign-in that fails after registration (at or after the browser step) must leave no
    // keyring record behind: `auth status` says "not signed in".
    assert!(
        status.out.contains(&format!("{name}: not signed in")),
        "{name}: after a failed sign-in, `auth status` says:\n{}",
        status.out
    );
    let v: serde_json::Value = serde_json::from_str(status_json.out.trim()).unwrap();
    assert!(
        v[0]["sign_in"].is_null(),
        "{name}: a failed sign-in left a record: {v}"
    );
    Refusal {
        fake,
        ran,
        _root: root,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_s256_is_refused_before_the_browser() {
    if !keyring_available() {
        return;
    }
    refused(
        "h-nos256",
        Mode::NoS256,
        Expect {
            code: "no_pkce",
            says: &["PKCE", "S256", "nothing"],
            browser: false,
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_only_pkce_is_refused_before_the_browser() {
    if !keyring_available() {
        return;
    }
    refused(
        "h-plain",
        Mode::PlainOnly,
        Expect {
            code: "no_pkce",
            says: &["S256", "plain"],
            browser: false,
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issuer_mismatch_is_refused_before_the_browser() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-issuer",
        Mode::IssuerMismatch,
        Expect {
            code: "wrong_issuer",
            says: &["issuer", "https://issuer.example.net"],
            browser: false,
        },
    )
    .await;
    assert_eq!(fake.state.counts().registrations, 0, "registered anyway");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_mismatch_is_refused_before_the_browser() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-resource",
        Mode::ResourceMismatch,
        Expect {
            code: "resource_mismatch",
            says: &["https://mcp.example.net/mcp"],
            browser: false,
        },
    )
    .await;
    assert_eq!(fake.state.counts().registrations, 0, "registered anyway");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabytes_of_metadata_are_not_read() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-huge",
        Mode::HugeMetadata,
        Expect {
            code: "address_refused",
            says: &["larger than 1024 KiB"],
            browser: false,
        },
    )
    .await;
    assert_eq!(fake.state.counts().registrations, 0, "registered anyway");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_the_cloud_metadata_address_is_not_followed() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-imds",
        Mode::RedirectToMetadataIp,
        Expect {
            // rmcp's discovery refuses the cross-origin redirect before the guard sees it.
            code: "discovery_failed",
            says: &["redirect", "169.254.169.254"],
            browser: false,
        },
    )
    .await;
    // Nothing past discovery: no registration, no token request, no authorization server
    // metadata fetched on the strength of a redirect.
    let seen: Vec<String> = fake
        .state
        .requests()
        .iter()
        .map(|r| format!("{:?} {} {}", r.side, r.method, r.path))
        .collect();
    for r in fake.state.requests() {
        assert!(
            r.side == Side::Resource
                && (r.path == "/mcp"
                    || r.path.starts_with("/.well-known/oauth-protected-resource")),
            "a request past the refused redirect: {seen:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_endpoints_of_a_remote_authorization_server_are_refused() {
    if !keyring_available() {
        return;
    }
    refused(
        "h-http",
        Mode::HttpDowngrade,
        Expect {
            code: "discovery_failed",
            says: &["http://auth.example.com", "https"],
            browser: false,
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_that_never_comes_times_out() {
    if !keyring_available() {
        return;
    }
    let Refusal { ran, .. } = refused(
        "h-slow",
        Mode::SlowMetadata,
        Expect {
            code: "address_refused",
            says: &["did not answer within 15 s"],
            browser: false,
        },
    )
    .await;
    // The guard's limit is per request; the sign-in as a whole must not add them up.
    assert!(
        ran.took < Duration::from_secs(25),
        "the sign-in took {:?} to give up on a silent server",
        ran.took
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_from_another_issuer_is_discarded() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, ran, .. } = refused(
        "h-iss",
        Mode::WrongIss,
        Expect {
            code: "wrong_callback_issuer",
            says: &["discarded"],
            browser: true,
        },
    )
    .await;
    assert_eq!(
        fake.state.counts().token_authorization_code,
        0,
        "the code of a mixed-up answer was exchanged"
    );
    // AU-05: no detail from the attacker's answer.
    assert!(
        !ran.out.contains("issuer.example.net"),
        "the message repeats the foreign issuer: {}",
        ran.out
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_consent_says_so() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-deny",
        Mode::ConsentDenied,
        Expect {
            code: "consent_denied",
            says: &["declined"],
            browser: true,
        },
    )
    .await;
    assert_eq!(fake.state.counts().token_authorization_code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_code_exchange_names_the_error() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-grant",
        Mode::TokenError(400, "invalid_grant".into()),
        Expect {
            code: "token_failed",
            says: &["did not issue a token", "invalid_grant"],
            browser: true,
        },
    )
    .await;
    assert_eq!(
        fake.state.counts().token_authorization_code,
        1,
        "one exchange, no retry loop"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_token_endpoint_names_the_error() {
    if !keyring_available() {
        return;
    }
    let Refusal { fake, .. } = refused(
        "h-500",
        Mode::TokenError(500, "server_error".into()),
        Expect {
            code: "token_failed",
            says: &["did not issue a token", "server_error"],
            browser: true,
        },
    )
    .await;
    assert_eq!(
        fake.state.counts().token_authorization_code,
        1,
        "one exchange, no retry loop"
    );
}
