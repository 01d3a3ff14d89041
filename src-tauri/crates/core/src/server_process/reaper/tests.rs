//! Tests of the run records and the sweep: the verdict table, `/proc` parsing, and sweeps over
//! real processes (a stranger whose pid matches a record is never killed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::*;

const BOOT: &str = "boot-a";

fn record() -> Record {
    Record {
        version: RECORD_VERSION,
        boot_id: BOOT.into(),
        host_pid: 100,
        host_start: 1_000,
        leader_pid: 200,
        leader_start: 2_000,
        session: 50,
        server: "demo".into(),
        pid_ns: String::new(),
    }
}

fn stat(pid: u32, state: char, pgrp: u32, session: u32, start: u64) -> ProcStat {
    ProcStat {
        pid,
        state,
        pgrp,
        session,
        start,
    }
}

/// Name, boot id now, host and leader as `/proc` shows them, the group's members, verdict.
type Case<'a> = (
    &'a str,
    &'a str,
    Option<&'a ProcStat>,
    Option<&'a ProcStat>,
    Vec<ProcStat>,
    Verdict,
);

#[test]
fn verdicts() {
    let r = record();
    let host_same = stat(100, 'S', 100, 50, 1_000);
    let host_other = stat(100, 'S', 100, 50, 9_999);
    let host_zombie = stat(100, 'Z', 100, 50, 1_000);
    let leader_same = stat(200, 'S', 200, 50, 2_000);
    let leader_other = stat(200, 'S', 200, 50, 7_000);
    let grandchild = stat(300, 'S', 200, 50, 2_500);
    let grandchild_own_session = stat(301, 'S', 200, 200, 2_600);
    let stranger_session = stat(302, 'S', 200, 77, 2_500);
    let older_than_leader = stat(303, 'S', 200, 50, 1_500);
    let zombie_member = stat(304, 'Z', 200, 50, 2_500);
    // One case per line: the table reads as a table.
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        ("host runs", BOOT, Some(&host_same), Some(&leader_same), vec![leader_same], Verdict::HostAlive),
        ("other boot", "boot-b", Some(&host_same), Some(&leader_same), vec![leader_same], Verdict::Gone),
        ("host gone, leader lives", BOOT, None, Some(&leader_same), vec![leader_same, grandchild], Verdict::Kill(200)),
        ("host pid reused", BOOT, Some(&host_other), Some(&leader_same), vec![leader_same], Verdict::Kill(200)),
        ("host is a zombie", BOOT, Some(&host_zombie), Some(&leader_same), vec![leader_same], Verdict::Kill(200)),
        ("leader gone, grandchild lives", BOOT, None, None, vec![grandchild], Verdict::Kill(200)),
        ("grandchild made its own session", BOOT, None, None, vec![grandchild_own_session], Verdict::Kill(200)),
        ("leader pid reused", BOOT, None, Some(&leader_other), vec![leader_other], Verdict::Unverified),
        ("leader pid reused, group members too", BOOT, None, Some(&leader_other), vec![leader_other, grandchild], Verdict::Unverified),
        ("a group of another session", BOOT, None, None, vec![stranger_session], Verdict::Unverified),
        ("a member older than the leader", BOOT, None, None, vec![older_than_leader], Verdict::Unverified),
        ("only a zombie left", BOOT, None, None, vec![zombie_member], Verdict::Gone),
        ("nothing left", BOOT, None, None, vec![], Verdict::Gone),
    ];
    for (name, boot, host, leader, members, want) in cases {
        assert_eq!(judge(&r, boot, host, leader, &members), want, "{name}");
    }
}

#[test]
fn stat_lines_parse_whatever_the_command_name() {
    let line = "4242 (we ird) (name) S 1 4242 4200 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100";
    let s = parse_stat(line).unwrap();
    assert_eq!(
        s,
        ProcStat {
            pid: 4242,
            state: 'S',
            pgrp: 4242,
            session: 4200,
            start: 987_654
        }
    );
    assert!(parse_stat("garbage").is_none());
    assert!(parse_stat("1 (x) S 1").is_none());
    let me = proc_stat(std::process::id()).unwrap();
    assert_eq!(me.pid, std::process::id());
    assert!(me.start > 0);
}

