//! A damaged database through the real CLI (ST-04): a file cut short or overwritten gives one
//! clear message naming the file and the ways out, exits non-zero without a panic, and the
//! file is left as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use switchboard_tests::*;

#[test]
fn a_cut_database_is_named_with_the_ways_out_and_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let db = cut_database(data);
    let before = std::fs::read(&db).unwrap();
    for args in [&["server", "list"][..], &["policy", "list"], &["doctor"]] {
        let o = run_cli(data, args, "", &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded on a cut database");
        assert_ne!(o.status.code(), Some(101), "{args:?} panicked: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains(&db.display().to_string()), "{args:?}: {err}");
        assert!(err.contains("damaged") && err.contains("aside"), "{err}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file was changed");
    // Moved aside, Switchboard starts fresh.
    std::fs::rename(&db, data.join("old.sqlite")).unwrap();
    let _ = std::fs::remove_file(data.join("switchboard.sqlite-wal"));
    let _ = std::fs::remove_file(data.join("switchboard.sqlite-shm"));
    let o = run_cli(data, &["server", "list"], "", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
