//! The real OS keyring (Secret Service inside a private D-Bus session, started by `make test`
//! through scripts/with-keyring.sh) driven through the CLI: a secret set on stdin reaches the
//! server's environment, and never the database, the logs or a TRACE-level log line (SE-01,
//! SE-06).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::process::Output;

use switchboard_tests::*;

fn keyring_available() -> bool {
    let set = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    if !set {
        assert!(
            std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
            "make test must run these tests with the real keyring (SWITCHBOARD_TEST_KEYRING=1)"
        );
        eprintln!("skipped: SWITCHBOARD_TEST_KEYRING is not set (run through `make test`)");
    }
    set
}

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
