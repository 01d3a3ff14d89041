//! The WebDriver client's clicks, in the real window: a click that a re-render swallowed (the
//! button rebuilt between the press and the release, so no click event comes) is clicked
//! again, once, and says so; a click that landed on another button (the target moved from
//! under the pointer) does nothing there and is clicked again on the target; a click that
//! landed is never repeated; a disabled button is clicked once and left alone. Without these the e2e tests either flake on a redraw or, worse,
//! pass while clicking twice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use serde_json::json;
use switchboard_tests::e2e::{e2e_available, open_window, ONE_WINDOW};

const WAIT: Duration = Duration::from_secs(30);

/// Adds probe buttons to the page: `.swallowed` is rebuilt on its first press (its click is
/// lost), `.plain` just counts, `.off` is disabled, and `.target` moves away when first pressed,
/// leaving `.decoy` under the pointer (the release lands on another button). Clicks are counted in `window.__probe`.
const PROBES: &str = r#"
window.__probe = { swallowed: 0, plain: 0, off: 0, target: 0, decoy: 0, moved: false };
const box = document.createElement("div");
box.id = "probes";
box.style = "position: fixed; left: 20px; bottom: 20px; z-index: 2147483647; display: flex";
const make = (cls) => {
  const b = document.createElement("button");
  b.className = cls;
  b.textContent = cls;
  b.style = "width: 110px; flex: none";
  b.addEventListener("click", () => { window.__probe[cls] += 1; });
  return b;
};
const target = make("target");
target.addEventListener("mousedown", () => {
  if (window.__probe.moved) return;
  window.__probe.moved = true;
  // A line filled in just then: the button moves over, another takes its place. (WebDriver's
  // click sends no mousemove first, so the press is the first thing the button sees.)
  target.before(make("decoy"));
});
let first = true;
const swallowed = make("swallowed");
swallowed.addEventListener("mousedown", () => {
  if (!first) return;
  first = false;
  // A redraw in the middle of the press: the pressed button is replaced by its twin.
  swallowed.replaceWith(make("swallowed"));
});
const off = make("off");
off.disabled = true;
box.append(swallowed, make("plain"), off, target);
document.body.append(box);
return 1;
"#;

#[tokio::test]
async fn a_swallowed_click_is_clicked_again_and_a_landed_one_never_is() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let (_driver, s) = open_window(dir.path()).await.unwrap();
    s.wait_for(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.execute(PROBES).await.unwrap();

    s.click_on("#probes .plain", WAIT).await.unwrap();
    s.click_on("#probes .swallowed", WAIT).await.unwrap();
    s.click_on("#probes .off", WAIT).await.unwrap();
    s.click_on("#probes .target", WAIT).await.unwrap();
    let counts = s.execute("return window.__probe;").await.unwrap();
    assert_eq!(
        counts,
        json!({"swallowed": 1, "plain": 1, "off": 0, "target": 1, "decoy": 0, "moved": true}),
        "each button should have had exactly one click (a disabled one none, and the one a \
         missed press landed on none)"
    );
    // The first press on the swallowed button is in the trace, then the one that landed.
    let trace = s
        .execute(
            "return window.__e2eTrace.filter((t) => t.includes('button.swallowed')).join('\\n');",
        )
        .await
        .unwrap();
    let trace = trace.as_str().unwrap_or_default();
    assert_eq!(trace.matches("mousedown").count(), 2, "{trace}");
    assert_eq!(trace.matches(" click ").count(), 1, "{trace}");
    s.close().await.unwrap();
}
