//! A sandboxed server in the real window (SP-07): its card says it is sandboxed, a start the
//! sandbox blocked shows what was blocked with an "Allow" button, and the button grants exactly
//! that, after which the server runs. Screenshots in `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::*;

#[tokio::test]
async fn the_card_offers_to_grant_what_the_sandbox_blocked() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // A canary outside anything the sandbox shows.
    let canary_dir = dir.path().join("canary");
    std::fs::create_dir(&canary_dir).unwrap();
    let canary = canary_dir.join("needed.txt");
    std::fs::write(&canary, "needed").unwrap();

    let fake = fake_server();
    let require = format!("CANARY_REQUIRE_FILE={}", canary.display());
    for args in [
        vec![
            "server",
            "add",
            "boxed",
            "--sandbox",
            "--env",
            &require,
            "--",
            fake.to_str().unwrap(),
            "--mode",
            "canary",
        ],
        vec!["server", "add", "open", "--", fake.to_str().unwrap()],
        vec!["server", "trust", "boxed", "--yes"],
        vec!["server", "trust", "open", "--yes"],
        vec!["server", "always-on", "boxed", "on"],
        vec!["server", "always-on", "open", "on"],
    ] {
        let o = run_cli(&data, &args, "", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    let (_driver, s) = open_window(&data).await.unwrap();
    let wait = Duration::from_secs(40);
    let boxed = r#"article[data-name="boxed"]"#;
    s.wait_text(&format!("{boxed} .sandbox-badge"), "sandboxed", wait)
        .await
        .unwrap();
    s.wait_text(
        r#"article[data-name="open"] .sandbox-badge"#,
        "not sandboxed",
        wait,
    )
    .await
    .unwrap();
    // The failed start says what was blocked and offers exactly that.
    let finding = s
        .wait_text(
            &format!("{boxed} .sandbox-finding"),
            "kept it from reading",
            wait,
        )
        .await
        .unwrap();
    let shown = canary_dir.display().to_string();
    assert!(finding.contains(&shown), "{finding}");
    s.screenshot(&artifacts().join("60-sandbox-blocked.png"))
        .await
        .unwrap();
    let button = s
        .wait_text(
            &format!("{boxed} button.grant-sandbox"),
            "Allow reading",
            wait,
        )
        .await
        .unwrap();
    assert!(button.contains(&shown), "{button}");
    s.click_on(&format!("{boxed} button.grant-sandbox"), wait)
        .await
        .unwrap();
    s.wait_text(&format!("{boxed} .badge"), "running", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("61-sandbox-granted.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // What the button granted is exactly the folder, read-only, and the sandbox is still on.
    let v: serde_json::Value =
        serde_json::from_str(&cli_ok(&data, &["--json", "server", "sandbox", "boxed"])).unwrap();
    assert_eq!(v["sandbox"]["read"], serde_json::json!([shown]), "{v}");
    assert_eq!(v["sandboxed"], serde_json::json!(true), "{v}");
    assert!(v["sandbox"].get("write").is_none(), "{v}");
}

/// SP-12 and SP-13 in the real window: a typed credential store (the app's own data folder) is
/// granted only after the card's separate confirmation that says what it holds (cancelled,
/// nothing is stored; confirmed, it is unmasked and the approval is void), and the card's
/// domain row stores an allowed domain, refuses what is no domain with the reason, and
/// removes a domain.
#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn the_card_confirms_a_credential_store_and_edits_the_domain_lists() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let fake = fake_server();
    cli_ok(
        &data,
        &[
            "server",
            "add",
            "boxed",
            "--sandbox",
            "--",
            fake.to_str().unwrap(),
        ],
    );
    cli_ok(&data, &["server", "trust", "boxed", "--yes"]);
    let sandbox_of = || -> serde_json::Value {
        serde_json::from_str(&cli_ok(&data, &["--json", "server", "sandbox", "boxed"])).unwrap()
    };

    let (_driver, s) = open_window(&data).await.unwrap();
    let wait = Duration::from_secs(40);
    let panel = r#"details.server-sandbox[data-server="boxed"]"#;
    s.click_on(&format!("{panel} > summary"), wait)
        .await
        .unwrap();
    s.wait_for(&format!("{panel} input.sandbox-path"), wait)
        .await
        .unwrap();

    // The data folder, typed: a confirmation that says what it holds; cancelled, nothing saved.
    let typed = data.display().to_string();
    let confirm = format!("{panel} .sandbox-unmask-confirm");
    s.set_value(&format!("{panel} input.sandbox-path"), &typed)
        .await
        .unwrap();
    s.click_on(&format!("{panel} button.sandbox-add-read"), wait)
        .await
        .unwrap();
    let asked = s
        .wait_text(&confirm, "Switchboard's own data", wait)
        .await
        .unwrap();
    assert!(asked.contains(&typed), "{asked}");
    s.screenshot(&artifacts().join("62-sandbox-unmask-confirm.png"))
        .await
        .unwrap();
    s.click_on(&format!("{panel} button.sandbox-unmask-no"), wait)
        .await
        .unwrap();
    assert!(
        sandbox_of()["sandbox"].get("read").is_none(),
        "{}",
        sandbox_of()
    );
    // Confirmed: granted, unmasked, and the approval is void.
    s.click_on(&format!("{panel} button.sandbox-add-read"), wait)
        .await
        .unwrap();
    s.click_on(&format!("{panel} button.sandbox-unmask-yes"), wait)
        .await
        .unwrap();
    s.wait_text(&format!("{panel} .sandbox-status"), "approve it", wait)
        .await
        .unwrap();
    let v = sandbox_of();
    assert_eq!(v["sandbox"]["read"], serde_json::json!([typed]), "{v}");
    assert_eq!(v["sandbox"]["unmask"], serde_json::json!([typed]), "{v}");

    // Domains: one allowed (the network goes on), a non-domain refused with the reason.
    let domain = format!("{panel} input.sandbox-domain");
    s.set_value(&domain, "API.example.com").await.unwrap();
    s.click_on(&format!("{panel} button.sandbox-allow-domain"), wait)
        .await
        .unwrap();
    s.wait_text(
        &format!("{panel} .sandbox-allow-domains"),
        "api.example.com",
        wait,
    )
    .await
    .unwrap();
    s.set_value(&domain, "not a domain!").await.unwrap();
    s.click_on(&format!("{panel} button.sandbox-deny-domain"), wait)
        .await
        .unwrap();
    s.wait_text(&format!("{panel} .sandbox-status"), "is not a domain", wait)
        .await
        .unwrap();
    let v = sandbox_of();
    assert_eq!(
        v["sandbox"]["allow_domains"],
        serde_json::json!(["api.example.com"]),
        "{v}"
    );
    assert_eq!(v["sandbox"]["network"], serde_json::json!(true), "{v}");
    assert!(v["sandbox"].get("deny_domains").is_none(), "{v}");
    s.screenshot(&artifacts().join("63-sandbox-domains.png"))
        .await
        .unwrap();
    // Removed from the card, gone from the setting.
    s.click_on(
        &format!("{panel} .sandbox-allow-domains button.sandbox-remove"),
        wait,
    )
    .await
    .unwrap();
    s.wait_text(
        &format!("{panel} .sandbox-status"),
        "Removed api.example.com",
        wait,
    )
    .await
    .unwrap();
    s.close().await.unwrap();
    // The last allowed domain gone, the network is off (no list would mean every domain).
    let v = sandbox_of();
    assert!(v["sandbox"].get("allow_domains").is_none(), "{v}");
    assert_eq!(v["sandbox"]["network"], serde_json::json!(false), "{v}");
}
