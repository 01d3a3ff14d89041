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
//! - Revoke signs out: the authorization server revoked the refresh token.
//!
//! Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::fake_oauth::{FakeOAuth, OAuthOpts};
use switchboard_tests::webdriver::Driver;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_from_the_card_shows_the_domain_first_and_revokes_from_credentials() {
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
    let browser = workspace_bin("fake-browser");
    let browsed = dir.path().join("browser.log");

    let driver = Driver::start(&[
        ("SWITCHBOARD_DATA_DIR", data.as_path()),
        ("SWITCHBOARD_BROWSER", browser.as_path()),
        ("FAKE_BROWSER_LOG", browsed.as_path()),
    ])
    .await
    .unwrap();
    let s = driver
        .session(&workspace_bin("switchboard-desktop"))
        .await
        .unwrap();
    let card = r#"article[data-name="remote"]"#;

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
    let held: Vec<String> = fake
        .state
        .access_tokens()
        .into_iter()
        .chain(fake.state.refresh_tokens())
        .chain(fake.state.client_secrets())
        .collect();
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

    // Revoke: confirmed, then revoked at the server and gone here.
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
        "the refresh token was not revoked"
    );
    s.wait_text(&format!("{cred} .cred-signin"), "Not signed in", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("54-credentials-revoked.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // Nothing the app wrote (database, logs) holds a token.
    for t in &held {
        assert_no_file_contains(&data, t);
    }
}
