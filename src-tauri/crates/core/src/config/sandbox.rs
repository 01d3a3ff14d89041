//! The opt-in sandbox of a local server (SP-07): what it may see and reach.
//!
//! A stdio server normally runs with every right of the person who started the app: it can read
//! `~/.ssh`, the keyring's files and every project, and talk to any host. A [`SandboxSpec`] that
//! is switched on runs it under bubblewrap instead, with a deny-by-default view: read-only
//! system directories, its own working directory, the folders granted here (read-only or
//! writable), an empty home directory, and no network unless [`SandboxSpec::network`] is on.
//!
//! The model is VS Code's sandbox for MCP servers turned around on reads: VS Code (through
//! `srt`) lets a server read everything except `denyRead`, which leaves every secret of the home
//! directory readable unless someone thought of it. Here nothing outside the grants is visible,
//! and [`SandboxSpec::deny`] hides parts of a granted folder.
//!
//! Network is never the host's (SP-13): a server with network gets its own network namespace,
//! reaching out through a user-mode stack (pasta), so the host's loopback services and its
//! abstract Unix sockets (X11, D-Bus) stay out of reach. With an allow or deny list of domains
//! ([`domains`]) it gets no stack at all, only the host's filtering proxy.
//!
//! The setting is part of what the person approves: a switched-on sandbox enters the launch
//! plan's fingerprint (SP-03), so a config file or an import that loosens it voids the approval.
//! A switched-off sandbox adds nothing to the fingerprint, which keeps the approvals made before
//! sandboxes existed valid.
//!
//! - [`argv`]: the bubblewrap command line for one start, a pure function of the plan and the
//!   facts of the machine.
//! - [`explain`]: reading a failed start's stderr for what the sandbox blocked.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::escape::escape_for_display;

pub mod argv;
pub mod domains;
pub mod explain;

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

/// A credential store the sandbox hides even inside a granted folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialStore {
    /// Where it is.
    pub path: PathBuf,
    /// What it holds, in words for the person ("SSH keys").
    pub holds: &'static str,
}

/// Credential stores in a home directory, with what each holds.
pub const HOME_SECRETS: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    (".aws", "AWS credentials"),
    (".azure", "Azure credentials"),
    (".gnupg", "GnuPG keys"),
    (".kube", "Kubernetes credentials"),
    (".docker", "Docker registry credentials"),
    (".password-store", "pass passwords"),
    (
        ".local/share/keyrings",
        "the keyring's files (your stored passwords)",
    ),
    (".config/gcloud", "Google Cloud credentials"),
    (".config/gh", "the GitHub CLI's token"),
    (".netrc", "login passwords for hosts"),
    (".git-credentials", "Git passwords and tokens"),
    (".npmrc", "npm tokens"),
    (".pypirc", "PyPI tokens"),
    (".cargo/credentials", "crates.io tokens"),
    (".cargo/credentials.toml", "crates.io tokens"),
];

/// What the app's own data directory holds, for [`credential_stores`].
pub const DATA_DIR_HOLDS: &str = "Switchboard's own data (its database, approvals and logs)";

/// The credential stores for the given home directories and the app's data directory, named
/// whether or not they exist (a store created later is as secret). Lexical: compare with
/// [`CredentialStore::covers`], which also looks through symlinks.
pub fn credential_stores(homes: &[&Path], data_dir: &Path) -> Vec<CredentialStore> {
    let mut out: Vec<CredentialStore> = Vec::new();
    for home in homes {
        for (rel, holds) in HOME_SECRETS {
            let path = clean(&home.join(rel));
            if !out.iter().any(|s| s.path == path) {
                out.push(CredentialStore { path, holds });
            }
        }
    }
    out.push(CredentialStore {
        path: clean(data_dir),
        holds: DATA_DIR_HOLDS,
    });
    out
}

impl CredentialStore {
    /// Whether `p` is this store or lies inside it, as written or (when both exist) once
    /// symlinks are resolved: a link to `~/.ssh` is `~/.ssh`.
    pub fn covers(&self, p: &Path) -> bool {
        let p = clean(p);
        if p.starts_with(&self.path) {
            return true;
        }
        match (std::fs::canonicalize(&p), std::fs::canonicalize(&self.path)) {
            (Ok(real), Ok(store)) => real.starts_with(store),
            _ => false,
        }
    }
}

