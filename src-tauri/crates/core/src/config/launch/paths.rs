//! Paths in a launch plan worth a second look (SP-02): secret stores, system directories and a
//! whole home directory.
//!
//! Stores are matched as whole path components, never as substrings: `.aws` is the AWS
//! credentials directory in `~/.aws/config` and `/root/.aws`, and nothing in the PyPI name
//! `awslabs.aws-documentation-mcp-server` or the directory `~/.aws-backup`. A store relative to
//! a home directory (`.ssh`, `.config/gcloud`) matches wherever it starts a component, so
//! `~/.ssh`, `$HOME/.ssh`, `/home/ada/.ssh` and `/root/.ssh` are all found without knowing
//! whose home it is; a system file (`/etc/shadow`) matches only as an absolute path. A text is
//! one argument or env value, and may hold several paths (`--dirs=/a,/b`, a docker `-v a:b`
//! mount, an inline script), so `=`, `,`, `:`, `;`, whitespace, quotes and shell punctuation
//! also end a component.
//!
//! A path *under* a home directory is not sensitive by itself (a project in `/root/src` is the
//! common case when the user is root). The whole home directory (`~`, `/home/ada`, `/root`, the
//! host's `$HOME`) is reported apart, as a milder note: granting it to a filesystem server is a
//! legitimate choice, but it hands over every store listed here at once.

/// Secret stores as lowercase paths with `/` separators: absolute ones are system files, the
/// others are relative to a home directory (or a Windows profile) and match at any component.
const STORES: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    ("id_rsa", "SSH keys"),
    ("id_ecdsa", "SSH keys"),
    ("id_ed25519", "SSH keys"),
    ("id_dsa", "SSH keys"),
    (".aws", "AWS credentials"),
    (".gnupg", "GnuPG keys"),
    (".config/gcloud", "Google Cloud credentials"),
    ("appdata/roaming/gcloud", "Google Cloud credentials"),
    (".azure", "Azure credentials"),
    (".kube", "Kubernetes credentials"),
    (".docker/config.json", "Docker registry credentials"),
    (".netrc", "netrc passwords"),
    ("_netrc", "netrc passwords"),
    (".git-credentials", "git credentials"),
    (".config/gh/hosts.yml", "GitHub CLI token"),
    (".npmrc", "npm tokens"),
    (".pypirc", "PyPI tokens"),
    (".cargo/credentials.toml", "crates.io token"),
    (".cargo/credentials", "crates.io token"),
    (".terraform.d/credentials.tfrc.json", "Terraform token"),
    (".vault-token", "Vault token"),
    (".pgpass", "PostgreSQL passwords"),
    (".local/share/keyrings", "the login keyring"),
    ("library/keychains", "the macOS keychain"),
    (".password-store", "a password manager"),
    (".config/1password", "a password manager"),
    (
        "library/group containers/2bua8c4s2c.com.1password",
        "a password manager",
    ),
    (".config/bitwarden", "a password manager"),
    (
        "library/application support/bitwarden",
        "a password manager",
    ),
    (".mozilla", "browser profiles"),
    (".thunderbird", "mail profiles"),
    (".config/google-chrome", "browser profiles"),
    (".config/chromium", "browser profiles"),
    (".config/bravesoftware", "browser profiles"),
    (".config/microsoft-edge", "browser profiles"),
    (
        "library/application support/google/chrome",
        "browser profiles",
    ),
    ("library/application support/chromium", "browser profiles"),
    (
        "library/application support/bravesoftware",
        "browser profiles",
    ),
    (
        "library/application support/microsoft edge",
        "browser profiles",
    ),
    ("library/application support/firefox", "browser profiles"),
    ("library/safari", "browser profiles"),
    ("library/cookies", "browser profiles"),
    ("appdata/local/google/chrome/user data", "browser profiles"),
    ("appdata/local/microsoft/edge/user data", "browser profiles"),
    ("appdata/roaming/mozilla", "browser profiles"),
    ("/etc/shadow", "system password hashes"),
    ("/etc/gshadow", "system password hashes"),
    ("/etc/master.passwd", "system password hashes"),
    ("/etc/sudoers", "sudo rules"),
    ("/etc/sudoers.d", "sudo rules"),
    ("/etc/ssh", "SSH host keys"),
    ("/etc/ssl/private", "TLS private keys"),
];

/// Directories that configure or expose the whole machine. The read-only program trees (`/usr`,
/// `/bin`, `/opt`) are left out on purpose: servers name interpreters there all the time.
const SYSTEM_DIRS: &[&str] = &["/etc", "/private/etc", "/boot", "/sys", "/proc"];

/// What a text (an argument, the program, an env value) names.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct PathNotes {
    /// The stores found, by description, each once, in table order.
    pub stores: Vec<&'static str>,
    /// A system directory outside the stores.
    pub system_dir: bool,
    /// A whole home directory.
    pub whole_home: bool,
}

/// Characters that end a path inside a larger text (besides `/`).
fn is_separator(c: char) -> bool {
    c.is_whitespace() || "=,;:'\"`()<>|&".contains(c)
}

/// Looks for stores, system directories and whole home directories in `text`; `home` is the
/// host's home directory, if known.
pub(super) fn notes(text: &str, home: Option<&str>) -> PathNotes {
    // ASCII lowercasing keeps byte offsets; `\` separators become `/`.
    let norm = text.replace('\\', "/").to_ascii_lowercase();
    let mut out = PathNotes::default();
    for (store, what) in STORES {
        if !out.stores.contains(what) && has_component_run(&norm, store) {
            out.stores.push(what);
        }
    }
    let home = home
        .map(|h| h.replace('\\', "/").to_ascii_lowercase())
        .map(|h| h.trim_end_matches('/').to_owned())
        .filter(|h| !h.is_empty());
    for token in norm.split(is_separator) {
        let token = match token.trim_end_matches('/') {
            "" => token,
            t => t,
        };
        let system = SYSTEM_DIRS
            .iter()
            .any(|d| token == *d || token.strip_prefix(d).is_some_and(|r| r.starts_with('/')));
        out.system_dir |= system && out.stores.is_empty();
        out.whole_home |= is_home(token, home.as_deref());
    }
    out
}

/// Whether `needle` occurs in `hay` as whole components: it starts at the beginning, after a
/// `/` (unless it is absolute itself) or after a separator, and ends at the end, before a `/`
/// or before a separator.
fn has_component_run(hay: &str, needle: &str) -> bool {
    let absolute = needle.starts_with('/');
    hay.match_indices(needle).any(|(at, _)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        let starts = before.is_none_or(|c| is_separator(c) || (!absolute && c == '/'));
        let ends = after.is_none_or(|c| c == '/' || is_separator(c));
        starts && ends
    })
}

/// `~`, `$HOME`, the host's home, `/root`, or exactly one directory below `/home` or `/Users`.
fn is_home(token: &str, home: Option<&str>) -> bool {
    if matches!(
        token,
        "~" | "$home" | "${home}" | "%userprofile%" | "/root" | "/var/root"
    ) || home == Some(token)
    {
        return true;
    }
    ["/home/", "/users/"].iter().any(|base| {
        token
            .strip_prefix(base)
            .is_some_and(|user| !user.is_empty() && !user.contains('/'))
    })
}
