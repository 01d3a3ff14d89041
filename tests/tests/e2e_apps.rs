//! MCP Apps in the real app window (issue 13, point 6): a tool whose result points to a `ui://`
//! view renders it in the run panel, in a sandboxed frame served by the app jail
//! (`switchboard-app://`); the app's own tool call goes through the approval dialog; and a
//! hostile app can neither reach Tauri's IPC (the fixture server it tries to stop keeps
//! running), nor navigate the main window, nor load anything from a loopback listener that
//! records every connection. The fixture is `tests/fixtures/apps_server.py` (Python `mcp`
//! 2.3.0 with its `Apps` extension). Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_core::approval::Origin;
use switchboard_core::host::apps::AppError;
use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::webdriver::{Driver, Session};
use switchboard_tests::*;

const WAIT: Duration = Duration::from_secs(30);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The python that imports `mcp` (installed by `make deps` into `.tools/venv`).
fn python() -> String {
    let py = std::env::var("SWITCHBOARD_PYTHON").ok().unwrap_or_else(|| {
        repo()
            .join(".tools/venv/bin/python")
            .to_string_lossy()
            .into_owned()
    });
    let ok = Command::new(&py)
        .args(["-c", "import mcp.server.apps"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{py} cannot import mcp.server.apps: run `make deps`");
    py
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
    s.click_on(r#".tab[data-page="tools"]"#, WAIT)
        .await
        .unwrap();
    s.wait_for(".tool-search", WAIT).await.unwrap();
    s.set_value(".tool-search", tool).await.unwrap();
    s.click_on(&format!(r#".tool-row[data-tool="apps/{tool}"]"#), WAIT)
        .await
        .unwrap();
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

#[tokio::test]
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
    cli_ok(
        &data,
        &[
            "server",
            "add",
            "apps",
            "--",
            &py,
            fixture.to_str().unwrap(),
            "--canary-port",
            &port.to_string(),
        ],
    );
    cli_ok(&data, &["server", "trust", "apps", "--yes"]);

    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data.as_path())])
        .await
        .unwrap();
    let s = driver
        .session(&workspace_bin("switchboard-desktop"))
        .await
        .unwrap();
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
            .starts_with("switchboard-app://localhost/?server=apps&uri=ui%3A%2F%2F"),
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
    s.execute("document.querySelector('.app-view').scrollIntoView(); return 1;")
        .await
        .unwrap();
    s.screenshot(&artifacts().join("60-app-rendered.png"))
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
