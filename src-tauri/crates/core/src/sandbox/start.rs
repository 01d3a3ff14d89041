//! One sandboxed start, short of the spawn (SP-07, SP-13): the network it gets (the filtering
//! proxy and pasta's pipes), the bubblewrap command line around the approved program, and the
//! doctor's proof that a sandbox can be made here at all. A sandbox that cannot be set up fails
//! the start: the server is never run unsandboxed instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::argv::{bwrap_args, Facts, WrapError};
use super::net::{self, NetError, SandboxNet};
use super::proxy::{self, Proxy};
use super::SandboxSpec;
use crate::ids::ServerId;
use crate::server_logs::ServerLogs;

/// Why a sandboxed start could not be prepared (the server is then not started).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The command line could not be built (bubblewrap or pasta missing, ...).
    #[error(transparent)]
    Wrap(#[from] WrapError),
    /// A path of the command line is not UTF-8.
    #[error("a sandboxed path is not valid UTF-8; the server was not started")]
    NotUtf8,
    /// The filtering proxy could not listen.
    #[error("the sandbox's filtering proxy could not start ({0}); the server was not started")]
    Proxy(#[source] std::io::Error),
    /// The network's pipes could not be made.
    #[error(transparent)]
    Net(#[from] NetError),
}

/// The network of one sandboxed start (SP-13): the filtering proxy when it has domain lists,
/// and the pipes pasta connects its namespace through when it has network. Both `None` when
/// it has none (or pasta is missing, which [`wrap`] then refuses with the package to install).
/// The proxy records refusals in `log_dir`.
pub async fn network(
    id: &ServerId,
    sandbox: &SandboxSpec,
    logs: &ServerLogs,
    log_dir: PathBuf,
) -> Result<(Option<Proxy>, Option<SandboxNet>), StartError> {
    if !(sandbox.enabled && sandbox.network) || net::find_pasta().is_none() {
        return Ok((None, None));
    }
    let proxy = match sandbox.filtered() {
        Some(lists) => Some(
            proxy::start(id.clone(), lists, logs.clone(), log_dir)
                .await
                .map_err(StartError::Proxy)?,
        ),
        None => None,
    };
    let net = SandboxNet::prepare(sandbox, proxy.as_ref().map(|p| p.port))?;
    Ok((proxy, net))
}

/// Where one start runs and what it sees: the inputs of [`wrap`] besides the sandbox.
pub struct Launch<'a> {
    /// The approved program.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// Its working directory.
    pub cwd: &'a Path,
    /// Its environment (its `HOME` is the home the server gets).
    pub env: &'a HashMap<String, String>,
    /// The person's own home, whose credential stores stay hidden either way.
    pub person_home: Option<&'a Path>,
    /// The app's data directory, always hidden.
    pub data_dir: &'a Path,
}

/// The program and arguments to spawn for `launch`: unchanged when the sandbox is off,
/// bubblewrap around them when it is on. `net` is the network of a sandbox with network
/// ([`network`]).
pub fn wrap(
    sandbox: &SandboxSpec,
    launch: &Launch<'_>,
    logs: &ServerLogs,
    net: Option<&SandboxNet>,
) -> Result<(PathBuf, Vec<String>), StartError> {
    if !sandbox.enabled {
        return Ok((launch.program.to_path_buf(), launch.args.to_vec()));
    }
    let home = launch.env.get("HOME").map(PathBuf::from);
    let facts = Facts::gather(
        launch.program,
        sandbox,
        home.as_deref(),
        launch.person_home,
        launch.data_dir,
    );
    let (bwrap, argv) = bwrap_args(
        launch.program,
        launch.args,
        launch.cwd,
        sandbox,
        &facts,
        launch.env.contains_key("TMPDIR"),
        net.map(SandboxNet::fds),
    )?;
    let argv = argv
        .into_iter()
        .map(|a| a.into_string())
        .collect::<Result<Vec<String>, _>>()
        .map_err(|_| StartError::NotUtf8)?;
    logs.note(&format!(
        "sandboxed with {}: {}",
        bwrap.display(),
        sandbox.summary()
    ));
    Ok((bwrap, argv))
}

/// Why no sandbox can be made here (the doctor's check fails with it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unusable {
    /// Bubblewrap, or pasta for a server with network, is missing.
    #[error(transparent)]
    Missing(#[from] WrapError),
    /// The trivial run did not finish.
    #[error("{} did not finish a trivial sandboxed run in 10 s", .0.display())]
    Timeout(PathBuf),
    /// Bubblewrap could not be run at all.
    #[error("{} could not be run: {source}", .program.display())]
    Run {
        /// Bubblewrap.
        program: PathBuf,
        /// Why it could not be run.
        source: std::io::Error,
    },
    /// Bubblewrap ran and refused; what it said, escaped and shortened.
    #[error("bubblewrap cannot create a sandbox here ({0}); unprivileged user namespaces may be off (kernel.unprivileged_userns_clone, or an AppArmor restriction on them)")]
    Refused(String),
}

/// Whether `sandbox` can be set up on this machine: pasta present when it has network, and
/// bubblewrap able to run a trivial program with every namespace unshared (the cheapest proof
/// that a sandboxed start can work here).
pub async fn usable(sandbox: &SandboxSpec, data_dir: &Path) -> Result<(), Unusable> {
    let facts = Facts::gather(Path::new("/bin/true"), sandbox, None, None, data_dir);
    if sandbox.network && facts.pasta.is_none() {
        return Err(WrapError::NoPasta.into());
    }
    probe(facts.bwrap.as_deref()).await
}

async fn probe(bwrap: Option<&Path>) -> Result<(), Unusable> {
    let Some(bwrap) = bwrap else {
        return Err(WrapError::NoBwrap.into());
    };
    let mut cmd = tokio::process::Command::new(bwrap);
    cmd.args([
        "--unshare-all",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "true",
    ])
    .env_clear()
    .env("PATH", "/usr/bin:/bin")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(10), cmd.output())
        .await
        .map_err(|_| Unusable::Timeout(bwrap.to_path_buf()))?
        .map_err(|source| Unusable::Run {
            program: bwrap.to_path_buf(),
            source,
        })?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    Err(Unusable::Refused(crate::escape::short_for_display(
        said.trim(),
        300,
    )))
}
