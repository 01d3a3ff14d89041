//! Where a provider's requests may go, over the real CLI (issue 25, points 6 and 7): plain http
//! only to this machine or to an address the person marked local (RD-03), "local, nothing
//! redacted" decided by that endpoint and never by the provider's kind (RD-02), and a provider
//! answering with a redirect stopped there, the error naming both URLs (RD-03).
//!
//! The non-loopback endpoints here are never reached: adding a provider and listing providers
//! make no request, so no test needs a network or a name that resolves.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use serde_json::Value;
use switchboard_tests::chat_cli::ok;
use switchboard_tests::fake_llm::{FakeLlm, Reply, Scenario};
use switchboard_tests::run_cli;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether `provider list --json` says requests to `name` are redacted.
fn redacted(data: &std::path::Path, name: &str) -> bool {
    let list: Value = serde_json::from_str(&ok(&run_cli(
        data,
        &["--json", "provider", "list"],
        "",
        &[],
    )))
    .unwrap();
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {list}"))
        .clone();
    row["redacted"]
        .as_bool()
        .unwrap_or_else(|| panic!("no redacted field: {row}"))
}

/// RD-03, RD-02: an `ollama` provider at another machine's name is refused over plain http
/// unless the person marks that host local (warned), is redacted over https, and only a
/// loopback address or a marked one counts as local; a cloud kind on loopback (a proxy) stays
/// redacted.
#[test]
fn plain_http_and_the_local_exemption_follow_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let add = |args: &[&str]| {
        let mut all = vec!["provider", "add"];
        all.extend_from_slice(args);
        run_cli(data, &all, "", &[])
    };
    let lan = [
        "lan",
        "--kind",
        "ollama",
        "--base-url",
        "http://gpu-box.example:11434/v1",
    ];
    let o = add(&lan);
    assert!(
        !o.status.success(),
        "plain http to another machine was accepted"
    );
    let err = stderr(&o);
    assert!(
        err.contains("plain http to gpu-box.example") && err.contains("mark gpu-box.example local"),
        "{err}"
    );

    let mut marked = lan.to_vec();
    marked.push("--local");
    let o = add(&marked);
    ok(&o);
    assert!(
        stderr(&o).contains("WARNING: marked gpu-box.example local"),
        "{}",
        stderr(&o)
    );
    ok(&add(&[
        "here",
        "--kind",
        "ollama",
        "--base-url",
        "http://127.0.0.1:11434/v1",
    ]));
    ok(&add(&[
        "named",
        "--kind",
        "lmstudio",
        "--base-url",
        "http://localhost:1234/v1",
    ]));
    ok(&add(&[
        "far",
        "--kind",
        "ollama",
        "--base-url",
        "https://ollama.example.com/v1",
    ]));
    ok(&add(&[
        "proxy",
        "--kind",
        "openai",
        "--base-url",
        "http://127.0.0.1:4000/v1",
    ]));

    assert!(!redacted(data, "here"), "ollama on loopback is local");
    assert!(!redacted(data, "named"), "localhost is loopback");
    assert!(!redacted(data, "lan"), "a host the person marked local");
    assert!(
        redacted(data, "far"),
        "ollama at another machine is a cloud model"
    );
    assert!(
        redacted(data, "proxy"),
        "a cloud kind on loopback is a proxy to its vendor"
    );
    let text = ok(&run_cli(data, &["provider", "list"], "", &[]));
    let far = text.lines().find(|l| l.starts_with("far\t")).unwrap();
    assert!(far.ends_with("\tredacted"), "{text}");
    let here = text.lines().find(|l| l.starts_with("here\t")).unwrap();
    assert!(here.ends_with("\tlocal: not redacted"), "{text}");

    let o = run_cli(
        data,
        &["provider", "unmark-local", "GPU-box.example"],
        "",
        &[],
    );
    ok(&o);
    assert!(redacted(data, "lan"), "no longer marked, no longer local");
}

/// RD-03: a provider answering 307 to another loopback port: the chat fails at the first
/// server, naming both URLs, and the second port receives nothing (no key, no prompt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirecting_provider_is_not_followed() {
    let elsewhere = FakeLlm::spawn(Scenario::new([Reply::text(&["followed"])]))
        .await
        .unwrap();
    let to = format!("http://{}/v1/chat/completions", elsewhere.addr());
    let first = FakeLlm::spawn(Scenario::new([
        Reply::http_error(307, "redirect", "moved").header("location", &to)
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let base = first.openai_base();
    ok(&run_cli(
        data,
        &[
            "provider",
            "add",
            "r",
            "--kind",
            "custom",
            "--base-url",
            &base,
            "--model",
            "m1",
        ],
        "",
        &[],
    ));
    let o = run_cli(
        data,
        &["chat", "--model", "r", "a prompt for the model"],
        "",
        &[],
    );
    assert!(!o.status.success(), "the chat went through: {}", stderr(&o));
    let err = stderr(&o);
    let from = format!("{base}/chat/completions");
    assert!(err.contains(&from) && err.contains(&to), "{err}");
    assert!(err.contains("HTTP 307"), "{err}");
    assert_eq!(first.requests().len(), 1);
    assert!(
        elsewhere.requests().is_empty(),
        "the redirect target received {:?}",
        elsewhere.requests()
    );
}
