//! The bubblewrap command line for one sandboxed start.
//!
//! [`bwrap_args`] is a pure function of the approved plan (program, arguments, working
//! directory, [`SandboxSpec`]) and the [`Facts`] of the machine (which system directories exist
//! and whether they are symlinks, which secret files exist, where bubblewrap and the home
//! directory are). [`Facts::gather`] is the only part that looks at the file system, so the
//! layout is table-tested without one.
//!
//! The view it builds, in mount order (bubblewrap applies them left to right, so every mount is
//! sorted parents-first and a more specific rule always lands on top of a broader one):
//! - system directories read-only (`/usr`, `/etc`, `/opt`, and `/bin`, `/lib*`, `/sbin` as the
//!   symlinks or directories they are on the host), with `/etc`'s secrets (`shadow`, SSH host
//!   keys) masked;
//! - fresh `/proc`, `/dev` and an empty `/tmp`;
//! - the home directory as an empty tmpfs (no `~/.ssh`, `~/.aws`, keyring files);
//! - the executable's installation prefix read-only when it is not under a system directory
//!   (`~/.nvm/versions/node/v22`, `~/.local`, a repository's `.tools/node22`), or only the
//!   executable itself when that prefix would be broad (`/tmp`, or the home folder itself);
//! - the granted folders, read-only or writable, then the working directory writable;
//! - credential stores under a bound folder masked again (a grant of `~` does not expose
//!   `~/.ssh`), the app's own data directory masked (its database is no server's business),
//!   and the person's `deny` paths masked last.
//!
//! Every namespace is unshared (`--unshare-all`), the network always: a server with network gets
//! its own namespace, which the host connects with pasta once bubblewrap has made it (SP-13,
//! `sandbox::net`); bubblewrap reports the namespace's process on `--info-fd` and holds
//! the server on `--block-fd` until that is done. Every
//! capability is dropped (bubblewrap run by root would otherwise keep them, and with
//! `CAP_SYS_ADMIN` a sandboxed root could remount its view), and `--die-with-parent` ties the
//! sandbox to its supervisor. `--new-session` is left out on purpose: the supervisor stops a
//! server by signalling its process group (SP-06, RL-08), and a new session would take the
//! server out of that group; stdio is pipes, so the terminal-injection it guards against does
//! not apply.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{clean, credential_stores, SandboxSpec};

/// Where bubblewrap may be installed. Never looked up on PATH: a PATH entry the person does not
/// control must not decide what wraps a sandboxed server.
pub const BWRAP_LOCATIONS: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

/// System directories shown read-only when they exist.
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Secrets inside `/etc` that are masked although `/etc` is shown.
const ETC_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
];

/// Where pasta (Debian package `passt`), the user-mode network stack of a sandbox with network,
/// may be installed; never looked up on PATH, as bubblewrap.
pub const PASTA_LOCATIONS: &[&str] = &["/usr/bin/pasta", "/usr/local/bin/pasta", "/bin/pasta"];

/// The port the filtering proxy listens on inside a sandbox with domain lists (its own network
/// namespace: no other program's port).
pub const PROXY_PORT: u16 = 3128;

/// The pipes bubblewrap is given when the server has network: it writes the sandbox's process
/// id to `info` and waits on `block` until the host has connected the namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetFds {
    /// Bubblewrap's `--info-fd` (the write end, in the child).
    pub info: i32,
    /// Bubblewrap's `--block-fd` (the read end, in the child).
    pub block: i32,
}

/// Files name resolution needs when the network is allowed (`/etc/resolv.conf` often points
/// into `/run`).
const RESOLVER_DIRS: &[&str] = &["/run/systemd/resolve", "/run/resolvconf"];

/// Whether something on the host is a directory or a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// Anything else (masked with `/dev/null`).
    File,
}

/// A system directory as it is on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SystemEntry {
    /// A real directory, shown read-only.
    Dir(PathBuf),
    /// A symlink (`/bin -> usr/bin` on merged-/usr systems), recreated as one.
    Symlink {
        /// The link.
        path: PathBuf,
        /// What it points to, as written in the link.
        target: PathBuf,
    },
}

