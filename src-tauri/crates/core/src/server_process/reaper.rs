//! A record of live server process groups in the data directory, and the sweep at the next
//! start that kills what a killed host left behind (SP-06).
//!
//! A host that is SIGKILLed (or aborts) runs no destructor, so `ServerProcess`'s group kill
//! never happens. The kernel covers the leader: it is spawned with `PR_SET_PDEATHSIG` (see
//! `process.rs`). It does not cover what the leader forked: the death signal is not inherited,
//! so an `npx` wrapper's `node`, or a grandchild that ignores SIGTERM and EOF, is reparented to
//! init and lives on. This module is the backstop for those.
//!
//! At spawn, a record `<data_dir>/run/servers/<host pid>-<leader pid>.json` is written
//! (temp file + rename, so a reader never sees half a record) naming the host (pid and start
//! time), the leader (pid = process group id, start time, session) and the server. A clean stop
//! removes it. Every host start ([`RunRecords::sweep`], called by the host builder, CLI and app
//! alike) reads the records whose host is gone and SIGKILLs the recorded process group, but only
//! if some process still in it verifiably belongs to it; then it deletes the record.
//!
//! # Why the checks are what they are
//! Pids are reused, so a pid alone proves nothing. A process's start time (`/proc/<pid>/stat`
//! field 22, clock ticks since boot) together with its pid identifies it within one boot, and
//! the boot id tells boots apart; a record from another pid namespace (a sandboxed app, a CLI
//! outside it) is left to a host in that namespace. A record is acted on only when:
//! - its host is gone: no process with that pid, a zombie, or one with another start time;
//! - the leader pid is not now a *different* process. Linux keeps a pid number allocated while
//!   it is in use as any live process's group id, so if the number was handed to a new process,
//!   our group had emptied first: nothing of ours is left and nothing is killed;
//! - a process in that group is not a zombie, started no earlier than the leader and shares the
//!   leader's session (or the one the leader may have made with `setsid`).
//!
//! A record that fails any check is deleted and nothing is killed: a sweep that kills a
//! stranger is far worse than one that misses an orphan. The verdict is the pure function
//! [`judge`], tested by table.
//!
//! # Limits
//! A descendant that left the group (`setsid`, `setpgid`) is out of reach, as it is for the
//! normal stop. A server spawned in the microseconds between `fork` and the record's rename is
//! not recorded (its leader still dies with the host). Non-Linux systems have no `/proc`: no
//! record is written and the sweep finds nothing to verify, so it never kills.
//!
//! This module uses only the standard library, `nix`, `serde` and `tracing`: a file per record
//! rather than a table, because the `mcp` layer may not reach `store` and because the sweep
//! must work when the database is the thing that is broken.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

/// The format version written into every record.
const RECORD_VERSION: u32 = 1;

/// A half-written temp file older than this belongs to no live write.
const STALE_TEMP: Duration = Duration::from_secs(60);

/// Why a record could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The process's start time is unknown (no `/proc`, or the pid is gone).
    #[error("the start time of process {0} is unknown")]
    NoStartTime(u32),
    /// Writing or renaming the file failed.
    #[error("could not write the run record {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The record could not be serialized.
    #[error("could not encode the run record: {0}")]
    Encode(#[from] serde_json::Error),
}

/// One live server process group, as written at spawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// [`RECORD_VERSION`].
    pub version: u32,
    /// `/proc/sys/kernel/random/boot_id` when written.
    pub boot_id: String,
    /// The host process that spawned the server.
    pub host_pid: u32,
    /// Its start time (clock ticks since boot).
    pub host_start: u64,
    /// The server's leader; also its process group id.
    pub leader_pid: u32,
    /// The leader's start time (clock ticks since boot).
    pub leader_start: u64,
    /// The leader's session id at spawn (the host's).
    pub session: u32,
    /// The server's name, for the log.
    pub server: String,
    /// The pid namespace the pids are in (`/proc/self/ns/pid`), empty if unknown.
    #[serde(default)]
    pub pid_ns: String,
}

/// The records directory of one data directory.
#[derive(Debug, Clone)]
pub struct RunRecords {
    dir: PathBuf,
}

/// Where a spawned server is recorded: the directory and the server's name.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    records: &'a RunRecords,
    server: &'a str,
}

/// A written record; [`RecordFile::remove`] (or dropping it) deletes the file.
#[derive(Debug)]
pub struct RecordFile {
    path: Option<PathBuf>,
}

