//! What servers ask of the person, end to end in the real app window (WebDriver, under Xvfb in
//! `make test`), against the fake MCP server's `client-requests` tools and a scripted
//! OpenAI-format model on loopback:
//! - an elicitation form names the server, warns on the credential-looking field and sends what
//!   was filled in (AP-07);
//! - a URL elicitation shows the whole URL with its registrable domain highlighted and opens it
//!   only through the configured browser program, with exactly that URL; a loopback URL is not
//!   prefetched; a `javascript:` URL never reaches the person (RN-02);
//! - an "always, with these arguments" grant lets a later call on the same domain through and
//!   still asks for another domain (AP-02);
//! - sampling reaches no model before Run, runs the edited prompt, and returns the edited answer;
//!   a denial reaches the server as a refusal (AP-08);
//! - the folders a server may see are edited on the Servers page and listed by the server;
//! - parallel tool calls of a model are approved as an explicit batch (AP-06);
//! - with result review set to "always" on the Servers page, the model reads a result only after
//!   "Send to model" (AP-05);
//! - a tool changed after its first call is held until re-approved on the Servers page (TD-02).
//!
//! Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, idle, ONE_WINDOW};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{app_window, AppData};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

/// A keyless provider `fake` (Ollama profile, OpenAI wire) at `llm`.
fn add_provider(data: &Path, llm: &FakeLlm) {
    AppData::on(data).provider("fake", "ollama", &llm.openai_base(), "m1");
}

