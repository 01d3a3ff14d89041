//! The credential stores a sandbox always hides, even inside a granted folder (SP-12): the
//! person's SSH, GnuPG, cloud and keyring files and the app's own data directory.

use std::path::{Path, PathBuf};

use super::spec::clean;

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