/// The first store in `stores` that covers `p`.
pub fn store_of<'a>(stores: &'a [CredentialStore], p: &Path) -> Option<&'a CredentialStore> {
    stores.iter().find(|s| s.covers(p))
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn validation_refuses_what_would_undo_or_blur_the_sandbox() {
        let with = |read: &[&str]| SandboxSpec {
            enabled: true,
            read: read.iter().map(|s| p(s)).collect(),
            ..SandboxSpec::default()
        };
        assert_eq!(with(&["/home/a/proj"]).validate(), Ok(()));
        for (paths, want) in [
            (&["rel/dir"][..], "NotAbsolute"),
            (&["/home/a/../b"], "DotDot"),
            (&["/"], "TooBroad"),
            (&["/proc"], "TooBroad"),
            (&["/./"], "TooBroad"),
            (&["/a\nb"], "BadChar"),
        ] {
            let got = format!("{:?}", with(paths).validate());
            assert!(got.contains(want), "{paths:?}: {got}");
        }
        // Denying the root is pointless but harmless; granting it is refused.
        let deny_root = SandboxSpec {
            deny: vec![p("/")],
            ..SandboxSpec::on()
        };
        assert_eq!(deny_root.validate(), Ok(()));
    }

    #[test]
    fn normalizing_sorts_dedups_and_prefers_write() {
        let s = SandboxSpec {
            enabled: true,
            read: vec![p("/b/"), p("/a/./x"), p("/b"), p("/w")],
            write: vec![p("/w")],
            deny: vec![],
            network: false,
            allow_domains: vec![],
            deny_domains: vec![],
            unmask: vec![p("/w"), p("/not-granted")],
        }
        .normalized();
        assert_eq!(s.unmask, vec![p("/w")], "an unmask needs a grant");
        assert_eq!(s.read, vec![p("/a/x"), p("/b")]);
        assert_eq!(s.write, vec![p("/w")]);
    }

    #[test]
    fn grants_and_revocations() {
        let s = SandboxSpec::on().granted(Path::new("/d"), Access::Read);
        assert_eq!(s.read, vec![p("/d")]);
        let s = s.granted(Path::new("/d"), Access::Write);
        assert!(s.read.is_empty() && s.write == vec![p("/d")]);
        // A read grant does not narrow a write grant.
        assert_eq!(s.granted(Path::new("/d"), Access::Read), s);
        let denied = SandboxSpec {
            deny: vec![p("/d/secret")],
            ..s.clone()
        };
        assert!(denied
            .granted(Path::new("/d/secret"), Access::Read)
            .deny
            .is_empty());
        assert_eq!(s.revoked(Path::new("/d/")), SandboxSpec::on());
    }

    #[test]
    fn fingerprint_parts_are_empty_when_off_and_see_every_change_when_on() {
        let off = SandboxSpec {
            read: vec![p("/x")],
            ..SandboxSpec::default()
        };
        assert!(
            off.fingerprint_parts().is_empty(),
            "grants of an off sandbox mean nothing"
        );
        let base = SandboxSpec::on();
        let variants = [
            base.clone(),
            base.granted(Path::new("/x"), Access::Read),
            base.granted(Path::new("/x"), Access::Write),
            SandboxSpec {
                deny: vec![p("/x")],
                ..base.clone()
            },
            SandboxSpec {
                network: true,
                ..base.clone()
            },
        ];
        for (i, a) in variants.iter().enumerate() {
            for b in &variants[i + 1..] {
                assert_ne!(
                    a.fingerprint_parts(),
                    b.fingerprint_parts(),
                    "{a:?} vs {b:?}"
                );
            }
        }
        // The same meaning, written differently, fingerprints alike.
        let messy = SandboxSpec {
            read: vec![p("/b/"), p("/a")],
            ..base.clone()
        };
        let tidy = SandboxSpec {
            read: vec![p("/a"), p("/b")],
            ..base
        };
        assert_eq!(messy.fingerprint_parts(), tidy.fingerprint_parts());
    }

    #[test]
    fn consent_and_summary_say_what_it_may_do() {
        let s = SandboxSpec {
            network: true,
            ..SandboxSpec::on()
                .granted(Path::new("/data"), Access::Read)
                .granted(Path::new("/out\u{202E}"), Access::Write)
        };
        let text: String = s
            .consent_lines()
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        assert!(text.contains("may read: /data"), "{text}");
        assert!(text.contains("may write: /out\\u{202E}"), "{text}");
        assert!(text.contains("network: on"), "{text}");
        assert_eq!(s.summary(), "on (1 read, 1 write, network)");
        assert_eq!(SandboxSpec::default().summary(), "off");
        assert!(SandboxSpec::default().consent_lines()[0]
            .1
            .starts_with("off"));
    }

    /// The plan a person approves: an off sandbox (grants or not) fingerprints like a spec
    /// from before sandboxes, so old approvals hold; an on sandbox is part of the fingerprint
    /// and of the consent view (SP-01, SP-03).
    #[test]
    fn the_launch_plan_carries_the_sandbox() {
        use crate::config::launch::{LaunchPlan, SearchPath};
        use crate::config::{ServerSpec, SpecError, TransportSpec};
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("srv");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let with = |sandbox: SandboxSpec| {
            let mut spec = ServerSpec::test_stdio("s", exe.to_str().unwrap(), &[]);
            if let TransportSpec::Stdio(s) = &mut spec.transport {
                s.sandbox = sandbox;
            }
            spec
        };
        let plan = |sandbox: SandboxSpec| {
            LaunchPlan::resolve(&with(sandbox), dir.path(), &SearchPath::default()).unwrap()
        };
        let unset = plan(SandboxSpec::default());
        let off_with_grants = plan(SandboxSpec {
            read: vec![p("/data")],
            ..SandboxSpec::default()
        });
        assert_eq!(unset, off_with_grants);
        assert_eq!(unset.fingerprint(), off_with_grants.fingerprint());
        let on = plan(SandboxSpec::on());
        let granted = plan(SandboxSpec::on().granted(Path::new("/data"), Access::Read));
        let prints = [&unset, &on, &granted].map(|p| p.fingerprint());
        assert!(prints[0] != prints[1] && prints[1] != prints[2] && prints[0] != prints[2]);
        let text: String = granted
            .consent_lines()
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        assert!(
            text.contains("sandbox: on") && text.contains("may read: /data"),
            "{text}"
        );
        let text: String = unset
            .consent_lines()
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        assert!(text.contains("sandbox: off"), "{text}");
        // A stored plan from before sandboxes reads back as unsandboxed.
        let json = serde_json::to_string(&unset).unwrap();
        assert!(!json.contains("sandbox"), "{json}");
        // The spec refuses a grant that would undo the sandbox.
        let broad = with(SandboxSpec::on().granted(Path::new("/"), Access::Read));
        assert!(matches!(
            broad.validate(),
            Err(SpecError::Sandbox(SandboxError::TooBroad(_)))
        ));
    }

    #[test]
    fn old_specs_read_as_unset() {
        let s: SandboxSpec = serde_json::from_str("{}").unwrap();
        assert!(s.is_unset());
        let json = serde_json::to_string(&SandboxSpec::on()).unwrap();
        assert_eq!(json, r#"{"enabled":true,"network":false}"#);
    }

    /// SP-13: revoking the last allowed domain never leaves "every domain": the network goes
    /// off; with another allowed or a denied domain left, it stays on.
    #[test]
    fn revoking_the_last_allowed_domain_switches_the_network_off() {
        let one = SandboxSpec {
            enabled: true,
            ..SandboxSpec::default()
        }
        .domain_allowed("a.test")
        .unwrap();
        assert!(one.network);
        let gone = one.domain_revoked("A.test.");
        assert!(gone.allow_domains.is_empty() && !gone.network, "{gone:?}");
        let two = one.domain_allowed("b.test").unwrap();
        assert!(two.domain_revoked("a.test").network);
        let denied = one
            .domain_denied("x.test")
            .unwrap()
            .domain_allowed("a.test")
            .unwrap();
        assert!(denied.domain_revoked("a.test").network, "{denied:?}");
        let open = SandboxSpec {
            enabled: true,
            network: true,
            ..SandboxSpec::default()
        };
        assert!(
            open.domain_revoked("a.test").network,
            "nothing listed: nothing changes"
        );
    }
}
