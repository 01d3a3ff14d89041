//! The app with a damaged database, in the real window (ST-04): it opens, says what is wrong
//! with which file and the ways out, and changes nothing. Screenshot in `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::*;

#[tokio::test]
async fn a_damaged_database_is_explained_in_the_window() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let db = cut_database(&data);
    let before = std::fs::read(&db).unwrap();

    let (_driver, s) = open_window(&data).await.unwrap();
    let wait = Duration::from_secs(30);
    let text = s
        .wait_text(".startup-problem .startup-message", "damaged", wait)
        .await
        .unwrap();
    assert!(text.contains(&db.display().to_string()), "{text}");
    assert!(text.contains("aside"), "{text}");
    assert!(
        s.find_all(".tabs").await.unwrap().is_empty(),
        "the pages were mounted"
    );
    s.screenshot(&artifacts().join("50-damaged-database.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file was changed");
}
