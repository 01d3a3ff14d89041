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
//! and [`SandboxSpec::deny`] hides parts of a granted folder. Network is all or nothing:
//! bubblewrap has no per-domain filter, and a proxy that enforces one is more machinery than an
//! opt-in setting justifies; a domain list imported from VS Code is therefore not widened into
//! "all hosts" (see `import::sandbox`).
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

use super::escape::escape_for_display;

pub mod argv;
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
    /// Whether it may use the network (all of it: there is no per-host filter).
    #[serde(default)]
    pub network: bool,
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
    /// More paths than anyone sets by hand.
    #[error("at most {0} sandbox paths can be set")]
    TooMany(usize),
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
        let all = self.read.iter().chain(&self.write).chain(&self.deny);
        if self.read.len() + self.write.len() + self.deny.len() > MAX_PATHS {
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
        for p in self.read.iter().chain(&self.write) {
            if UNGRANTABLE.iter().any(|u| clean(p) == Path::new(u)) {
                return Err(SandboxError::TooBroad(escape_for_display(
                    &p.to_string_lossy(),
                )));
            }
        }
        Ok(())
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
        let read = tidy(&self.read)
            .into_iter()
            .filter(|p| !write.contains(p))
            .collect();
        Self {
            enabled: self.enabled,
            read,
            write,
            deny: tidy(&self.deny),
            network: self.network,
        }
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
        for v in [&mut next.read, &mut next.write, &mut next.deny] {
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
        ] {
            for p in paths {
                out.push((tag, p.as_os_str().as_encoded_bytes().to_vec()));
            }
        }
        let net: &[u8] = if n.network { b"on" } else { b"off" };
        out.push(("sandbox-network", net.to_vec()));
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
        out.push((
            "network".into(),
            if n.network {
                "on: it may connect anywhere".into()
            } else {
                "off".into()
            },
        ));
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
        parts.push(if n.network { "network" } else { "no network" }.into());
        format!("on ({})", parts.join(", "))
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
        }
        .normalized();
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
}
