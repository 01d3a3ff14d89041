//! The opt-in sandbox of local servers (SP-07), with a server of ours that tries to read a
//! canary file in a fake home directory and to reach a canary port on loopback.
//!
//! Every test first shows the canary is reachable without the sandbox (so a pass is not an
//! accident of the setup), then that the sandbox keeps the server from it, then that a grant
//! gives exactly that back. They need bubblewrap (`make deps` installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::config::ServerSpec;
use switchboard_core::host::{CallOptions, CheckLevel, Host, TrustState};
use switchboard_core::ids::ToolRef;
use switchboard_core::mcp::catalog::Content;
use switchboard_core::sandbox::explain::Blocked;
use switchboard_core::sandbox::{Access, SandboxSpec};
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::*;

/// A fake home directory with a canary file (and an SSH key that must never be readable), and
/// a loopback listener that greets every connection with a token.
struct Canary {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    dir: PathBuf,
    file: PathBuf,
    key: PathBuf,
    token: String,
    port: u16,
}

impl Canary {
    fn new() -> Self {
        assert!(
            Path::new("/usr/bin/bwrap").exists(),
            "bubblewrap is missing: run `make deps` (apt install bubblewrap)"
        );
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let dir = home.join("projects/canary");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let token = format!("canary-{}", std::process::id());
        let file = dir.join("secret.txt");
        std::fs::write(&file, &token).unwrap();
        let key = home.join(".ssh/id_ed25519");
        std::fs::write(&key, "PRIVATE KEY").unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let greeting = format!("{token}-port\n");
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let _ = conn.write_all(greeting.as_bytes());
            }
        });
        Self {
            _tmp: tmp,
            home,
            dir,
            file,
            key,
            token,
            port,
        }
    }

    /// A host whose servers get this fake home directory.
    async fn host(&self) -> (Host, tempfile::TempDir) {
        let env = vec![
            ("HOME".to_owned(), self.home.to_string_lossy().into_owned()),
            ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
        ];
        test_host_with(|b| b.host_env(env)).await
    }
}

fn tref(server: &str, tool: &str) -> ToolRef {
    ToolRef {
        server: sid(server),
        tool: tool.into(),
    }
}

/// Calls `canary_probe` on `server` and returns its report.
async fn probe(host: &Host, server: &str, path: &Path, port: u16) -> Value {
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!(path));
    args.insert("port".into(), json!(port));
    let r = host
        .call_allowed(&tref(server, "canary_probe"), args, CallOptions::default())
        .await
        .unwrap();
    let Some(Content::Text { text }) = r.content.first() else {
        panic!("no text in {r:?}");
    };
    serde_json::from_str(text).unwrap()
}

/// Restarts `server` (with its current setting) and waits until it runs.
async fn restart(host: &Host, server: &str) {
    host.stop_server(&sid(server)).await.unwrap();
    let h = host.start_server(&sid(server)).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(
        matches!(status, ServerStatus::Running { .. }),
        "{server}: {status} {:?}",
        h.logs().stderr_tail(20)
    );
}

async fn set(host: &Host, server: &str, sandbox: SandboxSpec) {
    let change = host
        .set_server_sandbox(&sid(server), sandbox)
        .await
        .unwrap();
    assert!(
        change.approval_kept,
        "a person's own change keeps the approval"
    );
}

fn canary_server(name: &str) -> ServerSpec {
    fake_spec(name, &["--mode", "canary"])
}

