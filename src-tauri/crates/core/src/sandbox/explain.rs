//! What the sandbox blocked, read from a failed start's stderr.
//!
//! A sandboxed server that touches something outside its grants does not get a typed error we
//! could branch on: the kernel answers its own `open` or `connect` with `EACCES`, `ENOENT`,
//! `EROFS` or `ENETUNREACH`, and the server prints whatever its runtime makes of that. Its
//! stderr is therefore the only evidence there is, and reading it for the usual spellings
//! (`Permission denied`, `EACCES`, `No such file or directory`, `Read-only file system`,
//! `Network is unreachable`, `EAI_AGAIN`, a refused loopback connection) is the one place
//! this project reads meaning out of text. The heuristics are kept honest by checking every
//! candidate against the facts: a path only counts if it exists on the host and lies outside
//! what the sandbox shows with the access needed, and a network failure only counts when the
//! network is off. Each [`Finding`] says exactly what to grant and the command that grants it;
//! the doctor prints it and the app's button applies it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::argv::SYSTEM_DIRS;
use super::{clean, store_of, Access, CredentialStore, SandboxError, SandboxSpec};
use crate::escape::{quote_arg, short_for_display};
use crate::ids::ServerId;

/// What the sandbox kept a server from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Blocked {
    /// A path outside its grants.
    Path {
        /// What to grant: the folder (or a file directly in the home folder) it tried to use.
        path: PathBuf,
        /// The access it needed.
        access: Access,
    },
    /// A credential store the sandbox always hides (SP-12). Nothing is offered for it: what a
    /// server prints is no reason to show it its person's keys, and a forged denial is the
    /// cheapest way to ask for them.
    Masked {
        /// The store.
        path: PathBuf,
        /// What it holds, in words.
        holds: String,
    },
    /// The network, which is off.
    Network,
    /// A domain the filtering proxy refused (SP-13): recorded by the host's proxy, not read
    /// from the server's output.
    Domain {
        /// The name, as the proxy compared it.
        name: String,
    },
    /// The sandbox itself could not be set up (bubblewrap failed); the server did not run.
    Unavailable {
        /// Bubblewrap's own words, escaped.
        reason: String,
    },
}

/// Why a [`Blocked`] cannot be granted with the app's "allow" button.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GrantError {
    /// The grant makes an invalid setting (a domain that is no domain, ...).
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The sandbox itself could not be set up: nothing to grant.
    #[error("the sandbox itself could not be set up; nothing can be granted for that")]
    Unavailable,
    /// A credential store is only ever unmasked by the person's own typed grant (SP-12).
    #[error("a credential store is never granted from what a server printed; type the grant yourself with the unmask option if you mean it")]
    Masked,
}

impl SandboxSpec {
    /// This setting with what `blocked` says was kept from the server granted.
    pub fn grant(&self, blocked: &Blocked) -> Result<Self, GrantError> {
        Ok(match blocked {
            Blocked::Path { path, access } => self.granted(path, *access),
            Blocked::Network => SandboxSpec {
                network: true,
                ..self.clone()
            },
            Blocked::Domain { name } => self.domain_allowed(name)?,
            Blocked::Unavailable { .. } => return Err(GrantError::Unavailable),
            Blocked::Masked { .. } => return Err(GrantError::Masked),
        })
    }
}

/// One thing the sandbox blocked, with the stderr line that shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What was blocked.
    pub blocked: Blocked,
    /// The stderr line it was read from, escaped and shortened.
    pub evidence: String,
}

/// Where the sandbox stood when the server failed.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    /// Its setting.
    pub sandbox: &'a SandboxSpec,
    /// Its working directory (always writable inside).
    pub cwd: &'a Path,
    /// The home directory it saw as empty.
    pub home: Option<&'a Path>,
    /// Absolute paths among its configured plain env values. The host redacts every
    /// configured value from stderr (it cannot tell which are secret), so a path the server
    /// was configured with shows as `[redacted]`; a failure line with that marker is checked
    /// against these. Secret values are never among them.
    pub configured_paths: &'a [PathBuf],
    /// The credential stores, which are never proposed (SP-12).
    pub stores: &'a [CredentialStore],
}

