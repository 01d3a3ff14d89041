//! Signing in to a remote server in the real app window (issue 12, point 7), against our
//! authorization server and protected MCP server on loopback (`fake_oauth`), with the real OS
//! keyring (a private Secret Service under `make test`) and the browser stand-in
//! (`fake-browser`, through `SWITCHBOARD_BROWSER`) that follows the redirect to the app's
//! loopback listener:
//! - the server's card says it needs sign-in and offers Sign in;
//! - the sign-in shows its timeline and, before anything opens, the authorization server's
//!   domain; the browser opens only after Continue, and the web view never holds the
//!   authorization URL;
//! - the timeline reaches the first call, and the card says where it is signed in;
//! - the Credentials page lists the sign-in with its expiry and no token anywhere in the page;
//! - a tool of the server runs from the catalog's run form with the token;
//! - after a restart of the app (same data directory, same keyring) the server runs with no new
//!   sign-in and a call works; once the access token expired, the next call refreshes it
//!   silently (one refresh, no browser);
//! - Revoke signs out: the authorization server revoked the latest refresh token and the card
//!   asks for sign-in again;
//! - no token is in any file of the data directory.
//!
//! Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::fake_oauth::{FakeOAuth, OAuthOpts};
use switchboard_tests::scenario::{app_window, open_tool};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

async fn cli(data: &Path, args: &[&str]) {
    let data = data.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli_ok(&data, &args)
    })
    .await
    .unwrap();
}

/// The whole page as the web view holds it: text, attributes and form values.
const PAGE: &str = "return document.documentElement.outerHTML + \
    Array.from(document.querySelectorAll('input, textarea')).map(i => i.value).join('\\n');";

const CARD: &str = r#"article[data-name="remote"]"#;

/// Every token and secret the authorization server issued so far.
fn issued(fake: &FakeOAuth) -> Vec<String> {
    fake.state
        .access_tokens()
        .into_iter()
        .chain(fake.state.refresh_tokens())
        .chain(fake.state.client_secrets())
        .collect()
}

/// The browser hand-offs so far (one line each in the stand-in's log).
fn hand_offs(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|l| l.lines().count())
        .unwrap_or(0)
}

/// Runs the server's `whoami` from the catalog's run form, allows it in the approval dialog and
/// returns what the tool answered; panics with the window's words when the call did not succeed.
async fn run_whoami(s: &Session, shot: &str) -> String {
    open_tool(s, "remote", "whoami").await;
    s.click_on(".run-panel button.run", WAIT).await.unwrap();
    // The dialog is up only once the run started, so the status below is this run's.
    s.wait_text(".approval-dialog", "whoami", WAIT)
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", WAIT)
        .await
        .unwrap();
    // A run in progress says so with an ellipsis; every outcome ends with a full stop.
    let status = s
        .wait_text(".run-status", ".", Duration::from_secs(60))
        .await
        .unwrap();
    let output = s
        .execute("return document.querySelector('.run-output').innerText;")
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_owned();
    s.screenshot(&artifacts().join(shot)).await.unwrap();
    assert_eq!(status, "Done.", "the call did not succeed: {output}");
    assert!(output.contains("subject="), "not whoami's answer: {output}");
    output
}

/// Waits until the server's card says it runs, signed in at the authorization server.
async fn running_signed_in(s: &Session, fake: &FakeOAuth) {
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(&format!("{CARD} .badge"), "running", WAIT)
        .await
        .unwrap();
    s.wait_text(
        &format!("{CARD} .sign-in-state"),
        &format!("Signed in at {}", fake.issuer),
        WAIT,
    )
    .await
    .unwrap();
}

