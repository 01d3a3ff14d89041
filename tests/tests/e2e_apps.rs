//! MCP Apps in the real app window (issue 13, point 6): a tool whose result points to a `ui://`
//! view renders it in the run panel, in a sandboxed frame served by the app jail
//! (`switchboard-app://`); the app's own tool call goes through the approval dialog; and a
//! hostile app can neither reach Tauri's IPC (the fixture server it tries to stop keeps
//! running), nor navigate the main window, nor load anything from a loopback listener that
//! records every connection. A link an app asks to open reaches the (recording, fake) browser
//! only after the person clicks; a view a tool declares only in `_meta` shows too; a model's
//! call in the chat shows its app under the call's card; and only a host built to render apps
//! (the desktop's) advertises the extension to servers. The fixture is
//! `tests/fixtures/apps_server.py` (Python `mcp` 2.3.0 with its `Apps` extension). Screenshots
//! go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Map;
use switchboard_core::approval::audit::AuditKind;
use switchboard_core::approval::{Answer, ApprovalRequest, Origin, Scope};
use switchboard_core::host::app_calls::ShownIn;
use switchboard_core::host::apps::AppError;
use switchboard_core::host::CallOptions;
use switchboard_core::ids::ToolRef;
use switchboard_core::store::{AuditEntry, AuditQuery};
use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::{app_window, open_chat, open_tool, AppData};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The python that imports `mcp` with its Apps extension (installed by `make deps`).
fn python() -> String {
    python_with("mcp.server.apps")
        .expect("the Python MCP SDK with mcp.server.apps (make deps)")
        .to_string_lossy()
        .into_owned()
}

/// A loopback listener that records the first line of every connection it gets.
fn canary() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(Mutex::new(Vec::new()));
    let seen = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 1024];
            let n = s.read(&mut buf).unwrap_or(0);
            let first = String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("(nothing)")
                .to_owned();
            seen.lock().unwrap().push(first);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (port, hits)
}

/// Opens `tool` of the fixture in the catalog and runs it; approves the run once.
async fn run_tool(s: &Session, tool: &str) {
    open_tool(s, "apps", tool).await;
    s.click_on(".run-panel button.run", WAIT).await.unwrap();
    approve_once(s, "{").await;
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

/// The core half, no window: the host reads an app through the seam from the real SDK server
/// and refuses what is not an app (another scheme, another MIME type, an unknown view); links
/// an app asks for open only through the host's one opener, and only what it accepts.
#[tokio::test]
async fn the_host_loads_only_app_documents_and_opens_links_only_through_the_opener() {
    let scratch = tempfile::tempdir().unwrap();
    let opened = scratch.path().join("opened.txt");
    let browser = scratch.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" >> '{}'\n", opened.display()),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&browser).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&browser, perms).unwrap();
    let (host, _dir) = test_host_with(|b| b.browser(Some(browser.clone()))).await;
    // Links an app asks for open only through the one opener, and only what it accepts.
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "http://evil.example/",
        "https://bank.example@evil.example/",
    ] {
        let r = host.open_app_link(bad);
        assert!(matches!(r, Err(AppError::Link(_))), "{bad}: {r:?}");
    }
    host.open_app_link("https://example.com/docs").unwrap();
    assert!(
        eventually(Duration::from_secs(10), || {
            std::fs::read_to_string(&opened).is_ok_and(|t| t == "https://example.com/docs\n")
        })
        .await,
        "the opener was not given the link"
    );
    let py = python();
    let fixture = repo().join("tests/fixtures/apps_server.py");
    let spec = stdio_spec(
        "apps",
        &py,
        &[fixture.to_str().unwrap(), "--canary-port", "9"],
    );
    let h = start_trusted(&host, spec).await;
    let id = h.id().clone();
    let doc = host
        .load_app(&id, "ui://fixture/counter.html", Origin::Manual)
        .await
        .unwrap();
    assert!(doc.html.contains("Counter app"), "{}", doc.html);
    let plain = host
        .load_app(&id, "ui://fixture/plain.txt", Origin::Manual)
        .await;
    assert!(matches!(plain, Err(AppError::WrongMime(_))), "{plain:?}");
    let web = host
        .load_app(&id, "https://example.com/app.html", Origin::Manual)
        .await;
    assert!(matches!(web, Err(AppError::NotUi(_))), "{web:?}");
    let missing = host
        .load_app(&id, "ui://fixture/nope.html", Origin::Manual)
        .await;
    assert!(missing.is_err(), "{missing:?}");
    host.shutdown().await;
}