impl Finding {
    /// A sentence for the doctor: what was blocked and how to allow it.
    pub fn describe(&self, server: &ServerId) -> String {
        let how = self
            .grant_command(server)
            .map(|c| format!("; to allow it: `{c}`"))
            .unwrap_or_default();
        let what = match &self.blocked {
            Blocked::Path { path, access } => format!(
                "the sandbox kept it from {} {}",
                match access {
                    Access::Read => "reading",
                    Access::Write => "writing",
                },
                short_for_display(&path.to_string_lossy(), 200)
            ),
            Blocked::Masked { path, holds } => format!(
                "its output names {}, which holds {holds}: the sandbox always hides it and nothing is offered for it (a server's output is never a reason to show it a credential store)",
                short_for_display(&path.to_string_lossy(), 200)
            ),
            Blocked::Network => "the sandbox kept it off the network".to_owned(),
            Blocked::Domain { name } => format!(
                "the sandbox's filtering proxy refused {} (not among the domains it may reach)",
                short_for_display(name, 200)
            ),
            Blocked::Unavailable { reason } => format!(
                "the sandbox could not be set up, so the server was not started (never unsandboxed): {reason}. On Linux this usually means unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0, or an AppArmor restriction)"
            ),
        };
        match self.blocked {
            Blocked::Domain { .. } => format!("{what}{how} ({})", self.evidence),
            _ => format!("{what}{how} (stderr: {})", self.evidence),
        }
    }

    /// The finding for a domain the proxy refused.
    pub fn refused_domain(name: &str) -> Self {
        Self {
            blocked: Blocked::Domain {
                name: name.to_owned(),
            },
            evidence: "recorded by Switchboard's filtering proxy".into(),
        }
    }

    /// The CLI command that grants what was blocked.
    pub fn grant_command(&self, server: &ServerId) -> Option<String> {
        match &self.blocked {
            Blocked::Path { path, access } => {
                let flag = match access {
                    Access::Read => "--allow-read",
                    Access::Write => "--allow-write",
                };
                Some(format!(
                    "switchboard server sandbox {server} {flag} {}",
                    quote_arg(&path.to_string_lossy())
                ))
            }
            Blocked::Network => Some(format!("switchboard server sandbox {server} --network on")),
            Blocked::Domain { name } => Some(format!(
                "switchboard server sandbox {server} --allow-domain {}",
                quote_arg(name)
            )),
            Blocked::Masked { .. } | Blocked::Unavailable { .. } => None,
        }
    }
}

