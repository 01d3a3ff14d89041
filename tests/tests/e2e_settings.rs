//! The Settings page and the keyboard shortcuts (issue 14, point 7), in the real app window:
//! the page shows the data directory; picking the dark theme applies it at once; a new idle
//! time and theme are saved (the file in the data directory says so), an invalid idle time is
//! refused with a sentence and changes nothing; after a restart both are still there and the
//! theme is applied before the page is opened. Then shortcuts typed into the window move
//! between pages (Ctrl+1, Ctrl+PageDown, Ctrl+,) and `?` lists them. Screenshots go to
//! `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::scenario::app_window;
use switchboard_tests::webdriver::{Driver, Session};

const WAIT: Duration = Duration::from_secs(30);
/// WebDriver's code for the Control key; pressed keys stay down until the end of a send.
const CTRL: &str = "\u{E009}";
const PAGE_DOWN: &str = "\u{E00F}";

async fn open(driver: &Driver) -> Session {
    let s = app_window(driver).await;
    s.wait_for(".tabs", WAIT).await.unwrap();
    s
}

/// The page the tab bar shows as selected.
async fn selected(s: &Session) -> String {
    let v = s
        .execute("return document.querySelector('.tab[aria-selected=true]')?.dataset.page ?? '';")
        .await
        .unwrap();
    v.as_str().unwrap_or_default().to_owned()
}

async fn becomes(s: &Session, page: &str) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let now = selected(s).await;
        if now == page || std::time::Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn theme_attr(s: &Session) -> String {
    let v = s
        .execute("return document.documentElement.dataset.theme ?? 'system';")
        .await
        .unwrap();
    v.as_str().unwrap_or_default().to_owned()
}

/// The value of an input, once the page has filled it.
async fn value_once(s: &Session, css: &str) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    let script = format!(
        "return document.querySelector({})?.value ?? '';",
        serde_json::to_string(css).unwrap()
    );
    loop {
        let v = s.execute(&script).await.unwrap();
        let v = v.as_str().unwrap_or_default().to_owned();
        if !v.is_empty() || std::time::Instant::now() > deadline {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Types keys into the focused tab: the shortcuts listen on the whole document.
async fn keys(s: &Session, text: &str) {
    let tab = s.wait_for(".tab[aria-selected=true]", WAIT).await.unwrap();
    s.type_text(&tab, text).await.unwrap();
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn theme_and_idle_time_survive_a_restart_and_shortcuts_move_between_pages() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data.as_path())])
        .await
        .unwrap();
    let s = open(&driver).await;

    s.click_on(r#".tab[data-page="settings"]"#, WAIT)
        .await
        .unwrap();
    assert_eq!(
        value_once(&s, ".settings-idle").await,
        "10",
        "the default is 600 s"
    );
    let shown_dir = value_once(&s, ".settings-data-dir").await;
    assert_eq!(shown_dir, data.display().to_string());
    s.wait_text(".settings-data-note", "SWITCHBOARD_DATA_DIR", WAIT)
        .await
        .unwrap();
    // The build it is: the same version and commit as `switchboard --version`.
    s.wait_text(
        ".settings-version",
        &format!(
            "Switchboard {} (commit {})",
            switchboard_buildinfo::VERSION,
            switchboard_buildinfo::COMMIT
        ),
        WAIT,
    )
    .await
    .unwrap();

    // The theme applies as it is picked.
    assert_eq!(theme_attr(&s).await, "system");
    s.click_on(".settings-theme-dark", WAIT).await.unwrap();
    assert_eq!(theme_attr(&s).await, "dark");

    // An idle time the core refuses: a sentence, and nothing saved.
    s.set_value(".settings-idle", "0.1").await.unwrap();
    s.click_on(".settings-save", WAIT).await.unwrap();
    s.wait_text(".settings-status", "idle time", WAIT)
        .await
        .unwrap();
    assert!(!data.join("settings.json").exists());

    s.set_value(".settings-idle", "3").await.unwrap();
    // The chat's tools warning (issue 16) is a field too: the default shown, a new value saved.
    assert_eq!(value_once(&s, ".settings-tools-warn").await, "25");
    s.set_value(".settings-tools-warn", "40").await.unwrap();
    s.click_on(".settings-save", WAIT).await.unwrap();
    s.wait_text(".settings-status", "Saved.", WAIT)
        .await
        .unwrap();
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("settings.json")).unwrap()).unwrap();
    assert_eq!(file["theme"], "dark");
    assert_eq!(file["idle_stop_secs"], 180);
    assert_eq!(file["tools_warn_percent"], 40);
    s.screenshot(&artifacts().join("settings-1-saved-dark.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // Restarted: the theme is applied at start-up, and the page shows both.
    let s = open(&driver).await;
    let deadline = std::time::Instant::now() + WAIT;
    while theme_attr(&s).await != "dark" && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        theme_attr(&s).await,
        "dark",
        "the saved theme is not applied at start"
    );
    assert_eq!(selected(&s).await, "servers");

    // Ctrl+, opens the settings.
    keys(&s, &format!("{CTRL},")).await;
    assert_eq!(becomes(&s, "settings").await, "settings");
    assert_eq!(value_once(&s, ".settings-idle").await, "3");
    assert_eq!(value_once(&s, ".settings-tools-warn").await, "40");
    let dark = s
        .execute("return document.querySelector('.settings-theme-dark').checked;")
        .await
        .unwrap();
    assert_eq!(dark, serde_json::json!(true));
    s.screenshot(&artifacts().join("settings-2-after-restart.png"))
        .await
        .unwrap();

    // The log level applies at once: at warn, a save's info line ("settings saved", logged
    // before the new level is applied) stops reaching the log file; back at info it returns.
    let log = data.join("logs").join("switchboard.log");
    let saves = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("settings saved")
            .count()
    };
    let save = |level: &'static str| {
        let s = &s;
        async move {
            let script = format!(
                "const l = document.querySelector('.settings-log-level'); l.value = '{level}'; \
                 document.querySelector('.settings-status').textContent = ''; return 1;"
            );
            s.execute(&script).await.unwrap();
            s.click_on(".settings-save", WAIT).await.unwrap();
            s.wait_text(".settings-status", "Saved.", WAIT)
                .await
                .unwrap();
        }
    };
    let before = saves();
    assert_eq!(before, 1, "the first save was logged at info");
    save("warn").await;
    assert_eq!(saves(), 2, "the save that set warn ran at info");
    save("warn").await;
    assert_eq!(saves(), 2, "an info line was logged at warn");
    save("info").await;
    save("info").await;
    assert_eq!(saves(), 3, "info lines did not come back");

    // Ctrl+1 goes to the first page, Ctrl+PageDown to the next.
    keys(&s, &format!("{CTRL}1")).await;
    assert_eq!(becomes(&s, "chat").await, "chat");
    keys(&s, &format!("{CTRL}{PAGE_DOWN}")).await;
    assert_eq!(becomes(&s, "agents").await, "agents");

    // `?` lists the shortcuts.
    keys(&s, "?").await;
    s.wait_text(".shortcuts-dialog", "New chat", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("settings-3-shortcuts.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}
