//! Child processes for stdio servers: environment allowlist (SP-05), process-group containment
//! (SP-06) and graceful stop (RL-08).
//!
//! Each server runs as the leader of its own process group, so everything it forks (an `npx`
//! wrapper, a `node` grandchild, a stray daemon that keeps stdout open) can be signalled at once.
//! Stopping closes stdin, waits, sends SIGTERM to the group, waits, then SIGKILL. If a
//! [`ServerProcess`] is dropped without [`ServerProcess::stop`] (a panic, a cancelled task), its
//! `Drop` sends SIGKILL to the group, so no tree outlives its owner.
//!
//! rmcp's own child-process transport neither caps stdout lines nor kills the tree nor drains
//! stderr, which is why this module exists.
//!
//! # A host that dies without a goodbye
//! A SIGKILLed host runs no `Drop`. Two things cover that case:
//! - The leader is spawned with `PR_SET_PDEATHSIG(SIGKILL)` (Linux), so the kernel kills it
//!   when its parent dies; right after setting it the child compares `getppid()` with the host's
//!   pid and gives up if the host is already gone (the signal would never come).
//! - Its group is written to the run records ([`self::reaper`]), which the next host start
//!   sweeps: the death signal is not inherited, so the leader's own children outlive it.
//!
//! The death signal fires when the *thread* that forked the child exits, not the process. A
//! spawn on a tokio `spawn_blocking` thread (which exits after 10 s idle) or on a worker that
//! `block_in_place` turned into one would kill a healthy server seconds later. So every spawn
//! runs on one dedicated thread that lives as long as the process (`spawner`), whatever thread
//! the caller is on; the call blocks only for the fork and exec, as a direct spawn would.

pub mod reaper;

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{mpsc, Mutex, PoisonError};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use self::reaper::{Entry, RecordFile};
use crate::config::launch::INHERITED_ENV;
use crate::redact::Secret;

/// How long each stop phase waits before escalating, unless the host set another
/// ([`ServerProcess::set_stop_grace`]).
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// A running server process and its group.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    pgid: Option<Pid>,
    /// The run record of the group; deleted (dropped) once the group is stopped or killed.
    record: Option<RecordFile>,
    /// How long each stop phase waits (after the end of input, after SIGTERM).
    grace: Duration,
    /// What lives exactly as long as the process (a sandbox's filtering proxy): dropped with it.
    held: Vec<Held>,
}

/// Something a [`ServerProcess`] keeps alive until it is dropped.
pub struct Held(pub Box<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held")
    }
}

/// The pipes of a freshly spawned server.
#[derive(Debug)]
pub struct Pipes {
    /// The server's stdin.
    pub stdin: ChildStdin,
    /// The server's stdout.
    pub stdout: ChildStdout,
    /// The server's stderr.
    pub stderr: ChildStderr,
}

/// The environment a child gets: the allowlisted host variables plus its configured ones.
/// Shell functions exported by bash (`BASH_FUNC_*`) never pass, whatever the name.
pub fn child_env(
    host: impl IntoIterator<Item = (String, String)>,
    configured: &[(String, Secret)],
) -> HashMap<String, String> {
    let mut env: HashMap<String, String> = host
        .into_iter()
        .filter(|(k, v)| {
            INHERITED_ENV.contains(&k.as_str())
                && !k.starts_with("BASH_FUNC_")
                && !v.starts_with("()")
        })
        .collect();
    for (k, v) in configured {
        env.insert(k.clone(), v.expose().to_owned());
    }
    env
}

impl ServerProcess {
    /// Spawns `program` without a shell, in its own process group, with a cleared environment
    /// set to `env`, and all three standard streams piped. The leader dies with the host
    /// (Linux); with `record`, the group is written to the run records until it is stopped.
    pub fn spawn(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &HashMap<String, String>,
        record: Option<Entry<'_>>,
    ) -> std::io::Result<(Self, Pipes)> {
        Self::spawn_keeping(program, args, cwd, env, record, &[])
    }