/// Starts the app and waits until `server` runs.
async fn open_app(driver: &Driver, server: &str) -> Session {
    let s = app_window(driver).await;
    s.wait_text(
        &format!(r#"article[data-name="{server}"] .badge"#),
        "running",
        WAIT,
    )
    .await
    .unwrap();
    s
}

/// Opens `server/tool` in the catalog, fills `fields` (run-form input ids without `run-`) and
/// presses Run.
async fn run_from_catalog(s: &Session, server: &str, tool: &str, fields: &[(&str, &str)]) {
    s.click_on(r#".tab[data-page="tools"]"#, WAIT)
        .await
        .unwrap();
    s.wait_for(".tool-search", WAIT).await.unwrap();
    s.set_value(".tool-search", tool).await.unwrap();
    // Selecting a row is idempotent: under load a click can land while the list redraws
    // (seen about once in ten runs in CI), so it is repeated until the detail shows.
    let detail = format!(r#".tool-detail[data-tool="{server}/{tool}"] .run-panel"#);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        s.click_on(&format!(r#".tool-row[data-tool="{server}/{tool}"]"#), WAIT)
            .await
            .unwrap();
        if s.wait_for(&detail, Duration::from_secs(3)).await.is_ok() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{server}/{tool}: its detail never showed"
        );
    }
    for (field, value) in fields {
        let css = format!("#run-{field}");
        s.wait_for(&css, WAIT).await.unwrap();
        s.set_value(&css, value).await.unwrap();
    }
    s.click_on(".run-panel button.run", WAIT).await.unwrap();
}

/// Answers the approval dialog with "Run once" once it shows `shows`.
async fn approve_once(s: &Session, shows: &str) {
    s.wait_text(".approval-dialog .approval-args", shows, WAIT)
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", WAIT)
        .await
        .unwrap();
}

/// Waits for the question dialog of `kind` and checks it names `server`.
async fn question(s: &Session, kind: &str, server: &str) -> String {
    let dialog = format!(r#"dialog.question-dialog[data-kind="{kind}"]"#);
    s.wait_text(&format!("{dialog} .question-server"), server, WAIT)
        .await
        .unwrap();
    dialog
}

/// Waits until no question dialog is open.
async fn no_question(s: &Session) {
    let deadline = std::time::Instant::now() + WAIT;
    while !s.find_all(".question-dialog").await.unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "a question dialog stayed open"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn a_server_asks_with_a_form_a_url_and_a_sampling_request() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["Four, ", "says the model."])]))
        .await
        .unwrap();
    AppData::on(&data).fake_server("asker", &["--mode", "client-requests"]);
    add_provider(&data, &llm);
    // The "system browser": a script that records the one argument it is given.
    let opened = dir.path().join("opened.txt");
    let browser = dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
            opened.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // A folder the server may see.
    let folder = dir.path().join("shared folder");
    std::fs::create_dir(&folder).unwrap();
    // Anything loaded from a URL before the person opens it would land here.
    let canary = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let canary_url = format!("http://{}/no-prefetch", canary.local_addr().unwrap());

    let driver = Driver::start(&[
        ("SWITCHBOARD_DATA_DIR", data.as_path()),
        ("SWITCHBOARD_BROWSER", browser.as_path()),
    ])
    .await
    .unwrap();
    let s = open_app(&driver, "asker").await;

    // 1. The folders it may see: added on the Servers page, listed by the server.
    s.click_on(r#"article[data-name="asker"] .server-access summary"#, WAIT)
        .await
        .unwrap();
    let input = r#"article[data-name="asker"] .root-add-path"#;
    s.wait_for(input, WAIT).await.unwrap();
    s.set_value(input, folder.to_str().unwrap()).await.unwrap();
    s.click_on(r#"article[data-name="asker"] .root-add"#, WAIT)
        .await
        .unwrap();
    s.wait_text(
        r#"article[data-name="asker"] .root-path"#,
        "shared folder",
        WAIT,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("30-roots.png"))
        .await
        .unwrap();
    run_from_catalog(&s, "asker", "list_roots", &[]).await;
    approve_once(&s, "{}").await;
    s.wait_text(".run-output", "shared%20folder", WAIT)
        .await
        .unwrap();

    // 2. A form: it names the server, warns on the key field, and sends what was filled in.
    run_from_catalog(&s, "asker", "ask_user", &[]).await;
    approve_once(&s, "{}").await;
    let form = question(&s, "form", "asker").await;
    let warned = s
        .wait_text(
            &format!("{form} .sensitive-field .sensitive-warning"),
            "password or key",
            WAIT,
        )
        .await
        .unwrap();
    assert!(
        warned.contains("servers must not ask for secrets"),
        "{warned}"
    );
    let flagged = s
        .execute(&format!(
            "return Array.from(document.querySelectorAll('{form} .sensitive-field .sf-name')).map(e => e.textContent);"
        ))
        .await
        .unwrap();
    assert_eq!(flagged, serde_json::json!(["api_key"]));
    let focused = s
        .execute("return document.activeElement && document.activeElement.className;")
        .await
        .unwrap();
    assert!(
        !focused.to_string().contains("question-accept"),
        "Accept has the focus: {focused}"
    );
    s.set_value(&format!(r#"{form} input[id$="-name"]"#), "Ada")
        .await
        .unwrap();
    s.screenshot(&artifacts().join("31-question-form.png"))
        .await
        .unwrap();
    s.click_on(&format!("{form} button.question-accept"), WAIT)
        .await
        .unwrap();
    s.wait_text(
        ".run-output",
        r#"action=accept content={"name":"Ada"}"#,
        WAIT,
    )
    .await
    .unwrap();
    no_question(&s).await;

    // 3. A URL, granted "always, with these arguments" (this domain) at the approval.
    let login = "https://login.example.com/auth?next=%2Fhome";
    run_from_catalog(&s, "asker", "open_url", &[("url", login)]).await;
    s.wait_text(".approval-dialog .approval-args", "login.example.com", WAIT)
        .await
        .unwrap();
    s.click_on(".approval-dialog .approval-constraints summary", WAIT)
        .await
        .unwrap();
    let conditions = s
        .wait_text(".approval-dialog .constraint-list", "example.com", WAIT)
        .await
        .unwrap();
    assert!(conditions.contains("\"url\""), "{conditions}");
    s.screenshot(&artifacts().join("32-approval-constraints.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow-always-constrained", WAIT)
        .await
        .unwrap();
    let url = question(&s, "url", "asker").await;
    let shown = s
        .wait_text(&format!("{url} .question-url"), login, WAIT)
        .await
        .unwrap();
    assert_eq!(shown, login);
    let domain = s
        .text(
            &s.wait_for(&format!("{url} .url-domain"), WAIT)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(domain, "example.com");
    let links = s
        .execute(&format!(
            "return document.querySelectorAll('{url} a, {url} img, {url} iframe').length;"
        ))
        .await
        .unwrap();
    assert_eq!(links, serde_json::json!(0));
    assert!(
        !opened.exists(),
        "the browser opened before the person agreed"
    );
    s.screenshot(&artifacts().join("33-question-url.png"))
        .await
        .unwrap();
    s.click_on(&format!("{url} button.question-accept"), WAIT)
        .await
        .unwrap();
    s.wait_text(".run-output", "action=accept", WAIT)
        .await
        .unwrap();
    assert!(
        eventually(WAIT, || opened.exists()).await,
        "the browser program was never run"
    );
    assert_eq!(std::fs::read_to_string(&opened).unwrap(), login);
    no_question(&s).await;

    // A loopback URL on another host: the grant does not cover it, so the approval asks; the
    // dialog warns, and nothing fetches it while it is shown.
    run_from_catalog(&s, "asker", "open_url", &[("url", &canary_url)]).await;
    approve_once(&s, "no-prefetch").await;
    let url = question(&s, "url", "asker").await;
    s.wait_text(
        &format!("{url} .url-warning"),
        "points at this computer",
        WAIT,
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        canary.accept().is_err(),
        "the URL was fetched before it was opened"
    );
    s.click_on(&format!("{url} button.question-decline"), WAIT)
        .await
        .unwrap();
    s.wait_text(".run-output", "action=decline", WAIT)
        .await
        .unwrap();
    no_question(&s).await;

    // The same domain again: the grant lets the call through without an approval dialog, and
    // the URL is still shown before anything opens; Cancel dismisses it.
    let docs = "https://docs.example.com/page";
    run_from_catalog(&s, "asker", "open_url", &[("url", docs)]).await;
    let url = question(&s, "url", "asker").await;
    assert!(
        s.find_all(".approval-dialog").await.unwrap().is_empty(),
        "the constrained grant did not cover the same domain"
    );
    s.click_on(&format!("{url} button.question-cancel"), WAIT)
        .await
        .unwrap();
    s.wait_text(".run-output", "action=cancel", WAIT)
        .await
        .unwrap();
    no_question(&s).await;

    // A javascript: URL never reaches the person: the server is told "decline".
    run_from_catalog(&s, "asker", "open_url", &[("url", "javascript:alert(1)")]).await;
    approve_once(&s, "javascript:alert(1)").await;
    s.wait_text(".run-output", "action=decline", WAIT)
        .await
        .unwrap();
    assert!(s.find_all(".question-dialog").await.unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        login,
        "the browser was run again"
    );
    assert!(canary.accept().is_err(), "a URL was fetched");

    // 4. Sampling: no model call before Run; the edited prompt goes out, the edited answer back.
    run_from_catalog(&s, "asker", "ask_model", &[("prompt", "What is 2+2?")]).await;
    s.wait_text(".approval-dialog .approval-args", "2+2", WAIT)
        .await
        .unwrap();
    // Later ask_model calls run without asking; the sampling dialog still asks each time.
    s.click_on(".approval-dialog button.allow-always", WAIT)
        .await
        .unwrap();
    let sampling = question(&s, "sampling", "asker").await;
    s.wait_for(
        &format!(r#"{sampling} .sampling-provider option[value="fake"]"#),
        WAIT,
    )
    .await
    .unwrap();
    let hints = s
        .text(
            &s.wait_for(&format!("{sampling} .sampling-hints"), WAIT)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(hints.contains("fake-model"), "{hints}");
    assert!(
        llm.requests().is_empty(),
        "the model was called before the person ran the request"
    );
    s.set_value(
        &format!("{sampling} textarea.sampling-message"),
        "What is 2+2? Answer in words (edited).",
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("34-question-sampling.png"))
        .await
        .unwrap();
    assert!(llm.requests().is_empty());
    s.click_on(&format!("{sampling} button.question-accept"), WAIT)
        .await
        .unwrap();
    let response = question(&s, "sampling_response", "asker").await;
    let answer = format!("{response} textarea.sampling-response");
    s.wait_for(&answer, WAIT).await.unwrap();
    let said = s
        .execute(&format!("return document.querySelector('{answer}').value;"))
        .await
        .unwrap();
    assert_eq!(said, serde_json::json!("Four, says the model."));
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].body.to_string();
    assert!(body.contains("Answer in words (edited)"), "{body}");
    assert!(
        reqs[0]
            .body
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(|a| a.is_empty())),
        "a sampling request carried tools: {body}"
    );
    s.set_value(&answer, "Four (checked by a person).")
        .await
        .unwrap();
    s.screenshot(&artifacts().join("35-question-sampling-response.png"))
        .await
        .unwrap();
    s.click_on(&format!("{response} button.question-accept"), WAIT)
        .await
        .unwrap();
    s.wait_text(".run-output", "text=Four (checked by a person).", WAIT)
        .await
        .unwrap();
    no_question(&s).await;

    // Denied: the server gets a refusal with the reason; no model is called.
    run_from_catalog(&s, "asker", "ask_model", &[("prompt", "Another one?")]).await;
    let sampling = question(&s, "sampling", "asker").await;
    s.set_value(&format!("{sampling} .question-reason"), "not now")
        .await
        .unwrap();
    s.click_on(&format!("{sampling} button.question-decline"), WAIT)
        .await
        .unwrap();
    let refused = s
        .wait_text(".run-output", "sampling refused", WAIT)
        .await
        .unwrap();
    assert!(refused.contains("not now"), "{refused}");
    assert_eq!(
        llm.requests().len(),
        1,
        "a denied request reached the model"
    );
    s.close().await.unwrap();
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn parallel_calls_are_approved_as_a_batch_and_a_changed_tool_waits_for_review() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let texts = ["one", "two", "three", "four", "five"];
    let calls: Vec<ScriptedCall> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let args = format!("{{\"text\":\"parallel {t}\"}}");
            ScriptedCall::new(&format!("call_{i}"), "demo__echo", &[&args])
        })
        .collect();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(calls),
        Reply::text(&["All five ", "echoed."]),
        Reply::calls(vec![ScriptedCall::new(
            "call_9",
            "demo__echo",
            &["{\"text\":\"held for review\"}"],
        )]),
        Reply::text(&["I read the reviewed result."]),
    ]))
    .await
    .unwrap();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    cli_ok(data, &["server", "add", "demo", "--", fake]);
    cli_ok(
        data,
        &[
            "server",
            "add",
            "rug",
            "--",
            fake,
            "--mode",
            "rug-description",
        ],
    );
    for name in ["demo", "rug"] {
        cli_ok(data, &["server", "trust", name, "--yes"]);
        cli_ok(data, &["server", "always-on", name, "on"]);
    }
    add_provider(data, &llm);
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = open_app(&driver, "demo").await;
    s.wait_text(r#"article[data-name="rug"] .badge"#, "running", WAIT)
        .await
        .unwrap();

    // 1. Five parallel calls: every one listed in the batch review, run only once confirmed.
    s.click_on(r#".tab[data-page="chat"]"#, WAIT).await.unwrap();
    s.wait_for(r#".chat-provider option[value="fake"]"#, WAIT)
        .await
        .unwrap();
    let input = s.wait_for(".chat-input", WAIT).await.unwrap();
    s.type_text(&input, "echo five things at once")
        .await
        .unwrap();
    s.click_on(".chat-send", WAIT).await.unwrap();
    s.wait_text(
        ".approval-dialog .approval-review-all",
        "Review all 5",
        WAIT,
    )
    .await
    .unwrap();
    s.click_on(".approval-dialog .approval-review-all", WAIT)
        .await
        .unwrap();
    s.wait_text(
        "dialog.batch-dialog #batch-title",
        "5 tool calls waiting",
        WAIT,
    )
    .await
    .unwrap();
    let items = s.find_all("dialog.batch-dialog .batch-item").await.unwrap();
    assert_eq!(items.len(), 5);
    let listed = s
        .text(
            &s.wait_for("dialog.batch-dialog .batch-list", WAIT)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    for t in texts {
        assert!(
            listed.contains(&format!("parallel {t}")),
            "{t} missing: {listed}"
        );
    }
    assert!(listed.contains("demo › echo"), "{listed}");
    let disabled = s
        .execute(
            "return document.querySelector('dialog.batch-dialog button.batch-run-all').disabled;",
        )
        .await
        .unwrap();
    assert_eq!(
        disabled,
        serde_json::json!(true),
        "Run all before the review was confirmed"
    );
    s.screenshot(&artifacts().join("36-batch-review.png"))
        .await
        .unwrap();
    s.click_on("dialog.batch-dialog input.batch-confirm", WAIT)
        .await
        .unwrap();
    s.click_on("dialog.batch-dialog button.batch-run-all", WAIT)
        .await
        .unwrap();
    s.wait_text(".chat-log", "All five echoed.", WAIT)
        .await
        .unwrap();
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let results = reqs[1].body.to_string();
    for t in texts {
        assert!(results.contains(&format!("parallel {t}")), "{t}: {results}");
    }
    assert!(s.find_all("dialog.batch-dialog").await.unwrap().is_empty());
    idle(&s).await.unwrap();

    // 2. Result review (AP-05): with "always" set on the Servers page, the model reads the
    // result only after "Send to model".
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(r#"article[data-name="demo"] .server-access summary"#, WAIT)
        .await
        .unwrap();
    s.wait_for(
        r#"article[data-name="demo"] .result-review option[value="always"]"#,
        WAIT,
    )
    .await
    .unwrap();
    s.execute(
        "const r = document.querySelector('article[data-name=\"demo\"] .result-review'); \
         r.value = 'always'; r.dispatchEvent(new Event('change', { bubbles: true })); return 1;",
    )
    .await
    .unwrap();
    s.wait_text(
        r#"article[data-name="demo"] .review-status"#,
        "Saved.",
        WAIT,
    )
    .await
    .unwrap();
    s.click_on(r#".tab[data-page="chat"]"#, WAIT).await.unwrap();
    let input = s.wait_for(".chat-input", WAIT).await.unwrap();
    s.type_text(&input, "and once more").await.unwrap();
    s.click_on(".chat-send", WAIT).await.unwrap();
    approve_once(&s, "held for review").await;
    let held = question(&s, "tool_result", "demo").await;
    s.wait_text(&format!("{held} .question-result"), "held for review", WAIT)
        .await
        .unwrap();
    s.wait_text(
        &format!("{held} .question-reason-text"),
        "review every result",
        WAIT,
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        llm.requests().len(),
        3,
        "the model read the result before it was sent"
    );
    s.screenshot(&artifacts().join("38-result-review.png"))
        .await
        .unwrap();
    s.click_on(&format!("{held} button.question-accept"), WAIT)
        .await
        .unwrap();
    s.wait_text(".chat-log", "I read the reviewed result.", WAIT)
        .await
        .unwrap();
    idle(&s).await.unwrap();
    let read = llm.requests()[3].body.to_string();
    assert!(read.contains("held for review"), "{read}");

    // 3. A rug pull: the tool changes after its first call and is held until re-approved.
    run_from_catalog(&s, "rug", "echo", &[("text", "first call")]).await;
    approve_once(&s, "first call").await;
    s.wait_text(".run-output", "first call", WAIT)
        .await
        .unwrap();
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(r#"article[data-name="rug"] .review-badge"#, WAIT)
        .await
        .unwrap();
    let review = s
        .wait_text(".pin-review-dialog .pin-changes", "echo", WAIT)
        .await
        .unwrap();
    assert!(review.contains("Changed"), "{review}");
    s.screenshot(&artifacts().join("37-rug-review.png"))
        .await
        .unwrap();
    // Held in the catalog meanwhile.
    s.click_on(".pin-review-dialog .actions button:not(.approve-all)", WAIT)
        .await
        .unwrap();
    s.click_on(r#".tab[data-page="tools"]"#, WAIT)
        .await
        .unwrap();
    s.set_value(".tool-search", "echo").await.unwrap();
    s.click_on(r#".tool-row[data-tool="rug/echo"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(
        r#".tool-detail[data-tool="rug/echo"] .held-notice"#,
        "Held for review",
        WAIT,
    )
    .await
    .unwrap();
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(r#"article[data-name="rug"] .review-badge"#, WAIT)
        .await
        .unwrap();
    // One item approved by name (a list crosses the isolation hook), then the dialog closed.
    s.click_on(".pin-review-dialog .approve-one", WAIT)
        .await
        .unwrap();
    s.wait_text(".pin-review-dialog .approve-one", "Approved", WAIT)
        .await
        .unwrap();
    s.click_on(".pin-review-dialog .actions button:not(.approve-all)", WAIT)
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while !s
        .find_all(r#"article[data-name="rug"] .review-badge"#)
        .await
        .unwrap()
        .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "still held after approval"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    run_from_catalog(&s, "rug", "echo", &[("text", "after review")]).await;
    approve_once(&s, "after review").await;
    s.wait_text(".run-output", "after review", WAIT)
        .await
        .unwrap();
    s.close().await.unwrap();
}