/// What the sandbox layout depends on besides the plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The bubblewrap executable, if installed.
    pub bwrap: Option<PathBuf>,
    /// The pasta executable, if installed (needed only with network).
    pub pasta: Option<PathBuf>,
    /// The system directories present.
    pub system: Vec<SystemEntry>,
    /// Existing secret files under `/etc` to mask.
    pub etc_secrets: Vec<PathBuf>,
    /// The home directory the server would see (its `HOME`), replaced by an empty tmpfs.
    pub home: Option<PathBuf>,
    /// Existing paths to mask wherever a bound folder contains them: the home directory's
    /// credential stores and the app's data directory.
    pub sensitive: Vec<(PathBuf, Kind)>,
    /// Grants that lie in a credential store (as written or through a symlink) and were not
    /// unmasked: never mounted (SP-12), whatever wrote them into the setting.
    pub masked_grants: Vec<PathBuf>,
    /// Installation prefixes of the executable outside the system directories.
    pub program_prefixes: Vec<PathBuf>,
    /// Resolver directories that exist (bound only when the network is allowed).
    pub resolver: Vec<PathBuf>,
    /// The kind of each existing `deny` path (missing ones are left out: nothing to hide).
    pub deny_kinds: Vec<(PathBuf, Kind)>,
}

/// Why a sandboxed server cannot be started. It is then not started at all: a sandbox that
/// cannot be set up never falls back to running the server unsandboxed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WrapError {
    /// Bubblewrap is not installed.
    #[error("the sandbox needs bubblewrap (bwrap), which is not installed (looked in {}); install it (`apt install bubblewrap`) or switch the sandbox off. The server was not started unsandboxed", BWRAP_LOCATIONS.join(", "))]
    NoBwrap,
    /// The server has network, and pasta, which gives it a network of its own, is missing.
    #[error("the sandbox gives a server network in a namespace of its own through pasta, which is not installed (looked in {}); install it (`apt install passt`) or switch its network off. The server was not started, and never with the host's network", PASTA_LOCATIONS.join(", "))]
    NoPasta,
    /// Internal: a server with network was wrapped without the pipes bubblewrap needs.
    #[error("internal: the sandbox's network pipes are missing; the server was not started")]
    NoNetFds,
}

/// One mount of the sandbox's view.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mount {
    Symlink { target: PathBuf, path: PathBuf },
    Tmpfs(PathBuf),
    Ro(PathBuf),
    Rw(PathBuf),
    Mask(PathBuf, Kind),
}

impl Mount {
    fn path(&self) -> &Path {
        match self {
            Self::Symlink { path, .. }
            | Self::Tmpfs(path)
            | Self::Ro(path)
            | Self::Rw(path)
            | Self::Mask(path, _) => path,
        }
    }

    /// At the same depth: links and empty directories first, then binds, masks last.
    fn rank(&self) -> u8 {
        match self {
            Self::Symlink { .. } => 0,
            Self::Tmpfs(_) => 1,
            Self::Ro(_) | Self::Rw(_) => 2,
            Self::Mask(..) => 3,
        }
    }

    fn push_args(&self, out: &mut Vec<OsString>) {
        let mut add = |parts: &[&std::ffi::OsStr]| out.extend(parts.iter().map(|p| p.into()));
        match self {
            Self::Symlink { target, path } => {
                add(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()])
            }
            Self::Tmpfs(p) => add(&["--tmpfs".as_ref(), p.as_os_str()]),
            // `-try`: a granted folder that was deleted since is skipped, not a failed start.
            Self::Ro(p) => add(&["--ro-bind-try".as_ref(), p.as_os_str(), p.as_os_str()]),
            Self::Rw(p) => add(&["--bind-try".as_ref(), p.as_os_str(), p.as_os_str()]),
            Self::Mask(p, Kind::Dir) => add(&["--tmpfs".as_ref(), p.as_os_str()]),
            Self::Mask(p, Kind::File) => {
                add(&["--ro-bind".as_ref(), "/dev/null".as_ref(), p.as_os_str()])
            }
        }
    }
}

fn depth(p: &Path) -> usize {
    p.components().count()
}

