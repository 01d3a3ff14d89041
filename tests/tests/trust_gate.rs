//! The trust gate (SP-01, SP-03, SP-09): nothing unapproved runs, and any change voids approval.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::config::{ServerSpec, TransportSpec, ValueSource};
use switchboard_core::host::TrustState;
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::*;

/// Rewrites a server's stored spec behind the host's back, through a separate connection to
/// the SQLite file (as a file edit or another process would).
async fn edit_on_disk(data_dir: &std::path::Path, spec: &ServerSpec) {
    use sqlx::ConnectOptions as _;
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("switchboard.sqlite"))
        .connect()
        .await
        .unwrap();
    let done = sqlx::query("UPDATE servers SET spec_json = ? WHERE id = ?")
        .bind(serde_json::to_string(spec).unwrap())
        .bind(spec.id.as_str())
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
}

/// A server whose launch command touches a canary file before exec'ing the fake server.
fn canary_spec(name: &str, canary: &std::path::Path) -> switchboard_core::config::ServerSpec {
    let script = format!(
        "touch '{}'; exec '{}'",
        canary.display(),
        fake_server().display()
    );
    stdio_spec(name, "/bin/sh", &["-c", &script])
}

#[tokio::test]
async fn unapproved_server_never_runs_and_changes_void_approval() {
    let (host, dir) = test_host().await;
    let canary = dir.path().join("canary");
    let spec = canary_spec("gated", &canary);
    let id = spec.id.clone();
    host.add_server(spec.clone()).await.unwrap();

    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(10)).await;
    assert!(
        matches!(status, ServerStatus::NeedsTrust { .. }),
        "{status}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!canary.exists(), "an unapproved launch command ran");

    // The consent view shows everything, untruncated, and flags the inline shell script.
    let view = host.trust_view(&id).await.unwrap();
    assert_eq!(view.state, TrustState::NotApproved);
    let text: String = view
        .lines
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    assert!(text.contains("executable=/bin/sh"), "{text}");
    assert!(
        text.contains(&fake_server().display().to_string()),
        "{text}"
    );
    assert!(
        view.warnings.iter().any(|w| w.contains("inline")),
        "{:?}",
        view.warnings
    );

    host.trust_server(&id, &view.fingerprint).await.unwrap();
    h.restart().await;
    let status = h.wait_settled(Duration::from_secs(20)).await;
    assert!(matches!(status, ServerStatus::Running { .. }), "{status}");
    assert!(canary.exists());

    // Edit the arguments behind the approval's back (as another process or a file edit would):
    // the next start refuses.
    std::fs::remove_file(&canary).unwrap();
    let mut changed = spec.clone();
    if let TransportSpec::Stdio(s) = &mut changed.transport {
        s.args[1] = format!("{} # edited", s.args[1]);
    }
    edit_on_disk(dir.path(), &changed).await;
    h.restart().await;
    let status = h.wait_settled(Duration::from_secs(10)).await;
    assert!(
        matches!(status, ServerStatus::NeedsTrust { .. }),
        "{status}"
    );
    assert_eq!(
        host.trust_view(&id).await.unwrap().state,
        TrustState::Changed
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !canary.exists(),
        "a changed launch command ran without re-approval"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn approval_of_a_stale_view_is_refused() {
    let (host, _dir) = test_host().await;
    let spec = fake_spec("race", &[]);
    let id = spec.id.clone();
    host.add_server(spec.clone()).await.unwrap();
    let shown = host.trust_view(&id).await.unwrap();
    let mut changed = spec;
    if let TransportSpec::Stdio(s) = &mut changed.transport {
        s.args.push("--tools".into());
        s.args.push("3".into());
    }
    host.update_server(changed).await.unwrap();
    let err = host
        .trust_server(&id, &shown.fingerprint)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("changed while it was being approved"),
        "{err}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn executables_resolve_to_absolute_paths_via_the_search_path() {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fake_server(), bin.path().join("my-mcp-server")).unwrap();
    let search = switchboard_core::config::launch::SearchPath {
        host: vec!["/usr/bin".into()],
        login_shell: vec![bin.path().to_path_buf()],
    };
    let (host, _dir) = test_host_with(|b| b.search_path(search)).await;
    let spec = stdio_spec("bare", "my-mcp-server", &[]);
    let view = {
        host.add_server(spec).await.unwrap();
        host.trust_view(&sid("bare")).await.unwrap()
    };
    let exe = &view.lines[0].1;
    assert_eq!(exe, &bin.path().join("my-mcp-server").display().to_string());
    assert!(view.lines[1].1.contains("login shell"), "{:?}", view.lines);
    host.shutdown().await;
}

/// The login shell is asked for its PATH only when a command is not on the app's own PATH
/// (it costs a process and the person's start-up files): an absolute command never runs it, a
/// bare name found only there does, once.
#[tokio::test]
async fn the_login_shell_is_probed_only_when_the_app_path_lacks_the_command() {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fake_server(), bin.path().join("only-in-login-path")).unwrap();
    let marker = bin.path().join("probed");
    let shell = bin.path().join("fake-login-shell");
    std::fs::write(
        &shell,
        format!(
            "#!/bin/sh\necho x >> '{}'\nprintf '__SBPATH__%s__SBPATH__' '{}'\n",
            marker.display(),
            bin.path().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (host, _dir) = test_host_with(|b| b.login_shell(shell.clone())).await;
    host.add_server(fake_spec("absolute", &[])).await.unwrap();
    host.trust_view(&sid("absolute")).await.unwrap();
    host.list_servers().await.unwrap();
    assert!(!marker.exists(), "an absolute command needed no probe");
    host.add_server(stdio_spec("bare", "only-in-login-path", &[]))
        .await
        .unwrap();
    let view = host.trust_view(&sid("bare")).await.unwrap();
    assert_eq!(
        view.lines[0].1,
        bin.path().join("only-in-login-path").display().to_string()
    );
    host.trust_view(&sid("bare")).await.unwrap();
    let runs = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(runs.lines().count(), 1, "probed once, then remembered");
    host.shutdown().await;
}

/// SP-01/SP-03: env values are shown and approved; a changed value (here one that makes the
/// runtime load other code) voids the approval, and the warning says why it matters.
#[tokio::test]
async fn a_changed_env_value_voids_approval() {
    let (host, dir) = test_host().await;
    let spec = with_env(
        fake_spec("envy", &[]),
        "NODE_OPTIONS",
        ValueSource::Plain("--max-old-space-size=64".into()),
    );
    let id = add_trusted(&host, spec.clone()).await;
    let view = host.trust_view(&id).await.unwrap();
    assert_eq!(view.state, TrustState::Trusted);
    assert!(
        view.lines
            .iter()
            .any(|(k, v)| k == "env NODE_OPTIONS" && v == "--max-old-space-size=64"),
        "{:?}",
        view.lines
    );
    assert!(
        view.warnings.iter().any(|w| w.contains("NODE_OPTIONS")),
        "{:?}",
        view.warnings
    );
    let mut changed = spec;
    changed.values_mut()[0].value = ValueSource::Plain("--require /tmp/evil.js".into());
    edit_on_disk(dir.path(), &changed).await;
    assert_eq!(
        host.trust_view(&id).await.unwrap().state,
        TrustState::Changed
    );
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(10)).await;
    assert!(
        matches!(status, ServerStatus::NeedsTrust { .. }),
        "{status}"
    );
    host.shutdown().await;
}