    /// [`ServerProcess::spawn`], with the descriptors `keep` (opened close-on-exec by the
    /// caller) inherited by the child under the same numbers: the pipes bubblewrap reports and
    /// waits on for a sandbox's network (SP-13).
    pub fn spawn_keeping(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &HashMap<String, String>,
        record: Option<Entry<'_>>,
        keep: &[i32],
    ) -> std::io::Result<(Self, Pipes)> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            // Backstop only: Drop below kills the whole group, this kills the leader if even
            // that fails.
            .kill_on_drop(true);
        die_with_host(&mut cmd);
        if !keep.is_empty() {
            inherit_fds(&mut cmd, keep.to_vec());
        }
        let mut child = spawner::spawn(cmd)?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        // A record that cannot be written costs only the sweep after a crash: warn, go on.
        // Records need /proc: elsewhere there is nothing to write them from.
        let record = match (record.filter(|_| cfg!(target_os = "linux")), child.id()) {
            (Some(entry), Some(pid)) => match entry.record(pid) {
                Ok(file) => Some(file),
                Err(e) => {
                    tracing::warn!(pid, error = %e, "no run record for this server");
                    None
                }
            },
            _ => None,
        };
        let missing = || std::io::Error::other("child pipes missing after spawn");
        let pipes = Pipes {
            stdin: child.stdin.take().ok_or_else(missing)?,
            stdout: child.stdout.take().ok_or_else(missing)?,
            stderr: child.stderr.take().ok_or_else(missing)?,
        };
        Ok((
            Self {
                child,
                pgid,
                record,
                grace: STOP_GRACE,
                held: Vec::new(),
            },
            pipes,
        ))
    }

    /// Sets how long each stop phase waits before escalating. A one-shot command has printed
    /// its answer and is only waiting for the server to go: a short grace keeps the spec's
    /// order (end of input, SIGTERM, SIGKILL) without making the person wait seconds for a
    /// server that ignores the first two.
    pub fn set_stop_grace(&mut self, grace: Duration) {
        self.grace = grace;
    }

    /// Keeps `what` alive as long as this process is.
    pub fn hold(&mut self, what: Held) {
        self.held.push(what);
    }

    /// The leader's process id.
    pub fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p.as_raw() as u32)
    }

    /// Waits for the leader to exit and returns a description of how it ended.
    pub async fn wait(&mut self) -> String {
        match self.child.wait().await {
            Ok(status) => describe_exit(status),
            Err(e) => format!("could not wait for the process: {e}"),
        }
    }

    /// Whether any process of the group is still alive.
    fn group_alive(&self) -> bool {
        self.pgid.is_some_and(|g| killpg(g, None).is_ok())
    }

    fn signal_group(&self, sig: Signal) {
        if let Some(g) = self.pgid {
            let _ = killpg(g, sig);
        }
    }

    /// Stops the server and everything it started: stdin is already closed by the caller (the
    /// transport owns it); wait, SIGTERM the group, wait, SIGKILL the group. Returns how the
    /// leader ended.
    pub async fn stop(mut self) -> String {
        let grace = self.grace;
        let mut exit = tokio::time::timeout(grace, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
            .map(describe_exit);
        if exit.is_none() || self.group_alive() {
            self.signal_group(Signal::SIGTERM);
            // One grace for the whole group after SIGTERM, leader and descendants alike.
            let deadline = tokio::time::Instant::now() + grace;
            if exit.is_none() {
                exit = tokio::time::timeout_at(deadline, self.child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .map(describe_exit);
            }
            // Descendants are not our children, so poll the group rather than wait on it.
            while self.group_alive() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        if self.group_alive() || exit.is_none() {
            self.signal_group(Signal::SIGKILL);
            if exit.is_none() {
                exit = self.child.wait().await.ok().map(describe_exit);
            }
        }
        self.pgid = None;
        if let Some(mut record) = self.record.take() {
            record.remove();
        }
        exit.unwrap_or_else(|| "killed".into())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.signal_group(Signal::SIGKILL);
        // The group is killed (SIGKILL cannot be caught), so its record goes with it.
        if let Some(mut record) = self.record.take() {
            record.remove();
        }
    }
}

/// Asks the kernel to SIGKILL the child when the host dies (Linux `PR_SET_PDEATHSIG`), and
/// closes the race where the host died between `fork` and that call.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_host(cmd: &mut Command) {
    let host = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed. It makes two system calls (prctl, getppid) and builds an io::Error
    // from a raw errno, which does not allocate; it takes no lock and touches no shared state.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if nix::unistd::getppid() != host {
                // The host is already gone: no death signal will come, so do not start.
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Clears close-on-exec on `fds` in the child, so it inherits them (and only them).
#[allow(unsafe_code)]
fn inherit_fds(cmd: &mut Command, fds: Vec<i32>) {
    // SAFETY: runs in the forked child before exec; `fcntl` is async-signal-safe, and the
    // closure allocates nothing (the list was built before the fork) and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            for fd in &fds {
                if libc::fcntl(*fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Other systems have no parent-death signal; the run records still cover a crash.
#[cfg(not(target_os = "linux"))]
fn die_with_host(_cmd: &mut Command) {}

/// The one thread every server is spawned from (see the module docs: the parent-death signal
/// follows the forking thread). It lives as long as the process: the channel's sender is in a
/// static and is never dropped.
mod spawner {
    use super::*;

    /// One spawn: the command, the runtime whose reactor will watch the child, and the reply.
    struct Request {
        cmd: Command,
        runtime: tokio::runtime::Handle,
        reply: mpsc::SyncSender<std::io::Result<Child>>,
    }

    static QUEUE: Mutex<Option<mpsc::Sender<Request>>> = Mutex::new(None);

    fn queue() -> std::io::Result<mpsc::Sender<Request>> {
        let mut guard = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = guard.as_ref() {
            return Ok(tx.clone());
        }
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("server-spawner".into())
            .spawn(move || {
                for mut req in rx {
                    let _entered = req.runtime.enter();
                    let _ = req.reply.send(req.cmd.spawn());
                }
            })?;
        *guard = Some(tx.clone());
        Ok(tx)
    }

    /// Spawns `cmd` on the spawner thread, registered with the caller's tokio runtime.
    pub(super) fn spawn(cmd: Command) -> std::io::Result<Child> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| std::io::Error::other("servers are spawned from a tokio runtime"))?;
        let (reply, answer) = mpsc::sync_channel(1);
        let gone = || std::io::Error::other("the server spawner thread is gone");
        let sent = queue()?.send(Request {
            cmd,
            runtime,
            reply,
        });
        if sent.is_err() {
            // The thread died (it never should): the next spawn starts a new one.
            *QUEUE.lock().unwrap_or_else(PoisonError::into_inner) = None;
            return Err(gone());
        }
        answer.recv().map_err(|_| gone())?
    }
}

/// A human description of an exit status.
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => "exited normally (code 0)".into(),
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(s)) => {
            let name = Signal::try_from(s)
                .map(|s| s.as_str().to_owned())
                .unwrap_or_else(|_| format!("signal {s}"));
            format!("was killed by {name}")
        }
        (None, None) => "ended".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_is_allowlisted() {
        let host = vec![
            ("PATH".to_owned(), "/usr/bin".to_owned()),
            ("OPENAI_API_KEY".to_owned(), "sk-canary".to_owned()),
            ("HOME".to_owned(), "/home/u".to_owned()),
            ("BASH_FUNC_x%%".to_owned(), "() { evil; }".to_owned()),
            ("AWS_SECRET_ACCESS_KEY".to_owned(), "canary".to_owned()),
        ];
        let env = child_env(host, &[("MY_TOKEN".into(), Secret::new("v"))]);
        assert_eq!(env.get("PATH").map(String::as_str), Some("/usr/bin"));
        assert_eq!(env.get("MY_TOKEN").map(String::as_str), Some("v"));
        assert!(!env.contains_key("OPENAI_API_KEY"));
        assert!(!env.contains_key("AWS_SECRET_ACCESS_KEY"));
        assert!(!env.keys().any(|k| k.starts_with("BASH_FUNC")));
    }

    #[tokio::test]
    async fn stop_kills_a_tree_that_ignores_eof_and_sigterm() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // The leader ignores SIGTERM and EOF and forks a grandchild that does the same.
        let script = format!(
            "trap '' TERM; (trap '' TERM; sleep 1000) & echo $! > {p}; echo $$ >> {p}; while true; do sleep 1; done",
            p = pids.display()
        );
        let (proc_, pipes) = ServerProcess::spawn(
            Path::new("/bin/sh"),
            &["-c".into(), script],
            dir.path(),
            &child_env(std::env::vars(), &[]),
            None,
        )
        .unwrap();
        drop(pipes);
        for _ in 0..100 {
            if std::fs::read_to_string(&pids).is_ok_and(|s| s.lines().count() == 2) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let listed: Vec<i32> = std::fs::read_to_string(&pids)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        let started = std::time::Instant::now();
        let how = proc_.stop().await;
        assert!(
            started.elapsed() < Duration::from_secs(7),
            "{:?}",
            started.elapsed()
        );
        assert!(how.contains("SIGKILL"), "{how}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        for pid in listed {
            let alive = nix::sys::signal::kill(Pid::from_raw(pid), None).is_ok()
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z "));
            assert!(!alive, "pid {pid} survived");
        }
    }

    /// The parent-death signal follows the thread that forked: a spawn asked for from a thread
    /// that then ends (as a `spawn_blocking` thread does) must not take the server with it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_outlives_the_thread_that_asked_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_path_buf();
        let runtime = tokio::runtime::Handle::current();
        let (proc_, pipes) = std::thread::spawn(move || {
            let _entered = runtime.enter();
            ServerProcess::spawn(
                Path::new("/bin/sleep"),
                &["1000".into()],
                &cwd,
                &child_env(std::env::vars(), &[]),
                None,
            )
            .unwrap()
        })
        .join()
        .unwrap();
        let pid = Pid::from_raw(proc_.pid().unwrap() as i32);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let zombie =
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "));
        assert!(
            nix::sys::signal::kill(pid, None).is_ok() && !zombie,
            "the server died with the thread that spawned it"
        );
        drop(pipes);
        drop(proc_);
    }
}