/// No window: a host built with `apps(true)` (the desktop's) tells servers it renders MCP
/// Apps and one built without (the CLI's) does not, as the real SDK server sees it
/// (`client_supports_apps`); a tool's `_meta.ui.resourceUri` reaches the catalog, and a
/// result's `ui://` link is found.
#[tokio::test]
async fn only_a_host_that_renders_apps_advertises_them_and_declared_views_reach_the_catalog() {
    use switchboard_core::host::apps;
    use switchboard_core::ids::ToolRef;
    let py = python();
    let fixture = repo().join("tests/fixtures/apps_server.py");
    for renders in [false, true] {
        let (host, _dir) = test_host_with(|b| b.apps(renders)).await;
        let spec = stdio_spec(
            "apps",
            &py,
            &[fixture.to_str().unwrap(), "--canary-port", "9"],
        );
        let h = start_trusted(&host, spec).await;
        let id = h.id().clone();
        let catalogs = host.catalogs().await.unwrap();
        let tools = &catalogs
            .iter()
            .find(|c| c.server == id)
            .unwrap()
            .catalog
            .tools;
        let view = |name: &str| {
            let t = tools.iter().find(|t| t.name == name).unwrap();
            apps::declared_view(t.meta.as_ref()).map(str::to_owned)
        };
        assert_eq!(
            view("show_declared").as_deref(),
            Some("ui://fixture/hello.html")
        );
        assert_eq!(
            view("show_counter").as_deref(),
            Some("ui://fixture/counter.html")
        );
        assert_eq!(view("bump"), None);
        let call = |tool: &str| ToolRef {
            server: id.clone(),
            tool: tool.into(),
        };
        let declared = host
            .call_allowed(
                &call("show_declared"),
                Default::default(),
                Default::default(),
            )
            .await
            .unwrap();
        let text = serde_json::to_string(&declared.content).unwrap();
        let want = if renders { "apps: yes" } else { "apps: no" };
        assert!(text.contains(want), "apps({renders}): {text}");
        assert_eq!(apps::result_view(&declared), None, "it links no view");
        let counter = host
            .call_allowed(
                &call("show_counter"),
                Default::default(),
                Default::default(),
            )
            .await
            .unwrap();
        assert_eq!(
            apps::result_view(&counter),
            Some("ui://fixture/counter.html")
        );
        host.shutdown().await;
    }
}

