//! Several processes on one data directory at once (issue 11, point 2): the desktop app (here
//! its core, an in-process `Host`, which is all the app runs) and any number of `switchboard`
//! CLIs. What must hold: no "database is locked" reaches a person, nothing written is lost, and
//! the audit log stays one valid hash chain when every process appends at once.
//!
//! Each test runs the real CLI binary as separate processes, so SQLite's locking across
//! processes (not just across the connections of one pool) is what is exercised.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use serde_json::json;
use switchboard_core::host::{CallOptions, Host, HostBuilder};
use switchboard_core::ids::ToolRef;
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::store::AuditEntry;
use switchboard_tests::*;

/// CLI processes started at once.
const CLIS: usize = 8;
/// Calls each CLI worker makes, one process after the other.
const CALLS_PER_CLI: usize = 4;
/// Calls the in-process host (the app) makes meanwhile.
const APP_CALLS: usize = 24;

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Fails on any failed run, and above all on a lock error shown to a person.
fn assert_ok(what: &str, o: &Output) {
    let all = text(o);
    assert!(
        !all.to_lowercase().contains("locked") && !all.contains("SQLITE_BUSY"),
        "{what}: a lock error reached the person:\n{all}"
    );
    assert!(o.status.success(), "{what} failed:\n{all}");
}

fn cli(dir: &Path, args: &[&str]) -> Output {
    run_cli(dir, args, "", &[])
}

/// The app's core on `dir`, with an in-memory keyring (the fake server needs no secret).
async fn app_on(dir: &Path) -> Host {
    HostBuilder::new(dir)
        .secrets(Secrets::new(MemoryStore::default()))
        .supervisor_config(fast_supervisor())
        .build()
        .await
        .unwrap()
}

fn echo() -> ToolRef {
    ToolRef {
        server: sid("fake"),
        tool: "echo".into(),
    }
}