#[tokio::test]
async fn sandboxed_it_reaches_neither_granted_it_reaches_both() {
    let c = Canary::new();
    let (host, _data) = c.host().await;
    start_trusted(&host, canary_server("canary")).await;

    // Unsandboxed, the canary is in reach: the test can fail.
    let free = probe(&host, "canary", &c.file, c.port).await;
    assert_eq!(free["file"]["read"], json!(c.token), "{free}");
    assert_eq!(free["port"]["greeting"], json!(format!("{}-port", c.token)));

    set(&host, "canary", SandboxSpec::on()).await;
    restart(&host, "canary").await;
    let boxed = probe(&host, "canary", &c.file, c.port).await;
    assert!(boxed["file"]["error"].is_string(), "{boxed}");
    assert!(boxed["port"]["error"].is_string(), "{boxed}");
    assert!(!boxed.to_string().contains(&c.token), "{boxed}");
    let key = probe(&host, "canary", &c.key, c.port).await;
    assert!(key["file"]["error"].is_string(), "{key}");

    // A read grant of the canary folder and the network: the file is back, nothing more. The
    // network is a namespace of its own (SP-13), so the host's loopback port stays refused
    // (`sandbox_net.rs` has the rest of SP-13).
    let granted = SandboxSpec {
        network: true,
        ..SandboxSpec::on().granted(&c.dir, Access::Read)
    };
    set(&host, "canary", granted).await;
    restart(&host, "canary").await;
    let both = probe(&host, "canary", &c.file, c.port).await;
    assert_eq!(both["file"]["read"], json!(c.token), "{both}");
    assert!(both["port"]["error"].is_string(), "SP-13: {both}");
    let key = probe(&host, "canary", &c.key, c.port).await;
    assert!(
        key["file"]["error"].is_string(),
        "the SSH key stays hidden: {key}"
    );

    // Read-only means read-only; a write grant makes it writable.
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!(c.dir.join("written.txt")));
    let w = host
        .call_allowed(
            &tref("canary", "write_canary"),
            args.clone(),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(w.is_error, "{w:?}");
    assert!(!c.dir.join("written.txt").exists());
    let now = host.server_sandbox(&sid("canary")).await.unwrap();
    set(&host, "canary", now.granted(&c.dir, Access::Write)).await;
    restart(&host, "canary").await;
    let w = host
        .call_allowed(
            &tref("canary", "write_canary"),
            args,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(!w.is_error, "{w:?}");
    assert!(c.dir.join("written.txt").exists());
    host.shutdown().await;
}

/// Rewrites a server's stored spec behind the host's back (as a file edit would).
async fn edit_on_disk(data_dir: &Path, spec: &ServerSpec) {
    use sqlx::ConnectOptions as _;
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("switchboard.sqlite"))
        .connect()
        .await
        .unwrap();
    sqlx::query("UPDATE servers SET spec_json = ? WHERE id = ?")
        .bind(serde_json::to_string(spec).unwrap())
        .bind(spec.id.as_str())
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn loosening_the_sandbox_outside_the_app_voids_the_approval() {
    let c = Canary::new();
    let (host, data) = c.host().await;
    let mut spec = canary_server("boxed");
    if let switchboard_core::config::TransportSpec::Stdio(s) = &mut spec.transport {
        s.sandbox = SandboxSpec::on();
    }
    add_trusted(&host, spec.clone()).await;
    assert_eq!(
        host.trust_view(&sid("boxed")).await.unwrap().state,
        TrustState::Trusted
    );
    // The consent view says it is sandboxed.
    let lines = host.trust_view(&sid("boxed")).await.unwrap().lines;
    assert!(
        lines
            .iter()
            .any(|(k, v)| k == "sandbox" && v.starts_with("on")),
        "{lines:?}"
    );

    // An edit on disk that switches the sandbox off (or adds a grant) is not approved.
    for loosen in [
        SandboxSpec::default(),
        SandboxSpec::on().granted(&c.home, Access::Read),
        SandboxSpec {
            network: true,
            ..SandboxSpec::on()
        },
    ] {
        let mut edited = spec.clone();
        if let switchboard_core::config::TransportSpec::Stdio(s) = &mut edited.transport {
            s.sandbox = loosen.clone();
        }
        edit_on_disk(data.path(), &edited).await;
        assert_eq!(
            host.trust_view(&sid("boxed")).await.unwrap().state,
            TrustState::Changed,
            "{loosen:?}"
        );
        let h = host.start_server(&sid("boxed")).await.unwrap();
        let status = h.wait_settled(Duration::from_secs(10)).await;
        assert!(
            matches!(status, ServerStatus::NeedsTrust { .. }),
            "{status}"
        );
        host.stop_server(&sid("boxed")).await.unwrap();
    }
    // Back as approved: trusted again.
    edit_on_disk(data.path(), &spec).await;
    assert_eq!(
        host.trust_view(&sid("boxed")).await.unwrap().state,
        TrustState::Trusted
    );
    // An edit through the app's form keeps the sandbox (it changes only through its setting).
    let mut form_edit = spec.clone();
    if let switchboard_core::config::TransportSpec::Stdio(s) = &mut form_edit.transport {
        s.sandbox = SandboxSpec::default();
    }
    host.update_server(form_edit).await.unwrap();
    assert!(host.server_sandbox(&sid("boxed")).await.unwrap().enabled);

    // A change through the app's setting is the person's own act: approved still, and audited
    // with the setting before and after (AP-09).
    let granted = SandboxSpec::on().granted(&c.dir, Access::Write);
    set(&host, "boxed", granted).await;
    assert_eq!(
        host.trust_view(&sid("boxed")).await.unwrap().state,
        TrustState::Trusted
    );
    let page = host
        .audit_page(&switchboard_core::store::AuditQuery {
            limit: 50,
            ..Default::default()
        })
        .await
        .unwrap();
    let audited = page.entries.iter().any(|e| {
        let d: Value = serde_json::from_str(&e.detail_json).unwrap_or_default();
        d["change"] == "server_updated"
            && d.to_string().contains("sandbox_before")
            && d.to_string().contains("approval_kept")
            && d.to_string()
                .contains(&c.dir.to_string_lossy().into_owned())
    });
    assert!(audited, "no audit entry for the sandbox change");
    host.shutdown().await;
}

#[tokio::test]
async fn the_doctor_explains_a_blocked_start_and_a_grant_fixes_it() {
    let c = Canary::new();
    let (host, _data) = c.host().await;
    let spec = with_env(
        canary_server("needs"),
        "CANARY_REQUIRE_FILE",
        switchboard_core::config::ValueSource::Plain(c.file.to_string_lossy().into_owned()),
    );
    let spec = with_env(
        spec,
        "CANARY_REQUIRE_PORT",
        switchboard_core::config::ValueSource::Plain(c.port.to_string()),
    );
    add_trusted(&host, spec).await;
    let id = sid("needs");
    let ok = host.doctor(&id, Duration::from_secs(20)).await.unwrap();
    assert!(!ok.failed(), "unsandboxed it starts: {:?}", ok.checks);

    set(&host, "needs", SandboxSpec::on()).await;
    let report = host.doctor(&id, Duration::from_secs(20)).await.unwrap();
    assert!(report.failed(), "{:?}", report.checks);
    let sandbox: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| c.name == "sandbox" && c.level == CheckLevel::Fail)
        .map(|c| c.detail.as_str())
        .collect();
    let want = format!(
        "switchboard server sandbox needs --allow-read {}",
        c.dir.display()
    );
    assert!(sandbox.iter().any(|d| d.contains(&want)), "{sandbox:?}");

    // A real start fails the same way, and the findings say what to grant.
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(!matches!(status, ServerStatus::Running { .. }), "{status}");
    let findings = host.sandbox_findings(&id).await.unwrap();
    let blocked: Vec<&Blocked> = findings.iter().map(|f| &f.blocked).collect();
    assert_eq!(
        blocked,
        vec![&Blocked::Path {
            path: c.dir.clone(),
            access: Access::Read
        }],
        "{findings:?}"
    );
    host.stop_server(&id).await.unwrap();
    host.grant_sandbox(&id, blocked[0]).await.unwrap();

    // With the file granted, the next thing it is kept from is the network.
    let report = host.doctor(&id, Duration::from_secs(20)).await.unwrap();
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.name == "sandbox" && c.detail.contains("--network on")),
        "{:?}",
        report.checks
    );
    host.grant_sandbox(&id, &Blocked::Network).await.unwrap();
    // SP-13: network is a namespace of its own, so the port on the host's loopback stays out
    // of reach, and the doctor does not offer the network again for it.
    let report = host.doctor(&id, Duration::from_secs(20)).await.unwrap();
    assert!(report.failed(), "{:?}", report.checks);
    assert!(
        !report
            .checks
            .iter()
            .any(|c| c.name == "sandbox" && c.detail.contains("--network on")),
        "{:?}",
        report.checks
    );
    let sandbox = host.server_sandbox(&id).await.unwrap();
    assert!(sandbox.enabled && sandbox.network && sandbox.read == vec![c.dir.clone()]);
    host.shutdown().await;
}

