//! `switchboard models` against a fake Ollama on loopback (`SWITCHBOARD_OLLAMA_URL`): detected
//! runtimes and their models in JSON and text (ids escaped for the terminal), the prompt-based
//! tool mode switched for one model, and a provider whose list fails named as the failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use switchboard_tests::chat_cli::ok;
use switchboard_tests::fake_models::{closed_url, ollama, FakeModels};
use switchboard_tests::run_cli;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_lists_detected_runtimes_and_switches_a_model_to_prompt_tools() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeModels::start(ollama(&[
        ("llama3.1:8b", Some(&["completion", "tools"])),
        ("gemma2:2b", Some(&["completion"])),
        ("evil\u{1b}[2J:latest", Some(&["completion"])),
    ]))
    .await;
    let closed = closed_url().await;
    let env = [
        ("SWITCHBOARD_OLLAMA_URL", fake.url.as_str()),
        ("SWITCHBOARD_LMSTUDIO_URL", closed.as_str()),
    ];
    let data = dir.path().to_owned();
    let cli = move |args: &[&str]| run_cli(&data, args, "", &env);
    let v: serde_json::Value = serde_json::from_str(&ok(&cli(&["models", "--json"]))).unwrap();
    assert_eq!(v["detected"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["detected"][0]["runtime"], "ollama");
    assert_eq!(v["detected"][0]["base_url"], format!("{}/v1", fake.url));
    let gemma = v["detected"][0]["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "gemma2:2b")
        .unwrap()
        .clone();
    assert_eq!(gemma["tools"], "none");
    let text = ok(&cli(&["models"]));
    assert!(text.contains("detected Ollama"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a model id reached the terminal raw: {text:?}"
    );

    let base = format!("{}/v1", fake.url);
    ok(&cli(&[
        "provider",
        "add",
        "local",
        "--kind",
        "ollama",
        "--base-url",
        &base,
    ]));
    ok(&cli(&[
        "models",
        "--provider",
        "local",
        "--prompt-tools",
        "gemma2:2b",
    ]));
    let text = ok(&cli(&["models", "--provider", "local"]));
    assert!(
        text.contains("gemma2:2b\tno native tools\tprompt-based tools ON"),
        "{text}"
    );
    assert!(text.contains("llama3.1:8b\tnative tools\t-"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&cli(&["models", "--provider", "local", "--json"]))).unwrap();
    assert!(
        v["detected"].as_array().unwrap().is_empty(),
        "--provider skips detection"
    );
    let p = &v["providers"][0];
    assert_eq!(p["name"], "local");
    let g = p["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "gemma2:2b")
        .unwrap();
    assert_eq!(g["prompt_tools"], true);

    // A provider whose list fails is the command's failure when asked for by name.
    ok(&cli(&[
        "provider",
        "add",
        "gone",
        "--kind",
        "custom",
        "--base-url",
        &closed,
    ]));
    let o = cli(&["models", "--provider", "gone"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unreachable"),
        "{o:?}"
    );
}
