//! Metrics in the real app window (issue 16, point 3): a scripted load through the real host
//! (`switchboard call` against the fake MCP server: results, tool errors, a JSON-RPC error and
//! a call the policy refuses) lands in the shared database; the app's Metrics page shows exactly
//! the calls and errors made, per server, per kind and per tool, draws its time series and
//! latency histogram (SVG drawings of non-zero size), and the server's card draws a sparkline
//! that says the same numbers. Screenshots `metrics-page.png`, `metrics-plots.png` and
//! `metrics-sparkline.png` go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::AppData;
use switchboard_tests::webdriver::Session;
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

/// One `switchboard call`; returns its exit code.
fn call(data: &Path, tool: &str, args: &str) -> Option<i32> {
    run_cli(
        data,
        &["call", "demo", tool, "--yes", "--args", args],
        "",
        &[],
    )
    .status
    .code()
}

/// The load: 5 echoes and 2 adds (ok), 2 `fail` (tool errors), 1 `rpc_error`, 1 refused `env`.
fn scripted_load(data: &Path) {
    for i in 0..5 {
        assert_eq!(
            call(data, "echo", &format!(r#"{{"text":"hello {i}"}}"#)),
            Some(0)
        );
    }
    for i in 0..2 {
        assert_eq!(call(data, "add", &format!(r#"{{"a":{i},"b":2}}"#)), Some(0));
    }
    for _ in 0..2 {
        assert_eq!(call(data, "fail", "{}"), Some(2), "a tool error exits 2");
    }
    assert_ne!(call(data, "rpc_error", "{}"), Some(0));
    assert_ne!(call(data, "env", "{}"), Some(0), "the deny rule refuses it");
}

/// The cells of the table row matching `css`, as text.
async fn row(s: &Session, css: &str) -> Vec<String> {
    let script = format!(
        "const r = document.querySelector({}); return r ? Array.from(r.children).map((c) => c.textContent) : null;",
        serde_json::to_string(css).unwrap()
    );
    let v = s.execute(&script).await.unwrap();
    serde_json::from_value(v).unwrap_or_default()
}

/// The rendered size of the first element matching `css`: [width, height], or null.
async fn size(s: &Session, css: &str) -> Value {
    let script = format!(
        "const e = document.querySelector({}); if (!e) return null; const r = e.getBoundingClientRect(); return [r.width, r.height];",
        serde_json::to_string(css).unwrap()
    );
    s.execute(&script).await.unwrap()
}

fn drawn(v: &Value) -> bool {
    let wh = v.as_array().map(|a| {
        a.iter()
            .map(|n| n.as_f64().unwrap_or(0.0))
            .collect::<Vec<_>>()
    });
    matches!(wh.as_deref(), Some([w, h]) if *w > 0.0 && *h > 0.0)
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn the_metrics_page_and_the_card_sparkline_show_the_calls_made() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    AppData::on(&data).approved_fake("demo", &[]);
    cli_ok(
        &data,
        &[
            "policy", "add", "noenv", "--effect", "deny", "--server", "demo", "--tool", "env",
        ],
    );
    scripted_load(&data);

    let (_driver, s) = open_window(&data).await.unwrap();

    // The card's sparkline: one report for every card, the numbers in its label.
    let spark = r#"article[data-name="demo"] svg.sparkline"#;
    let card = r#"article[data-name="demo"]"#;
    if s.wait_for(&format!(r#"{spark}[data-calls="11"]"#), WAIT)
        .await
        .is_err()
    {
        let html = s
            .execute(&format!(
                "const c = document.querySelector({}); return c ? c.outerHTML : document.body.outerHTML.slice(0, 3000);",
                serde_json::to_string(card).unwrap()
            ))
            .await
            .unwrap();
        panic!("no sparkline with 11 calls on the card: {html}");
    }
    let label = s
        .execute(&format!(
            "return document.querySelector({}).getAttribute('aria-label');",
            serde_json::to_string(spark).unwrap()
        ))
        .await
        .unwrap();
    // Bucket edges move with the clock, so the load may straddle two: only totals are fixed.
    let label = label.as_str().unwrap_or_default();
    assert!(
        label.starts_with("demo: 11 calls, 4 errors in the last 24 hours"),
        "{label}"
    );
    assert!(drawn(&size(&s, spark).await), "the sparkline has no size");
    let marks = s
        .find_all(&format!("{spark} circle.spark-error"))
        .await
        .unwrap();
    assert!(
        (1..=2).contains(&marks.len()),
        "the buckets with errors are marked: {}",
        marks.len()
    );
    s.screenshot(&artifacts().join("metrics-sparkline.png"))
        .await
        .unwrap();

    // The Metrics page: exact counts per server, per error kind and per tool.
    s.click_on(r#".tab[data-page="metrics"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(".metrics-total", "11 calls, 4 errors", WAIT)
        .await
        .unwrap();
    let server = row(&s, r#"tr.metric-server[data-server="demo"]"#).await;
    assert_eq!(
        &server[..4],
        [
            "demo",
            "11",
            "4",
            "tool error 2, JSON-RPC error 1, denied 1"
        ]
    );
    for (tool, calls, errors) in [
        ("echo", "5", "0"),
        ("add", "2", "0"),
        ("fail", "2", "2"),
        ("rpc_error", "1", "1"),
        ("env", "1", "1"),
    ] {
        let r = row(&s, &format!(r#"tr.metric-tool[data-tool="{tool}"]"#)).await;
        assert_eq!(&r[..3], [tool, calls, errors], "{tool}: {r:?}");
    }
    let env = row(&s, r#"tr.metric-tool[data-tool="env"]"#).await;
    assert_eq!(
        &env[4..7],
        ["—", "—", "—"],
        "a refusal has no latency: {env:?}"
    );
    let echo = row(&s, r#"tr.metric-tool[data-tool="echo"]"#).await;
    assert!(echo[4].ends_with(" ms"), "echo p50: {echo:?}");

    // The plots are drawn, with captions that say the same numbers.
    for plot in [".series-plot svg", ".histogram-plot svg"] {
        s.wait_for(plot, WAIT).await.unwrap();
        assert!(drawn(&size(&s, plot).await), "{plot} has no size");
    }
    s.wait_text(".series-plot figcaption", "11 calls, 4 errors", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("metrics-page.png"))
        .await
        .unwrap();
    s.execute("document.querySelector('.plot-bar').scrollIntoView(); return 1;")
        .await
        .unwrap();
    s.screenshot(&artifacts().join("metrics-plots.png"))
        .await
        .unwrap();

    // One tool's histogram: the 2 fails (refusals have no latency, so none for env).
    s.click_on(r#"tr.metric-tool[data-tool="fail"] button.select"#, WAIT)
        .await
        .unwrap();
    s.wait_text(".histogram-plot figcaption", "demo › fail", WAIT)
        .await
        .unwrap();
    let caption = s
        .execute("return document.querySelector('.histogram-plot .plot-summary').textContent;")
        .await
        .unwrap();
    let counted: u64 = caption
        .as_str()
        .unwrap_or_default()
        .split(", ")
        .filter_map(|part| {
            part.rsplit(": ")
                .next()?
                .trim_end_matches('.')
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert_eq!(counted, 2, "{caption}");
    s.close().await.unwrap();
}
