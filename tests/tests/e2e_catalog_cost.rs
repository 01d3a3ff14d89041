//! What the tool catalog costs, in the real app window (issue 16, points 1 and 4; WebDriver
//! under Xvfb in `make test`): the server card's cost line and the Tools page's per-turn and
//! per-tool counts show the numbers `switchboard --json catalog` computes for the same data
//! dir; a server that never ran says its cost is known after its first start, on its card and
//! in its approval dialog (it is not started to find out); and the protocol inspector narrows
//! the trace to the method typed in its filter. Screenshots go to `tests/results/e2e/`
//! (`server-card-cost.png`, `trust-cost.png`, `catalog-cost.png`, `inspector.png`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::Value;
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::AppData;
use switchboard_tests::webdriver::Session;
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

/// The first number in `text` after `after`, read as the UI writes it (`≈1,234`).
fn number_after(text: &str, after: &str) -> u64 {
    let i = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not in {text:?}"));
    let digits: String = text[i + after.len()..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {after:?} in {text:?}"))
}

/// The text of `css` once the number after `after` in it is `expected` (the page re-reads the
/// costs on every host event), or its last text when the wait runs out.
async fn text_with(s: &Session, css: &str, after: &str, expected: u64) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let text = s.wait_text(css, after, WAIT).await.unwrap();
        if number_after(&text, after) == expected || std::time::Instant::now() > deadline {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn cards_catalog_and_inspector_show_what_the_host_computes() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    let app = AppData::on(data).fake_server("demo", &[]);
    // Added, never approved: it never runs, so its cost cannot be known.
    app.cli(&["server", "add", "fresh", "--", fake, "--tools", "2"]);
    app.provider("loc", "ollama", "http://127.0.0.1:9/v1", "llama3.1");
    // What the host computes for this data dir, by the CLI (which starts `demo` once).
    let json: Value =
        serde_json::from_str(&cli_ok(data, &["--json", "catalog", "--start"])).unwrap();
    assert_eq!(json["models"][0]["model"], "llama3.1", "{json}");
    let server = |name: &str| {
        json["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == name)
            .unwrap_or_else(|| panic!("{name} not in {json}"))
            .clone()
    };
    let demo = server("demo");
    let demo_tokens = demo["offered_tokens"][0].as_u64().unwrap();
    assert!(demo_tokens > 100, "{demo}");
    let echo = demo["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "echo")
        .unwrap()["tokens"][0]
        .as_u64()
        .unwrap();
    let turn = json["offered_tokens"][0].as_u64().unwrap();
    assert_eq!(server("fresh")["known"], false, "{json}");

    let (_driver, s) = open_window(data).await.unwrap();
    s.wait_text(r#"article[data-name="demo"] .badge"#, "running", WAIT)
        .await
        .unwrap();

    // The cards: the host's number for demo, and "unknown" for the server that never ran.
    let line = text_with(
        &s,
        r#"article[data-name="demo"] .server-cost"#,
        "Tools:",
        demo_tokens,
    )
    .await;
    assert!(line.contains("tokens for loc:llama3.1"), "{line}");
    assert!(line.starts_with("Tools: ≈"), "{line}");
    assert_eq!(number_after(&line, "Tools:"), demo_tokens, "{line}");
    let fresh = s
        .wait_text(r#"article[data-name="fresh"] .server-cost"#, "Tools:", WAIT)
        .await
        .unwrap();
    assert_eq!(fresh, "Tools: cost known after its first start");
    s.screenshot(&artifacts().join("server-card-cost.png"))
        .await
        .unwrap();

    // Before approving the never-run server, its dialog says the cost is unknown; declining
    // leaves it not started.
    s.click_on(r#"article[data-name="fresh"] button.primary"#, WAIT)
        .await
        .unwrap();
    s.wait_text(
        ".trust-dialog .enable-cost",
        "unknown until it starts",
        WAIT,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("trust-cost.png"))
        .await
        .unwrap();
    s.click_on(".trust-dialog .actions button", WAIT)
        .await
        .unwrap();
    let badge = s
        .wait_for(r#"article[data-name="fresh"] .badge"#, WAIT)
        .await
        .unwrap();
    assert!(!s.text(&badge).await.unwrap().contains("running"));

    // The Tools page: the next turn's total and one tool's definition, as the host counts them.
    s.click_on(r#".tab[data-page="tools"]"#, WAIT)
        .await
        .unwrap();
    let count = text_with(&s, ".filters .count", "tools ·", turn).await;
    assert!(count.contains("per turn"), "{count}");
    assert_eq!(number_after(&count, "tools ·"), turn, "{count}");
    s.click_on(r#".tool-row[data-tool="demo/echo"]"#, WAIT)
        .await
        .unwrap();
    let def = text_with(&s, ".tool-detail .token-cost", "Definition:", echo).await;
    assert!(def.contains("tokens for loc:llama3.1"), "{def}");
    assert_eq!(number_after(&def, "Definition:"), echo, "{def}");
    s.screenshot(&artifacts().join("catalog-cost.png"))
        .await
        .unwrap();

    // The inspector: a method filter narrows the trace to that method's messages.
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(r#"article[data-name="demo"] button.logs"#, WAIT)
        .await
        .unwrap();
    s.wait_text(".logs-dialog .insp-list", "tools/list", WAIT)
        .await
        .unwrap();
    let all = s
        .execute("return document.querySelectorAll('.logs-dialog .insp-list .trace-line').length;")
        .await
        .unwrap()
        .as_u64()
        .unwrap();
    let method = s.wait_for(".logs-dialog .insp-method", WAIT).await.unwrap();
    s.type_text(&method, "tools/list").await.unwrap();
    // Typing is debounced: wait until the rows are the filter's (every one a tools/list
    // message, fewer than before), or the wait runs out.
    let deadline = std::time::Instant::now() + WAIT;
    let (narrowed, methods) = loop {
        let methods: Vec<String> = serde_json::from_value(
            s.execute(
                "return [...document.querySelectorAll('.logs-dialog .insp-list .trace-line')]
                   .map((r) => r.querySelector('.method')?.textContent ?? '');",
            )
            .await
            .unwrap(),
        )
        .unwrap();
        let n = methods.len() as u64;
        let done = n > 0 && n < all && methods.iter().all(|m| m.contains("tools/list"));
        if done || std::time::Instant::now() > deadline {
            break (n, methods);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        narrowed > 0 && narrowed < all,
        "{all} rows, {narrowed} after the filter"
    );
    assert!(
        methods.iter().all(|m| m.contains("tools/list")),
        "{methods:?}"
    );
    let shown = s
        .wait_text(".logs-dialog .insp-count", "message", WAIT)
        .await
        .unwrap();
    assert_eq!(number_after(&shown, ""), narrowed, "{shown}");
    s.screenshot(&artifacts().join("inspector.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}
