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
//! Its own module (issue 26: out of `config` and `host`) because it is one feature in two
//! halves that belong together: the setting as data ([`SandboxSpec`], which `config` holds in a
//! stdio server's spec and fingerprints) and the running of it (bubblewrap, pasta, the proxy).
//! It uses only leaves, so `config` can hold its types; the host composes it with the store,
//! trust, audit and supervisor (`host::sandbox`), which it never sees.
//!
//! - `spec`, `stores`: the setting, its checks and what it adds to the fingerprint; the
//!   credential stores always hidden (SP-12).
//! - [`domains`]: the allow and deny lists of domains and the decision on one name.
//! - [`argv`]: the bubblewrap command line for one start, a pure function of the plan and the
//!   facts of the machine.
//! - [`net`], [`proxy`]: a server's own network namespace through pasta, and the filtering
//!   proxy that is its only way out when it has domain lists (SP-13).
//! - [`start`]: one start short of the spawn: network, command line, the doctor's probe.
//! - [`explain`]: reading a failed start's stderr for what the sandbox blocked.

mod spec;
mod stores;

pub mod argv;
pub mod domains;
pub mod explain;
pub mod net;
pub mod proxy;
pub mod start;

pub use spec::{clean, Access, SandboxError, SandboxSpec, MAX_PATHS};
pub use stores::{credential_stores, store_of, CredentialStore, DATA_DIR_HOLDS, HOME_SECRETS};
