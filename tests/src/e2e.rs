//! Shared by the end-to-end tests that drive the real app window (`tests/e2e*.rs`): whether a
//! window can be driven here, where screenshots go, and the lock that keeps one window at a
//! time within a test binary.

use std::path::{Path, PathBuf};

use crate::webdriver::{tauri_driver, Driver, Session};

/// Whether the window can be driven here; under `make test` (SWITCHBOARD_REQUIRE_E2E=1) a
/// missing display or driver is a failure, not a skip.
pub fn e2e_available() -> bool {
    let ok = std::env::var_os("DISPLAY").is_some() && tauri_driver().is_some();
    if !ok {
        assert!(
            std::env::var("SWITCHBOARD_REQUIRE_E2E").as_deref() != Ok("1"),
            "SWITCHBOARD_REQUIRE_E2E=1 but there is no DISPLAY or no tauri-driver"
        );
        eprintln!("skipped: no DISPLAY or tauri-driver (run through `make test`)");
    }
    ok
}

/// One window at a time: parallel apps compete for the two cores (and their driver ports are
/// picked free-then-bound, which two drivers could race for), so the tests take turns.
pub static ONE_WINDOW: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The app window on the data directory `data`: its driver (the window lives as long as it
/// does) and the WebDriver session on it.
pub async fn open_window(data: &Path) -> anyhow::Result<(Driver, Session)> {
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)]).await?;
    let session = driver
        .session(&crate::workspace_bin("switchboard-desktop"))
        .await?;
    Ok((driver, session))
}

/// Where screenshots are saved (`tests/results/e2e/`).
pub fn artifacts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/e2e")
}

/// How long a step in the window may take before a test fails.
const CHAT_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Types `text` into the chat composer and sends it.
pub async fn send(s: &crate::webdriver::Session, text: &str) -> anyhow::Result<()> {
    let input = s.wait_for(".chat-input", CHAT_WAIT).await?;
    s.type_text(&input, text).await?;
    s.click_on(".chat-send", CHAT_WAIT).await
}

/// Waits until no chat turn runs (Send is back, Stop hidden).
pub async fn idle(s: &crate::webdriver::Session) -> anyhow::Result<()> {
    let deadline = std::time::Instant::now() + CHAT_WAIT;
    loop {
        let v = s
            .execute("const b = document.querySelector('.chat-stop'); return !b || b.hidden;")
            .await?;
        if v == serde_json::json!(true) {
            return Ok(());
        }
        anyhow::ensure!(std::time::Instant::now() < deadline, "the turn never ended");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