/// Waits (bounded) for the next question, gives it `answer`, and returns it.
async fn answer_next(host: &switchboard_core::host::Host, answer: Answer) -> ApprovalRequest {
    for _ in 0..1500 {
        if let Some(req) = host.pending_approvals().into_iter().next() {
            host.answer_approval(req.nonce.as_str(), answer)
                .await
                .unwrap();
            return req;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nobody asked");
}

/// The audit log's entries whose text holds `needle`, newest first.
async fn audited(host: &switchboard_core::host::Host, needle: &str) -> Vec<AuditEntry> {
    host.audit_page(&AuditQuery {
        search: Some(needle.into()),
        before: None,
        limit: 200,
    })
    .await
    .unwrap()
    .entries
}

/// AP-10, no window: an app acts as itself. A tool its server shows to the model only is
/// refused with a reason that says so, and the refusal is audited under the app's name; a grant
/// the person gave the chat model ("always") does not cover the app's call of the same tool: the
/// person is asked, the question names the app, and the audit log names the app as the actor.
/// A frame's address loads its own document only: an address naming another server's document
/// is refused and audited, and a frame reported as navigated away is closed (its document and
/// its calls refused after).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn an_app_calls_as_itself_only_what_its_server_shows_to_apps() {
    let (host, _dir) = test_host_with(|b| b.apps(true)).await;
    let py = python();
    let fixture = repo().join("tests/fixtures/apps_server.py");
    let spec = stdio_spec(
        "apps",
        &py,
        &[fixture.to_str().unwrap(), "--canary-port", "9"],
    );
    let id = start_trusted(&host, spec).await.id().clone();
    let conv = host.create_conversation("apps").await.unwrap().id;
    let prober = "ui://fixture/prober.html";
    let shown = ShownIn {
        conversation: Some(conv.clone()),
        agent: None,
    };
    let frame = host.open_app_frame(&id, prober, shown).await.unwrap();
    // A tool the server shows to the model only: refused before anything is asked or sent.
    let hidden = host
        .run_app_tool(&frame, "secret", Map::new(), CallOptions::default())
        .await;
    let Err(e @ AppError::Hidden { .. }) = &hidden else {
        panic!("{hidden:?}");
    };
    assert!(
        e.to_string().contains("does not make it visible to apps"),
        "{e}"
    );
    assert!(host.pending_approvals().is_empty());
    let refusals = audited(&host, "secret").await;

    assert!(
        refusals
            .iter()
            .any(|r| r.kind == AuditKind::Decided && r.detail_json.contains("visible to apps")),
        "{refusals:?}"
    );
    let proposed = audited(&host, &format!("app:apps {prober}")).await;
    assert!(
        proposed
            .iter()
            .any(|r| r.tool.as_deref() == Some("secret") && r.kind == AuditKind::Proposed),
        "the refusal does not name the app: {proposed:?}"
    );

    // The person tells the chat model "always" for bump.
    let bump = ToolRef {
        server: id.clone(),
        tool: "bump".into(),
    };
    let by = |n: i64| serde_json::json!({ "by": n }).as_object().unwrap().clone();
    let model = {
        let (host, bump, args) = (host.clone(), bump.clone(), by(1));
        let conv = conv.clone();
        tokio::spawn(async move {
            host.run_tool(&bump, args, Origin::model(conv), CallOptions::default())
                .await
        })
    };
    let always = Answer::Allow {
        arguments: None,
        scope: Scope::Always,
        constraints: Vec::new(),
    };
    let asked = answer_next(&host, always).await;
    assert!(matches!(asked.origin, Origin::Model { .. }), "{asked:?}");
    model.await.unwrap().unwrap();
    // The grant works for the model: its next call runs without a question.
    host.run_tool(
        &bump,
        by(2),
        Origin::model(conv.clone()),
        CallOptions::default(),
    )
    .await
    .unwrap();
    // The app's call of the same tool is not covered: the person is asked, about the app.
    let app_call = {
        let (host, frame) = (host.clone(), frame.clone());
        let args = by(7);
        tokio::spawn(async move {
            host.run_app_tool(&frame, "bump", args, CallOptions::default())
                .await
        })
    };
    let asked = answer_next(&host, Answer::ALLOW).await;
    let Origin::App {
        app, conversation, ..
    } = &asked.origin
    else {
        panic!("the question is not the app's: {asked:?}");
    };
    assert_eq!((app.server.as_str(), app.uri.as_str()), ("apps", prober));
    assert_eq!(conversation.as_ref(), Some(&conv));
    assert!(app.describe().contains(prober), "{}", app.describe());
    let result = app_call.await.unwrap().unwrap();
    assert!(
        serde_json::to_string(&result.content)
            .unwrap()
            .contains("bumped by 7"),
        "{result:?}"
    );
    let by_app = audited(&host, &format!("app:apps {prober}")).await;
    assert!(
        by_app
            .iter()
            .any(|r| r.kind == AuditKind::Proposed && r.tool.as_deref() == Some("bump")),
        "the app's call is not audited as the app's: {by_app:?}"
    );

    // Its own document loads; another server's, named by its address, is refused and audited.
    let doc = host.load_app_frame(frame.as_str()).await.unwrap();
    assert!(doc.html.contains("Prober app"));
    let forged = host.load_app_frame(&"0".repeat(32)).await;
    assert!(matches!(forged, Err(AppError::NoFrame)), "{forged:?}");
    host.refuse_app_address(Some((&id, "ui://fixture/hello.html")))
        .await;
    let refused = audited(&host, "ui://fixture/hello.html").await;
    assert!(
        refused
            .iter()
            .any(|r| r.detail_json.contains("not its own")),
        "{refused:?}"
    );
    // The window saw the frame navigate away: it is closed, and the app is named.
    assert!(host.app_navigated(&frame).await);
    assert!(!host.app_navigated(&frame).await, "closed once");
    let navigated = audited(&host, prober).await;
    assert!(
        navigated
            .iter()
            .any(|r| r.detail_json.contains("navigated its frame away")),
        "{navigated:?}"
    );
    let reload = host.load_app_frame(frame.as_str()).await;
    assert!(matches!(reload, Err(AppError::NoFrame)), "{reload:?}");
    let after = host
        .run_app_tool(&frame, "bump", by(8), CallOptions::default())
        .await;
    assert!(matches!(after, Err(AppError::NoFrame)), "{after:?}");
    host.shutdown().await;
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn an_app_renders_in_its_jail_its_call_is_approved_and_a_hostile_app_reaches_nothing() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let (port, hits) = canary();
    // The recorder works: a request of the test's own is recorded, and is the only one later.
    let _ = reqwest::get(format!("http://127.0.0.1:{port}/control")).await;
    assert!(
        eventually(Duration::from_secs(5), || hits.lock().unwrap().len() == 1).await,
        "the canary listener records nothing"
    );
    let py = python();
    let fixture = repo().join("tests/fixtures/apps_server.py");
    let port = port.to_string();
    let fixture_args = [fixture.to_str().unwrap(), "--canary-port", &port];
    AppData::on(&data).server("apps", &py, &fixture_args);

    // Links the person agrees to open go to the recording fake browser, which fetches nothing.
    let browser = workspace_bin("fake-browser");
    let browsed = dir.path().join("browser.log");
    let driver = Driver::start(&[
        ("SWITCHBOARD_DATA_DIR", data.as_path()),
        ("SWITCHBOARD_BROWSER", browser.as_path()),
        ("FAKE_BROWSER_LOG", browsed.as_path()),
        ("FAKE_BROWSER_MODE", Path::new("refuse")),
    ])
    .await
    .unwrap();
    let s = app_window(&driver).await;
    if let Err(e) = s
        .wait_text(r#"article[data-name="apps"] .badge"#, "running", WAIT)
        .await
    {
        s.screenshot(&artifacts().join("60-app-server-not-running.png"))
            .await
            .unwrap();
        panic!("{e}");
    }
    let home = s.url().await.unwrap();

    // The good app: rendered in a sandboxed frame from the jail; its call asks first.
    run_tool(&s, "show_counter").await;
    s.wait_for(".run-output .app-view iframe.app-frame", WAIT)
        .await
        .unwrap();
    let frame = s
        .execute(
            "const f = document.querySelector('.app-view iframe');
             return [f.getAttribute('sandbox'), f.src];",
        )
        .await
        .unwrap();
    assert_eq!(frame[0], "allow-scripts", "{frame}");
    assert!(
        frame[1]
            .as_str()
            .unwrap()
            .starts_with("switchboard-app://localhost/?frame="),
        "{frame}"
    );
    s.wait_text(".app-log", "initialized by Switchboard", WAIT)
        .await
        .unwrap();
    // The app asks for `bump {by: 5}`: the same dialog as any call, nothing runs before it.
    approve_once(&s, "\"by\": 5").await;
    s.wait_text(".app-log", "app got: bumped by 5", WAIT)
        .await
        .unwrap();
    // Then it asks to open a link: shown with a button, and opened only when clicked.
    s.wait_text(".app-log", "asked to open a link", WAIT)
        .await
        .unwrap();
    s.wait_text(".app-links .app-link", "https://example.com/docs", WAIT)
        .await
        .unwrap();
    assert!(
        std::fs::read_to_string(&browsed)
            .unwrap_or_default()
            .is_empty(),
        "a link opened before the person clicked"
    );
    s.click_on(".app-links button.app-open-link", WAIT)
        .await
        .unwrap();
    s.wait_text(".app-links .app-link", "Opened.", WAIT)
        .await
        .unwrap();
    // "Opened." follows the opener's start; the opener writes its file a moment later.
    let written = eventually(WAIT, || {
        std::fs::read_to_string(&browsed).is_ok_and(|t| t.ends_with('\n'))
    })
    .await;
    assert!(written, "the opener never ran");
    assert_eq!(
        std::fs::read_to_string(&browsed).unwrap(),
        "https://example.com/docs refused\n",
        "the opener was not given exactly the link"
    );
    s.execute("document.querySelector('.app-view').scrollIntoView(); return 1;")
        .await
        .unwrap();
    s.screenshot(&artifacts().join("60-app-rendered.png"))
        .await
        .unwrap();

    // A view only the tool's `_meta` declares is shown too; the server saw that this host
    // renders apps.
    run_tool(&s, "show_declared").await;
    s.wait_text(".run-output", "apps: yes", WAIT).await.unwrap();
    s.wait_text(".app-log", "hello app ready", WAIT)
        .await
        .unwrap();

    // The hostile app: it tries the IPC, the top window and the network, and reports.
    run_tool(&s, "show_hostile").await;
    let report = s
        .wait_text(".app-log", "hostile report:", WAIT)
        .await
        .unwrap();
    eprintln!("{report}");
    s.execute("document.querySelector('.app-view').scrollIntoView(); return 1;")
        .await
        .unwrap();
    s.screenshot(&artifacts().join("61-app-hostile.png"))
        .await
        .unwrap();
    for want in [
        "internals: undefined",
        "tauri: undefined",
        "parent internals: blocked",
        "internals invoke: absent",
        "parent invoke: blocked",
        "fetch ipc://localhost: blocked",
        "fetch http://ipc.localhost: blocked",
        "fetch canary: blocked",
        "img canary: error",
        "script canary: error",
        "top navigation: blocked",
        "open window: null",
    ] {
        assert!(report.contains(want), "missing {want:?} in {report}");
    }
    assert!(!report.contains("CALLED"), "{report}");
    // The main window is where it was, and the server the app tried to stop still runs.
    assert_eq!(s.url().await.unwrap(), home);
    s.click_on(r#".tab[data-page="servers"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(r#"article[data-name="apps"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    s.close().await.unwrap();
    let got = hits.lock().unwrap().clone();
    assert_eq!(
        got,
        vec!["GET /control HTTP/1.1".to_owned()],
        "the app reached the network"
    );
}

/// In the chat: a model's call of a tool that declares a view shows the app under the call's
/// card, in the same jail, once the person approved the call; nothing shows before.
#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn a_models_call_shows_its_app_in_the_chat_after_approval() {
    use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
    use switchboard_tests::fake_llm::FakeLlm;
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "apps__show_declared",
            &["{}"],
        )]),
        Reply::text(&["Shown."]),
    ]))
    .await
    .unwrap();
    let py = python();
    let fixture = repo().join("tests/fixtures/apps_server.py");
    let base = llm.openai_base();
    AppData::on(&data)
        .server(
            "apps",
            &py,
            &[fixture.to_str().unwrap(), "--canary-port", "9"],
        )
        .provider("fake", "ollama", &base, "m1");
    let (_driver, s) = open_window(&data).await.unwrap();
    open_chat(&s, "apps", "fake").await;
    let input = s.wait_for(".chat-input", WAIT).await.unwrap();
    s.type_text(&input, "show me").await.unwrap();
    s.click_on(".chat-send", WAIT).await.unwrap();
    s.wait_for(".approval-dialog .approval-args", WAIT)
        .await
        .unwrap();
    let before = s
        .execute("return document.querySelectorAll('.chat-log iframe').length;")
        .await
        .unwrap();
    assert_eq!(
        before,
        serde_json::json!(0),
        "an app showed before approval"
    );
    s.click_on(".approval-dialog button.allow", WAIT)
        .await
        .unwrap();
    s.wait_text(".chat-log", "Shown.", WAIT).await.unwrap();
    s.wait_for(".chat-log .tool-card .tc-app iframe.app-frame", WAIT)
        .await
        .unwrap();
    // The card may render once more as the turn ends: ask until a frame is there to read.
    let asked = std::time::Instant::now();
    let frame = loop {
        let seen = s
            .execute(
                "const f = document.querySelector('.chat-log .tc-app iframe');
                 return f ? [f.getAttribute('sandbox'), f.src] : null;",
            )
            .await
            .unwrap();
        if !seen.is_null() {
            break seen;
        }
        assert!(asked.elapsed() < WAIT, "the app's frame went away");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(frame[0], "allow-scripts", "{frame}");
    assert!(
        frame[1]
            .as_str()
            .unwrap()
            .starts_with("switchboard-app://localhost/?frame="),
        "{frame}"
    );
    s.wait_text(".chat-log .tc-app .app-log", "hello app ready", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("62-app-in-chat.png"))
        .await
        .unwrap();
    s.close().await.unwrap();
}