fn under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// What the sandbox shows of this machine, in the order bubblewrap applies it: the system
/// read-only, secrets masked, a fresh `/tmp` and home, the program's prefixes, the person's
/// grants, the working directory, and the stores a grant would show masked again (SP-12).
fn mounts(program: &Path, cwd: &Path, spec: &SandboxSpec, facts: &Facts) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for entry in &facts.system {
        mounts.push(match entry {
            SystemEntry::Dir(p) => Mount::Ro(p.clone()),
            SystemEntry::Symlink { path, target } => Mount::Symlink {
                target: target.clone(),
                path: path.clone(),
            },
        });
    }
    let in_system = |p: &Path| {
        facts.system.iter().any(|e| match e {
            SystemEntry::Dir(d) => under(p, d),
            SystemEntry::Symlink { path, .. } => under(p, path),
        })
    };
    mounts.extend(
        facts
            .etc_secrets
            .iter()
            .map(|p| Mount::Mask(p.clone(), Kind::File)),
    );
    mounts.push(Mount::Tmpfs("/tmp".into()));
    if let Some(home) = facts.home.as_ref().map(|h| clean(h)) {
        if depth(&home) > 1 && !in_system(&home) {
            mounts.push(Mount::Tmpfs(home));
        }
    }
    if spec.network {
        mounts.extend(facts.resolver.iter().map(|p| Mount::Ro(p.clone())));
    }
    let mut bound: Vec<PathBuf> = Vec::new();
    let home = facts.home.as_ref().map(|h| clean(h));
    for p in &facts.program_prefixes {
        let p = clean(p);
        if in_system(&p) {
            continue;
        }
        // A prefix that is broad (`/tmp`, `/srv`) or holds the home folder (`~/server` has
        // `~` as its "prefix") would show far more than the program: then only the program.
        let broad = depth(&p) < 3 || home.as_ref().is_some_and(|h| h.starts_with(&p));
        let shown = if broad { clean(program) } else { p };
        mounts.push(Mount::Ro(shown.clone()));
        bound.push(shown);
    }
    let masked = |p: &PathBuf| facts.masked_grants.contains(p);
    for p in spec.read.iter().filter(|p| !masked(p)) {
        mounts.push(Mount::Ro(p.clone()));
        bound.push(p.clone());
    }
    for p in spec.write.iter().filter(|p| !masked(p)) {
        mounts.push(Mount::Rw(p.clone()));
        bound.push(p.clone());
    }
    let sensitive_cwd = facts.sensitive.iter().any(|(s, _)| under(cwd, s));
    if depth(cwd) > 1 {
        if sensitive_cwd {
            // The app's data directory as a server's cwd: it gets an empty, writable stand-in.
            mounts.push(Mount::Tmpfs(cwd.to_path_buf()));
        } else {
            mounts.push(Mount::Rw(cwd.to_path_buf()));
            bound.push(cwd.to_path_buf());
        }
    }
    // A store stays visible only where the person unmasked it by name (SP-12): a grant of
    // `~` never shows `~/.ssh`.
    for (s, kind) in &facts.sensitive {
        let exposed = bound.iter().any(|b| under(s, b));
        if exposed && !spec.unmask.contains(&clean(s)) && !under(cwd, s) {
            mounts.push(Mount::Mask(clean(s), *kind));
        }
    }
    for (d, kind) in &facts.deny_kinds {
        if spec.deny.contains(&clean(d)) {
            mounts.push(Mount::Mask(clean(d), *kind));
        }
    }
    mounts.sort_by_key(|m| (depth(m.path()), m.rank()));
    mounts.dedup();

    mounts
}

/// The sandboxed command: bubblewrap and its arguments, ending with `-- program args...`.
/// `env_tmpdir` says whether the server's environment sets `TMPDIR` (it is pointed at the
/// sandbox's own `/tmp`, as the host's may not exist inside).
pub fn bwrap_args(
    program: &Path,
    args: &[String],
    cwd: &Path,
    sandbox: &SandboxSpec,
    facts: &Facts,
    env_tmpdir: bool,
    net: Option<NetFds>,
) -> Result<(PathBuf, Vec<OsString>), WrapError> {
    let bwrap = facts.bwrap.clone().ok_or(WrapError::NoBwrap)?;
    let spec = sandbox.normalized();
    let net = match (spec.network, net) {
        (false, _) => None,
        (true, _) if facts.pasta.is_none() => return Err(WrapError::NoPasta),
        (true, None) => return Err(WrapError::NoNetFds),
        (true, Some(fds)) => Some(fds),
    };
    let cwd = clean(cwd);
    let mounts = mounts(program, &cwd, &spec, facts);
    let mut out: Vec<OsString> = Vec::new();
    let mut add = |s: &str| out.push(s.into());
    add("--die-with-parent");
    add("--unshare-all");
    add("--cap-drop");
    add("ALL");
    add("--proc");
    add("/proc");
    add("--dev");
    add("/dev");
    for m in &mounts {
        m.push_args(&mut out);
    }
    // The user's runtime directory holds the D-Bus and keyring sockets: never inside.
    for var in ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"] {
        out.push("--unsetenv".into());
        out.push(var.into());
    }
    if env_tmpdir {
        out.extend(["--setenv", "TMPDIR", "/tmp"].map(OsString::from));
    }
    if let Some(fds) = net {
        for (flag, fd) in [("--info-fd", fds.info), ("--block-fd", fds.block)] {
            out.push(flag.into());
            out.push(fd.to_string().into());
        }
    }
    if spec.filtered().is_some() {
        // The proxy is its only way out: every client that honours these finds it, and none
        // is told to go around it.
        let url = format!("http://127.0.0.1:{PROXY_PORT}");
        for var in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
            out.extend([OsString::from("--setenv"), var.into(), url.clone().into()]);
        }
        for var in ["NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"] {
            out.extend(["--unsetenv", var].map(OsString::from));
        }
    }
    out.push("--chdir".into());
    out.push(cwd.into_os_string());
    out.push("--".into());
    out.push(program.as_os_str().to_owned());
    out.extend(args.iter().map(OsString::from));
    Ok((bwrap, out))
}

