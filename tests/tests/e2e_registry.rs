//! The Registry page in the real app window (issue 14, point 3; WebDriver under Xvfb in `make
//! test`): a registry of ours on loopback, named in the settings, is listed without its
//! deprecated and deleted entries and with the 1 MB description cut; an entry's install form
//! asks for its required argument and its secret (a password field); installing adds the server
//! and opens the trust dialog with the exact command (the pinned package, the shell
//! metacharacters as one argument), and nothing runs: after the window is closed the server is
//! stored unapproved, its secret is in the keyring and in no file. Screenshots go to
//! `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::config::TransportSpec;
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::fake_registry::{hostile_entries, FakeRegistry, METACHARS};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);
const SECRET: &str = "e2e-CANARY-registry-key";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn registry_page_lists_installs_and_hands_over_to_the_trust_dialog() {
    if !e2e_available() {
        return;
    }
    let keyring = std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some();
    if !keyring {
        eprintln!("skipped: SWITCHBOARD_TEST_KEYRING is not set (run through `make test`)");
        return;
    }
    let _one = ONE_WINDOW.lock().await;
    let reg = FakeRegistry::start(hostile_entries()).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_path_buf();
    switchboard_core::settings::save(
        &data,
        switchboard_core::settings::Settings {
            registry_url: reg.url.clone(),
            ..switchboard_core::settings::Settings::default()
        },
    )
    .unwrap();
    let name = format!("everything-e2e-{}", std::process::id());

    let (driver, s) = open_window(&data).await.unwrap();
    s.click_on("#tab-registry", WAIT).await.unwrap();
    let entry = ".registry-entry[data-name='io.example/everything']";
    s.wait_for(entry, WAIT).await.unwrap();
    let listed = s
        .execute(
            "return [...document.querySelectorAll('.registry-entry')].map(e => e.dataset.name);",
        )
        .await
        .unwrap();
    let listed: Vec<String> = serde_json::from_value(listed).unwrap();
    assert_eq!(listed.len(), 7, "{listed:?}");
    assert!(!listed
        .iter()
        .any(|n| n.contains("deprecated") || n.contains("deleted")));
    let huge = s
        .execute("return document.querySelector(\".registry-entry[data-name='io.example/huge-description'] .description\").textContent.length;")
        .await
        .unwrap();
    assert!(huge.as_u64().unwrap() < 1000, "{huge}");
    s.screenshot(&artifacts().join("registry-list.png"))
        .await
        .unwrap();

    s.click_on(&format!("{entry} .registry-open"), WAIT)
        .await
        .unwrap();
    s.wait_for(".registry-dialog [data-key='arg:--root']", WAIT)
        .await
        .unwrap();
    let kind = s
        .execute("return document.querySelector(\"[data-key='env:EVERYTHING_API_KEY']\").type;")
        .await
        .unwrap();
    assert_eq!(kind, "password");
    s.set_value(".registry-server-name", &name).await.unwrap();
    s.set_value("[data-key='arg:--root']", "/srv/e2e files")
        .await
        .unwrap();
    s.set_value("[data-key='env:EVERYTHING_API_KEY']", SECRET)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("registry-install-form.png"))
        .await
        .unwrap();
    s.click_on(".registry-install", WAIT).await.unwrap();

    // The trust dialog, with the exact command; deny is the default.
    let text = s
        .wait_text(".trust-dialog", "@example/server-everything@2.1.0", WAIT)
        .await
        .unwrap();
    assert!(text.contains("rm -rf ~/canary"), "{text}");
    assert!(text.contains("/srv/e2e files"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
    s.screenshot(&artifacts().join("registry-trust.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
    drop(driver);

    // Stored, unapproved, never started; the secret only in the keyring.
    assert_no_file_contains(&data, SECRET);
    let host = switchboard_core::host::HostBuilder::new(&data)
        .build()
        .await
        .unwrap();
    let id = switchboard_core::ids::ServerId::new(&name).unwrap();
    let spec = host.server(&id).await.unwrap();
    let TransportSpec::Stdio(st) = &spec.transport else {
        panic!("{spec:?}")
    };
    assert_eq!(st.command, "npx");
    assert_eq!(st.args[1], "@example/server-everything@2.1.0");
    assert_eq!(st.args[2], METACHARS);
    let key = switchboard_core::ids::SecretName::new("EVERYTHING_API_KEY").unwrap();
    assert!(host.server_secret_is_set(&id, &key).await.unwrap());
    assert!(host.handle(&id).is_none());
    host.remove_server(&id).await.unwrap();
    host.shutdown().await;
}
