//! The network of a sandboxed server: a namespace of its own, never the host's (SP-13).
//!
//! Bubblewrap always unshares the network namespace; a server with network then has only its
//! own loopback until the host connects that namespace, which happens between bubblewrap
//! creating it and the server starting:
//! 1. the host opens two pipes (close-on-exec); the child inherits their ends as bubblewrap's
//!    `--info-fd` (it writes the sandbox's process id there) and `--block-fd` (it waits there
//!    before it runs the server);
//! 2. the host reads the process id and runs pasta (package `passt`) on it:
//!    - network on, no domain lists: `--config-net` gives the namespace a user-mode stack to the
//!      internet, with `--no-map-gw` (the gateway address is not the host) and every port
//!      forwarding off (`-t/-u/-T/-U none`), so no address inside reaches the host's loopback;
//!    - with domain lists: no `--config-net` (the interface stays down, nothing routes out),
//!      and one forwarding, from port [`PROXY_PORT`] on the namespace's loopback to the host's
//!      filtering proxy ([`super::proxy`]), which the server is pointed at by
//!      `HTTP(S)_PROXY`. Its only way out is the proxy, which checks each name.
//! 3. pasta goes to the background once the namespace is connected (so its exit is the
//!    "ready" signal) and quits by itself when the namespace goes; the host then writes to the
//!    block pipe and the server starts.
//!
//! Abstract Unix sockets (X11's `@/tmp/.X11-unix/X0`, D-Bus) belong to a network namespace,
//! so a namespace of its own already keeps them out of reach. Anything that fails here fails
//! the start: a server with network is never started in the host's namespace instead.
//!
//! pasta rather than slirp4netns: both are Debian packages and both attach to a process's
//! namespace, but pasta's `-T` forwarding is what lets the domain-list mode reach the host's
//! proxy without a helper binary inside the sandbox, and its exit on readiness needs no extra
//! pipe. Measured here: attaching took 24 ms (lists) and 150 ms (`--config-net`).

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::OFlag;

use crate::sandbox::argv::{NetFds, PASTA_LOCATIONS, PROXY_PORT};
use crate::sandbox::SandboxSpec;
use crate::server_logs::ServerLogs;

/// How long bubblewrap may take to report its process, and pasta to connect it.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a sandbox's network could not be set up (the server is then not started).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// A pipe could not be made.
    #[error("could not make the sandbox's network pipes: {0}")]
    Pipe(#[source] std::io::Error),
    /// Bubblewrap never said which process the sandbox is (it failed before, see its stderr).
    #[error("bubblewrap did not report the sandbox's process ({0}); the server was not started")]
    NoPid(String),
    /// pasta failed.
    #[error("pasta could not give the sandbox its network ({0}); the server was not started, and never with the host's network")]
    Pasta(String),
}

/// The pipes and pasta of one sandboxed start with network.
pub struct SandboxNet {
    info_r: OwnedFd,
    info_w: OwnedFd,
    block_r: OwnedFd,
    block_w: OwnedFd,
    pasta: PathBuf,
    /// The host's proxy port, with domain lists.
    proxy: Option<u16>,
}

