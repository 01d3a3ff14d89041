//! One-shot commands against a server that never starts (issue 11, point 10): one try, not
//! five with their backoff, and an error that quotes the last lines the server wrote to stderr
//! and says where to look next.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::Value;
use switchboard_tests::*;

fn add_trusted(dir: &std::path::Path, name: &str, args: &[&str]) {
    let fake = fake_server();
    let mut add = vec!["server", "add", name, "--", fake.to_str().unwrap()];
    add.extend_from_slice(args);
    cli_ok(dir, &add);
    cli_ok(dir, &["server", "trust", name, "--yes"]);
}

#[test]
fn a_server_that_crashes_at_start_costs_one_try_and_shows_why() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    add_trusted(
        dir.path(),
        "crashy",
        &[
            "--mode",
            "crash-on-init",
            "--stderr-banner",
            "Traceback: ModuleNotFoundError: No module named 'mcp_thing'",
            "--state-file",
            starts.to_str().unwrap(),
        ],
    );
    let o = run_cli(
        dir.path(),
        &["call", "crashy", "echo", "--args", r#"{"text":"hi"}"#],
        "",
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let tries = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(tries.trim(), "1", "started more than once: {err}");
    assert!(err.contains("did not start"), "{err}");
    assert!(!err.contains("crash loop"), "{err}");
    assert!(err.contains("No module named 'mcp_thing'"), "{err}");
    assert!(err.contains("switchboard doctor crashy"), "{err}");
    assert!(err.contains("switchboard server logs crashy"), "{err}");

    // The same under --json: one object on stdout, the traceback in its message.
    std::fs::remove_file(&starts).unwrap();
    let o = run_cli(
        dir.path(),
        &["--json", "tools", "--server", "crashy"],
        "",
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "not_available", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("No module named"), "{message}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().trim(), "1");
}