/// The audit entries (as JSON) whose text holds `needle`, through the real CLI.
fn audit_cli(data: &Path, needle: &str) -> Vec<serde_json::Value> {
    let out = cli_ok(
        data,
        &[
            "--json", "audit", "list", "--search", needle, "--limit", "200",
        ],
    );
    let page: serde_json::Value = serde_json::from_str(&out).unwrap();
    page["entries"].as_array().cloned().unwrap_or_default()
}

/// AP-10, in the real window: an app acts as itself. The person first tells the chat model
/// (over the real CLI, `chat`) "always" for `bump`. Then the prober app, shown by the person's
/// own run in the window, (1) calls `secret`, a tool its server shows to the model only: it
/// is refused with a reason that says so, nobody is asked, and the audit log names the app;
/// (2) calls `bump`: the model's grant does not cover it, so the dialog asks, naming the app,
/// and the audit log names the app as who proposed it; (3) navigates its frame to another
/// server's document: the jail refuses it (the other server's document is never read), the
/// window stops the app, and both are audited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn an_app_in_the_window_is_refused_hidden_tools_a_models_grant_and_other_documents() {
    use switchboard_tests::fake_llm::scenario::{Reply, Scenario, ScriptedCall};
    use switchboard_tests::fake_llm::FakeLlm;
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let py = python();
    let fixture = repo().join("tests/fixtures/apps_server.py");
    for (name, other) in [("apps", "apps2"), ("apps2", "apps")] {
        let fixture_args = [
            fixture.to_str().unwrap(),
            "--canary-port",
            "9",
            "--other",
            other,
        ];
        AppData::on(&data).server(name, &py, &fixture_args);
    }
    // The person allows the chat model `bump` always, over the real CLI.
    let llm = FakeLlm::spawn(Scenario::new([
        Reply::calls(vec![ScriptedCall::new(
            "call_1",
            "apps__bump",
            &[r#"{"by": 1}"#],
        )]),
        Reply::text(&["Bumped."]),
    ]))
    .await
    .unwrap();
    cli_ok(
        &data,
        &[
            "provider",
            "add",
            "fake",
            "--kind",
            "ollama",
            "--base-url",
            &llm.openai_base(),
            "--model",
            "m1",
        ],
    );
    let o = run_cli(&data, &["chat", "--model", "fake", "bump it"], "a\n", &[]);
    assert!(o.status.success(), "{o:?}");
    let grants = cli_ok(&data, &["policy", "list"]);
    assert!(grants.contains("grant"), "no grant was made: {grants}");

    let (_driver, s) = open_window(&data).await.unwrap();
    for name in ["apps", "apps2"] {
        s.wait_text(
            &format!(r#"article[data-name="{name}"] .badge"#),
            "running",
            WAIT,
        )
        .await
        .unwrap();
    }
    run_tool(&s, "show_prober").await;
    let frame = s
        .wait_for(".run-output .app-view iframe.app-frame", WAIT)
        .await
        .unwrap();
    let src = s
        .execute("return document.querySelector('.app-view iframe').src;")
        .await
        .unwrap();
    assert!(
        src.as_str()
            .unwrap()
            .starts_with("switchboard-app://localhost/?frame="),
        "the frame's address names more than its frame: {src}"
    );
    let _ = frame;
    // (1) The hidden tool: refused with the reason, before anyone is asked.
    let log = s
        .wait_text(".app-log", "hidden: ", WAIT)
        .await
        .unwrap_or_else(|e| panic!("the app's hidden call was not refused: {e}"));
    assert!(log.contains("does not make it visible to apps"), "{log}");
    // (2) The model's grant does not cover the app: the dialog asks, and names the app.
    let who = s
        .wait_text(".approval-dialog .approval-who", "prober.html", WAIT)
        .await
        .unwrap();
    assert!(who.contains("of server apps"), "{who}");
    s.screenshot(&artifacts().join("63-app-asks-as-itself.png"))
        .await
        .unwrap();
    approve_once(&s, "\"by\": 7").await;
    s.wait_text(".app-log", "app got: bumped by 7", WAIT)
        .await
        .unwrap();
    // (3) It navigates to another server's document: stopped, the document never shown.
    s.wait_text(".app-view .app-status", "navigated away", WAIT)
        .await
        .unwrap();
    let frames = s
        .execute("return document.querySelectorAll('.app-view iframe').length;")
        .await
        .unwrap();
    assert_eq!(frames, serde_json::json!(0), "the frame is still shown");
    let log = s
        .text(&s.wait_for(".app-log", WAIT).await.unwrap())
        .await
        .unwrap();
    assert!(
        !log.contains("hello app ready"),
        "the other document ran: {log}"
    );
    s.screenshot(&artifacts().join("64-app-navigation-stopped.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // The audit log names the app for what it asked and was refused.
    let app_actor = "app:apps ui://fixture/prober.html";
    let by_app = audit_cli(&data, app_actor);
    let proposed = |tool: &str| {
        by_app
            .iter()
            .any(|e| e["kind"] == "proposed" && e["tool"] == tool && e["actor"] == app_actor)
    };
    assert!(
        proposed("secret"),
        "the hidden call is not the app's: {by_app:#?}"
    );
    assert!(proposed("bump"), "the bump is not the app's: {by_app:#?}");
    let hidden = audit_cli(&data, "visible to apps");
    assert!(
        hidden
            .iter()
            .any(|e| e["kind"] == "decided" && e["tool"] == "secret"),
        "{hidden:#?}"
    );
    // The stop is the host's decision on a navigation the app proposed: the decided entry
    // (by the system) shares its call with a proposal named by the app.
    let navigated = audit_cli(&data, "navigated its frame away");
    let stopped = navigated
        .iter()
        .find(|e| e["kind"] == "decided" && e["tool"] == "ui://fixture/prober.html")
        .unwrap_or_else(|| panic!("the stop is not audited: {navigated:#?}"));
    assert!(
        by_app
            .iter()
            .any(|e| e["kind"] == "proposed" && e["call_ref"] == stopped["call_ref"]),
        "the navigation is not the app's: {stopped:#?} {by_app:#?}"
    );
    let other = audit_cli(&data, "not its own");
    assert!(
        other
            .iter()
            .any(|e| e["server"] == "apps2" && e["tool"] == "ui://fixture/hello.html"),
        "the refused document is not audited: {other:#?}"
    );
    // apps2's document was never read for the frame (a read would be the person's).
    let reads = audit_cli(&data, "apps2");
    assert!(
        !reads
            .iter()
            .any(|e| e["actor"] == "user" && e["tool"] == "ui://fixture/hello.html"),
        "the other server's document was read: {reads:#?}"
    );
}
