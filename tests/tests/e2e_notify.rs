//! Approvals that reach the person (issue 14, point 6), in the real app window under Xvfb: a
//! fake notification daemon of ours owns `org.freedesktop.Notifications` on the test's D-Bus
//! session and records every `Notify`. The window loses the X input focus to another window
//! (`xmessage`, focused with `xdotool`), a tool call from the catalog then waits for approval:
//! a notification naming the server and the tool arrives, the window title counts it, and the
//! daemon's `ActionInvoked` (the person clicking it) gives the window the focus back with the
//! approval dialog up. Answered, the title stops counting; a request that arrives while the
//! window has the focus raises no notification, and one answered without the notification has
//! its notification withdrawn (`CloseNotification`). The same for a server's question (an elicitation
//! form from a call a policy rule allows): notified in the background, its dialog up on the
//! click. Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::scenario::{self, open_tool, AppData};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);
const PATH: &str = "/org/freedesktop/Notifications";
const IFACE: &str = "org.freedesktop.Notifications";

/// One `Notify` call as the daemon received it.
#[derive(Clone, Debug)]
struct Shown {
    id: u32,
    app: String,
    summary: String,
    body: String,
    actions: Vec<String>,
}

/// The fake daemon: answers like a real one (ids, capabilities) and records what it is given.
struct Daemon {
    shown: Arc<Mutex<Vec<Shown>>>,
    closed: Arc<Mutex<Vec<u32>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Daemon {
    #[allow(clippy::too_many_arguments)] // the D-Bus method's signature
    fn notify(
        &mut self,
        app_name: String,
        replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, zbus::OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.shown.lock().unwrap();
        let id = if replaces_id != 0 {
            replaces_id
        } else {
            shown.len() as u32 + 1
        };
        shown.push(Shown {
            id,
            app: app_name,
            summary,
            body,
            actions,
        });
        id
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "fake".into(),
            "switchboard-tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    fn close_notification(&self, id: u32) {
        self.closed.lock().unwrap().push(id);
    }
}

/// Runs `xdotool` and returns its output, trimmed.
fn xdo(args: &[&str]) -> String {
    let o = Command::new("xdotool").args(args).output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn have_xdotool() -> bool {
    let ok = Command::new("xdotool")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("SWITCHBOARD_REQUIRE_E2E").as_deref() != Ok("1"),
            "SWITCHBOARD_REQUIRE_E2E=1 but xdotool is missing (run `make deps`)"
        );
        eprintln!("skipped: no xdotool (run `make deps`)");
    }
    ok
}

/// The app's visible top-level window.
async fn app_window() -> String {
    let mut found = String::new();
    let ok = eventually(WAIT, || {
        found = xdo(&["search", "--onlyvisible", "--name", "^Switchboard"])
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        !found.is_empty()
    })
    .await;
    assert!(ok, "no visible Switchboard window");
    found
}

/// Waits until `window`'s title is `want`; the last title seen otherwise.
async fn title_becomes(window: &str, want: &str) -> String {
    let mut seen = String::new();
    eventually(WAIT, || {
        seen = xdo(&["getwindowname", window]);
        seen == want
    })
    .await;
    seen
}

/// What the daemon was asked: notifications shown, and the ids of those withdrawn.
#[derive(Clone, Default)]
struct Recorded {
    shown: Arc<Mutex<Vec<Shown>>>,
    closed: Arc<Mutex<Vec<u32>>>,
}

/// The fake daemon, on the session bus the app inherits through tauri-driver. The name is
/// asked for again for a while when it is taken: the previous test's connection releases it
/// only once the bus has seen that connection close.
async fn daemon() -> (zbus::Connection, Recorded) {
    let rec = Recorded::default();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let built = zbus::connection::Builder::session()
            .name(IFACE)
            .serve_at(
                PATH,
                Daemon {
                    shown: Arc::clone(&rec.shown),
                    closed: Arc::clone(&rec.closed),
                },
            )
            .build()
            .await;
        match built {
            Ok(bus) => return (bus, rec),
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("waiting for {IFACE}: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("could not own {IFACE} on the test's session bus: {e}"),
        }
    }
}

