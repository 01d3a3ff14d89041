//! SP-06: a host killed with SIGKILL (the CLI, or the desktop app) leaves no server running,
//! even one that ignores the end of its input and SIGTERM and has a grandchild that does too
//! (`fake-mcp-server --mode stubborn`).
//!
//! The kernel kills the server's leader with its host (parent-death signal); the grandchild,
//! which that signal does not reach, is killed by the sweep of the run records at the next
//! start on the same data directory. A record whose pids now belong to someone else is cleared
//! without killing anything, and a live host's record is left alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use switchboard_core::server_process::reaper::{proc_stat, Record, RecordFile, RunRecords};
use switchboard_tests::e2e::{e2e_available, ONE_WINDOW};
use switchboard_tests::scenario::AppData;
use switchboard_tests::*;

/// The run records on `data`.
fn records(data: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(RunRecords::in_data_dir(data).dir())
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Adds and approves the stubborn server; its pids go to `pids` (leader, then grandchild).
fn add_stubborn(data: &Path, pids: &Path) {
    let pids = pids.to_string_lossy();
    // The app starts it at launch (a killed app must still leave nothing behind).
    AppData::on(data).fake_server("stubborn", &["--mode", "stubborn", "--pid-file", &pids]);
}

/// The leader pid of the one run record on `data`, if there is exactly one.
fn recorded_leader(data: &Path) -> Option<i32> {
    let [file] = records(data).try_into().ok()?;
    let record: Record = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    Some(record.leader_pid as i32)
}

/// Waits until the server and its grandchild run and their group is recorded. Under load a
/// host may restart a server whose start timed out; the record then names the newer leader
/// while the pid file is rewritten, so this waits until both name the same tree.
async fn running_tree(data: &Path, pids: &Path) -> (i32, i32) {
    let up = eventually(Duration::from_secs(30), || {
        let p = read_pids(pids);
        p.len() == 2 && recorded_leader(data) == Some(p[0])
    })
    .await;
    assert!(
        up,
        "pids {:?}, records {:?}",
        read_pids(pids),
        records(data)
    );
    let p = read_pids(pids);
    let record = std::fs::read_to_string(&records(data)[0]).unwrap();
    let record: Record = serde_json::from_str(&record).unwrap();
    assert_eq!(record.leader_pid as i32, p[0], "{record:?}");
    assert_eq!(record.server, "stubborn");
    (p[0], p[1])
}

/// What SIGKILL leaves: the leader dies with its host, the grandchild lives until any next
/// start on the data directory sweeps it.
async fn assert_killed_host_cleaned_up(data: &Path, leader: i32, grandchild: i32) {
    assert!(
        eventually(Duration::from_secs(3), || !pid_alive(leader)).await,
        "the server leader {leader} outlived its host"
    );
    // Only the sweep ends the grandchild: this is what makes the rest of the test mean something.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(pid_alive(grandchild), "the grandchild died without a sweep");
    assert_eq!(records(data).len(), 1, "the record went with the host");

    cli_ok(data, &["server", "list"]);
    assert!(
        eventually(Duration::from_secs(3), || !pid_alive(grandchild)).await,
        "the sweep left the grandchild {grandchild} running"
    );
    assert!(records(data).is_empty(), "{:?}", records(data));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_cli_leaves_no_server_behind() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pids = dir.path().join("pids");
    add_stubborn(&data, &pids);
    // A call that keeps the server busy for ten minutes.
    let mut cli = KillOnDrop(
        Command::new(workspace_bin("switchboard"))
            .args([
                "call",
                "stubborn",
                "sleep",
                "--yes",
                "--args",
                r#"{"ms": 600000}"#,
            ])
            .env("SWITCHBOARD_DATA_DIR", &data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (leader, grandchild) = running_tree(&data, &pids).await;
    // std's kill is SIGKILL: no destructor, no shutdown.
    cli.0.kill().unwrap();
    cli.0.wait().unwrap();
    assert_killed_host_cleaned_up(&data, leader, grandchild).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_ends_the_tree_and_clears_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pids = dir.path().join("pids");
    add_stubborn(&data, &pids);
    let out = cli_ok(
        &data,
        &[
            "call",
            "stubborn",
            "echo",
            "--yes",
            "--args",
            r#"{"text": "hi"}"#,
        ],
    );
    assert!(out.contains("hi"), "{out}");
    let p = read_pids(&pids);
    assert_eq!(p.len(), 2, "{p:?}");
    for pid in p {
        assert!(
            eventually(Duration::from_secs(2), || !pid_alive(pid)).await,
            "{pid} survived a clean stop"
        );
    }
    assert!(records(&data).is_empty(), "{:?}", records(&data));
}

/// A `sleep` in its own process group, standing in for someone else's process.
fn stranger() -> KillOnDrop {
    use std::os::unix::process::CommandExt;
    KillOnDrop(
        Command::new("sleep")
            .arg("1000")
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap(),
    )
}

fn pid_ns() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .trim()
        .to_owned()
}

/// Writes a record as a killed host leaves it (the file stays).
fn leave_record(data: &Path, record: &Record) {
    let file: RecordFile = RunRecords::in_data_dir(data).write(record).unwrap();
    std::mem::forget(file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_kills_no_stranger_and_spares_live_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let me = proc_stat(std::process::id()).unwrap();

    // A dead host whose server's pid now belongs to a stranger (another start time).
    let mut reused = stranger();
    let reused_stat = proc_stat(reused.0.id()).unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    leave_record(
        &data,
        &Record {
            version: 1,
            boot_id: boot_id(),
            host_pid: dead_pid,
            host_start: 1,
            leader_pid: reused_stat.pid,
            leader_start: reused_stat.start + 1,
            session: reused_stat.session,
            server: "reused".into(),
            pid_ns: pid_ns(),
        },
    );
    // A host that still runs (this test process) with its server.
    let mut live = stranger();
    let live_stat = proc_stat(live.0.id()).unwrap();
    let live_record = Record {
        version: 1,
        boot_id: boot_id(),
        host_pid: me.pid,
        host_start: me.start,
        leader_pid: live_stat.pid,
        leader_start: live_stat.start,
        session: live_stat.session,
        server: "live".into(),
        pid_ns: pid_ns(),
    };
    leave_record(&data, &live_record);
    // Garbage is cleared, and kills nothing.
    std::fs::write(
        RunRecords::in_data_dir(&data).dir().join("1-1.json"),
        b"{oops",
    )
    .unwrap();

    cli_ok(&data, &["server", "list"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        reused.0.try_wait().unwrap().is_none(),
        "the sweep killed a stranger"
    );
    assert!(
        live.0.try_wait().unwrap().is_none(),
        "the sweep killed a live host's server"
    );
    let left = records(&data);
    assert_eq!(left.len(), 1, "{left:?}");
    let kept: Record = serde_json::from_str(&std::fs::read_to_string(&left[0]).unwrap()).unwrap();
    assert_eq!(kept, live_record);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_app_leaves_no_server_behind() {
    if !e2e_available() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pids = dir.path().join("pids");
    add_stubborn(&data, &pids);
    // The real app, headless under the test's display; it starts the enabled servers itself.
    let mut app = KillOnDrop(
        Command::new(workspace_bin("switchboard-desktop"))
            .env("SWITCHBOARD_DATA_DIR", &data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (leader, grandchild) = running_tree(&data, &pids).await;
    app.0.kill().unwrap();
    app.0.wait().unwrap();
    assert_killed_host_cleaned_up(&data, leader, grandchild).await;
}
