//! The scripts the WebDriver client runs in the page: a trace of presses and clicks, the wait
//! for an element to stand still, the check of where a click landed, and the summary of the
//! window that a failed wait prints. Plain JavaScript, run through WebDriver's script
//! endpoints (the page's CSP does not apply to them).

/// The W3C key of an element reference in a script's arguments.
pub(super) const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Installs (once per page) capture listeners that keep the last presses and clicks, with
/// their target, point and time, in `window.__e2eTrace`; `window.__e2eName` names an element.
const TRACE: &str = r#"
if (!window.__e2eTrace) {
  const trace = [];
  window.__e2eTrace = trace;
  const name = (t) => {
    if (!(t instanceof Element)) return String(t && t.nodeName);
    const cls = typeof t.className === "string" && t.className ? "." + t.className.trim().split(/\s+/).join(".") : "";
    const text = (t.textContent || "").trim().slice(0, 30);
    return `${t.tagName.toLowerCase()}${cls}${t.isConnected ? "" : "(detached)"} "${text}"`;
  };
  window.__e2eName = name;
  for (const type of ["mousedown", "mouseup", "click"]) {
    window.addEventListener(type, (e) => {
      trace.push(`${Math.round(performance.now())}ms ${type} ${name(e.target)} at ${e.clientX},${e.clientY}`);
      if (trace.length > 60) trace.shift();
    }, true);
  }
}
"#;

/// Arms the check of the next click: `window.__e2eLanded` becomes "hit" when it reaches the
/// element (the first argument) or, once a re-render replaced that element by its twin, the
/// first element matching the selector (the second), as a new lookup would find; else it says
/// where the click landed, and the click is stopped there, so a press that landed on another
/// button does nothing before it is clicked again.
const ARM: &str = r#"
{
  const wanted = arguments[0], css = arguments[1];
  const armed = (window.__e2eArmed = (window.__e2eArmed || 0) + 1);
  window.__e2eLanded = null;
  const onClick = (e) => {
    window.removeEventListener("click", onClick, true);
    if (armed !== window.__e2eArmed) return;
    const t = e.target;
    const twin = css && !wanted.isConnected ? document.querySelector(css) : null;
    const hit = t instanceof Element && (wanted.contains(t) || (twin !== null && twin.contains(t)));
    if (hit) {
      window.__e2eLanded = "hit";
      return;
    }
    window.__e2eLanded = `landed on ${window.__e2eName(t)} at ${e.clientX},${e.clientY}`;
    e.preventDefault();
    e.stopImmediatePropagation();
  };
  window.addEventListener("click", onClick, true);
}
"#;

/// Resolves once the element (the first argument) kept the same box for three checks 20 ms
/// apart, or after 2 s; says how it ended. The click follows either way.
const SETTLE: &str = r#"
const el = arguments[0], done = arguments[arguments.length - 1];
const start = performance.now();
let last = "", same = 0;
const check = () => {
  if (!el || !el.isConnected) return done("detached");
  const r = el.getBoundingClientRect();
  const box = [r.x, r.y, r.width, r.height].join(",");
  same = box === last ? same + 1 : 0;
  last = box;
  if (same >= 2) return done("still");
  if (performance.now() - start > 2000) return done("moving");
  setTimeout(check, 20);
};
check();
"#;

/// The asynchronous script run before every click: trace, arm, settle.
pub(super) fn settle_and_arm() -> String {
    format!("{TRACE}\n{ARM}\n{SETTLE}")
}

/// Where the armed click landed: "hit", where it went instead, or null when no click came.
pub(super) const LANDED: &str =
    "return window.__e2eLanded === undefined ? null : window.__e2eLanded;";

/// Summarises the window for a failed wait: the page, open dialogs, errors on screen, the last
/// presses and clicks, and the start of the page's text.
pub(super) const DESCRIBE: &str = r#"
const out = [];
const tab = document.querySelector('.tab[aria-selected="true"]');
out.push("page: " + (tab ? tab.dataset.page : "?") + " at " + Math.round(performance.now()) + "ms");
for (const d of document.querySelectorAll("dialog")) {
  out.push(`dialog.${d.className} open=${d.open}: ${(d.innerText || "").replace(/\s+/g, " ").slice(0, 400)}`);
}
for (const e of document.querySelectorAll('.error, [role="alert"]')) {
  if (!e.hidden && e.textContent) out.push("error shown: " + e.textContent.slice(0, 300));
}
out.push("presses and clicks: " + (window.__e2eTrace || []).slice(-20).join(" | "));
out.push("text: " + (document.body.innerText || "").replace(/\s+/g, " ").slice(0, 1500));
return out.join("\n");
"#;
