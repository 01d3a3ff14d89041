//! Servers start when needed, in the real app window (issue 14, point 5): at launch only the
//! server kept always on runs; the other's card says it starts when needed, and the catalog
//! shows the tools it offered when it last ran, marked "last known". Opening one of them starts
//! it. Marking it always on survives a restart of the app, which then starts it at launch.
//! Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::scenario::{app_window, AppData};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

async fn launch(driver: &Driver) -> Session {
    let s = app_window(driver).await;
    s.wait_text(r#"article[data-name="keep"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    s
}

async fn checked(s: &Session, css: &str) -> bool {
    s.execute(&format!(
        "return document.querySelector('{css}')?.checked === true;"
    ))
    .await
    .unwrap()
    .as_bool()
    .unwrap_or(false)
}

#[tokio::test]
async fn servers_start_when_their_tools_are_opened_and_always_on_ones_at_launch() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let app = AppData::on(data)
        .approved_fake("keep", &[])
        .approved_fake("lazy", &[]);
    app.cli(&["server", "always-on", "keep", "on"]);
    // One CLI call: it starts the server for itself, stops it at the end, and leaves the tools
    // it saw for the app to show.
    cli_ok(
        data,
        &["call", "lazy", "echo", "--args", r#"{"text":"x"}"#, "--yes"],
    );

    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = launch(&driver).await;
    s.wait_text(
        r#"article[data-name="lazy"] .badge"#,
        "starts when needed",
        WAIT,
    )
    .await
    .unwrap();
    assert!(checked(&s, r#"article[data-name="keep"] .always-on-toggle"#).await);
    assert!(!checked(&s, r#"article[data-name="lazy"] .always-on-toggle"#).await);
    s.screenshot(&artifacts().join("demand-01-servers-at-launch.png"))
        .await
        .unwrap();

    // The catalog lists what lazy offered, marked; opening a tool starts it.
    s.click_on(r#".tab[data-page="tools"]"#, WAIT)
        .await
        .unwrap();
    let row = r#".tool-row[data-tool="lazy/echo"]"#;
    s.wait_text(&format!("{row} .last-known"), "last known", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("demand-02-last-known-tools.png"))
        .await
        .unwrap();
    // Not started by the page itself: the mark is still there when the person opens the tool.
    assert!(!s
        .find_all(&format!("{row} .last-known"))
        .await
        .unwrap()
        .is_empty());
    s.click_on(row, WAIT).await.unwrap();
    // Started: the mark goes once the live catalog replaces the last-known one. (The detail's
    // "not running" note shows only until then, which can be sooner than a look at it.)
    let gone = eventually_async(WAIT, || async {
        s.find_all(&format!("{row} .last-known"))
            .await
            .map(|v| v.is_empty())
            .unwrap_or(false)
            && !s.find_all(row).await.unwrap_or_default().is_empty()
    })
    .await;
    assert!(gone, "opening the tool did not start its server");
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(r#"article[data-name="lazy"] .badge"#, "running", WAIT)
        .await
        .unwrap();

    // Always on, kept across a restart of the app, which starts it at launch.
    s.click_on(r#"article[data-name="lazy"] .always-on-toggle"#, WAIT)
        .await
        .unwrap();
    let on = eventually_async(WAIT, || async {
        checked(&s, r#"article[data-name="lazy"] .always-on-toggle"#).await
    })
    .await;
    assert!(on, "the switch did not stay on");
    s.screenshot(&artifacts().join("demand-03-always-on.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
    drop(driver);

    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = launch(&driver).await;
    s.wait_text(r#"article[data-name="lazy"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    s.close().await.unwrap();
}

/// Polls an async condition every 100 ms until it holds or `timeout` passes.
async fn eventually_async<F, Fut>(timeout: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if f().await {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