/// What a sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Groups killed, as `(server, leader pid)`.
    pub killed: Vec<(String, u32)>,
    /// Records deleted (killed or not).
    pub cleared: usize,
    /// Records kept because their host still runs.
    pub kept: usize,
}

/// The verdict on one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The host still runs: keep the record, touch nothing.
    HostAlive,
    /// Kill this process group, then delete the record.
    Kill(u32),
    /// Nothing of the group is left: delete the record.
    Gone,
    /// Something unverifiable holds the numbers: delete the record, kill nothing.
    Unverified,
}

/// The fields of `/proc/<pid>/stat` the sweep uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The pid.
    pub pid: u32,
    /// The state letter (`R`, `S`, `Z`, ...).
    pub state: char,
    /// The process group id.
    pub pgrp: u32,
    /// The session id.
    pub session: u32,
    /// The start time in clock ticks since boot.
    pub start: u64,
}

impl ProcStat {
    fn dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses one `/proc/<pid>/stat` line. The command name is in parentheses and may itself hold
/// spaces and parentheses, so the fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let (head, rest) = text.rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): field n is at index n - 3.
    let num = |n: usize| fields.get(n - 3)?.parse::<i64>().ok();
    Some(ProcStat {
        pid,
        state: fields.first()?.chars().next()?,
        pgrp: u32::try_from(num(5)?).ok()?,
        session: u32::try_from(num(6)?).ok()?,
        start: u64::try_from(num(22)?).ok()?,
    })
}

/// Reads `/proc/<pid>/stat`.
pub fn proc_stat(pid: u32) -> Option<ProcStat> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .as_deref()
        .and_then(parse_stat)
}

/// The start time of `pid`, if it exists.
pub fn start_time(pid: u32) -> Option<u64> {
    proc_stat(pid).map(|s| s.start)
}

/// This process's pid namespace: pids in a record mean something only inside it (a sandboxed
/// app and a CLI outside it see different numbers).
fn pid_ns() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// This process as a record names it: pid, start time, session. Read once.
fn this_host() -> Option<(u32, u64, u32)> {
    static HOST: OnceLock<Option<(u32, u64, u32)>> = OnceLock::new();
    *HOST.get_or_init(|| {
        let me = std::process::id();
        proc_stat(me).map(|s| (me, s.start, s.session))
    })
}

/// Decides what to do with `record`. `host` and `leader` are what `/proc` shows now for the
/// recorded pids; `members` are the processes whose group id is the recorded leader pid.
pub fn judge(
    record: &Record,
    boot_id: &str,
    host: Option<&ProcStat>,
    leader: Option<&ProcStat>,
    members: &[ProcStat],
) -> Verdict {
    if record.boot_id != boot_id {
        // Another boot: every process it had is gone, and its pids mean nothing now.
        return Verdict::Gone;
    }
    if host.is_some_and(|h| !h.dead() && h.start == record.host_start) {
        return Verdict::HostAlive;
    }
    if leader.is_some_and(|l| l.start != record.leader_start) {
        // The number went to a new process, so our group had emptied before.
        return Verdict::Unverified;
    }
    let live: Vec<&ProcStat> = members
        .iter()
        .filter(|m| !m.dead() && m.pgrp == record.leader_pid)
        .collect();
    let ours = live.iter().any(|m| {
        m.start >= record.leader_start
            && (m.session == record.session || m.session == record.leader_pid)
    });
    match (ours, live.is_empty()) {
        (true, _) => Verdict::Kill(record.leader_pid),
        (false, true) => Verdict::Gone,
        (false, false) => Verdict::Unverified,
    }
}

