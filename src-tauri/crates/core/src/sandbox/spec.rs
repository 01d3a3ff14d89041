//! One stdio server's sandbox setting as data: what it may read, write and reach, how a
//! setting is checked before it is stored, and what of it enters the approved fingerprint and
//! the consent view (SP-03, SP-07).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::domains;
use super::stores::{store_of, CredentialStore};
use crate::escape::escape_for_display;

/// The sandbox setting of one stdio server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SandboxSpec {
    /// Whether the server runs sandboxed. The grants are kept while it is off, so switching it
    /// back on restores them; they mean nothing until then.
    #[serde(default)]
    pub enabled: bool,
    /// Folders (or files) it may read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<PathBuf>,
    /// Folders (or files) it may read and write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// Paths hidden from it even inside a granted folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<PathBuf>,
    /// Whether it may use the network: its own network namespace, never the host's (SP-13).
    #[serde(default)]
    pub network: bool,
    /// Domains it may reach (VS Code's `allowedDomains`). With this or `deny_domains` set, the
    /// network goes through the host's filtering proxy only. Meaningless while `network` is off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_domains: Vec<String>,
    /// Domains it may never reach (VS Code's `deniedDomains`); a deny wins over an allow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_domains: Vec<String>,
    /// Granted paths that lie in a credential store the sandbox otherwise always hides
    /// ([`credential_stores`]: SSH, GnuPG, cloud and keyring files, the app's data), which the
    /// person unmasked by typing them with an explicit unmask (SP-12). A grant of such a path
    /// without it is refused, and at start it is not mounted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmask: Vec<PathBuf>,
}

/// How a granted path may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read only.
    Read,
    /// Read and write.
    Write,
}

/// Why a sandbox setting was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A path is relative: it would mean something different depending on where the app runs.
    #[error("{0} is not an absolute path")]
    NotAbsolute(String),
    /// A path has `..` in it, which makes what it names hard to see at a glance.
    #[error("{0} contains \"..\"; give the folder itself")]
    DotDot(String),
    /// Granting `/` (or a kernel file system) would leave nothing sandboxed.
    #[error("{0} cannot be granted: it would undo the sandbox")]
    TooBroad(String),
    /// A path contains a NUL or a line break.
    #[error("a sandbox path contains a NUL or a line break")]
    BadChar,
    /// More paths (or domains) than anyone sets by hand.
    #[error("at most {0} sandbox paths (or domains) can be set")]
    TooMany(usize),
    /// A domain pattern that is neither a host name (optionally `*.`-prefixed) nor an IP.
    #[error("{0} is not a domain: give a host name such as example.com or *.example.com")]
    BadDomain(String),
    /// A grant names a credential store (or a path inside one) that was not unmasked (SP-12).
    #[error("{path} holds {holds}; the sandbox always hides it. Grant it only if you mean it, naming it yourself with the unmask option (`switchboard server sandbox NAME --allow-read PATH --unmask`); its approval is then voided")]
    Masked {
        /// The grant, escaped.
        path: String,
        /// What the store holds, in words.
        holds: &'static str,
    },
}

/// The most paths a sandbox may list (each becomes a mount).
pub const MAX_PATHS: usize = 256;

/// Paths that are never granted: the root would undo the sandbox, and the kernel's own file
/// systems are provided fresh inside it.
const UNGRANTABLE: &[&str] = &["/", "/proc", "/dev", "/sys"];

impl SandboxSpec {
    /// A switched-on sandbox with no grants and no network.
    pub fn on() -> Self {
        Self {
            enabled: true,
            ..Self::default()
        }
    }

    /// Whether nothing is set at all (what a spec from before sandboxes holds).
    pub fn is_unset(&self) -> bool {
        self == &Self::default()
    }

    /// The setting a person asked for, as it is stored: normalized and validated, with an
    /// unmask of a path that is in none of `stores` dropped (it means nothing and must not void
    /// the approval), and a grant into a store that was not unmasked refused (SP-12).
    pub fn prepared(&self, stores: &[CredentialStore]) -> Result<Self, SandboxError> {
        let mut out = self.normalized();
        out.validate()?;
        out.unmask.retain(|p| store_of(stores, p).is_some());
        out.check_masked(stores)?;
        Ok(out)
    }

    /// Checks every path.
    pub fn validate(&self) -> Result<(), SandboxError> {
        let all = self
            .read
            .iter()
            .chain(&self.write)
            .chain(&self.deny)
            .chain(&self.unmask);
        if self.read.len() + self.write.len() + self.deny.len() + self.unmask.len() > MAX_PATHS {
            return Err(SandboxError::TooMany(MAX_PATHS));
        }
        for p in all {
            let shown = escape_for_display(&p.to_string_lossy());
            let raw = p.as_os_str().as_encoded_bytes();
            if raw.iter().any(|b| matches!(b, b'\0' | b'\n' | b'\r')) {
                return Err(SandboxError::BadChar);
            }
            if !p.is_absolute() {
                return Err(SandboxError::NotAbsolute(shown));
            }
            if p.components().any(|c| c == Component::ParentDir) {
                return Err(SandboxError::DotDot(shown));
            }
        }
        domains::normalize(&self.allow_domains)?;
        domains::normalize(&self.deny_domains)?;
        for p in self.read.iter().chain(&self.write) {
            if UNGRANTABLE.iter().any(|u| clean(p) == Path::new(u)) {
                return Err(SandboxError::TooBroad(escape_for_display(
                    &p.to_string_lossy(),
                )));
            }
        }
        Ok(())
    }

