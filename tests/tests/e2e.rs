//! End to end in the real app window, driven through WebDriver (`tauri-driver` +
//! WebKitWebDriver, under Xvfb in `make test`): the servers page shows live status, a crashing
//! server's stderr, the trust dialog gates a server until it is approved, and doctor explains a
//! failing server. Screenshots of each
//! step are saved to `tests/results/e2e/` as artifacts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, open_window, ONE_WINDOW};
use switchboard_tests::scenario::app_window;
use switchboard_tests::webdriver::Driver;
use switchboard_tests::*;

/// Opens the trust dialog of `server`, checks the plan mentions `shows`, saves a screenshot,
/// allows it, and waits for the badge to read `then`. Returns the plan's text.
async fn approve(
    s: &switchboard_tests::webdriver::Session,
    server: &str,
    shows: &str,
    shot: &str,
    then: &str,
) -> String {
    let wait = Duration::from_secs(30);
    let card = format!(r#"article[data-name="{server}"]"#);
    s.click_on(&format!("{card} button.primary"), wait)
        .await
        .unwrap();
    let plan = s
        .wait_text(".trust-dialog .plan", shows, wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join(shot)).await.unwrap();
    s.click_on(".trust-dialog button.primary", wait)
        .await
        .unwrap();
    s.wait_text(&format!("{card} .badge"), then, wait)
        .await
        .unwrap();
    plan
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn servers_page_shows_status_stderr_and_gates_on_trust() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    for args in [
        vec!["server", "add", "demo", "--", fake, "--tools", "2"],
        vec![
            "server",
            "add",
            "broken",
            "--",
            fake,
            "--mode",
            "crash-on-init",
            "--stderr-banner",
            "fatal: missing API key",
        ],
        // Hangs in the handshake: the window must not wait for it (RL-07).
        vec![
            "server",
            "add",
            "hung",
            "--",
            fake,
            "--mode",
            "slow-init=600000",
        ],
        vec![
            "server",
            "add",
            "hung2",
            "--",
            fake,
            "--mode",
            "slow-init=600000",
        ],
        vec![
            "server",
            "add",
            "crashy",
            "--",
            fake,
            "--mode",
            "crash-on-init",
        ],
        // A remote server nobody answers for.
        vec!["server", "add", "gone", "--url", "http://127.0.0.1:9/mcp"],
    ] {
        let o = run_cli(data, &args, "", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for name in ["broken", "hung", "hung2", "crashy"] {
        assert!(run_cli(data, &["server", "trust", name, "--yes"], "", &[])
            .status
            .success());
        // Kept running from launch: this test is about what a running server shows.
        assert!(run_cli(data, &["server", "always-on", name, "on"], "", &[])
            .status
            .success());
    }

    // Anything the web view is tricked into loading from the network would land here (TA-02).
    let canary = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let canary_url = format!("http://{}", canary.local_addr().unwrap());

    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let app = workspace_bin("switchboard-desktop");
    let launched = std::time::Instant::now();
    let s = driver.session(&app).await.unwrap();
    let wait = Duration::from_secs(30);

    // Interactive while two servers hang in their handshake, two crash and one is unreachable
    // (RL-07): the list is there and the hung ones say they are starting. The time is recorded,
    // not asserted.
    s.wait_text(r#"article[data-name="hung"] .badge"#, "starting", wait)
        .await
        .unwrap();
    let interactive = launched.elapsed();
    std::fs::create_dir_all(artifacts()).unwrap();
    std::fs::write(
        artifacts().join("startup.txt"),
        format!(
            "launch to servers listed (two hung, two crashing, one unreachable): {} ms\n",
            interactive.as_millis()
        ),
    )
    .unwrap();
    eprintln!("time to interactive: {} ms", interactive.as_millis());

    // The unapproved server waits for approval; nothing of it runs yet.
    s.wait_text(
        r#"article[data-name="demo"] .badge"#,
        "needs approval",
        wait,
    )
    .await
    .unwrap();
    // The crashing one ends up failed, with its stderr on screen.
    s.wait_text(r#"article[data-name="broken"] .badge"#, "failed", wait)
        .await
        .unwrap();
    s.wait_text(
        r#"article[data-name="broken"] .stderr"#,
        "fatal: missing API key",
        wait,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("01-servers.png"))
        .await
        .unwrap();

    // Review: the dialog shows exactly what runs, then approval starts it.
    let plan = approve(
        &s,
        "demo",
        fake,
        "02-trust-dialog.png",
        "running · 16 tools",
    )
    .await;
    assert!(plan.contains("--tools"), "{plan}");
    s.screenshot(&artifacts().join("03-approved-running.png"))
        .await
        .unwrap();

    // Doctor explains the broken one: it exits early, with its stderr.
    s.click_on(r#"article[data-name="broken"] button.diagnose"#, wait)
        .await
        .unwrap();
    let checks = s
        .wait_text(".doctor-dialog .checks", "[FAIL] handshake", wait)
        .await
        .unwrap();
    assert!(checks.contains("exited early"), "{checks}");
    s.wait_text(".doctor-dialog .stderr", "fatal: missing API key", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("04-doctor.png"))
        .await
        .unwrap();
    s.click_on(".doctor-dialog button", wait).await.unwrap();

    // The running server's protocol trace, with its handshake and listing.
    s.click_on(r#"article[data-name="demo"] button.logs"#, wait)
        .await
        .unwrap();
    s.wait_text(".logs-dialog .trace", "tools/list", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("07-logs.png"))
        .await
        .unwrap();

    // The window cannot be navigated away from the app (TA-04).
    let home = s.url().await.unwrap();
    let _ = s
        .execute("location.href = 'https://evil.invalid/'; return 1;")
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.url().await.unwrap(), home);
    s.wait_for("button.add", wait).await.unwrap();

    // Every IPC message passes the isolation hook (TA-03): an unknown command, a wrong argument
    // type or an extra argument is dropped before Rust sees it; a well-formed call passes.
    let verdicts = s
        .execute(
            "const invoke = window.__TAURI_INTERNALS__.invoke;
             const judge = (p) => Promise.race([
               p.then(() => 'ok', (e) => 'rejected: ' + e),
               new Promise((r) => setTimeout(() => r('dropped'), 1500)),
             ]);
             return Promise.all([
               judge(invoke('nope_command', {})),
               judge(invoke('remove_server', { name: 5 })),
               judge(invoke('remove_server', { name: 'demo', sneaky: true })),
               judge(invoke('list_servers', {})),
             ]);",
        )
        .await
        .unwrap();
    assert_eq!(
        verdicts,
        serde_json::json!(["dropped", "dropped", "dropped", "ok"]),
        "the isolation hook let something through"
    );
    s.wait_for(r#"article[data-name="demo"]"#, wait)
        .await
        .unwrap();

    // Markup injected into the page cannot run scripts or fetch remote images (TA-02): the
    // CSP refuses them and reports the violation.
    s.execute(&format!(
        "window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective));
         const i = document.createElement('img'); i.src = '{canary_url}/injected.png'; document.body.append(i);
         const inline = document.createElement('script'); inline.textContent = 'window.__pwned = 1'; document.body.append(inline);
         const remote = document.createElement('script'); remote.src = '{canary_url}/x.js'; document.body.append(remote);
         return 1;"
    ))
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    let seen = s
        .execute("return [window.__pwned === undefined, window.__csp.length];")
        .await
        .unwrap();
    assert_eq!(
        seen[0],
        serde_json::json!(true),
        "an injected inline script ran"
    );
    assert!(
        seen[1].as_u64().unwrap() >= 2,
        "violations not reported: {seen}"
    );
    assert!(
        canary.accept().is_err(),
        "the web view fetched a remote URL"
    );

    s.click_on(".logs-dialog .actions button", wait)
        .await
        .unwrap();

    // The tools catalog lists the running server's tools. Running one goes through the
    // approval dialog, which shows the exact arguments; the result appears in the pane.
    s.click_on(r#".tab[data-page="tools"]"#, wait)
        .await
        .unwrap();
    s.wait_text(".filters .count", "16 tools", wait)
        .await
        .unwrap();
    let search = s.wait_for(".tool-search", wait).await.unwrap();
    s.type_text(&search, "echo").await.unwrap();
    s.click_on(r#".tool-row[data-tool="demo/echo"]"#, wait)
        .await
        .unwrap();
    s.wait_text(
        r#".tool-detail[data-tool="demo/echo"]"#,
        "Echo the given text back",
        wait,
    )
    .await
    .unwrap();
    let text = s.wait_for("#run-text", wait).await.unwrap();
    // The result echoes markup back: it must show as text, never load or run.
    s.type_text(
        &text,
        &format!("hello from the form <img src={canary_url}/result.png><script>window.__pwned=2</script>"),
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("08-tools.png"))
        .await
        .unwrap();
    s.click_on(".run-panel button.run", wait).await.unwrap();
    let args = s
        .wait_text(
            ".approval-dialog .approval-args",
            "hello from the form",
            wait,
        )
        .await
        .unwrap();
    assert!(args.contains("\"text\""), "{args}");
    s.screenshot(&artifacts().join("09-approval.png"))
        .await
        .unwrap();
    s.click_on(".approval-dialog button.allow", wait)
        .await
        .unwrap();
    s.wait_text(".run-output", "<script>window.__pwned=2</script>", wait)
        .await
        .unwrap();
    let injected = s
        .execute("return [document.querySelectorAll('.run-output img, .run-output script').length, window.__pwned === undefined];")
        .await
        .unwrap();
    assert_eq!(injected, serde_json::json!([0, true]));
    assert!(
        canary.accept().is_err(),
        "a tool result made the web view fetch a URL"
    );

    // A denied run never reaches the server and says so.
    s.click_on(".run-panel button.run", wait).await.unwrap();
    s.click_on(".approval-dialog button.deny", wait)
        .await
        .unwrap();
    s.wait_text(".run-status", "not approved", wait)
        .await
        .unwrap();

    // A slow tool shows live progress, then its result.
    s.set_value(".tool-search", "").await.unwrap();
    s.click_on(r#".tool-row[data-tool="demo/slow"]"#, wait)
        .await
        .unwrap();
    let steps = s.wait_for("#run-steps", wait).await.unwrap();
    s.type_text(&steps, "6").await.unwrap();
    let ms = s.wait_for("#run-ms", wait).await.unwrap();
    s.type_text(&ms, "400").await.unwrap();
    s.click_on(".run-panel button.run", wait).await.unwrap();
    s.click_on(".approval-dialog button.allow", wait)
        .await
        .unwrap();
    s.wait_for(".run-progress progress", wait).await.unwrap();
    s.screenshot(&artifacts().join("10-progress.png"))
        .await
        .unwrap();
    s.wait_text(".run-status", "Done", wait).await.unwrap();
    s.screenshot(&artifacts().join("11-result.png"))
        .await
        .unwrap();

    // Resources: read one, and one from a template with a typed id.
    s.click_on(r#".tab[data-page="resources"]"#, wait)
        .await
        .unwrap();
    s.click_on(r#"button[aria-label="Read Plain text"]"#, wait)
        .await
        .unwrap();
    s.wait_text(".resource-viewer", "hello from fake-mcp-server", wait)
        .await
        .unwrap();
    let id = s.wait_for(".ctx-template .ctx-var", wait).await.unwrap();
    s.type_text(&id, "42").await.unwrap();
    s.click_on(".ctx-template button.read", wait).await.unwrap();
    s.wait_text(".resource-viewer", "item 42", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("12-resources.png"))
        .await
        .unwrap();

    // Prompts: fill the argument (the server completes it) and see the messages.
    s.click_on(r#".tab[data-page="prompts"]"#, wait)
        .await
        .unwrap();
    s.click_on(r#"button[aria-label="Open Greet"]"#, wait)
        .await
        .unwrap();
    let who = s.wait_for(".ctx-prompt .ctx-arg", wait).await.unwrap();
    s.type_text(&who, "b").await.unwrap();
    s.wait_for(".ctx-prompt datalist option[value=bob]", wait)
        .await
        .unwrap();
    s.type_text(&who, "ob").await.unwrap();
    s.click_on(".ctx-prompt .get-prompt", wait).await.unwrap();
    s.wait_text(".ctx-result", "Please greet bob.", wait)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("13-prompts.png"))
        .await
        .unwrap();

    // A tool can be switched off from its pane.
    s.click_on(r#".tab[data-page="tools"]"#, wait)
        .await
        .unwrap();
    s.click_on(r#".tool-row[data-tool="demo/slow"]"#, wait)
        .await
        .unwrap();
    s.click_on(".tool-detail .toggle", wait).await.unwrap();
    s.wait_text(".tool-detail .toggle", "Enable", wait)
        .await
        .unwrap();
    s.close().await.unwrap();
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn add_a_server_through_the_form_approve_it_and_see_its_tools() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let (_driver, s) = open_window(data).await.unwrap();
    let wait = Duration::from_secs(30);

    s.wait_text(".empty", "No servers yet", wait).await.unwrap();
    // The first-run sample is added but, like any server, waits for approval before it runs.
    s.click_on(".empty button.sample", wait).await.unwrap();
    s.wait_text(
        r#"article[data-name="everything"] .badge"#,
        "needs approval",
        wait,
    )
    .await
    .unwrap();
    s.click_on("button.add", wait).await.unwrap();
    let field = |name: &'static str| format!(".add-dialog [name={name}]");
    let name = s.wait_for(&field("name"), wait).await.unwrap();
    s.type_text(&name, "formy").await.unwrap();
    let command = s.wait_for(&field("command"), wait).await.unwrap();
    s.type_text(&command, fake.to_str().unwrap()).await.unwrap();
    let args = s.wait_for(&field("args"), wait).await.unwrap();
    s.type_text(&args, "--tools=1").await.unwrap();
    // One secret environment variable: it goes to the keyring, not the database.
    s.click_on(".add-dialog .values + button", wait)
        .await
        .unwrap();
    let var = s.wait_for(".add-dialog .v-name", wait).await.unwrap();
    s.type_text(&var, "MY_TOKEN").await.unwrap();
    let value = s.wait_for(".add-dialog .v-value", wait).await.unwrap();
    s.type_text(&value, "canary-e2e-secret-4242").await.unwrap();
    s.click_on(".add-dialog .v-secret", wait).await.unwrap();
    // And one plain variable, whose value the trust dialog must show (SP-01).
    s.click_on(".add-dialog .values + button", wait)
        .await
        .unwrap();
    let var = s
        .wait_for(".add-dialog .value-row:nth-child(2) .v-name", wait)
        .await
        .unwrap();
    s.type_text(&var, "MODE").await.unwrap();
    let value = s
        .wait_for(".add-dialog .value-row:nth-child(2) .v-value", wait)
        .await
        .unwrap();
    s.type_text(&value, "fast-e2e").await.unwrap();
    s.screenshot(&artifacts().join("05-add-form.png"))
        .await
        .unwrap();
    s.click_on(".add-dialog button[type=submit]", wait)
        .await
        .unwrap();

    s.wait_text(
        r#"article[data-name="formy"] .badge"#,
        "needs approval",
        wait,
    )
    .await
    .unwrap();
    let plan = approve(
        &s,
        "formy",
        "MY_TOKEN",
        "05b-trust-dialog.png",
        "running · 15 tools",
    )
    .await;
    assert!(
        !plan.contains("canary-e2e-secret"),
        "the plan shows a secret value"
    );
    // Every env var with its value; the secret by its binding only.
    assert!(
        plan.contains("env MODE") && plan.contains("fast-e2e"),
        "the plan hides an env value: {plan}"
    );
    assert!(
        plan.contains("this server's secret MY_TOKEN"),
        "the plan does not show the secret's binding: {plan}"
    );
    s.screenshot(&artifacts().join("06-added-running.png"))
        .await
        .unwrap();

    // Import a Claude Desktop config: the preview says what is added and what goes to the
    // keyring; after the import the server waits for approval and the key is in no file.
    s.click_on("button.import", wait).await.unwrap();
    let claude = format!(
        r#"{{"mcpServers": {{"imported": {{"command": "{}", "args": ["--tools", "1"], "env": {{"OPENAI_API_KEY": "sk-canaryimport0123456789abcdef"}}}}}}}}"#,
        fake.display()
    );
    let paste = s
        .wait_for(".import-dialog .import-text", wait)
        .await
        .unwrap();
    s.type_text(&paste, &claude).await.unwrap();
    let preview = s
        .wait_text(".import-dialog .preview-table", "imported", wait)
        .await
        .unwrap();
    assert!(preview.contains("OPENAI_API_KEY"), "{preview}");
    assert!(!preview.contains("sk-canaryimport"), "{preview}");
    s.screenshot(&artifacts().join("14-import-preview.png"))
        .await
        .unwrap();
    s.click_on(".import-dialog button.primary", wait)
        .await
        .unwrap();
    s.wait_text(
        r#"article[data-name="imported"] .badge"#,
        "needs approval",
        wait,
    )
    .await
    .unwrap();
    s.wait_text(".notice", "Imported imported", wait)
        .await
        .unwrap();

    // Edit shows the secret as set, never its value.
    s.click_on(r#"article[data-name="formy"] button.edit"#, wait)
        .await
        .unwrap();
    s.wait_for(".add-dialog .v-value.secret-set", wait)
        .await
        .unwrap();
    let shown = s
        .execute("return document.querySelector('.add-dialog .v-value').value;")
        .await
        .unwrap();
    assert_eq!(
        shown,
        serde_json::json!(""),
        "the edit form received a secret value"
    );
    s.screenshot(&artifacts().join("15-edit.png"))
        .await
        .unwrap();
    s.close().await.unwrap();

    // The secrets are in the keyring only: nothing under the data dir holds them.
    assert_no_file_contains(data, "canary-e2e-secret-4242");
    assert_no_file_contains(data, "sk-canaryimport0123456789abcdef");
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn a_catalog_of_5000_tools_stays_usable_and_follows_list_changed() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let o = run_cli(
        data,
        &[
            "server",
            "add",
            "big",
            "--",
            fake.to_str().unwrap(),
            "--tools",
            "5000",
        ],
        "",
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(run_cli(data, &["server", "trust", "big", "--yes"], "", &[])
        .status
        .success());
    assert!(
        run_cli(data, &["server", "always-on", "big", "on"], "", &[])
            .status
            .success()
    );
    // This window runs with the dark theme, so the screenshots show both themes.
    let driver = Driver::start(&[
        ("SWITCHBOARD_DATA_DIR", data),
        ("GTK_THEME", std::path::Path::new("Adwaita:dark")),
    ])
    .await
    .unwrap();
    let s = app_window(&driver).await;
    let wait = Duration::from_secs(60);
    let t0 = std::time::Instant::now();
    s.wait_text(r#"article[data-name="big"] .badge"#, "5014 tools", wait)
        .await
        .unwrap();
    eprintln!("big server running after {} ms", t0.elapsed().as_millis());

    // The list holds 5,014 tools but only the rows in view exist in the page.
    let opened = std::time::Instant::now();
    s.click_on(r#".tab[data-page="tools"]"#, wait)
        .await
        .unwrap();
    s.wait_text(".filters .count", "5014 tools", wait)
        .await
        .unwrap();
    let shown = opened.elapsed();
    eprintln!("catalog shown after {} ms", shown.as_millis());
    let rows = s
        .execute("return document.querySelectorAll('.vlist-row').length;")
        .await
        .unwrap();
    assert!(rows.as_u64().unwrap() < 80, "not virtualised: {rows} rows");
    // The keyboard reaches the end of the list, and the last tool's pane opens.
    let listbox = s.wait_for(".vlist", wait).await.unwrap();
    s.type_text(&listbox, "\u{E010}").await.unwrap();
    s.wait_text(".tool-detail", "write_canary", wait)
        .await
        .unwrap();
    let filtered = std::time::Instant::now();
    let search = s.wait_for(".tool-search", wait).await.unwrap();
    s.type_text(&search, "gen_4321").await.unwrap();
    s.wait_text(".filters .count", "1 of 5014 tools", wait)
        .await
        .unwrap();
    let searched = filtered.elapsed();
    s.screenshot(&artifacts().join("16-big-catalog.png"))
        .await
        .unwrap();
    std::fs::create_dir_all(artifacts()).unwrap();
    std::fs::write(
        artifacts().join("catalog.txt"),
        format!(
            "5014 tools: tab to list shown {} ms; typing a 8-character search to 1 match {} ms\n",
            shown.as_millis(),
            searched.as_millis()
        ),
    )
    .unwrap();

    // list_changed: a tool the server adds while the page is open appears without a reload.
    s.set_value(".tool-search", "trigger_list").await.unwrap();
    s.click_on(r#".tool-row[data-tool="big/trigger_list_changed"]"#, wait)
        .await
        .unwrap();
    s.click_on(".run-panel button.run", wait).await.unwrap();
    s.click_on(".approval-dialog button.allow", wait)
        .await
        .unwrap();
    s.wait_text(".run-status", "Done", wait).await.unwrap();
    s.set_value(".tool-search", "late").await.unwrap();
    s.wait_for(r#".tool-row[data-tool="big/late_tool"]"#, wait)
        .await
        .unwrap();
    s.wait_text(".filters .count", "of 5015 tools", wait)
        .await
        .unwrap();
    s.close().await.unwrap();
}

/// SP-01, SP-10, SE-04 in the real window: the trust dialog shows every env value and flags a
/// loader variable; a remote server's shows its URL and each header with its binding, asks to
/// "connect", and a field bound to a provider's key in the dialog shows that binding before
/// anything is approved. Nothing is approved here.
#[tokio::test]
#[allow(clippy::too_many_lines)] // a window scenario, step by step: it reads top to bottom
async fn the_trust_dialog_shows_values_urls_headers_and_bindings() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fake = fake_server();
    let fake = fake.to_str().unwrap();
    for args in [
        vec![
            "server",
            "add",
            "envy",
            "--env",
            "MODE=fast-e2e",
            "--env",
            "NODE_OPTIONS=--require /tmp/x.js",
            "--",
            fake,
        ],
        vec![
            "server",
            "add",
            "far",
            "--url",
            "https://mcp.example.com/mcp",
            "--header",
            "X-Team=blue",
            "--header",
            "Authorization=secret:token",
        ],
        vec!["provider", "add", "work", "--kind", "ollama"],
    ] {
        let o = run_cli(data, &args, "", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (_driver, s) = open_window(data).await.unwrap();
    let wait = Duration::from_secs(30);

    // Under load a click can land while the card is redrawn (CI saw the dialog never open
    // about once in two full runs of this binary); one more click, only while no dialog is
    // open, so there is never a second one.
    let deadline = std::time::Instant::now() + wait;
    loop {
        s.click_on(r#"article[data-name="envy"] button.primary"#, wait)
            .await
            .unwrap();
        if s.wait_for(".trust-dialog[open]", Duration::from_secs(5))
            .await
            .is_ok()
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the trust dialog never opened"
        );
    }
    let plan = s
        .wait_text(".trust-dialog .plan", "fast-e2e", wait)
        .await
        .unwrap();
    assert!(
        plan.contains("env MODE") && plan.contains("env NODE_OPTIONS"),
        "{plan}"
    );
    let warnings = s
        .wait_text(".trust-dialog .warnings", "NODE_OPTIONS", wait)
        .await
        .unwrap();
    assert!(
        warnings.contains("changes what the runtime loads"),
        "{warnings}"
    );
    s.screenshot(&artifacts().join("20-trust-env-values.png"))
        .await
        .unwrap();
    s.click_on(".trust-dialog .actions button:not(.primary)", wait)
        .await
        .unwrap();

    s.click_on(r#"article[data-name="far"] button.primary"#, wait)
        .await
        .unwrap();
    let title = s
        .wait_text(".trust-dialog h2", "connect like this", wait)
        .await
        .unwrap();
    assert!(title.contains("far"), "{title}");
    let plan = s
        .wait_text(".trust-dialog .plan", "https://mcp.example.com/mcp", wait)
        .await
        .unwrap();
    assert!(
        plan.contains("header X-Team") && plan.contains("blue"),
        "{plan}"
    );
    assert!(plan.contains("this server's secret token"), "{plan}");
    // Lending the provider's key is a choice in the dialog, shown before approval.
    s.execute(
        "const s = document.querySelector('.trust-dialog select.bind'); \
         s.value = 'provider:work'; s.dispatchEvent(new Event('change')); return s.value;",
    )
    .await
    .unwrap();
    let plan = s
        .wait_text(".trust-dialog .plan", "API key of provider work", wait)
        .await
        .unwrap();
    assert!(!plan.contains("this server's secret token"), "{plan}");
    s.screenshot(&artifacts().join("21-trust-remote-binding.png"))
        .await
        .unwrap();
    s.click_on(".trust-dialog .actions button:not(.primary)", wait)
        .await
        .unwrap();
    s.close().await.unwrap();
    // Nothing was approved: both still wait.
    let list =
        String::from_utf8_lossy(&run_cli(data, &["server", "list"], "", &[]).stdout).into_owned();
    assert_eq!(list.matches("NOT APPROVED").count(), 2, "{list}");
}
