//! What happens after signing in, from the CLI (issue 12, AU-06/07/08, SE-01/06): refreshes that
//! keep the refresh token when the server sends none, a refused refresh that asks for a new
//! sign-in once instead of looping, expiry that survives a restart, step-up to a wider scope,
//! the bearer token only ever on the MCP server's requests, imported remote servers, and no
//! token or client secret in the data dir, the TRACE-level output, `export` or `server logs`.
//! Real keyring and `fake-browser`, like `oauth_cli.rs`; one server name per test (the keyring is
//! shared by every data dir).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod oauth_support;

use std::time::Duration;

use oauth_support::*;
use switchboard_core::oauth::now_secs;
use switchboard_tests::fake_oauth::{FakeOAuth, Mode, OAuthHandle, OAuthOpts, Side};
use switchboard_tests::*;

/// A fixture and a CLI on a fresh data dir with `name` added, approved and signed in.
async fn signed_in(name: &'static str, opts: OAuthOpts) -> (FakeOAuth, Cli, tempfile::TempDir) {
    let fake = FakeOAuth::start(opts).await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let url = fake.mcp_url.clone();
    blocking({
        let cli = cli.clone();
        move || {
            cli.add_remote(name, &url);
            let r = cli.ok(&["auth", "login", name]);
            assert!(r.out.contains(&format!("{name}: signed in")), "{}", r.out);
        }
    })
    .await;
    assert_eq!(cli.browsed().len(), 1, "one browser hand-off");
    (fake, cli, root)
}

/// `call NAME TOOL --yes` in a new process.
async fn call(cli: &Cli, name: &'static str, tool: &'static str) -> Ran {
    let cli = cli.clone();
    blocking(move || cli.run(&["call", name, tool, "--yes", "--json"])).await
}

