//! Local models in the real app window (WebDriver, under Xvfb in `make test`): a fake Ollama
//! on an ephemeral loopback port (`SWITCHBOARD_OLLAMA_URL`) with one model that calls tools
//! natively and one that does not. The providers dialog finds it, shows tool support per
//! model, adds it as a provider with its base URL, and turns on the prompt-based tool mode for
//! the model without native tools; the choice lands in the data directory where the chat reads
//! it. Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::fake_models::{ollama, FakeModels};
use switchboard_tests::scenario::app_window;
use switchboard_tests::webdriver::Driver;
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

// Multi-threaded: the fake keeps answering while the CLI below blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn a_detected_ollama_is_added_and_a_model_without_tools_gets_prompt_tools() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = FakeModels::start(ollama(&[
        ("llama3.1:8b", Some(&["completion", "tools"])),
        ("gemma2:2b", Some(&["completion"])),
    ]))
    .await;
    // LM Studio is looked for where nothing listens.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let driver = Driver::start(&[
        ("SWITCHBOARD_DATA_DIR", data),
        ("SWITCHBOARD_OLLAMA_URL", Path::new(&fake.url)),
        ("SWITCHBOARD_LMSTUDIO_URL", Path::new(&closed)),
    ])
    .await
    .unwrap();
    let s = app_window(&driver).await;
    s.click_on(r#".tab[data-page="chat"]"#, WAIT).await.unwrap();
    s.click_on(".chat-providers", WAIT).await.unwrap();
    let found = r#".pv-detected .pv-runtime[data-kind="ollama"]"#;
    s.wait_text(found, "1 with native tools", WAIT)
        .await
        .unwrap();
    s.wait_text(
        &format!(r#"{found} [data-model="gemma2:2b"] .pv-tools"#),
        "no native tools",
        WAIT,
    )
    .await
    .unwrap();
    s.wait_text(
        &format!(r#"{found} [data-model="llama3.1:8b"] .pv-tools"#),
        "native tools",
        WAIT,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("60-models-detected.png"))
        .await
        .unwrap();

    s.click_on(&format!("{found} .pv-add-detected"), WAIT)
        .await
        .unwrap();
    let row = r#".pv-row[data-name="ollama"]"#;
    s.wait_text(row, "llama3.1:8b", WAIT).await.unwrap();
    s.click_on(&format!("{row} .pv-models summary"), WAIT)
        .await
        .unwrap();
    let gemma = format!(r#"{row} .pv-models [data-model="gemma2:2b"]"#);
    s.click_on(&format!("{gemma} .pv-prompt-tools"), WAIT)
        .await
        .unwrap();
    s.wait_text(&format!("{gemma} .pv-tools"), "prompt-based tools", WAIT)
        .await
        .unwrap();
    assert!(
        s.find_all(&format!(
            r#"{row} [data-model="llama3.1:8b"] .pv-prompt-tools"#
        ))
        .await
        .unwrap()
        .is_empty(),
        "a model with native tools was offered the fallback"
    );

    // What the window did is what the CLI (and the chat) sees.
    let o = run_cli(data, &["models", "--provider", "ollama", "--json"], "", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &v["providers"][0];
    assert_eq!(p["base_url"], format!("{}/v1", fake.url));
    assert_eq!(p["model"], "llama3.1:8b");
    let modes: Vec<(String, bool)> = p["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_owned(),
                m["prompt_tools"] == true,
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            ("gemma2:2b".to_owned(), true),
            ("llama3.1:8b".to_owned(), false)
        ]
    );
    // Taken last: the window has had the CLI's run to paint the reloaded list.
    s.screenshot(&artifacts().join("61-models-prompt-tools.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}