fn cli(data: &Path, c: &Canary, args: &[&str]) -> std::process::Output {
    run_cli(
        data,
        args,
        "",
        &[
            ("HOME", c.home.to_str().unwrap()),
            ("PATH", "/usr/bin:/bin"),
        ],
    )
}

fn stdout(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_cli_sets_shows_and_explains_the_sandbox() {
    let c = Canary::new();
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let fake = fake_server();
    // No port requirement here: with network on, the host's loopback stays refused (SP-13).
    let file = c.file.to_string_lossy().into_owned();
    let added = cli(
        d,
        &c,
        &[
            "server",
            "add",
            "cv",
            "--sandbox",
            "--env",
            &format!("CANARY_REQUIRE_FILE={file}"),
            "--",
            fake.to_str().unwrap(),
            "--mode",
            "canary",
        ],
    );
    assert!(
        String::from_utf8_lossy(&added.stderr).contains("it runs sandboxed"),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    stdout(&cli(d, &c, &["server", "trust", "cv", "--yes"]));
    let list = stdout(&cli(d, &c, &["server", "list"]));
    assert!(list.contains(" sandboxed "), "{list}");

    // The doctor names the exact command, and running it fixes that part.
    let doc = cli(d, &c, &["doctor", "cv", "--timeout", "20"]);
    let text = String::from_utf8_lossy(&doc.stdout).into_owned();
    assert!(!doc.status.success(), "{text}");
    let dir = c.dir.to_string_lossy().into_owned();
    assert!(
        text.contains(&format!("switchboard server sandbox cv --allow-read {dir}")),
        "{text}"
    );
    let set = stdout(&cli(
        d,
        &c,
        &[
            "--json",
            "server",
            "sandbox",
            "cv",
            "--allow-read",
            &dir,
            "--network",
            "on",
        ],
    ));
    let v: Value = serde_json::from_str(&set).unwrap();
    assert_eq!(v["sandboxed"], json!(true), "{v}");
    assert_eq!(v["approval_kept"], json!(true), "{v}");
    assert_eq!(v["sandbox"]["read"], json!([dir]), "{v}");
    assert_eq!(v["sandbox"]["network"], json!(true), "{v}");
    let doc = cli(d, &c, &["doctor", "cv", "--timeout", "20"]);
    assert!(
        doc.status.success(),
        "{}",
        String::from_utf8_lossy(&doc.stdout)
    );

    // Shown without options; off and back; a revoked grant is gone.
    let shown = stdout(&cli(d, &c, &["server", "sandbox", "cv"]));
    assert!(
        shown.contains("may read") && shown.contains(&dir),
        "{shown}"
    );
    stdout(&cli(d, &c, &["server", "sandbox", "cv", "--off"]));
    let json_list: Value =
        serde_json::from_str(&stdout(&cli(d, &c, &["--json", "server", "list"]))).unwrap();
    assert_eq!(json_list[0]["sandboxed"], json!(false), "{json_list}");
    assert!(stdout(&cli(d, &c, &["server", "list"])).contains("unsandboxed"));
    let back: Value = serde_json::from_str(&stdout(&cli(
        d,
        &c,
        &[
            "--json", "server", "sandbox", "cv", "--on", "--revoke", &dir,
        ],
    )))
    .unwrap();
    assert_eq!(back["sandbox"]["read"], Value::Null, "{back}");
    assert_eq!(back["sandboxed"], json!(true), "{back}");
    // A path that does not exist is a usage error, and nothing changes.
    let bad = cli(
        d,
        &c,
        &["server", "sandbox", "cv", "--allow-read", "/no/such/dir"],
    );
    assert_eq!(
        bad.status.code(),
        Some(64),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn import_shows_which_servers_are_sandboxed() {
    let c = Canary::new();
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let file = d.join("mcp.json");
    let out_dir = c.dir.to_string_lossy().into_owned();
    std::fs::write(
        &file,
        json!({
            "sandbox": {
                "filesystem": {"allowWrite": [out_dir]},
                "network": {"allowedDomains": ["registry.npmjs.org"]}
            },
            "servers": {
                "boxed": {"type": "stdio", "command": "/usr/bin/true", "sandboxEnabled": true},
                "open": {"type": "stdio", "command": "/usr/bin/true"}
            }
        })
        .to_string(),
    )
    .unwrap();
    let o = stdout(&cli(d, &c, &["import", file.to_str().unwrap()]));
    assert!(o.contains("+ boxed (sandboxed)"), "{o}");
    assert!(o.contains("+ open (unsandboxed)"), "{o}");
    assert!(o.contains("reaches only registry.npmjs.org"), "{o}");
    let v: Value = serde_json::from_str(&stdout(&cli(
        d,
        &c,
        &["--json", "server", "sandbox", "boxed"],
    )))
    .unwrap();
    assert_eq!(v["sandbox"]["write"], json!([out_dir]), "{v}");
    // SP-13: VS Code's domain list is kept, enforced by the filtering proxy.
    assert_eq!(v["sandbox"]["network"], json!(true), "{v}");
    assert_eq!(
        v["sandbox"]["allow_domains"],
        json!(["registry.npmjs.org"]),
        "{v}"
    );
}

/// Runs the CLI as a non-root user (uid 1000 inside a user namespace) that cannot create user
/// namespaces, the way a machine with unprivileged user namespaces switched off looks to it.
fn cli_without_userns(data: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("/usr/bin/bwrap")
        .args([
            "--unshare-user",
            "--disable-userns",
            "--uid",
            "1000",
            "--gid",
            "1000",
            "--dev-bind",
            "/",
            "/",
            "--",
        ])
        .arg(workspace_bin("switchboard"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn without_user_namespaces_a_sandboxed_server_fails_closed() {
    let c = Canary::new();
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let pid_file = d.join("ran.pid");
    let fake = fake_server();
    let run = |args: &[&str]| cli_without_userns(d, &c.home, args);
    // The outer sandbox itself works here, or this test proves nothing.
    let probe = run(&["server", "list"]);
    assert!(
        probe.status.success(),
        "{}",
        String::from_utf8_lossy(&probe.stderr)
    );

    for (name, sandboxed) in [("open", false), ("closed", true)] {
        let mut add = vec!["server", "add", name];
        if sandboxed {
            add.push("--sandbox");
        }
        let pid = if sandboxed {
            pid_file.to_string_lossy().into_owned()
        } else {
            d.join("open.pid").to_string_lossy().into_owned()
        };
        add.extend(["--", fake.to_str().unwrap(), "--pid-file", &pid]);
        stdout(&run(&add));
        stdout(&run(&["server", "trust", name, "--yes"]));
    }
    // Control: the same server unsandboxed runs under these conditions.
    let open = run(&["server", "restart", "open"]);
    assert!(
        open.status.success(),
        "{}",
        String::from_utf8_lossy(&open.stdout)
    );
    assert!(d.join("open.pid").exists());

    let closed = run(&["server", "restart", "closed"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&closed.stdout),
        String::from_utf8_lossy(&closed.stderr)
    );
    assert!(!closed.status.success(), "{said}");
    assert!(said.contains("bwrap:"), "{said}");
    assert!(
        !pid_file.exists(),
        "the server ran although its sandbox could not be set up"
    );

    let doc = run(&["doctor", "closed", "--timeout", "10"]);
    let text = String::from_utf8_lossy(&doc.stdout).into_owned();
    assert!(!doc.status.success(), "{text}");
    assert!(
        text.contains("[FAIL] sandbox: bubblewrap cannot create a sandbox here")
            && text.contains("never started unsandboxed"),
        "{text}"
    );
    assert!(!pid_file.exists());
}

/// SP-12: a sandboxed server whose start fails with a denial naming `~/.ssh` (as a forged one
/// would) gets no grant offered, by the doctor or the app's findings, and the key stays
/// unread. A grant of `~/.ssh` typed without `--unmask` is refused; typed with it, it works and
/// voids the approval, so the consent view is seen again before the key is readable.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
fn a_denial_naming_a_credential_store_is_never_turned_into_a_grant() {
    let c = Canary::new();
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let fake = fake_server();
    let key = c.key.to_string_lossy().into_owned();
    let ssh = c.home.join(".ssh").to_string_lossy().into_owned();
    stdout(&cli(
        d,
        &c,
        &[
            "server",
            "add",
            "keys",
            "--sandbox",
            "--env",
            &format!("CANARY_REQUIRE_FILE={key}"),
            "--",
            fake.to_str().unwrap(),
            "--mode",
            "canary",
        ],
    ));
    stdout(&cli(d, &c, &["server", "trust", "keys", "--yes"]));

    let doc = cli(d, &c, &["doctor", "keys", "--timeout", "20"]);
    let text = String::from_utf8_lossy(&doc.stdout).into_owned();
    assert!(!doc.status.success(), "{text}");
    // The denial is there (so the test can fail) ...
    assert!(text.contains(".ssh/id_ed25519"), "{text}");
    assert!(text.contains("nothing is offered"), "{text}");
    // ... and no grant of it is proposed, in any spelling.
    for line in text.lines().filter(|l| l.contains("--allow")) {
        assert!(
            !line.contains(".ssh"),
            "a grant of ~/.ssh was offered: {line}"
        );
    }
    assert!(!text.contains("PRIVATE KEY"), "{text}");

    // Typed without the unmask: refused, and nothing changes.
    let refused = cli(d, &c, &["server", "sandbox", "keys", "--allow-read", &ssh]);
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("SSH keys") && said.contains("--unmask"),
        "{said}"
    );
    let v: Value = serde_json::from_str(&stdout(&cli(
        d,
        &c,
        &["--json", "server", "sandbox", "keys"],
    )))
    .unwrap();
    assert_eq!(v["sandbox"]["read"], Value::Null, "{v}");
    // A symlink to it is the same store.
    let link = c.dir.join("innocent");
    std::os::unix::fs::symlink(c.home.join(".ssh"), &link).unwrap();
    let via_link = cli(
        d,
        &c,
        &[
            "server",
            "sandbox",
            "keys",
            "--allow-read",
            link.to_str().unwrap(),
        ],
    );
    assert!(!via_link.status.success());

    // Typed with it: granted, but the approval is void until the person reviews it again.
    let set: Value = serde_json::from_str(&stdout(&cli(
        d,
        &c,
        &[
            "--json",
            "server",
            "sandbox",
            "keys",
            "--allow-read",
            &ssh,
            "--unmask",
        ],
    )))
    .unwrap();
    assert_eq!(set["approval_kept"], json!(false), "{set}");
    assert_eq!(set["sandbox"]["unmask"], json!([ssh]), "{set}");
    let doc = cli(d, &c, &["doctor", "keys", "--timeout", "20"]);
    let text = String::from_utf8_lossy(&doc.stdout).into_owned();
    assert!(
        !doc.status.success() && text.contains("changed since it was approved"),
        "{text}"
    );
    // The consent view (shown without a yes) names the unmask.
    let shown = cli(d, &c, &["server", "trust", "keys"]);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&shown.stdout),
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(shown.contains("unmasked"), "{shown}");
    stdout(&cli(d, &c, &["server", "trust", "keys", "--yes"]));
    let doc = cli(d, &c, &["doctor", "keys", "--timeout", "20"]);
    assert!(
        doc.status.success(),
        "{}",
        String::from_utf8_lossy(&doc.stdout)
    );
    // Any other grant by the person keeps the approval, as before.
    let other: Value = serde_json::from_str(&stdout(&cli(
        d,
        &c,
        &[
            "--json",
            "server",
            "sandbox",
            "keys",
            "--allow-read",
            c.dir.to_str().unwrap(),
        ],
    )))
    .unwrap();
    assert_eq!(other["approval_kept"], json!(true), "{other}");
}

/// SP-12, through the host: findings never name a credential store as grantable, and the
/// app's grant of such a finding is refused; the key is unread all along.
#[tokio::test]
async fn the_app_cannot_grant_a_credential_store_from_a_finding() {
    let c = Canary::new();
    let (host, _data) = c.host().await;
    let spec = with_env(
        canary_server("keys"),
        "CANARY_REQUIRE_FILE",
        switchboard_core::config::ValueSource::Plain(c.key.to_string_lossy().into_owned()),
    );
    add_trusted(&host, spec).await;
    let id = sid("keys");
    set(&host, "keys", SandboxSpec::on()).await;
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(30)).await;
    assert!(!matches!(status, ServerStatus::Running { .. }), "{status}");
    let findings = host.sandbox_findings(&id).await.unwrap();
    assert!(
        findings
            .iter()
            .all(|f| !matches!(&f.blocked, Blocked::Path { path, .. } if path.starts_with(c.home.join(".ssh")))),
        "{findings:?}"
    );
    let masked = findings
        .iter()
        .find(|f| matches!(f.blocked, Blocked::Masked { .. }))
        .unwrap_or_else(|| panic!("{findings:?}"));
    host.stop_server(&id).await.unwrap();
    assert!(host.grant_sandbox(&id, &masked.blocked).await.is_err());
    // A grant of the store as a plain path is refused too.
    let direct = Blocked::Path {
        path: c.home.join(".ssh"),
        access: Access::Read,
    };
    assert!(host.grant_sandbox(&id, &direct).await.is_err());
    assert_eq!(
        host.server_sandbox(&id).await.unwrap(),
        SandboxSpec::on(),
        "nothing was granted"
    );
    host.shutdown().await;
}