/// The installation prefix of an executable: the folder above its `bin`/`sbin`, or the folder
/// it is in (a build output directory, a checkout).
pub fn install_prefix(program: &Path) -> Option<PathBuf> {
    let dir = program.parent()?;
    let named_bin = dir.file_name().is_some_and(|n| n == "bin" || n == "sbin");
    let prefix = if named_bin { dir.parent()? } else { dir };
    (depth(prefix) > 1).then(|| prefix.to_path_buf())
}

impl Facts {
    /// Looks at this machine: bubblewrap, the system directories, the secrets to mask, the
    /// executable's prefixes (of the path and of what it links to). `home` is the `HOME` the
    /// server gets and `person_home` the person's own (they differ when a server's env sets
    /// `HOME`; the credential stores of both are masked); `data_dir` is the app's own
    /// directory.
    pub fn gather(
        program: &Path,
        sandbox: &SandboxSpec,
        home: Option<&Path>,
        person_home: Option<&Path>,
        data_dir: &Path,
    ) -> Self {
        let kind_of =
            |p: &Path| {
                std::fs::symlink_metadata(p).ok().map(|m| {
                    if m.is_dir() {
                        Kind::Dir
                    } else {
                        Kind::File
                    }
                })
            };
        let bwrap = BWRAP_LOCATIONS
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file());
        let pasta = PASTA_LOCATIONS
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file());
        let system = SYSTEM_DIRS
            .iter()
            .filter_map(|d| {
                let p = PathBuf::from(d);
                let meta = std::fs::symlink_metadata(&p).ok()?;
                if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&p).ok()?;
                    Some(SystemEntry::Symlink { path: p, target })
                } else {
                    meta.is_dir().then_some(SystemEntry::Dir(p))
                }
            })
            .collect();
        let etc_secrets = ETC_SECRETS
            .iter()
            .map(PathBuf::from)
            .filter(|p| kind_of(p).is_some())
            .collect();
        let homes: Vec<&Path> = home.into_iter().chain(person_home).collect();
        let stores = credential_stores(&homes, data_dir);
        let sensitive: Vec<(PathBuf, Kind)> = stores
            .iter()
            .filter_map(|s| kind_of(&s.path).map(|k| (s.path.clone(), k)))
            .collect();
        let spec = sandbox.normalized();
        let masked_grants = spec
            .read
            .iter()
            .chain(&spec.write)
            .filter(|g| !spec.unmask.contains(g) && stores.iter().any(|s| s.covers(g)))
            .cloned()
            .collect();
        let mut program_prefixes = Vec::new();
        for p in [
            Some(program.to_path_buf()),
            std::fs::canonicalize(program).ok(),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(prefix) = install_prefix(&p) {
                if !program_prefixes.contains(&prefix) {
                    program_prefixes.push(prefix);
                }
            }
        }
        let resolver = RESOLVER_DIRS
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        let deny_kinds = sandbox
            .deny
            .iter()
            .filter_map(|p| kind_of(p).map(|k| (clean(p), k)))
            .collect();
        Self {
            bwrap,
            pasta,
            system,
            etc_secrets,
            home: home.map(Path::to_path_buf),
            sensitive,
            masked_grants,
            program_prefixes,
            resolver,
            deny_kinds,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