/// The pasta executable, if installed.
pub fn find_pasta() -> Option<PathBuf> {
    PASTA_LOCATIONS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

impl SandboxNet {
    /// The pipes for a start of `sandbox`, or `None` when it has no network (or pasta is
    /// missing: `bwrap_args` then refuses the start with the package to install). `proxy` is
    /// the port of the host's filtering proxy when it has domain lists.
    pub fn prepare(sandbox: &SandboxSpec, proxy: Option<u16>) -> Result<Option<Self>, NetError> {
        if !(sandbox.enabled && sandbox.network) {
            return Ok(None);
        }
        let Some(pasta) = find_pasta() else {
            return Ok(None);
        };
        let pipe = || {
            nix::unistd::pipe2(OFlag::O_CLOEXEC)
                .map_err(|e| NetError::Pipe(std::io::Error::from(e)))
        };
        let (info_r, info_w) = pipe()?;
        let (block_r, block_w) = pipe()?;
        Ok(Some(Self {
            info_r,
            info_w,
            block_r,
            block_w,
            pasta,
            proxy,
        }))
    }

    /// The child's ends, as bubblewrap's options name them.
    pub fn fds(&self) -> NetFds {
        NetFds {
            info: self.info_w.as_raw_fd(),
            block: self.block_r.as_raw_fd(),
        }
    }

    /// The descriptors the child must inherit.
    pub fn keep(&self) -> [i32; 2] {
        [self.info_w.as_raw_fd(), self.block_r.as_raw_fd()]
    }

    /// After the spawn: connects the sandbox's namespace, then lets the server start.
    pub async fn connect(self, logs: &ServerLogs) -> Result<(), NetError> {
        let Self {
            info_r,
            info_w,
            block_r,
            block_w,
            pasta,
            proxy,
        } = self;
        // The child has its copies; ours would keep the pipes open past bubblewrap's death.
        drop(info_w);
        drop(block_r);
        let started = std::time::Instant::now();
        let pid = tokio::time::timeout(
            SETUP_TIMEOUT,
            tokio::task::spawn_blocking(move || read_pid(info_r)),
        )
        .await
        .map_err(|_| NetError::NoPid("it said nothing in 10 s".into()))?
        .map_err(|e| NetError::NoPid(e.to_string()))??;
        run_pasta(&pasta, pid, proxy).await?;
        logs.note(&format!(
            "sandbox network: own namespace, {} ({} ms)",
            match proxy {
                Some(_) => "only through the filtering proxy",
                None => "user-mode stack, no host loopback",
            },
            started.elapsed().as_millis()
        ));
        let mut release = std::fs::File::from(block_w);
        std::io::Write::write_all(&mut release, b"1")
            .map_err(|e| NetError::NoPid(format!("the sandbox went away: {e}")))?;
        Ok(())
    }
}

/// Reads bubblewrap's `{"child-pid": N, ...}` from the info pipe.
fn read_pid(info: OwnedFd) -> Result<u32, NetError> {
    let mut file = std::fs::File::from(info);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 512];
    loop {
        let n = file
            .read(&mut chunk)
            .map_err(|e| NetError::NoPid(e.to_string()))?;
        if n == 0 {
            return Err(NetError::NoPid("it exited first".into()));
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&buf) {
            return v
                .get("child-pid")
                .and_then(serde_json::Value::as_u64)
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| NetError::NoPid("its report has no child-pid".into()));
        }
        if buf.len() > 64 * 1024 {
            return Err(NetError::NoPid("its report is too long".into()));
        }
    }
}

/// The arguments pasta gets for the namespace of `pid`.
fn pasta_args(pid: u32, proxy: Option<u16>) -> Vec<String> {
    let me = nix::unistd::geteuid();
    let group = nix::unistd::getegid();
    let mut args: Vec<String> = ["--quiet", "--runas"].map(String::from).to_vec();
    // As root pasta would otherwise switch to `nobody`, who may not enter the namespace.
    args.push(format!("{me}:{group}"));
    args.extend(["--no-map-gw", "-t", "none", "-u", "none", "-U", "none"].map(String::from));
    match proxy {
        None => args.extend(["--config-net", "-T", "none"].map(String::from)),
        Some(port) => args.extend(["-T".to_owned(), format!("{PROXY_PORT}:{port}")]),
    }
    args.push(pid.to_string());
    args
}

async fn run_pasta(pasta: &Path, pid: u32, proxy: Option<u16>) -> Result<(), NetError> {
    let mut cmd = tokio::process::Command::new(pasta);
    cmd.args(pasta_args(pid, proxy))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let out = tokio::time::timeout(SETUP_TIMEOUT, cmd.output())
        .await
        .map_err(|_| NetError::Pasta("it did not finish in 10 s".into()))?
        .map_err(|e| NetError::Pasta(format!("{} could not be run: {e}", pasta.display())))?;
    if out.status.success() {
        return Ok(());
    }
    let said: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.contains("to syslog"))
        .map(str::to_owned)
        .collect();
    Err(NetError::Pasta(crate::escape::short_for_display(
        said.join("; ").trim(),
        300,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasta_never_maps_the_host_and_forwards_only_the_proxy() {
        let open = pasta_args(42, None).join(" ");
        assert!(open.contains("--no-map-gw -t none -u none -U none --config-net -T none"));
        assert!(open.ends_with(" 42"));
        let lists = pasta_args(42, Some(5555)).join(" ");
        assert!(!lists.contains("--config-net"), "{lists}");
        assert!(lists.contains("-T 3128:5555 42"), "{lists}");
    }
}