/// Reads `lines` (a stderr tail) for what the sandbox blocked. `kind_on_host` tells whether a
/// path exists on the host and is a directory (`Some(true)`), something else (`Some(false)`)
/// or missing (`None`).
pub fn explain(
    lines: &[String],
    cx: &Context<'_>,
    kind_on_host: &dyn Fn(&Path) -> Option<bool>,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |blocked: Blocked, line: &str| {
        if !out.iter().any(|f| f.blocked == blocked) {
            out.push(Finding {
                blocked,
                evidence: short_for_display(line.trim(), 300),
            });
        }
    };
    for line in lines {
        if let Some(reason) = line.trim_start().strip_prefix("bwrap: ") {
            let reason = short_for_display(reason.trim(), 300);
            push(Blocked::Unavailable { reason }, line);
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if !cx.sandbox.network && is_network_failure(&lower) {
            push(Blocked::Network, line);
            continue;
        }
        let Some(access) = path_failure(&lower) else {
            continue;
        };
        let mut candidates = paths_in(line);
        if line.contains(REDACTED) {
            candidates.extend(cx.configured_paths.iter().map(|p| clean(p)));
        }
        for path in candidates {
            if let Some(blocked) = blocked_path(&path, access, cx, kind_on_host) {
                push(blocked, line);
            }
        }
    }
    out
}

/// What the host's log redaction puts in place of a configured value.
const REDACTED: &str = "[redacted]";

fn is_network_failure(lower: &str) -> bool {
    const MARKS: &[&str] = &[
        "network is unreachable",
        "enetunreach",
        "eai_again",
        "temporary failure in name resolution",
        "getaddrinfo",
    ];
    let refused_locally = (lower.contains("connection refused") || lower.contains("econnrefused"))
        && ["127.0.0.1", "localhost", "[::1]", "::1"]
            .iter()
            .any(|h| lower.contains(h));
    refused_locally || MARKS.iter().any(|m| lower.contains(m))
}

/// The access a line's path failure needed, if the line reports one.
fn path_failure(lower: &str) -> Option<Access> {
    if lower.contains("read-only file system") || lower.contains("erofs") {
        return Some(Access::Write);
    }
    let failed = [
        "permission denied",
        "eacces",
        "no such file or directory",
        "enoent",
        "operation not permitted",
        "eperm",
        // Node's loader says neither ENOENT nor the path's error, only this.
        "cannot find module",
    ]
    .iter()
    .any(|m| lower.contains(m));
    let writing = ["write", "mkdir", "creat", "rename", "unlink", "touch"]
        .iter()
        .any(|w| lower.contains(w));
    failed.then_some(if writing { Access::Write } else { Access::Read })
}

/// Absolute paths in a line: words starting with `/`, without the quotes and punctuation that
/// runtimes wrap them in.
fn paths_in(line: &str) -> Vec<PathBuf> {
    line.split(|c: char| c.is_whitespace() || "'\"`()[]{}<>,;".contains(c))
        .map(|w| w.trim_end_matches([':', '.', ',']))
        .filter(|w| w.starts_with('/') && w.len() > 1 && !w.starts_with("//"))
        .map(|w| clean(Path::new(w)))
        .collect()
}

fn blocked_path(
    path: &Path,
    access: Access,
    cx: &Context<'_>,
    kind_on_host: &dyn Fn(&Path) -> Option<bool>,
) -> Option<Blocked> {
    // `/proc` and `/dev` are fresh inside; `/tmp` is not listed: inside it is an empty tmpfs,
    // so a host file under `/tmp` is as hidden as any other.
    let shown_inside = SYSTEM_DIRS
        .iter()
        .chain(&["/proc", "/dev"])
        .any(|d| path.starts_with(d));
    if shown_inside || path.starts_with(cx.cwd) {
        return None;
    }
    let masked = |p: &Path| {
        store_of(cx.stores, p).map(|s| Blocked::Masked {
            path: s.path.clone(),
            holds: s.holds.to_owned(),
        })
    };
    if let Some(m) = masked(path) {
        return Some(m);
    }
    let spec = cx.sandbox;
    if spec.deny.iter().any(|d| path.starts_with(d)) {
        return None; // the person hid it on purpose
    }
    let writable = spec.write.iter().any(|g| path.starts_with(g));
    let readable = writable || spec.read.iter().any(|g| path.starts_with(g));
    if writable || (access == Access::Read && readable) {
        return None;
    }
    // What to grant: an existing folder, or the folder of an existing file (a new file's
    // folder, for a write); a file directly in the home folder is granted by itself rather
    // than the whole home folder. Inside a JavaScript project, its root (the folder holding
    // `node_modules`): granting one file at a time would fail on the next import.
    if let Some(root) = package_root(path).filter(|r| kind_on_host(r) == Some(true)) {
        if Some(root.as_path()) != cx.home && !readable_enough(&root, access, spec) {
            return Some(masked(&root).unwrap_or(Blocked::Path { path: root, access }));
        }
    }
    let target = match kind_on_host(path) {
        Some(true) => path.to_path_buf(),
        Some(false) => {
            let parent = path.parent()?;
            if Some(parent) == cx.home || parent == Path::new("/") {
                path.to_path_buf()
            } else {
                parent.to_path_buf()
            }
        }
        None => {
            let parent = path.parent()?;
            let usable = access == Access::Write
                && kind_on_host(parent) == Some(true)
                && Some(parent) != cx.home
                && parent != Path::new("/");
            if !usable {
                return None; // missing on the host too: a real error, not the sandbox
            }
            parent.to_path_buf()
        }
    };
    Some(masked(&target).unwrap_or(Blocked::Path {
        path: target,
        access,
    }))
}

/// The folder holding the first `node_modules` on `path`, if any.
fn package_root(path: &Path) -> Option<PathBuf> {
    let mut root = PathBuf::new();
    for c in path.components() {
        if c.as_os_str() == "node_modules" {
            return (root.components().count() > 1).then_some(root);
        }
        root.push(c);
    }
    None
}

/// Whether `spec` already lets the server use `path` as `access` needs.
fn readable_enough(path: &Path, access: Access, spec: &SandboxSpec) -> bool {
    spec.write.iter().any(|g| path.starts_with(g))
        || (access == Access::Read && spec.read.iter().any(|g| path.starts_with(g)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