/// A `sleep` in its own process group, as a server leader would be.
fn own_group_sleep() -> Child {
    Command::new("sleep")
        .arg("1000")
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap()
}

fn alive(child: &mut Child) -> bool {
    child.try_wait().unwrap().is_none()
}

fn wait_dead(child: &mut Child) -> bool {
    for _ in 0..100 {
        if !alive(child) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A record of `leader`, spawned by us, claiming a host that is gone (our pid with another
/// start time, as a reused pid would look).
fn orphan_record(leader: u32) -> Record {
    let (host_pid, host_start, session) = this_host().unwrap();
    Record {
        version: RECORD_VERSION,
        boot_id: boot_id(),
        host_pid,
        host_start: host_start + 1,
        leader_pid: leader,
        leader_start: start_time(leader).unwrap(),
        session,
        server: "orphan".into(),
        pid_ns: pid_ns(),
    }
}

#[test]
fn a_sweep_kills_the_group_of_a_dead_host_and_clears_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let records = RunRecords::in_data_dir(dir.path());
    let mut leader = own_group_sleep();
    let file = records.write(&orphan_record(leader.id())).unwrap();
    std::mem::forget(file); // as a killed host leaves it
    let swept = records.sweep();
    assert_eq!(swept.killed, vec![("orphan".to_owned(), leader.id())]);
    assert_eq!(swept.cleared, 1);
    assert!(wait_dead(&mut leader), "the orphan survived the sweep");
    assert_eq!(std::fs::read_dir(records.dir()).unwrap().count(), 0);
}

#[test]
fn a_live_host_keeps_its_record_and_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let records = RunRecords::in_data_dir(dir.path());
    let mut leader = own_group_sleep();
    let file = records.entry("mine").record(leader.id()).unwrap();
    let swept = records.sweep();
    assert_eq!(swept.kept, 1);
    assert!(swept.killed.is_empty());
    assert!(alive(&mut leader));
    let path = file.path.clone().unwrap();
    assert!(path.exists());
    drop(file);
    assert!(!path.exists(), "dropping the record file keeps the record");
    let _ = leader.kill();
    let _ = leader.wait();
}

#[test]
fn a_stranger_with_a_recorded_pid_is_never_killed() {
    let dir = tempfile::tempdir().unwrap();
    let records = RunRecords::in_data_dir(dir.path());
    let mut stranger = own_group_sleep();
    // The record names the stranger's pid, but with another start time: a reused pid.
    let mut r = orphan_record(stranger.id());
    r.leader_start -= 1;
    std::mem::forget(records.write(&r).unwrap());
    // A garbled record is cleared too, and kills nothing.
    std::fs::write(records.dir().join("1-2.json"), b"{not json").unwrap();
    let swept = records.sweep();
    assert!(swept.killed.is_empty(), "{swept:?}");
    assert_eq!(swept.cleared, 2);
    std::thread::sleep(Duration::from_millis(100));
    assert!(alive(&mut stranger), "the sweep killed a stranger");
    let _ = stranger.kill();
    let _ = stranger.wait();
}

#[test]
fn a_record_from_another_pid_namespace_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let records = RunRecords::in_data_dir(dir.path());
    let mut leader = own_group_sleep();
    let mut r = orphan_record(leader.id());
    r.pid_ns = "pid:[1]".into();
    std::mem::forget(records.write(&r).unwrap());
    let swept = records.sweep();
    assert_eq!((swept.kept, swept.cleared), (1, 0), "{swept:?}");
    assert!(alive(&mut leader));
    let _ = leader.kill();
    let _ = leader.wait();
}

#[test]
fn records_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let records = RunRecords::in_data_dir(dir.path());
    let mut leader = own_group_sleep();
    let file = records.entry("whole").record(leader.id()).unwrap();
    let names: Vec<String> = std::fs::read_dir(records.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec![format!("{}-{}.json", std::process::id(), leader.id())]
    );
    let back: Record =
        serde_json::from_slice(&std::fs::read(file.path.as_ref().unwrap()).unwrap()).unwrap();
    assert_eq!(back.server, "whole");
    assert_eq!(back.leader_pid, leader.id());
    assert_eq!(back.host_pid, std::process::id());
    let _ = leader.kill();
    let _ = leader.wait();
}