/// The `refresh_token` form fields of the refresh requests, in order.
fn refreshed_with(state: &OAuthHandle) -> Vec<String> {
    state
        .token_requests()
        .iter()
        .filter(|r| r.form_param("grant_type").as_deref() == Some("refresh_token"))
        .map(|r| r.form_param("refresh_token").unwrap_or_default())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_without_a_new_refresh_token_keeps_the_old_one() {
    if !keyring_available() {
        return;
    }
    let (fake, cli, _root) = signed_in("r-keep", OAuthOpts::default()).await;
    fake.state.set_mode(Mode::RefreshOmitsRefreshToken);
    let original = fake.state.refresh_tokens();
    assert_eq!(original.len(), 1);
    for round in 1..=2 {
        fake.state.expire_access_tokens();
        let r = call(&cli, "r-keep", "whoami").await;
        assert!(r.ok, "call {round} after expiry:\n{}\n{}", r.out, r.err);
        assert!(r.out.contains("subject=user-1"), "{}", r.out);
        assert_eq!(fake.state.counts().refreshes, round, "round {round}");
    }
    assert_eq!(
        refreshed_with(&fake.state),
        vec![original[0].clone(), original[0].clone()],
        "both refreshes use the original refresh token (kept when the answer had none)"
    );
    assert_eq!(cli.browsed().len(), 1, "no new sign-in");
    let status = blocking({
        let cli = cli.clone();
        move || cli.ok(&["auth", "status", "r-keep"])
    })
    .await;
    assert!(status.out.contains("refreshable"), "{}", status.out);
}

/// A refresh the server refuses: the call says to sign in again, once; no loop.
async fn refused_refresh(name: &'static str, refuse: impl FnOnce(&OAuthHandle)) {
    let (fake, cli, _root) = signed_in(name, OAuthOpts::default()).await;
    refuse(&fake.state);
    fake.state.expire_access_tokens();
    let r = call(&cli, name, "whoami").await;
    assert!(
        !r.ok,
        "the call succeeded with a refused refresh:\n{}",
        r.out
    );
    assert_eq!(
        r.error_code().as_deref(),
        Some("auth_required"),
        "{}\n{}",
        r.out,
        r.err
    );
    let message = r.error_message().unwrap_or_default();
    assert!(
        message.contains(&format!("switchboard auth login {name}"))
            || message.contains("switchboard auth login"),
        "the call does not say to sign in again: {message}"
    );
    assert_eq!(
        fake.state.counts().token_refresh,
        1,
        "one refresh attempt for one call (no loop)"
    );
    assert_eq!(cli.browsed().len(), 1, "no sign-in started by itself");
    // A second call does not spend the refused refresh token again (AU-08: cleared).
    let again = call(&cli, name, "whoami").await;
    assert!(!again.ok);
    assert_eq!(
        again.error_code().as_deref(),
        Some("auth_required"),
        "{}",
        again.out
    );
    assert_eq!(
        fake.state.counts().token_refresh,
        1,
        "the refused refresh token was tried again (not cleared, AU-08)"
    );
    // AU-08: a refused refresh clears the stored credentials.
    // The status no longer promises a refresh.
    let status = blocking({
        let cli = cli.clone();
        move || cli.ok(&["auth", "status", name])
    })
    .await;
    assert!(
        !status.out.contains("refreshes on the next call"),
        "after a refused refresh, `auth status` still promises one: {}",
        status.out
    );
    assert!(
        status.out.contains("not signed in") || status.out.contains("sign in again"),
        "`auth status` after a refused refresh: {}",
        status.out
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_refresh_token_asks_for_a_new_sign_in_once() {
    if !keyring_available() {
        return;
    }
    refused_refresh("r-revoked", |s| s.revoke_all()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_grant_on_refresh_asks_for_a_new_sign_in_once() {
    if !keyring_available() {
        return;
    }
    refused_refresh("r-invalid", |s| {
        s.set_mode(Mode::TokenError(400, "invalid_grant".into()))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_survives_a_restart() {
    if !keyring_available() {
        return;
    }
    let before = now_secs();
    let (fake, cli, _root) = signed_in(
        "r-restart",
        OAuthOpts {
            access_ttl_secs: 600,
            ..OAuthOpts::default()
        },
    )
    .await;
    let after = now_secs();
    let (human, json) = blocking({
        let cli = cli.clone();
        move || {
            (
                cli.ok(&["auth", "status", "r-restart"]),
                cli.ok(&["auth", "status", "r-restart", "--json"]),
            )
        }
    })
    .await;
    let v: serde_json::Value = serde_json::from_str(json.out.trim()).unwrap();
    let s = &v[0]["sign_in"];
    let expires = s["expires_at"].as_u64().expect("expires_at");
    let signed_at = s["signed_in_at"].as_u64().expect("signed_in_at");
    assert!(
        (before..=after).contains(&signed_at),
        "signed_in_at {signed_at} not in [{before}, {after}]"
    );
    assert!(
        (before + 600..=after + 600).contains(&expires),
        "expires_at {expires} is not the fixture's ttl (600 s) after the sign-in [{before}, {after}]"
    );
    assert!(
        human.out.contains("access token expires in 9 min")
            || human.out.contains("access token expires in 10 min"),
        "{}",
        human.out
    );

    // A new process after the server expired the token: refreshes, no new sign-in.
    fake.state.expire_access_tokens();
    let r = call(&cli, "r-restart", "whoami").await;
    assert!(r.ok, "{}\n{}", r.out, r.err);
    assert_eq!(fake.state.counts().refreshes, 1);
    assert_eq!(cli.browsed().len(), 1, "no new sign-in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_expiry_refreshes_before_the_server_refuses() {
    if !keyring_available() {
        return;
    }
    // A 4 s token: rmcp refreshes once less than half of it is left. A new process knows that
    // from the stored issue time and expiry alone, so its first request carries a fresh token.
    let (fake, cli, _root) = signed_in(
        "r-proactive",
        OAuthOpts {
            access_ttl_secs: 4,
            ..OAuthOpts::default()
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let seen = fake.state.requests().len();
    let first_token = fake.state.access_tokens()[0].clone();
    let r = call(&cli, "r-proactive", "whoami").await;
    assert!(r.ok, "{}\n{}", r.out, r.err);
    assert!(fake.state.counts().refreshes >= 1, "no refresh");
    let stale: Vec<_> = fake.state.requests()[seen..]
        .iter()
        .filter(|q| q.side == Side::Resource)
        .filter(|q| q.header("authorization") == Some(&format!("Bearer {first_token}")))
        .map(|q| q.path.clone())
        .collect();
    assert!(
        stale.is_empty(),
        "the new process sent the expired token (its expiry was not kept): {stale:?}"
    );
    assert_eq!(cli.browsed().len(), 1, "no new sign-in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_asks_for_the_union_of_scopes() {
    // `auth login` runs in a new process: the 403's challenge (scope "mcp:read mcp:admin") must
    // have been remembered by the process that saw it, for the second sign-in to ask for it.
    if !keyring_available() {
        return;
    }
    // The resource metadata names only mcp:read, so the first sign-in asks for no more.
    let (fake, cli, _root) = signed_in(
        "r-stepup",
        OAuthOpts {
            prm_scopes: vec!["mcp:read".into()],
            ..OAuthOpts::default()
        },
    )
    .await;
    let first = fake.state.authorize_requests()[0]
        .query_param("scope")
        .unwrap_or_default()
        .to_owned();
    assert!(
        !first.contains("mcp:admin"),
        "first sign-in asked for {first:?}"
    );
    let r = call(&cli, "r-stepup", "admin").await;
    assert!(
        !r.ok,
        "admin ran without mcp:admin (first sign-in asked for {first:?}):\n{}",
        r.out
    );
    assert_eq!(
        r.error_code().as_deref(),
        Some("auth_required"),
        "{}",
        r.out
    );
    assert!(
        r.error_message()
            .unwrap_or_default()
            .contains("more permissions"),
        "{}",
        r.out
    );
    blocking({
        let cli = cli.clone();
        move || cli.ok(&["auth", "login", "r-stepup"])
    })
    .await;
    let asks = fake.state.authorize_requests();
    assert_eq!(asks.len(), 2);
    let scope = asks[1].query_param("scope").unwrap_or_default().to_owned();
    let scopes: Vec<&str> = scope.split_whitespace().collect();
    assert!(
        scopes.contains(&"mcp:read") && scopes.contains(&"mcp:admin"),
        "the second sign-in asked for {scope:?}, not the union of mcp:read and mcp:admin"
    );
    let r = call(&cli, "r-stepup", "admin").await;
    assert!(r.ok, "{}\n{}", r.out, r.err);
    assert!(r.out.contains("admin ok"), "{}", r.out);
}

/// AU-06 over everything the fixture saw: the bearer token only in the `Authorization` header
/// of the MCP server's requests; never in a query; never to the authorization server except
/// where it is the subject of the request (revocation).
fn assert_bearer_only_to_the_resource(state: &OAuthHandle) {
    assert!(
        state.tokens_in_query().is_empty(),
        "a token went in a URL: {:?}",
        state.tokens_in_query()
    );
    let access = state.access_tokens();
    for r in state.requests() {
        let bearer = r
            .header("authorization")
            .is_some_and(|h| h.to_ascii_lowercase().starts_with("bearer "));
        let query: String = r.query.iter().map(|(k, v)| format!("{k}={v}&")).collect();
        let headers: String = r
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        match r.side {
            Side::Resource => {
                assert!(
                    !bearer || r.path == "/mcp",
                    "a bearer token went to {} {}",
                    r.method,
                    r.path
                );
                for t in &access {
                    assert!(
                        !query.contains(t.as_str()),
                        "a token in {} ?{query}",
                        r.path
                    );
                }
            }
            Side::Auth => {
                assert!(
                    !bearer,
                    "a bearer token went to the authorization server's {}",
                    r.path
                );
                if r.path == "/revoke" {
                    continue;
                }
                let body = String::from_utf8_lossy(&r.body);
                for t in &access {
                    assert!(
                        !query.contains(t.as_str())
                            && !headers.contains(t.as_str())
                            && !body.contains(t.as_str()),
                        "an access token went to the authorization server's {}",
                        r.path
                    );
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_or_client_secret_leaks_anywhere() {
    if !keyring_available() {
        return;
    }
    let name = "r-canary";
    let (fake, cli, _root) = signed_in(
        name,
        OAuthOpts {
            confidential: true,
            ..OAuthOpts::default()
        },
    )
    .await;
    assert!(
        !fake.state.client_secrets().is_empty(),
        "the fixture issued no client secret"
    );
    // Call, refresh, call from new processes; step up; then everything the CLI can show.
    call(&cli, name, "whoami").await;
    fake.state.expire_access_tokens();
    let r = call(&cli, name, "whoami").await;
    assert!(r.ok, "{}\n{}", r.out, r.err);
    assert_eq!(fake.state.counts().refreshes, 1);
    let shown = blocking({
        let cli = cli.clone();
        move || {
            let mut shown = Vec::new();
            for args in [
                vec!["export", "--format", "claude"],
                vec!["export", "--format", "vscode"],
                vec!["export", "--format", "cursor"],
                vec!["export", "--format", "claude", "--json"],
                vec!["export", "--format", "vscode", "--json"],
                vec!["export", "--format", "cursor", "--json"],
                vec!["server", "logs", name],
                vec!["server", "logs", name, "--json"],
                vec!["server", "logs", name, "--trace", "--lines", "1000"],
                vec!["auth", "status", name, "--json"],
                vec!["auth", "status"],
                vec!["server", "list", "--json"],
                vec!["doctor", name],
            ] {
                let r = cli.run(&args);
                shown.push((format!("{args:?}"), format!("{}\n{}", r.out, r.err)));
            }
            shown
        }
    })
    .await;
    // Sign out last (its revocation requests carry the tokens, as they must).
    let out = blocking({
        let cli = cli.clone();
        move || cli.ok(&["auth", "logout", name])
    })
    .await;
    assert!(out.out.contains("revoked"), "{}", out.out);

    let secrets = canaries(&fake.state);
    assert!(secrets.len() >= 4, "{secrets:?}");
    for (what, text) in &shown {
        assert_no_canary(what, text, &secrets);
    }
    for c in &secrets {
        assert_no_file_contains(&cli.dir, c);
    }
    assert_no_canary("the CLI's output at TRACE level", &cli.said(), &secrets);
    assert!(
        cli.said().contains("TRACE") || cli.said().contains("trace"),
        "the CLI logged nothing at TRACE level; the canary check saw nothing"
    );
    // The secret went to the token endpoint by the registered method, never elsewhere.
    for r in fake.state.requests() {
        let seen = format!(
            "{}{}{}",
            String::from_utf8_lossy(&r.body),
            r.query
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<String>(),
            r.headers
                .iter()
                .map(|(k, v)| format!("{k}{v}"))
                .collect::<String>()
        );
        if r.side == Side::Resource || !matches!(r.path.as_str(), "/token" | "/revoke") {
            for s in fake.state.client_secrets() {
                assert!(!seen.contains(&s), "the client secret went to {}", r.path);
            }
        }
    }
    assert_bearer_only_to_the_resource(&fake.state);
}

/// Imports `file` (written with `body`, `{url}` replaced), then: the server keeps its URL, a
/// call says to sign in, `auth login` works, a call works, `export` has no token or secret.
async fn imported(name: &'static str, file: &'static str, body: &'static str) {
    let fake = FakeOAuth::start(OAuthOpts {
        confidential: true,
        ..OAuthOpts::default()
    })
    .await;
    let root = tempfile::tempdir().unwrap();
    let cli = Cli::new(root.path());
    let config = root.path().join(file);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, body.replace("{url}", &fake.mcp_url)).unwrap();
    let url = fake.mcp_url.clone();
    let exports = blocking({
        let cli = cli.clone();
        move || {
            cli.ok(&["import", config.to_str().unwrap()]);
            let list = cli.ok(&["server", "list", "--json"]);
            assert!(
                list.out.contains(&url),
                "the URL was not kept: {}",
                list.out
            );
            cli.ok(&["server", "trust", name, "--yes"]);
            let before = cli.run(&["call", name, "whoami", "--yes"]);
            assert!(!before.ok, "{}", before.out);
            assert!(
                before
                    .err
                    .contains(&format!("switchboard auth login {name}")),
                "{}",
                before.err
            );
            cli.ok(&["auth", "login", name]);
            let after = cli.ok(&["call", name, "whoami", "--yes"]);
            assert!(after.out.contains("subject=user-1"), "{}", after.out);
            ["claude", "vscode", "cursor"].map(|f| {
                let r = cli.ok(&["export", "--format", f]);
                (f, r.out)
            })
        }
    })
    .await;
    let secrets = canaries(&fake.state);
    assert!(!fake.state.client_secrets().is_empty());
    for (format, text) in &exports {
        assert_no_canary(format, text, &secrets);
    }
    assert!(
        exports.iter().any(|(_, t)| t.contains(&fake.mcp_url)),
        "no export names the server's URL: {exports:?}"
    );
    for c in &secrets {
        assert_no_file_contains(&cli.dir, c);
    }
    assert_bearer_only_to_the_resource(&fake.state);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_vscode_remote_server_signs_in() {
    if !keyring_available() {
        return;
    }
    imported(
        "r-vscode",
        ".vscode/mcp.json",
        r#"{"servers": {"r-vscode": {"type": "http", "url": "{url}"}}}"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_cursor_remote_server_signs_in() {
    if !keyring_available() {
        return;
    }
    imported(
        "r-cursor",
        ".cursor/mcp.json",
        r#"{"mcpServers": {"r-cursor": {"url": "{url}"}}}"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_claude_desktop_remote_server_signs_in() {
    if !keyring_available() {
        return;
    }
    imported(
        "r-claude",
        "claude_desktop_config.json",
        r#"{"mcpServers": {"r-claude": {"type": "http", "url": "{url}"}}}"#,
    )
    .await;
}
