//! `doctor` explanations, and importing foreign configs (SP-08).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::config::import::ForeignFormat;
use switchboard_core::host::CheckLevel;
use switchboard_tests::*;

fn failing_check(r: &switchboard_core::host::DoctorReport) -> String {
    r.checks
        .iter()
        .find(|c| c.level == CheckLevel::Fail)
        .map(|c| format!("{}: {}", c.name, c.detail))
        .unwrap_or_default()
}

#[tokio::test]
async fn doctor_explains_each_kind_of_failure() {
    let (host, _dir) = test_host().await;

    host.add_server(stdio_spec("missing", "surely-not-a-real-command-xyz", &[]))
        .await
        .unwrap();
    let r = host
        .doctor(&sid("missing"), Duration::from_secs(5))
        .await
        .unwrap();
    let f = failing_check(&r);
    assert!(
        f.starts_with("executable") && f.contains("not found"),
        "{f}"
    );

    host.add_server(fake_spec("unapproved", &[])).await.unwrap();
    let r = host
        .doctor(&sid("unapproved"), Duration::from_secs(5))
        .await
        .unwrap();
    assert!(
        failing_check(&r).contains("not approved"),
        "{}",
        failing_check(&r)
    );
    assert!(r.plan.is_some());

    add_trusted(
        &host,
        fake_spec(
            "early",
            &[
                "--mode",
                "crash-on-init",
                "--stderr-banner",
                "fatal: no API key",
            ],
        ),
    )
    .await;
    let r = host
        .doctor(&sid("early"), Duration::from_secs(5))
        .await
        .unwrap();
    assert!(
        failing_check(&r).contains("exited early"),
        "{}",
        failing_check(&r)
    );
    assert!(
        r.stderr_tail
            .iter()
            .any(|l| l.contains("fatal: no API key")),
        "{:?}",
        r.stderr_tail
    );

    add_trusted(&host, fake_spec("mute", &["--mode", "never-init"])).await;
    let r = host
        .doctor(&sid("mute"), Duration::from_secs(1))
        .await
        .unwrap();
    assert!(
        failing_check(&r).contains("did not finish the initialize handshake"),
        "{}",
        failing_check(&r)
    );

    add_trusted(&host, fake_spec("fine", &[])).await;
    let r = host
        .doctor(&sid("fine"), Duration::from_secs(10))
        .await
        .unwrap();
    assert!(!r.failed(), "{:?}", r.checks);
    assert!(
        r.checks
            .iter()
            .any(|c| c.name == "tools" && c.detail.contains("14 tools")),
        "{:?}",
        r.checks
    );
    host.shutdown().await;
}

#[tokio::test]
async fn import_moves_secrets_to_the_store_and_starts_nothing() {
    let (host, dir) = test_host().await;
    let canary = dir.path().join("import-canary");
    let secret = "ghp_canaryCANARY0123456789abcdef";
    let file = serde_json::json!({
        "mcpServers": {
            "github": {
                "command": "/bin/sh",
                "args": ["-c", format!("touch {}", canary.display())],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": secret, "LOG_LEVEL": "debug"}
            },
            "weird name!": {"command": "npx", "args": ["-y", "x"], "autoApprove": ["a"]}
        }
    })
    .to_string();

    // The preview says what would happen and stores nothing.
    let preview = host.import_preview(&file, None).await.unwrap();
    assert_eq!(preview.format, ForeignFormat::Claude);
    let names: Vec<String> = preview.servers.iter().map(|s| s.id.to_string()).collect();
    assert_eq!(names.len(), 2, "{preview:?}");
    let github = preview
        .servers
        .iter()
        .find(|s| s.id.as_str() == "github")
        .unwrap();
    assert_eq!(github.kind, "stdio");
    assert!(github.summary.starts_with("/bin/sh"), "{}", github.summary);
    assert_eq!(github.secrets.len(), 1);
    assert!(
        !host
            .server_secret_is_set(&github.id, &github.secrets[0])
            .await
            .unwrap(),
        "the preview stored a secret"
    );
    assert!(
        host.list_servers().await.unwrap().is_empty(),
        "the preview added servers"
    );
    assert!(
        !format!("{preview:?}").contains(secret),
        "the preview carries the secret value"
    );

    let out = host.import_config(&file, None).await.unwrap();
    assert_eq!(out.format, ForeignFormat::Claude);
    let added: Vec<String> = out.added.iter().map(ToString::to_string).collect();
    assert_eq!(added, names, "the import added what the preview showed");
    assert_eq!(out.added.len(), 2, "{out:?}");
    assert_eq!(out.secrets_stored.len(), 1);
    let (server, name) = &out.secrets_stored[0];
    assert!(host.server_secret_is_set(server, name).await.unwrap());
    assert!(
        out.notes.iter().any(|n| n.message.contains("autoApprove")),
        "{:?}",
        out.notes
    );

    // Nothing ran, even when asked to start: imported servers need approval.
    let h = host.start_server(&sid("github")).await.unwrap();
    h.wait_settled(Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!canary.exists());

    // The secret is nowhere on disk: not in the database, its WAL, or logs.
    host.shutdown().await;
    assert_no_file_contains(dir.path(), secret);
}

#[tokio::test]
async fn export_writes_references_never_values() {
    let (host, _dir) = test_host().await;
    let file = serde_json::json!({
        "servers": {
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer sk-canary-export-123456"}}
        }
    })
    .to_string();
    host.import_config(&file, Some(ForeignFormat::Vscode))
        .await
        .unwrap();
    for f in [
        ForeignFormat::Claude,
        ForeignFormat::Vscode,
        ForeignFormat::Cursor,
    ] {
        let out = host.export_config(f).await.unwrap();
        assert!(
            !out.text.contains("sk-canary-export"),
            "{f:?} export leaked the secret"
        );
        assert!(out.text.contains("https://example.com/mcp"));
    }
    host.shutdown().await;
}
