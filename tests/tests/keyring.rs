//! The real OS keyring (Secret Service inside a private D-Bus session, started by `make test`
//! through scripts/with-keyring.sh) driven through the CLI: a secret set on stdin reaches the
//! server's environment, and never the database, the logs or a TRACE-level log line (SE-01,
//! SE-06).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::process::Output;

use switchboard_tests::scenario::keyring_available;
use switchboard_tests::*;

fn run(dir: &std::path::Path, args: &[&str], stdin: &str) -> Output {
    // rmcp's trace (whole messages) is what must not leak: a bare level keeps it at warn.
    run_cli(
        dir,
        args,
        stdin,
        &[("SWITCHBOARD_LOG", "switchboard=trace,rmcp=trace")],
    )
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn secrets_live_in_the_os_keyring_and_nowhere_else() {
    if !keyring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let canary = format!("kr-canary-{}-f00d", std::process::id());
    let name = format!("it.token{}", std::process::id());
    let fake = fake_server();
    let env = format!("MY_TOKEN=secret:{name}");
    let o = run(
        dir.path(),
        &[
            "server",
            "add",
            "kr",
            "--env",
            &env,
            "--",
            fake.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success());
    // The secret belongs to the server: set once the server exists.
    let o = run(
        dir.path(),
        &["secret", "set", "--server", "kr", &name],
        &format!("{canary}\n"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(dir.path(), &["server", "trust", "kr", "--yes"], "");
    assert!(o.status.success());
    let o = run(dir.path(), &["call", "kr", "env", "--yes"], "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The value reached the server (the env tool prints its environment)...
    assert!(
        contains(&o.stdout, &canary),
        "the server did not get the secret"
    );
    // ...but no log line, even at TRACE where rmcp logs whole messages.
    assert!(!o.stderr.is_empty(), "expected trace output");
    assert!(
        !contains(&o.stderr, &canary),
        "a log line leaked the secret"
    );

    let o = run(
        dir.path(),
        &["secret", "status", "--server", "kr", &name],
        "",
    );
    assert!(o.status.success());
    // Nothing on disk holds it: database, WAL, saved logs, trace.
    assert_no_file_contains(dir.path(), &canary);
    let o = run(
        dir.path(),
        &["secret", "delete", "--server", "kr", &name],
        "",
    );
    assert!(o.status.success());
    let o = run(
        dir.path(),
        &["secret", "status", "--server", "kr", &name],
        "",
    );
    assert!(!o.status.success());
}

/// SE-06: a server that echoes its keyring secret to stderr so that the secret straddles the
/// stderr line cut leaves no piece of it in `logs/NAME/stderr.log` (before the fix, 32 of its
/// characters were kept: the line was cut before it was redacted).
#[test]
fn a_secret_across_the_stderr_cut_leaves_no_piece_in_the_log() {
    if !keyring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let canary = format!("cut-{:08}-canary-0123456789-abcdefgh", std::process::id());
    let name = format!("it.cut{}", std::process::id());
    let fake = fake_server();
    let env = format!("MY_TOKEN=secret:{name}");
    // The secret starts 32 bytes before the line cut.
    let at = format!("MY_TOKEN:{}", switchboard_core::server_logs::MAX_LINE - 32);
    let o = run(
        dir.path(),
        &[
            "server",
            "add",
            "cut",
            "--env",
            &env,
            "--",
            fake.to_str().unwrap(),
            "--stderr-secret",
            &at,
        ],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(
        dir.path(),
        &["secret", "set", "--server", "cut", &name],
        &format!("{canary}\n"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(run(dir.path(), &["server", "trust", "cut", "--yes"], "")
        .status
        .success());
    let o = run(dir.path(), &["call", "cut", "env", "--yes"], "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(contains(&o.stdout, &canary), "the server did not get it");
    let log = std::fs::read_to_string(dir.path().join("logs/cut/stderr.log")).unwrap();
    let line = log
        .lines()
        .find(|l| l.starts_with("pppp"))
        .unwrap_or_else(|| panic!("the padded line was not kept:\n{log}"));
    // Not one piece of the secret, anywhere under the data dir.
    for piece in canary.as_bytes().windows(4) {
        let piece = std::str::from_utf8(piece).unwrap();
        assert!(
            !line[8000..].contains(piece),
            "a piece of the secret survived the cut: {piece:?} in {}",
            &line[8000..]
        );
    }
    assert!(line.ends_with("[line cut]"), "{}", &line[8000..]);
    assert_no_file_contains(dir.path(), &canary[..8]);
}
