//! LK-01 through the real CLI on real data directories: an install link never carries a
//! credential. `server link` refuses a server whose arguments or URL query hold one, naming
//! each; `server add` warns about them and, asked to, moves them to the keyring as
//! `${secret:NAME}` placeholders, which a link then carries by name and `server install` asks
//! for again on the receiving side, into that side's keyring.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::Output;

use base64::Engine as _;
use switchboard_tests::scenario::keyring_available;
use switchboard_tests::*;

const TOKEN: &str = "sk-LKCANARY0123456789abcdef";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn decoded(link: &str) -> String {
    let config = link.split_once("config=").unwrap().1;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(config)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

fn link_refused(data: &Path, name: &str) -> String {
    let o = run_cli(data, &["server", "link", name], "", &[]);
    assert!(!o.status.success(), "a link was made: {}", text(&o.stdout));
    assert!(!text(&o.stdout).contains("LKCANARY"), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(!err.contains("LKCANARY"), "{err}");
    err
}

/// LK-01: a token in a local server's arguments (after a flag that names it, inline after
/// `=`, or by its shape alone) never goes into a link: `server link` refuses and says which
/// arguments hold one.
#[test]
fn a_link_refuses_a_token_in_the_arguments_naming_each() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let api_key = format!("--api-key={TOKEN}x");
    cli_ok(
        data,
        &[
            "server",
            "add",
            "tok",
            "--",
            "/bin/true",
            "--token",
            TOKEN,
            "--mode",
            "fast",
            &api_key,
        ],
    );
    let err = link_refused(data, "tok");
    assert!(err.contains("argument 2"), "{err}");
    assert!(err.contains("argument 5"), "{err}");
    assert!(!err.contains("argument 4"), "{err}");
}

/// LK-01: a credential in a remote server's URL query (`?api_key=`) never goes into a link.
#[test]
fn a_link_refuses_a_credential_in_the_url_query() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let url = format!("https://mcp.example.com/mcp?team=blue&api_key={TOKEN}");
    cli_ok(data, &["server", "add", "q", "--url", &url]);
    let err = link_refused(data, "q");
    assert!(err.contains("api_key"), "{err}");
    assert!(!err.contains("team"), "{err}");
}

/// LK-01: a link that a page made with a token in its arguments is refused on the receiving
/// side as well, before anything is stored.
#[test]
fn installing_a_link_with_a_token_in_its_arguments_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let json = format!(
        r#"{{"type":"stdio","name":"evil","command":"/bin/true","args":["--token","{TOKEN}"]}}"#
    );
    let link = format!(
        "switchboard://add?config={}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    );
    let o = run_cli(dir.path(), &["server", "install", &link, "--yes"], "", &[]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("argument 2"), "{err}");
    assert!(!err.contains("LKCANARY"), "{err}");
    let list = cli_ok(dir.path(), &["--json", "server", "list"]);
    assert!(!list.contains("evil"), "{list}");
}

/// LK-01: `server add` says which arguments and query values look like credentials, as import
/// does, and how to move them to the keyring.
#[test]
fn server_add_warns_about_credential_arguments_and_query_values() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let o = run_cli(
        data,
        &["server", "add", "a", "--", "/bin/true", "--token", TOKEN],
        "",
        &[],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("argument 2 looks like a credential"), "{err}");
    assert!(err.contains("--move-credentials"), "{err}");
    assert!(!err.contains("LKCANARY"), "{err}");

    let url = format!("https://mcp.example.com/mcp?key={TOKEN}");
    let o = run_cli(data, &["server", "add", "b", "--url", &url], "", &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("the URL's query parameter `key` looks like a credential"),
        "{err}"
    );
}

fn ok(o: Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", text(&o.stderr));
    text(&o.stdout) + &text(&o.stderr)
}

/// LK-01, the allowed path: `server add --move-credentials` puts an argument's token in the
/// keyring (the config keeps `${secret:token}`), the server still gets it at start, the link
/// carries the placeholder and no secret byte, and `server install` on another data directory
/// asks for the value (stdin here) and keeps it in that keyring, never in its files.
#[test]
fn a_moved_argument_token_round_trips_through_a_link_without_its_value() {
    if !keyring_available() {
        return;
    }
    // Each run gets its own names: the test keyring is shared by the tests of one run.
    let pid = std::process::id();
    let token = format!("sk-LKCANARY{pid}abcdefghijkl");
    let theirs = format!("sk-LKCANARY{pid}receiverzz");
    let (sender, receiver) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let name = format!("lk{pid}");
    let fake = fake_server();
    let out = ok(
        run_cli(
            sender.path(),
            &[
                "server",
                "add",
                &name,
                "--move-credentials",
                "--",
                fake.to_str().unwrap(),
                "--stderr-banner",
                &token,
            ],
            "",
            &[],
        ),
        "add",
    );
    assert!(out.contains("argument 2"), "{out}");
    assert!(!out.contains("LKCANARY"), "{out}");
    assert_no_file_contains(sender.path(), &token);
    // The server still receives it: its banner reaches the stderr log, redacted.
    ok(
        run_cli(sender.path(), &["server", "trust", &name, "--yes"], "", &[]),
        "trust",
    );
    ok(
        run_cli(sender.path(), &["server", "restart", &name], "", &[]),
        "restart",
    );
    let log = std::fs::read_to_string(sender.path().join("logs").join(&name).join("stderr.log"))
        .unwrap_or_default();
    assert!(
        !log.contains("${secret:"),
        "the placeholder reached the server: {log}"
    );
    assert_no_file_contains(sender.path(), &token);

    let link = ok(
        run_cli(sender.path(), &["server", "link", &name], "", &[]),
        "link",
    );
    let link = link.lines().next().unwrap().trim().to_owned();
    let json = decoded(&link);
    assert!(!json.contains("LKCANARY"), "{json}");
    assert!(json.contains("${secret:arg2}"), "{json}");
    // The receiver stands for another machine: one keyring serves every data directory here,
    // so the sender's server (and its keyring entry) goes first.
    ok(
        run_cli(sender.path(), &["server", "remove", &name], "", &[]),
        "remove",
    );

    // Without a value for the asked secret, nothing is installed.
    let o = run_cli(
        receiver.path(),
        &["server", "install", &link, "--yes"],
        "",
        &[],
    );
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("arg2"), "{}", text(&o.stderr));
    let out = ok(
        run_cli(
            receiver.path(),
            &["server", "install", &link, "--yes"],
            &format!("{theirs}\n"),
            &[],
        ),
        "install",
    );
    assert!(out.contains("arg2"), "{out}");
    assert!(!out.contains("LKCANARY"), "{out}");
    assert_no_file_contains(receiver.path(), &theirs);
    let status = ok(
        run_cli(
            receiver.path(),
            &["secret", "status", "--server", &name, "arg2"],
            "",
            &[],
        ),
        "status",
    );
    assert!(
        status.contains("set") && !status.contains("not set"),
        "{status}"
    );
    ok(
        run_cli(receiver.path(), &["server", "remove", &name], "", &[]),
        "remove",
    );
}
