//! Signing in to a remote server from the CLI, end to end against our authorization server and
//! protected MCP server on loopback (`switchboard_tests::fake_oauth`), with the real OS keyring
//! (a private Secret Service started by `make test`) and a browser stand-in (`fake-browser`, given
//! through `SWITCHBOARD_BROWSER`) that follows the authorization server's redirect to the CLI's
//! loopback listener: sign in, call, call again from a new process (no sign-in), expire the
//! access token, call again (refreshed silently), sign out (revoked at the server, gone from the
//! keyring). Issue 12, AU-* and SE-01.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::Output;

use switchboard_tests::fake_oauth::{FakeOAuth, OAuthOpts};
use switchboard_tests::scenario::keyring_available;
use switchboard_tests::*;

struct Cli<'a> {
    dir: &'a Path,
    browser_log: std::path::PathBuf,
}

impl Cli<'_> {
    fn run(&self, args: &[&str]) -> Output {
        let browser = workspace_bin("fake-browser");
        run_cli(
            self.dir,
            args,
            "",
            &[
                ("SWITCHBOARD_BROWSER", browser.to_str().unwrap()),
                ("FAKE_BROWSER_LOG", self.browser_log.to_str().unwrap()),
                ("SWITCHBOARD_LOG", "switchboard=trace,rmcp=trace"),
            ],
        )
    }

    fn ok(&self, args: &[&str]) -> (String, String) {
        let o = self.run(args);
        // Every word the CLI said, for the canary check at the end (TRACE level, rmcp too).
        let mut all = std::fs::read(self.dir.join("said.log")).unwrap_or_default();
        all.extend_from_slice(&o.stdout);
        all.extend_from_slice(&o.stderr);
        std::fs::write(self.dir.join("said.log"), all).unwrap();
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        );
        assert!(o.status.success(), "{args:?} failed:\n{err}");
        (out, err)
    }
}

async fn in_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

/// Runs one successful CLI command off the runtime (the fixture serves on this runtime).
async fn cli_ok_async(d: &Path, log: &Path, args: &[&str]) -> (String, String) {
    let (d, log) = (d.to_path_buf(), log.to_path_buf());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    in_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Cli {
            dir: &d,
            browser_log: log,
        }
        .ok(&args)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_lasts_refreshes_and_signs_out() {
    if !keyring_available() {
        return;
    }
    let fake = FakeOAuth::start(OAuthOpts::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let log = dir.path().join("browser.log");
    let url = fake.mcp_url.clone();
    let (out, err) = in_blocking({
        let (d, log) = (d.clone(), log.clone());
        move || {
            let cli = Cli {
                dir: &d,
                browser_log: log,
            };
            cli.ok(&["server", "add", "remote", "--url", &url]);
            cli.ok(&["server", "trust", "remote", "--yes"]);
            // Before signing in, a call says how to sign in instead of printing a raw 401.
            let o = cli.run(&["call", "remote", "whoami", "--yes"]);
            assert!(!o.status.success());
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert!(err.contains("switchboard auth login remote"), "{err}");
            // So does `tools`, which lists the other servers and skips this one.
            let (_, err) = cli.ok(&["tools"]);
            assert!(
                err.contains("skipped remote") && err.contains("switchboard auth login remote"),
                "{err}"
            );
            cli.ok(&["auth", "login", "remote"])
        }
    })
    .await;
    assert!(out.contains("remote: signed in"), "{out}\n{err}");
    assert!(
        err.contains("browser: opening the sign-in page of 127.0.0.1"),
        "{err}"
    );
    let browsed = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        browsed.lines().count(),
        1,
        "one browser hand-off: {browsed}"
    );
    assert_eq!(fake.state.counts().registrations, 1);

    // A new process calls with the stored sign-in: no browser.
    let (out, _) = cli_ok_async(&d, &log, &["call", "remote", "whoami", "--yes"]).await;
    assert!(out.contains("client_"), "whoami names the client: {out}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);

    // The access token expires: the next call refreshes silently.
    fake.state.expire_access_tokens();
    let refreshes = fake.state.counts().refreshes;
    cli_ok_async(&d, &log, &["call", "remote", "whoami", "--yes"]).await;
    assert_eq!(
        fake.state.counts().refreshes,
        refreshes + 1,
        "refreshed once"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().lines().count(),
        1,
        "no new sign-in"
    );

    // No token or secret reached the data dir, or anything the CLI printed at TRACE level
    // (said.log lives in the data dir, so this covers both).
    for t in fake
        .state
        .access_tokens()
        .iter()
        .chain(fake.state.refresh_tokens().iter())
    {
        assert_no_file_contains(&d, t);
    }

    // Sign out: revoked at the server, gone from the keyring.
    let (out, _) = cli_ok_async(&d, &log, &["auth", "logout", "remote"]).await;
    assert!(out.contains("revoked"), "{out}");
    let latest = fake.state.refresh_tokens().last().cloned().unwrap();
    assert!(
        fake.state.is_revoked(&latest),
        "the refresh token was revoked"
    );
    let (out, _) = cli_ok_async(&d, &log, &["auth", "status", "remote"]).await;
    assert!(out.contains("not signed in"), "{out}");
    assert!(
        fake.state.tokens_in_query().is_empty(),
        "a token went in a URL"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_need_no_browser_and_renew_themselves() {
    if !keyring_available() {
        return;
    }
    use switchboard_tests::fake_oauth::PreRegistered;
    let secret = format!("cc-secret-{}", std::process::id());
    let fake = FakeOAuth::start(OAuthOpts {
        preregistered: Some(PreRegistered {
            client_id: "machine-1".into(),
            client_secret: Some(secret.clone()),
        }),
        ..OAuthOpts::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let log = dir.path().join("browser.log");
    let url = fake.mcp_url.clone();
    let (out, err) = in_blocking({
        let (d, log, secret) = (d.clone(), log.clone(), secret.clone());
        move || {
            let cli = Cli {
                dir: &d,
                browser_log: log,
            };
            cli.ok(&["server", "add", "m2m", "--url", &url]);
            cli.ok(&["server", "trust", "m2m", "--yes"]);
            let o = run_cli(
                &d,
                &[
                    "auth",
                    "client-credentials",
                    "m2m",
                    "--client-id",
                    "machine-1",
                ],
                &secret,
                &[],
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            cli.ok(&["call", "m2m", "whoami", "--yes"])
        }
    })
    .await;
    assert!(out.contains("machine-1"), "{out}\n{err}");
    assert!(!log.exists(), "no browser for client credentials");
    assert_eq!(fake.state.counts().token_client_credentials, 1);

    // The token expires: the next process gets a new one by itself.
    fake.state.expire_access_tokens();
    cli_ok_async(&d, &log, &["call", "m2m", "whoami", "--yes"]).await;
    assert_eq!(fake.state.counts().token_client_credentials, 2);
    assert_no_file_contains(&d, &secret);
    for t in fake.state.access_tokens() {
        assert_no_file_contains(&d, &t);
    }
}
