//! One desktop app per data directory, in the real window: a second launch on the same data
//! directory brings the first one's window up and exits 0 at once, opening no window and no
//! host of its own; a launch on another data directory is not blocked; closing and reopening
//! at once works (the new launch waits for the closing one).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::app_window;
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

/// Top-level windows titled "Switchboard" on the display, whoever owns them.
fn app_windows() -> usize {
    let out = Command::new("xwininfo")
        .args(["-root", "-tree"])
        .output()
        .expect("xwininfo (x11-utils) is needed to count windows");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"Switchboard\""))
        .count()
}

fn app_log(data: &Path) -> String {
    std::fs::read_to_string(data.join("logs/switchboard.log")).unwrap_or_default()
}

/// Runs the app on `data` and waits for it to exit; `None` (and killed) if it is still running
/// after `limit`.
async fn launch_and_wait(data: &Path, limit: Duration) -> Option<std::process::Output> {
    let run = tokio::process::Command::new(workspace_bin("switchboard-desktop"))
        .env("SWITCHBOARD_DATA_DIR", data)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(limit, run)
        .await
        .ok()
        .map(|r| r.unwrap())
}

#[tokio::test]
async fn a_second_launch_shows_the_first_window_and_exits() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();

    let (driver, s) = open_window(&data).await.unwrap();
    s.wait_for(".tabs", WAIT).await.unwrap();
    let windows = app_windows();
    assert!(windows >= 1, "the first window is not on the display");

    // The second launch hands over and exits 0, quickly.
    let started = Instant::now();
    let second = launch_and_wait(&data, Duration::from_secs(15))
        .await
        .expect("the second launch kept running");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{:?}: {stderr}", second.status);
    assert!(
        took < Duration::from_secs(10),
        "the hand-over took {took:?}"
    );
    assert!(stderr.contains("already running"), "{stderr}");

    // The first app got the request and is still the one window; the second opened none.
    let asked = eventually(Duration::from_secs(5), || {
        app_log(&data).contains("another launch on this data directory asked for the window")
    })
    .await;
    assert!(asked, "the first app never heard of the second launch");
    assert_eq!(app_windows(), windows, "a second window appeared");
    assert_eq!(
        app_log(&data).matches("starting desktop shell").count(),
        1,
        "a second shell started on the same data directory"
    );
    let visible = s.execute("return document.visibilityState;").await.unwrap();
    assert_eq!(visible, serde_json::json!("visible"));
    s.screenshot(&artifacts().join("60-second-launch-handed-over.png"))
        .await
        .unwrap();

    // Another data directory is not blocked: that app starts and opens its own window.
    let other = dir.path().join("other");
    let mut third = KillOnDrop(
        Command::new(workspace_bin("switchboard-desktop"))
            .env("SWITCHBOARD_DATA_DIR", &other)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let opened = eventually(WAIT, || app_windows() > windows).await;
    assert!(
        third.0.try_wait().unwrap().is_none(),
        "the app on another data directory exited"
    );
    assert!(opened, "the app on another data directory opened no window");
    assert!(app_log(&other).contains("starting desktop shell"));
    drop(third);

    // Close and reopen at once, as a person (or a test) does: the new launch waits for the
    // closing app to let go of the data directory instead of handing over to it.
    s.close().await.unwrap();
    let s = app_window(&driver).await;
    s.wait_for(".tabs", WAIT).await.unwrap();
    s.close().await.unwrap();
}
