//! End to end in the real app window, driven through WebDriver (`tauri-driver` +
//! WebKitWebDriver, under Xvfb in `make test`): the servers page shows live status, a crashing
//! server's stderr, the trust dialog gates a server until it is approved, and doctor explains a
//! failing server. Screenshots of each
//! step are saved to `tests/results/e2e/` as artifacts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::PathBuf;
use std::time::Duration;

use switchboard_tests::webdriver::{tauri_driver, Driver};
use switchboard_tests::*;

/// Whether the window can be driven here; under `make test` (SWITCHBOARD_REQUIRE_E2E=1) a
/// missing display or driver is a failure, not a skip.
fn e2e_available() -> bool {
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

fn artifacts() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/e2e")
}

#[tokio::test]
async fn servers_page_shows_status_stderr_and_gates_on_trust() {
    if !e2e_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    for args in [
        vec!["server", "add", "demo", "--", fake, "--tools", "2"],
        vec![
            "server",
            "add",
            "broken",
            "--",
            fake,
            "--mode",
            "crash-on-init",
            "--stderr-banner",
            "fatal: missing API key",
        ],
    ] {
        let o = run_cli(data, &args, "", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(
        run_cli(data, &["server", "trust", "broken", "--yes"], "", &[])
            .status
            .success()
    );

    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let app = workspace_bin("switchboard-desktop");
    let s = driver.session(&app).await.unwrap();
    let wait = Duration::from_secs(30);

    // The unapproved server waits for approval; nothing of it runs yet.
    s.wait_text(
        r#"article[data-name="demo"] .badge"#,
        "needs approval",
        wait,
    )
    .await
    .unwrap();
    // The crashing one ends up failed, with its stderr on screen.
    s.wait_text(r#"article[data-name="broken"] .badge"#, "failed", wait)
        .await
        .unwrap();
    s.wait_text(
        r#"article[data-name="broken"] .stderr"#,
        "fatal: missing API key",
        wait,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("01-servers.png"))
        .await
        .unwrap();

    // Review: the dialog shows exactly what runs, then approval starts it.
    let review = s
        .wait_for(r#"article[data-name="demo"] button.primary"#, wait)
        .await
        .unwrap();
    s.click(&review).await.unwrap();
    let plan = s
        .wait_text(".trust-dialog .plan", fake, wait)
        .await
        .unwrap();
    assert!(plan.contains("--tools"), "{plan}");
    s.screenshot(&artifacts().join("02-trust-dialog.png"))
        .await
        .unwrap();
    let allow = s
        .wait_for(".trust-dialog button.primary", wait)
        .await
        .unwrap();
    s.click(&allow).await.unwrap();
    s.wait_text(
        r#"article[data-name="demo"] .badge"#,
        "running · 16 tools",
        wait,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("03-approved-running.png"))
        .await
        .unwrap();

    // Doctor explains the broken one: it exits early, with its stderr.
    let diagnose = s
        .wait_for(r#"article[data-name="broken"] button.diagnose"#, wait)
        .await
        .unwrap();
    s.click(&diagnose).await.unwrap();
    let checks = s
        .wait_text(".doctor-dialog .checks", "[FAIL] handshake", wait)
        .await
        .unwrap();
    assert!(checks.contains("exited early"), "{checks}");
    s.wait_text(".doctor-dialog .stderr", "fatal: missing API key", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("04-doctor.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}