/// Issue 12's desktop journey: sign in, call, restart, call without signing in, expire the
/// access token, call again (refreshed silently), sign out (revoked, gone from the keyring).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn sign_in_call_restart_refresh_and_sign_out_in_the_window() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let fake = FakeOAuth::start(OAuthOpts::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    cli(&data, &["server", "add", "remote", "--url", &fake.mcp_url]).await;
    cli(&data, &["server", "trust", "remote", "--yes"]).await;
    cli(&data, &["server", "always-on", "remote", "on"]).await;
    let browser = workspace_bin("fake-browser");
    let browsed = dir.path().join("browser.log");

    let driver = Driver::start(&[
        ("SWITCHBOARD_DATA_DIR", data.as_path()),
        ("SWITCHBOARD_BROWSER", browser.as_path()),
        ("FAKE_BROWSER_LOG", browsed.as_path()),
    ])
    .await
    .unwrap();
    let s = app_window(&driver).await;
    let card = CARD;

    // The card: it needs sign-in, and says so with a button.
    s.wait_text(&format!("{card} .sign-in-state"), "Needs sign-in", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("50-signin-needed.png"))
        .await
        .unwrap();
    s.click_on(&format!("{card} button.sign-in"), WAIT)
        .await
        .unwrap();

    // Before the browser: the authorization server's domain, and nothing opened yet.
    let domain = s
        .wait_text(".signin-dialog .signin-domain", "127.0.0.1", WAIT)
        .await
        .unwrap();
    assert_eq!(domain, "127.0.0.1");
    for step in ["discovery", "metadata", "registration"] {
        s.wait_for(
            &format!(r#".signin-step[data-step="{step}"][data-state="done"]"#),
            WAIT,
        )
        .await
        .unwrap();
    }
    assert!(!browsed.exists(), "the browser opened before Continue");
    let page = s.execute(PAGE).await.unwrap().to_string();
    for leak in ["code_challenge", "/authorize?", "?state=", "&state="] {
        assert!(
            !page.contains(leak),
            "the web view holds the authorization URL ({leak})"
        );
    }
    s.screenshot(&artifacts().join("51-signin-domain.png"))
        .await
        .unwrap();
    s.click_on(".signin-dialog .signin-continue", WAIT)
        .await
        .unwrap();

    // The timeline reaches the first call; the card says where it is signed in.
    s.wait_for(
        r#".signin-step[data-step="first_call"][data-state="done"]"#,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    s.wait_text(".signin-dialog .signin-outcome", "Signed in at", WAIT)
        .await
        .unwrap();
    for step in ["browser", "token"] {
        s.wait_for(
            &format!(r#".signin-step[data-step="{step}"][data-state="done"]"#),
            WAIT,
        )
        .await
        .unwrap();
    }
    s.screenshot(&artifacts().join("52-signin-timeline.png"))
        .await
        .unwrap();
    let log = std::fs::read_to_string(&browsed).unwrap();
    assert_eq!(log.lines().count(), 1, "one browser hand-off: {log}");
    s.click_on(".signin-dialog .signin-close", WAIT)
        .await
        .unwrap();
    s.wait_text(
        &format!("{card} .sign-in-state"),
        &format!("Signed in at {}", fake.issuer),
        WAIT,
    )
    .await
    .unwrap();
    s.wait_text(&format!("{card} .badge"), "running", WAIT)
        .await
        .unwrap();

    // The Credentials page: issuer, expiry, no value anywhere in the page.
    s.click_on(r#".tab[data-page="credentials"]"#, WAIT)
        .await
        .unwrap();
    let cred = r#".cred-server[data-name="remote"]"#;
    s.wait_text(&format!("{cred} .cred-signin-head"), &fake.issuer, WAIT)
        .await
        .unwrap();
    s.wait_text(
        &format!(r#"{cred} [data-fact="access-token"]"#),
        "expires in",
        WAIT,
    )
    .await
    .unwrap();
    let page = s.execute(PAGE).await.unwrap().to_string();
    let held = issued(&fake);
    assert!(!held.is_empty(), "the server issued no token");
    for t in &held {
        assert!(
            !page.contains(t.as_str()),
            "the Credentials page holds a token or secret"
        );
    }
    s.screenshot(&artifacts().join("53-credentials.png"))
        .await
        .unwrap();

    // A call from the run form goes out with the token.
    let first = run_whoami(&s, "55-signin-call.png").await;
    let signed_in = fake.state.counts();
    assert_eq!(signed_in.authorizations, 1, "{signed_in:?}");

    // Restart: the same data directory and keyring; the server runs with no new sign-in.
    s.close().await.unwrap();
    let s = app_window(&driver).await;
    running_signed_in(&s, &fake).await;
    s.screenshot(&artifacts().join("56-signin-after-restart.png"))
        .await
        .unwrap();
    let again = run_whoami(&s, "57-signin-call-after-restart.png").await;
    assert_eq!(again, first, "another client or grant after the restart");
    let restarted = fake.state.counts();
    assert_eq!(
        (
            restarted.authorizations,
            restarted.registrations,
            restarted.token_authorization_code,
            restarted.refreshes
        ),
        (
            signed_in.authorizations,
            signed_in.registrations,
            signed_in.token_authorization_code,
            signed_in.refreshes
        ),
        "the restart signed in again or refreshed a valid token: {restarted:?}"
    );
    assert_eq!(hand_offs(&browsed), 1, "the restart opened the browser");

    // The access token expires at the server: the next call refreshes it, once and silently.
    fake.state.expire_access_tokens();
    run_whoami(&s, "58-signin-call-refreshed.png").await;
    let refreshed = fake.state.counts();
    assert_eq!(
        refreshed.refreshes,
        restarted.refreshes + 1,
        "not exactly one refresh: {refreshed:?}"
    );
    assert_eq!(
        (refreshed.authorizations, refreshed.token_authorization_code),
        (restarted.authorizations, restarted.token_authorization_code),
        "the expired token led to a new sign-in: {refreshed:?}"
    );
    assert_eq!(hand_offs(&browsed), 1, "the refresh opened the browser");
    let latest_access = fake.state.access_tokens().last().cloned().unwrap();
    assert_eq!(
        fake.state.authorization_headers().last().cloned(),
        Some(format!("Bearer {latest_access}")),
        "the call did not go out with the refreshed token"
    );

    // Revoke on the Credentials page: confirmed, then revoked at the server and gone here,
    // and the card asks for sign-in again.
    s.click_on(r#".tab[data-page="credentials"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(&format!("{cred} .cred-signin-head"), &fake.issuer, WAIT)
        .await
        .unwrap();
    let page = s.execute(PAGE).await.unwrap().to_string();
    for t in issued(&fake) {
        assert!(
            !page.contains(t.as_str()),
            "the Credentials page holds a token or secret"
        );
    }
    s.click_on(&format!("{cred} .cred-revoke"), WAIT)
        .await
        .unwrap();
    s.click_on(".confirm-dialog button.danger", WAIT)
        .await
        .unwrap();
    s.wait_text(".notice", "revoked", WAIT).await.unwrap();
    let latest = fake.state.refresh_tokens().last().cloned().unwrap();
    assert!(
        fake.state.is_revoked(&latest),
        "the latest refresh token was not revoked"
    );
    // No sign-in facts are left. Whether the server already answered a request with 401
    // ("Needs sign-in") or not yet ("Not signed in") is a race the test does not decide.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        // The page redraws when the server's state changes: read the block afresh each time.
        let left = match s.wait_for(&format!("{cred} .cred-signin.none"), WAIT).await {
            Ok(id) => s.text(&id).await.unwrap_or_default(),
            Err(e) => panic!("after revoking, sign-in facts are still shown: {e}"),
        };
        if left.contains("Not signed in") || left.contains("Needs sign-in") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "after revoking, the Credentials page says {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.screenshot(&artifacts().join("54-credentials-revoked.png"))
        .await
        .unwrap();
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    let needs = s
        .wait_text(&format!("{card} .sign-in-state"), "Needs sign-in", WAIT)
        .await;
    s.screenshot(&artifacts().join("59-signed-out.png"))
        .await
        .unwrap();
    assert_eq!(hand_offs(&browsed), 1, "signing out opened the browser");
    s.close().await.unwrap();

    // Gone from the keyring, as the CLI (which reads it) sees it.
    let status = tokio::task::spawn_blocking({
        let data = data.clone();
        move || cli_ok(&data, &["auth", "status", "remote"])
    })
    .await
    .unwrap();
    assert!(status.contains("not signed in"), "{status}");

    // Nothing the app wrote (database, logs) holds a token, of either launch.
    let held = issued(&fake);
    // Two access and two refresh tokens at least: the sign-in's and the refresh's.
    assert!(held.len() >= 4, "only {} tokens were issued", held.len());
    for t in &held {
        assert_no_file_contains(&data, t);
    }
    // Checked last so that the checks above run either way.
    if let Err(e) = needs {
        panic!("after signing out, the server's card does not say it needs sign-in: {e}");
    }
}
