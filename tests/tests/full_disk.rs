//! A full disk under the real CLI (issue 11, point 3): the write fails with a sentence that says
//! the disk is full and what to do (and, with `--json`, the code `disk_full`), and nothing
//! stored before it is lost.
//!
//! The disk is made full for the database alone, for real: the database's write-ahead log
//! (`switchboard.sqlite-wal`, where every write goes first) is replaced by a device node that
//! behaves as `/dev/full`, so SQLite's writes get `ENOSPC` from the kernel exactly as on a full
//! file system. Creating a device node needs root (CAP_MKNOD) and a file system mounted
//! without `nodev`; elsewhere the test says it is skipped. SQLite deletes the log when the last
//! connection closes, so the node is made again before each run. Per-operation coverage
//! (servers, messages, audit, policy) is in core's `store::full_tests`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::{Command, Output};

use switchboard_tests::*;

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Puts a "full disk" device (char 1,7, as `/dev/full`) at `path`; false where that is not
/// allowed.
fn full_device(path: &Path) -> bool {
    let _ = std::fs::remove_file(path);
    Command::new("mknod")
        .arg(path)
        .args(["c", "1", "7"])
        .output()
        .is_ok_and(|o| o.status.success())
        // A `nodev` mount lets the node be made but not opened as a device.
        && std::fs::write(path, b"x")
            .is_err_and(|e| e.kind() == std::io::ErrorKind::StorageFull)
}

/// Fails unless `o` is the full-disk failure, in words for a person.
fn assert_full_disk(o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the write did not fail:\n{}", text(o));
    assert!(err.contains("the disk is full"), "{}", text(o));
    assert!(err.contains("free some space"), "{}", text(o));
    assert!(err.contains("intact"), "{}", text(o));
    assert!(
        !err.contains("database or disk is full") && !err.contains("code: 13"),
        "SQLite's own words reached the person:\n{}",
        text(o)
    );
}

#[test]
fn a_full_disk_fails_the_write_clearly_and_keeps_what_was_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    cli_ok(&dir, &["server", "add", "kept", "--", fake]);
    cli_ok(
        &dir,
        &[
            "policy",
            "add",
            "kept-rule",
            "--effect",
            "deny",
            "--tool",
            "nothing",
        ],
    );
    let servers = cli_ok(&dir, &["--json", "server", "list"]);
    let rules = cli_ok(&dir, &["--json", "policy", "list"]);
    let audit = cli_ok(&dir, &["audit", "export"]);
    assert!(servers.contains("kept") && rules.contains("kept-rule"));

    let wal = dir.join("switchboard.sqlite-wal");
    if !full_device(&wal) {
        eprintln!("skipped: cannot make a /dev/full device node here (needs root and a dev mount)");
        return;
    }
    assert_full_disk(&run_cli(
        &dir,
        &["server", "add", "lost", "--", fake],
        "",
        &[],
    ));

    assert!(full_device(&wal));
    let o = run_cli(
        &dir,
        &[
            "--json",
            "policy",
            "add",
            "lost-rule",
            "--effect",
            "deny",
            "--tool",
            "x",
        ],
        "",
        &[],
    );
    assert_full_disk(&o);
    let answer: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(answer["error"]["code"], "disk_full", "{}", text(&o));

    // Space again: everything from before is there, nothing of the failed writes is.
    let _ = std::fs::remove_file(&wal);
    assert_eq!(cli_ok(&dir, &["--json", "server", "list"]), servers);
    assert_eq!(cli_ok(&dir, &["--json", "policy", "list"]), rules);
    assert_eq!(cli_ok(&dir, &["audit", "export"]), audit);
    cli_ok(&dir, &["audit", "verify"]);
    // And writing works again.
    cli_ok(&dir, &["server", "add", "later", "--", fake]);
    assert!(cli_ok(&dir, &["server", "list"]).contains("later"));
}
