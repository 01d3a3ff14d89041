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

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use crate::config::launch::INHERITED_ENV;
use crate::redact::Secret;

/// How long each stop phase waits before escalating.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// A running server process and its group.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    pgid: Option<Pid>,
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
    /// set to `env`, and all three standard streams piped.
    pub fn spawn(
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &HashMap<String, String>,
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
        let mut child = cmd.spawn()?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let missing = || std::io::Error::other("child pipes missing after spawn");
        let pipes = Pipes {
            stdin: child.stdin.take().ok_or_else(missing)?,
            stdout: child.stdout.take().ok_or_else(missing)?,
            stderr: child.stderr.take().ok_or_else(missing)?,
        };
        Ok((Self { child, pgid }, pipes))
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
        let mut exit = tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
            .map(describe_exit);
        if exit.is_none() || self.group_alive() {
            self.signal_group(Signal::SIGTERM);
            if exit.is_none() {
                exit = tokio::time::timeout(STOP_GRACE, self.child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .map(describe_exit);
            }
            // Descendants are not our children, so poll the group rather than wait on it.
            let deadline = tokio::time::Instant::now() + STOP_GRACE;
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
        exit.unwrap_or_else(|| "killed".into())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.signal_group(Signal::SIGKILL);
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
}
