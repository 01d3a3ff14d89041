//! `switchboard server link NAME` through the real CLI on a real data directory: the link it
//! prints parses back (with the core's parser, the one the desktop app uses) to exactly the
//! configured spec, carries no secret, and refuses what it cannot do.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;

use base64::Engine as _;
use switchboard_core::config::link::parse_link;
use switchboard_core::config::{ServerSpec, ValueSource};
use switchboard_tests::*;

fn spec_of(data: &Path, name: &str) -> ServerSpec {
    let out = cli_ok(data, &["--json", "server", "show", name]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    serde_json::from_value(v["spec"].clone()).unwrap()
}

fn link_of(data: &Path, name: &str) -> String {
    cli_ok(data, &["server", "link", name]).trim().to_owned()
}

fn decoded(link: &str) -> String {
    let config = link.split_once("config=").unwrap().1;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(config)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn a_printed_link_parses_back_to_the_same_local_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    cli_ok(
        data,
        &[
            "server",
            "add",
            "linked",
            "--env",
            "LOG_LEVEL=debug",
            "--env",
            "GITHUB_TOKEN=secret:GITHUB_TOKEN",
            "--timeout",
            "60",
            "--init-timeout",
            "60",
            "--",
            fake,
            "--stderr-banner",
            "; rm -rf ~ $(id) `id` | tee /etc/x && echo 'q' \"d\"",
            "",
        ],
    );
    let spec = spec_of(data, "linked");
    let link = link_of(data, "linked");
    assert!(link.starts_with("switchboard://add?config="), "{link}");
    let back = parse_link(&link).unwrap();
    assert_eq!(back.spec, spec);
    assert_eq!(back.asked, ["GITHUB_TOKEN"]);
    assert!(decoded(&link).contains(r#""name":"GITHUB_TOKEN","ask":true"#));
}

#[test]
fn a_printed_link_parses_back_to_the_same_remote_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    cli_ok(
        data,
        &[
            "server",
            "add",
            "remote",
            "--url",
            "https://mcp.example.com/mcp?team=a&x=%20",
            "--header",
            "Authorization=secret:Authorization",
            "--header",
            "X-Team=blue",
        ],
    );
    let spec = spec_of(data, "remote");
    let back = parse_link(&link_of(data, "remote")).unwrap();
    assert_eq!(back.spec, spec);
    assert_eq!(back.asked, ["Authorization"]);
}

#[test]
fn what_a_link_cannot_carry_is_said_and_no_secret_is_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let cwd = dir.path().join("private-work-dir");
    std::fs::create_dir(&cwd).unwrap();
    cli_ok(
        data,
        &[
            "server",
            "add",
            "mine",
            "--cwd",
            cwd.to_str().unwrap(),
            "--env",
            "TOKEN=secret:TOKEN",
            "--",
            "/bin/true",
        ],
    );
    let out = run_cli(data, &["server", "link", "mine"], "", &[]);
    assert!(out.status.success());
    let link = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("working directory"), "{stderr}");
    let json = decoded(link.trim());
    assert!(!json.contains("private-work-dir"), "{json}");
    let back = parse_link(link.trim()).unwrap();
    assert_eq!(back.asked, ["TOKEN"]);
    assert!(matches!(
        back.spec.values()[0].value,
        ValueSource::Secret(_)
    ));

    let json_out = cli_ok(data, &["--json", "server", "link", "mine"]);
    let v: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(v["link"].as_str().unwrap(), link.trim());
    assert_eq!(v["left_out"].as_array().unwrap().len(), 1);

    let missing = run_cli(data, &["server", "link", "nobody"], "", &[]);
    assert!(!missing.status.success());
    assert!(missing.stdout.is_empty());
}

/// The host side of a link, as the window drives it: a proposal stores and starts nothing;
/// approval adds and trusts exactly what was shown, with the typed secret in the keyring.
#[tokio::test]
async fn a_proposal_stores_nothing_and_approval_adds_exactly_what_was_shown() {
    use switchboard_core::config::launch::Fingerprint;
    use switchboard_core::config::link::make_link;
    use switchboard_core::host::{HostError, TrustState};
    use switchboard_core::ids::SecretName;
    use switchboard_core::redact::Secret;

    let (host, dir) = test_host().await;
    let pids = dir.path().join("pids");
    let spec = with_env(
        fake_spec("linked", &["--pid-file", pids.to_str().unwrap()]),
        "API_TOKEN",
        ValueSource::Secret(SecretName::new("API_TOKEN").unwrap()),
    );
    let link = make_link(&spec).unwrap().url;

    let view = host.propose_link(&link).await.unwrap();
    assert_eq!(view.trust.server, sid("linked"));
    assert_eq!(view.asked, ["API_TOKEN"]);
    assert!(view.renamed_from.is_none());
    let shown: Vec<String> = view.trust.lines.iter().map(|(_, v)| v.clone()).collect();
    assert!(
        shown.iter().any(|l| l.contains("fake-mcp-server")),
        "{shown:?}"
    );
    assert!(host.list_servers().await.unwrap().is_empty());
    assert!(host.handle(&sid("linked")).is_none());
    assert!(!pids.exists(), "something ran before approval");

    // A fingerprint other than the one shown, or a secret for a field the link did not ask
    // for: refused, and nothing is left behind.
    let wrong = host
        .add_from_link(&link, vec![], &Fingerprint("0".repeat(64)))
        .await;
    assert!(matches!(wrong, Err(HostError::TrustRace(_))), "{wrong:?}");
    let smuggled = host
        .add_from_link(
            &link,
            vec![("PATH".into(), Secret::new("/evil"))],
            &view.trust.fingerprint,
        )
        .await;
    assert!(
        matches!(smuggled, Err(HostError::Invalid(_))),
        "{smuggled:?}"
    );
    assert!(host.list_servers().await.unwrap().is_empty());

    let id = host
        .add_from_link(
            &link,
            vec![("API_TOKEN".into(), Secret::new("typed-by-the-person"))],
            &view.trust.fingerprint,
        )
        .await
        .unwrap();
    assert_eq!(id, sid("linked"));
    let mut stored = host.server(&id).await.unwrap();
    stored.timeouts = spec.timeouts;
    assert_eq!(stored, spec);
    assert_eq!(
        host.trust_view(&id).await.unwrap().state,
        TrustState::Trusted
    );
    assert!(host
        .server_secret_is_set(&id, &SecretName::new("API_TOKEN").unwrap())
        .await
        .unwrap());
    assert!(host.handle(&id).is_none(), "approval alone starts nothing");

    // The same link again: proposed under a free name, saying which name was taken.
    let again = host.propose_link(&link).await.unwrap();
    assert_eq!(again.trust.server, sid("linked-2"));
    assert_eq!(again.renamed_from, Some(sid("linked")));
    host.shutdown().await;
}