    /// Checks that every grant inside a credential store of `stores` was unmasked (SP-12).
    pub fn check_masked(&self, stores: &[CredentialStore]) -> Result<(), SandboxError> {
        let n = self.normalized();
        for g in n.read.iter().chain(&n.write) {
            if let Some(store) = store_of(stores, g) {
                if !n.unmask.contains(g) {
                    return Err(SandboxError::Masked {
                        path: escape_for_display(&g.to_string_lossy()),
                        holds: store.holds,
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether this setting reaches more of a credential store than `before` did: a path
    /// unmasked now that was not, or unmasked for writing now and only for reading before.
    /// Such a change voids the approval even when the person made it (SP-12).
    pub fn widens_unmasked(&self, before: &SandboxSpec) -> bool {
        let (now, before) = (self.normalized(), before.normalized());
        let access = |s: &SandboxSpec, p: &PathBuf| {
            if !s.enabled || !s.unmask.contains(p) {
                None
            } else if s.write.contains(p) {
                Some(Access::Write)
            } else {
                Some(Access::Read)
            }
        };
        now.unmask.iter().any(|p| {
            matches!(
                (access(&now, p), access(&before, p)),
                (Some(_), None) | (Some(Access::Write), Some(Access::Read))
            )
        })
    }

    /// The same setting in one canonical form: paths cleaned (`/a/./b/` is `/a/b`), sorted and
    /// without duplicates, and a path granted both ways kept only as writable. Two settings
    /// that mean the same thing are equal after this, so they fingerprint alike.
    pub fn normalized(&self) -> Self {
        let tidy = |v: &[PathBuf]| {
            let mut v: Vec<PathBuf> = v.iter().map(|p| clean(p)).collect();
            v.sort();
            v.dedup();
            v
        };
        let write = tidy(&self.write);
        let read: Vec<PathBuf> = tidy(&self.read)
            .into_iter()
            .filter(|p| !write.contains(p))
            .collect();
        // An unmask means something only for a path that is granted.
        let unmask = tidy(&self.unmask)
            .into_iter()
            .filter(|p| read.contains(p) || write.contains(p))
            .collect();
        // An invalid pattern is kept as written: `validate` refuses it.
        let names = |v: &[String]| domains::normalize(v).unwrap_or_else(|_| v.to_vec());
        Self {
            enabled: self.enabled,
            read,
            write,
            deny: tidy(&self.deny),
            network: self.network,
            allow_domains: names(&self.allow_domains),
            deny_domains: names(&self.deny_domains),
            unmask,
        }
    }

    /// The domain lists, when they decide its network: on, with an allow or deny list. Then
    /// the filtering proxy is its only way out (SP-13).
    pub fn filtered(&self) -> Option<domains::DomainLists> {
        let n = self.normalized();
        let listed = !(n.allow_domains.is_empty() && n.deny_domains.is_empty());
        (n.network && listed).then_some(domains::DomainLists {
            allow: n.allow_domains,
            deny: n.deny_domains,
        })
    }

    /// This setting with `domain` allowed (and no longer denied), and the network on.
    pub fn domain_allowed(&self, domain: &str) -> Result<Self, SandboxError> {
        let d = domains::pattern(domain)?;
        let mut next = self.clone();
        next.network = true;
        next.deny_domains.retain(|x| domains::host_key(x) != d);
        next.allow_domains.push(d);
        Ok(next.normalized())
    }

    /// This setting with `domain` in neither list. Removing the last allowed domain, with no
    /// denied one left, switches the network off: no list at all would mean every domain,
    /// wider than what the person agreed to.
    pub fn domain_revoked(&self, domain: &str) -> Self {
        let key = domains::host_key(domain);
        let mut next = self.clone();
        next.allow_domains.retain(|x| domains::host_key(x) != key);
        next.deny_domains.retain(|x| domains::host_key(x) != key);
        if !self.allow_domains.is_empty()
            && next.allow_domains.is_empty()
            && next.deny_domains.is_empty()
        {
            next.network = false;
        }
        next.normalized()
    }

    /// This setting with `domain` denied (and no longer allowed).
    pub fn domain_denied(&self, domain: &str) -> Result<Self, SandboxError> {
        let d = domains::pattern(domain)?;
        let mut next = self.clone();
        next.allow_domains.retain(|x| domains::host_key(x) != d);
        next.deny_domains.push(d);
        Ok(next.normalized())
    }

    /// This setting with `path` granted as `access` (a write grant replaces a read grant of
    /// the same path), and no longer denied.
    pub fn granted(&self, path: &Path, access: Access) -> Self {
        let mut next = self.clone();
        let path = clean(path);
        next.deny.retain(|d| clean(d) != path);
        match access {
            Access::Read if !next.write.iter().any(|w| clean(w) == path) => {
                next.read.push(path);
            }
            Access::Read => {}
            Access::Write => {
                next.read.retain(|r| clean(r) != path);
                next.write.push(path);
            }
        }
        next.normalized()
    }

    /// This setting without any grant or denial of `path`.
    pub fn revoked(&self, path: &Path) -> Self {
        let path = clean(path);
        let mut next = self.clone();
        for v in [
            &mut next.read,
            &mut next.write,
            &mut next.deny,
            &mut next.unmask,
        ] {
            v.retain(|p| clean(p) != path);
        }
        next.normalized()
    }

    /// The parts of the fingerprint (SP-03), tagged: nothing at all when the sandbox is off,
    /// so plans approved before sandboxes existed keep their fingerprint.
    pub fn fingerprint_parts(&self) -> Vec<(&'static str, Vec<u8>)> {
        if !self.enabled {
            return Vec::new();
        }
        let n = self.normalized();
        let mut out = vec![("sandbox", b"bwrap/1".to_vec())];
        for (tag, paths) in [
            ("sandbox-read", &n.read),
            ("sandbox-write", &n.write),
            ("sandbox-deny", &n.deny),
            ("sandbox-unmask", &n.unmask),
        ] {
            for p in paths {
                out.push((tag, p.as_os_str().as_encoded_bytes().to_vec()));
            }
        }
        let net: &[u8] = if n.network { b"on" } else { b"off" };
        out.push(("sandbox-network", net.to_vec()));
        for (tag, list) in [
            ("sandbox-allow-domain", &n.allow_domains),
            ("sandbox-deny-domain", &n.deny_domains),
        ] {
            out.extend(list.iter().map(|d| (tag, d.as_bytes().to_vec())));
        }
        out
    }

    /// Consent lines (SP-01): the sandbox in words, one line per grant, escaped.
    pub fn consent_lines(&self) -> Vec<(String, String)> {
        if !self.enabled {
            return vec![(
                "sandbox".into(),
                "off: it runs with all your rights (files, network)".into(),
            )];
        }
        let n = self.normalized();
        let mut out = vec![(
            "sandbox".into(),
            "on: system folders read-only, its working directory, an empty home folder".into(),
        )];
        let shown = |p: &PathBuf| escape_for_display(&p.to_string_lossy());
        out.extend(n.read.iter().map(|p| ("may read".into(), shown(p))));
        out.extend(n.write.iter().map(|p| ("may write".into(), shown(p))));
        out.extend(n.deny.iter().map(|p| ("hidden".into(), shown(p))));
        out.extend(n.unmask.iter().map(|p| {
            (
                "unmasked".into(),
                format!("{} (a credential store you unmasked)", shown(p)),
            )
        }));
        out.push(("network".into(), network_words(&n)));
        out.extend(
            n.allow_domains
                .iter()
                .map(|d| ("may reach".into(), escape_for_display(d))),
        );
        out.extend(
            n.deny_domains
                .iter()
                .map(|d| ("never".into(), escape_for_display(d))),
        );
        out
    }

    /// A one-line summary for lists: `off`, or `on (2 read, 1 write, network)`.
    pub fn summary(&self) -> String {
        if !self.enabled {
            return "off".into();
        }
        let n = self.normalized();
        let mut parts = Vec::new();
        if !n.read.is_empty() {
            parts.push(format!("{} read", n.read.len()));
        }
        if !n.write.is_empty() {
            parts.push(format!("{} write", n.write.len()));
        }
        if !n.deny.is_empty() {
            parts.push(format!("{} hidden", n.deny.len()));
        }
        parts.push(match (n.network, n.filtered()) {
            (false, _) => "no network".into(),
            (true, None) => "network".into(),
            (true, Some(l)) if l.allow.is_empty() => format!("network but {} denied", l.deny.len()),
            (true, Some(l)) => format!(
                "network to {} domain{}",
                l.allow.len(),
                if l.allow.len() == 1 { "" } else { "s" }
            ),
        });
        format!("on ({})", parts.join(", "))
    }
}

/// The network line of the consent view, in plain words.
fn network_words(n: &SandboxSpec) -> String {
    match (n.network, n.filtered()) {
        (false, _) => "off".into(),
        (true, None) => "on, in its own network namespace: it may connect to hosts on the \
                         internet, not to services on this computer (loopback, X11, D-Bus)"
            .into(),
        (true, Some(l)) if l.allow.is_empty() => format!(
            "only through Switchboard's filtering proxy: any domain but the {} listed as never",
            l.deny.len()
        ),
        (true, Some(_)) => "only through Switchboard's filtering proxy, to the domains listed \
                            as may reach (and nothing on this computer unless listed)"
            .into(),
    }
}

/// `p` without `.` components or a trailing slash (`..` is refused by validation, not
/// resolved: resolving it lexically can name a different folder than the file system would).
pub fn clean(p: &Path) -> PathBuf {
    p.components().filter(|c| *c != Component::CurDir).collect()
}

#[cfg(test)]
mod tests;