/// Another window (`xmessage`) takes the X input focus; returns it and its window id.
async fn go_elsewhere() -> (KillOnDrop, String) {
    let other = KillOnDrop(
        Command::new("xmessage")
            .args(["-geometry", "300x80+0+0", "another application"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut found = String::new();
    assert!(
        eventually(WAIT, || {
            found = xdo(&["search", "--onlyvisible", "--name", "^xmessage$"]);
            !found.is_empty()
        })
        .await
    );
    let id = found.lines().next().unwrap().to_owned();
    xdo(&["windowfocus", "--sync", &id]);
    assert_eq!(xdo(&["getwindowfocus"]), id);
    (other, id)
}

/// Clicks notification `id` as the person would (the daemon's `ActionInvoked`), then waits
/// until `window` has the focus.
async fn click_notification(bus: &zbus::Connection, id: u32, window: &str) {
    bus.emit_signal(None::<&str>, PATH, IFACE, "ActionInvoked", &(id, "default"))
        .await
        .unwrap();
    let mut focus = String::new();
    let focused = eventually(WAIT, || {
        focus = xdo(&["getwindowfocus"]);
        focus == window
    })
    .await;
    assert!(
        focused,
        "the window did not get the focus (focus is on {focus}, the app is {window})"
    );
}

/// The first notification, once one arrived.
async fn first_notification(shown: &Mutex<Vec<Shown>>) -> Shown {
    let got = eventually(WAIT, || !shown.lock().unwrap().is_empty()).await;
    assert!(got, "no notification arrived");
    shown.lock().unwrap()[0].clone()
}

/// Starts the run of `demo/echo` from the catalog by script: a WebDriver click could raise
/// the window, and the point is a request that arrives while it is in the background.
async fn run_echo(s: &Session, text: &str) {
    s.set_value("#run-text", text).await.unwrap();
    s.execute("document.querySelector('.run-panel button.run').click(); return true;")
        .await
        .unwrap();
}

#[tokio::test]
async fn an_approval_in_the_background_notifies_and_the_click_brings_the_dialog() {
    if !e2e_available() || !have_xdotool() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Running from the start: the test is about the approval, not about lazy starts.
    AppData::on(&data).fake_server("demo", &[]);
    let (bus, rec) = daemon().await;
    let shown = &rec.shown;
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data.as_path())])
        .await
        .unwrap();
    let s = scenario::app_window(&driver).await;
    s.wait_text(r#"article[data-name="demo"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    let window = app_window().await;
    assert_eq!(title_becomes(&window, "Switchboard").await, "Switchboard");

    open_tool(&s, "demo", "echo").await;
    s.wait_for("#run-text", WAIT).await.unwrap();

    // Another window takes the focus: the person is working elsewhere.
    let (other, elsewhere) = go_elsewhere().await;
    run_echo(&s, "from the background").await;
    let first = first_notification(shown).await;
    assert_eq!(first.app, "Switchboard");
    assert!(first.summary.contains("demo"), "{first:?}");
    assert!(
        first.body.contains("demo") && first.body.contains("echo"),
        "{first:?}"
    );
    // Its body is clickable: the spec's "default" action.
    assert!(first.actions.iter().any(|a| a == "default"), "{first:?}");
    assert_eq!(
        title_becomes(&window, "Switchboard — 1 waiting").await,
        "Switchboard — 1 waiting"
    );
    // Still in the background: nothing but the notification moved.
    assert_eq!(xdo(&["getwindowfocus"]), elsewhere);
    s.screenshot(&artifacts().join("notify-1-waiting-in-background.png"))
        .await
        .unwrap();

    // The person clicks the notification.
    click_notification(&bus, first.id, &window).await;
    let dialog = s.wait_for(".approval-dialog[open]", WAIT).await.unwrap();
    let text = s.text(&dialog).await.unwrap();
    assert!(text.contains("echo") && text.contains("demo"), "{text}");
    s.screenshot(&artifacts().join("notify-2-clicked-dialog-shown.png"))
        .await
        .unwrap();

    // Answered: nothing waits.
    s.click_on(".approval-dialog .deny", WAIT).await.unwrap();
    assert_eq!(title_becomes(&window, "Switchboard").await, "Switchboard");

    // With the window focused, a new request shows its dialog and raises no notification. The
    // title is set in the same pass that decides whether to notify, so once it counts the
    // request the decision was made.
    run_echo(&s, "while focused").await;
    s.wait_for(".approval-dialog[open]", WAIT).await.unwrap();
    assert_eq!(
        title_becomes(&window, "Switchboard — 1 waiting").await,
        "Switchboard — 1 waiting"
    );
    assert_eq!(
        shown.lock().unwrap().len(),
        1,
        "a notification was raised while the window had the focus"
    );
    s.click_on(".approval-dialog .deny", WAIT).await.unwrap();
    assert_eq!(title_becomes(&window, "Switchboard").await, "Switchboard");

    // In the background again, a request answered without the notification (here by script,
    // as from the catalog or the CLI): the notification is withdrawn, nothing left to review.
    xdo(&["windowfocus", "--sync", &elsewhere]);
    assert_eq!(xdo(&["getwindowfocus"]), elsewhere);
    run_echo(&s, "answered in place").await;
    assert!(eventually(WAIT, || shown.lock().unwrap().len() == 2).await);
    let second = shown.lock().unwrap()[1].id;
    s.wait_for(".approval-dialog[open]", WAIT).await.unwrap();
    s.execute("document.querySelector('.approval-dialog .deny').click(); return true;")
        .await
        .unwrap();
    let withdrawn = eventually(WAIT, || rec.closed.lock().unwrap().contains(&second)).await;
    assert!(
        withdrawn,
        "the notification of an answered request was not withdrawn: {:?}",
        rec.closed.lock().unwrap()
    );
    assert_eq!(title_becomes(&window, "Switchboard").await, "Switchboard");
    s.close().await.unwrap();
    drop(other);
}

#[tokio::test]
async fn a_question_in_the_background_notifies_and_the_click_brings_its_dialog() {
    if !e2e_available() || !have_xdotool() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    AppData::on(&data).fake_server("asker", &["--mode", "client-requests"]);
    // The call itself is allowed by a rule: what waits is the server's question alone.
    let rule = [
        "policy", "add", "askfree", "--effect", "allow", "--server", "asker", "--tool", "ask_user",
    ];
    cli_ok(&data, &rule);
    let (bus, rec) = daemon().await;
    let shown = &rec.shown;
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data.as_path())])
        .await
        .unwrap();
    let s = scenario::app_window(&driver).await;
    s.wait_text(r#"article[data-name="asker"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    let window = app_window().await;
    open_tool(&s, "asker", "ask_user").await;
    s.wait_for(".run-panel button.run", WAIT).await.unwrap();

    let (other, elsewhere) = go_elsewhere().await;
    s.execute("document.querySelector('.run-panel button.run').click(); return true;")
        .await
        .unwrap();
    let first = first_notification(shown).await;
    assert!(first.summary.contains("asker"), "{first:?}");
    assert!(first.body.contains("fill in a form"), "{first:?}");
    assert!(s.find_all(".approval-dialog").await.unwrap().is_empty());
    assert_eq!(
        title_becomes(&window, "Switchboard — 1 waiting").await,
        "Switchboard — 1 waiting"
    );
    assert_eq!(xdo(&["getwindowfocus"]), elsewhere);

    click_notification(&bus, first.id, &window).await;
    s.wait_text(
        r#"dialog.question-dialog[data-kind="form"] .question-server"#,
        "asker",
        WAIT,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("notify-3-question-clicked.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
    drop(other);
}