impl RunRecords {
    /// The records of the host whose data directory is `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("run").join("servers"),
        }
    }

    /// The directory holding the records.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the server named `server` is recorded.
    pub fn entry<'a>(&'a self, server: &'a str) -> Entry<'a> {
        Entry {
            records: self,
            server,
        }
    }

    /// Writes `record` atomically (temp file, then rename).
    pub fn write(&self, record: &Record) -> Result<RecordFile, RecordError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RecordError::Io { path, source }
        };
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let name = format!("{}-{}.json", record.host_pid, record.leader_pid);
        let path = self.dir.join(&name);
        let tmp = self.dir.join(format!("{name}.tmp"));
        let text = serde_json::to_vec_pretty(record)?;
        std::fs::write(&tmp, text).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(RecordFile { path: Some(path) })
    }

    /// Deletes the records whose host is gone, first killing each one's process group when a
    /// process in it verifiably belongs to it. Never fails: what cannot be read is logged and
    /// left alone, and nothing unverified is killed.
    pub fn sweep(&self) -> Swept {
        let mut swept = Swept::default();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return swept;
        };
        let boot = boot_id();
        let ns = pid_ns();
        let mut table: Option<HashMap<u32, Vec<ProcStat>>> = None;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let temp = name.to_string_lossy().ends_with(".json.tmp");
            if !temp && path.extension() != Some(OsStr::new("json")) {
                continue;
            }
            let record = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Record>(&b).ok());
            let Some(record) = record else {
                // A finished record always parses (it was renamed into place whole); a temp file
                // may be a write in progress, so only an old one is cleared.
                let old = temp
                    && entry
                        .metadata()
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > STALE_TEMP);
                if !temp || old {
                    tracing::warn!(path = %path.display(), "cleared an unreadable run record");
                    remove(&path, &mut swept);
                }
                continue;
            };
            if record.boot_id == boot && record.pid_ns != ns {
                // Pids of another namespace: not ours to judge; a host there sweeps it.
                swept.kept += 1;
                continue;
            }
            let host = proc_stat(record.host_pid);
            let leader = proc_stat(record.leader_pid);
            let mut verdict = judge(&record, &boot, host.as_ref(), leader.as_ref(), &[]);
            if verdict == Verdict::Gone && record.boot_id == boot {
                // Only now is the group worth a scan of /proc (once per sweep).
                let members = table
                    .get_or_insert_with(groups)
                    .get(&record.leader_pid)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                verdict = judge(&record, &boot, host.as_ref(), leader.as_ref(), members);
            }
            match verdict {
                Verdict::HostAlive => swept.kept += 1,
                Verdict::Kill(pgid) => {
                    let pgid = i32::try_from(pgid).map(Pid::from_raw);
                    match pgid.map(|g| killpg(g, Signal::SIGKILL)) {
                        Ok(Ok(())) => {
                            tracing::info!(
                                server = %record.server,
                                pgid = record.leader_pid,
                                host_pid = record.host_pid,
                                "killed a server process group left by a host that is gone"
                            );
                            swept
                                .killed
                                .push((record.server.clone(), record.leader_pid));
                        }
                        Ok(Err(e)) => tracing::warn!(
                            server = %record.server,
                            pgid = record.leader_pid,
                            error = %e,
                            "could not kill a server process group left by a host that is gone"
                        ),
                        Err(_) => {}
                    }
                    remove(&path, &mut swept);
                }
                Verdict::Gone => remove(&path, &mut swept),
                Verdict::Unverified => {
                    tracing::info!(
                        server = %record.server,
                        pgid = record.leader_pid,
                        "a stale run record no longer matches its processes; nothing killed"
                    );
                    remove(&path, &mut swept);
                }
            }
        }
        swept
    }
}

fn remove(path: &Path, swept: &mut Swept) {
    match std::fs::remove_file(path) {
        Ok(()) => swept.cleared += 1,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "could not delete a run record")
        }
    }
}

/// Every process in `/proc`, by process group.
fn groups() -> HashMap<u32, Vec<ProcStat>> {
    let me = std::process::id();
    let mut by_group: HashMap<u32, Vec<ProcStat>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return by_group;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Some(stat) = proc_stat(pid) {
            by_group.entry(stat.pgrp).or_default().push(stat);
        }
    }
    by_group
}

impl Entry<'_> {
    /// Records `leader`, just spawned by this process as the leader of its own group.
    pub fn record(&self, leader: u32) -> Result<RecordFile, RecordError> {
        let (host_pid, host_start, session) =
            this_host().ok_or(RecordError::NoStartTime(std::process::id()))?;
        let leader_start = start_time(leader).ok_or(RecordError::NoStartTime(leader))?;
        self.records.write(&Record {
            version: RECORD_VERSION,
            boot_id: boot_id(),
            host_pid,
            host_start,
            leader_pid: leader,
            leader_start,
            session,
            server: self.server.to_owned(),
            pid_ns: pid_ns(),
        })
    }
}

impl RecordFile {
    /// Deletes the record (the group is stopped). Idempotent.
    pub fn remove(&mut self) {
        if let Some(path) = self.path.take() {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    tracing::warn!(path = %path.display(), error = %e, "run record not deleted");
                }
                _ => {}
            }
        }
    }
}

impl Drop for RecordFile {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests;