/// Every entry of the log, oldest first, as `switchboard audit export` writes it.
fn exported(dir: &Path) -> Vec<AuditEntry> {
    let o = cli(dir, &["audit", "export"]);
    assert_ok("audit export", &o);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// For each marker, the kinds of the entries of the one call whose arguments carried it.
fn calls_by_marker(entries: &[AuditEntry], markers: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for m in markers {
        let refs: BTreeSet<&str> = entries
            .iter()
            .filter(|e| e.detail_json.contains(m.as_str()))
            .filter_map(|e| e.call_ref.as_deref())
            .collect();
        assert_eq!(
            refs.len(),
            1,
            "the call with {m} should have exactly one call ref, has {refs:?}"
        );
        let call = refs.iter().next().copied().unwrap_or_default();
        let kinds = entries
            .iter()
            .filter(|e| e.call_ref.as_deref() == Some(call))
            .map(|e| e.kind.as_str().to_owned())
            .collect();
        out.insert(m.clone(), kinds);
    }
    out
}

/// Runs `f(worker)` on `n` threads released together; returns their results in order.
fn at_once<T: Send + 'static>(
    n: usize,
    f: impl Fn(usize) -> T + Send + Sync + 'static,
) -> std::thread::JoinHandle<Vec<T>> {
    let f = Arc::new(f);
    let gate = Arc::new(Barrier::new(n));
    std::thread::spawn(move || {
        let threads: Vec<_> = (0..n)
            .map(|w| {
                let (f, gate) = (f.clone(), gate.clone());
                std::thread::spawn(move || {
                    gate.wait();
                    f(w)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    (tmp, dir)
}

/// The test: 8 CLIs calling at once (several calls each) while the app calls too and
/// other writers change servers, rules and conversations; afterwards the chain verifies and
/// every call's entries are there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn clis_and_the_app_calling_at_once_keep_one_valid_audit_chain() {
    let (_tmp, dir) = data_dir();
    let fake = fake_server();
    assert_ok(
        "server add",
        &cli(
            &dir,
            &["server", "add", "fake", "--", fake.to_str().unwrap()],
        ),
    );
    assert_ok(
        "server trust",
        &cli(&dir, &["server", "trust", "fake", "--yes"]),
    );
    let app = app_on(&dir).await;
    app.start_server(&sid("fake")).await.unwrap();
    let status = app
        .handle(&sid("fake"))
        .unwrap()
        .wait_settled(Duration::from_secs(30))
        .await;
    assert!(status.to_string().contains("running"), "{status}");
    allow_every_call(&app).await;

    // 8 CLI workers, each making several calls, one process after the other.
    let d = dir.clone();
    let clis = at_once(CLIS, move |w| {
        (0..CALLS_PER_CLI)
            .map(|i| {
                let marker = format!("cli-{w}-{i}-marker");
                let args = json!({ "text": marker }).to_string();
                let o = cli(&d, &["call", "fake", "echo", "--yes", "--args", &args]);
                assert_ok(&format!("call {marker}"), &o);
                assert!(
                    String::from_utf8_lossy(&o.stdout).contains(&marker),
                    "{}",
                    text(&o)
                );
                marker
            })
            .collect::<Vec<_>>()
    });
    // Writers of other kinds, as processes too: servers added, changed and removed, rules.
    let d = dir.clone();
    let f = fake.clone();
    let others = at_once(2, move |w| {
        for i in 0..4 {
            let name = format!("extra-{w}-{i}");
            let f = f.to_str().unwrap();
            assert_ok("add", &cli(&d, &["server", "add", &name, "--", f]));
            assert_ok("disable", &cli(&d, &["server", "disable", &name]));
            let rule = format!("rule-{w}-{i}");
            let tool = format!("nothing_{w}_{i}");
            assert_ok(
                "policy add",
                &cli(
                    &d,
                    &["policy", "add", &rule, "--effect", "deny", "--tool", &tool],
                ),
            );
            if i % 2 == 1 {
                assert_ok("remove", &cli(&d, &["server", "remove", &name]));
            }
        }
    });
    // The app meanwhile: tool calls, conversations.
    let mut app_markers = Vec::new();
    let mut running = Vec::new();
    for i in 0..APP_CALLS {
        let marker = format!("app-{i}-marker");
        app_markers.push(marker.clone());
        let caller = app.clone();
        running.push(tokio::spawn(async move {
            let args = json!({ "text": marker }).as_object().unwrap().clone();
            caller
                .call_allowed(&echo(), args, CallOptions::default())
                .await
                .unwrap_or_else(|e| panic!("app call {marker}: {e}"))
        }));
        if i % 4 == 0 {
            let c = app
                .create_conversation(&format!("conversation {i}"))
                .await
                .unwrap_or_else(|e| panic!("conversation: {e}"));
            app.rename_conversation(&c.id, &format!("renamed {i}"))
                .await
                .unwrap_or_else(|e| panic!("rename: {e}"));
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    for r in running {
        r.await.unwrap();
    }
    let cli_markers: Vec<String> = tokio::task::spawn_blocking(move || clis.join().unwrap())
        .await
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    tokio::task::spawn_blocking(move || others.join().unwrap())
        .await
        .unwrap();
    app.shutdown().await;

    let o = cli(&dir, &["audit", "verify"]);
    assert_ok("audit verify", &o);
    let entries = exported(&dir);
    let ids: Vec<i64> = entries.iter().map(|e| e.id).collect();
    let expected: Vec<i64> = (1..=entries.len() as i64).collect();
    assert_eq!(ids, expected, "the log's ids have gaps or repeats");
    let mut markers = cli_markers.clone();
    markers.extend(app_markers);
    assert_eq!(markers.len(), CLIS * CALLS_PER_CLI + APP_CALLS);
    for (marker, kinds) in calls_by_marker(&entries, &markers) {
        for kind in ["proposed", "decided", "started", "finished"] {
            assert_eq!(
                kinds.iter().filter(|k| *k == kind).count(),
                1,
                "{marker}: expected one {kind} entry, the call has {kinds:?}"
            );
        }
    }
    // The other writers' changes are all there.
    let servers = cli(&dir, &["--json", "server", "list"]);
    assert_ok("server list", &servers);
    let listed = String::from_utf8_lossy(&servers.stdout).into_owned();
    for w in 0..2 {
        for i in 0..4 {
            let name = format!("\"extra-{w}-{i}\"");
            assert_eq!(listed.contains(&name), i % 2 == 0, "{name} in {listed}");
        }
    }
    let rules = cli(&dir, &["--json", "policy", "list"]);
    assert_ok("policy list", &rules);
    let rules = String::from_utf8_lossy(&rules.stdout).into_owned();
    for w in 0..2 {
        for i in 0..4 {
            assert!(rules.contains(&format!("rule-{w}-{i}")), "{rules}");
        }
    }
    let app = app_on(&dir).await;
    let conversations = app
        .list_conversations(&Default::default())
        .await
        .unwrap()
        .items;
    assert_eq!(conversations.len(), APP_CALLS.div_ceil(4));
    assert!(conversations
        .iter()
        .all(|c| c.conversation.title.starts_with("renamed")));
    app.shutdown().await;
}

/// 8 CLIs started at once on a data directory that does not exist yet: they race to create the
/// database and run its migrations. Every one succeeds, and what each wrote is there.
#[test]
fn clis_racing_on_a_fresh_data_dir_all_succeed() {
    for round in 0..3 {
        let (_tmp, dir) = data_dir();
        let fake = fake_server();
        let d = dir.clone();
        let runs = at_once(CLIS, move |w| {
            let name = format!("s{w}");
            let add = cli(&d, &["server", "add", &name, "--", fake.to_str().unwrap()]);
            let list = cli(&d, &["server", "list"]);
            (add, list)
        })
        .join()
        .unwrap();
        for (w, (add, list)) in runs.iter().enumerate() {
            assert_ok(&format!("round {round}: server add s{w}"), add);
            assert_ok(&format!("round {round}: server list (worker {w})"), list);
        }
        let listed = cli_ok(&dir, &["server", "list"]);
        for w in 0..CLIS {
            assert!(listed.contains(&format!("s{w}")), "s{w} lost: {listed}");
        }
        assert_ok("audit verify", &cli(&dir, &["audit", "verify"]));
        let entries = exported(&dir);
        let added = entries
            .iter()
            .filter(|e| e.kind.as_str() == "config")
            .filter(|e| e.detail_json.contains("add"))
            .count();
        assert!(added >= CLIS, "{added} server adds audited: {entries:?}");
    }
}
