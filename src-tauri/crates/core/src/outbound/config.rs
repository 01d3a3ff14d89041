//! The person's redaction settings: on or off, their own patterns, the conversations it is
//! switched off for, and the addresses they marked local, in `<data dir>/redaction.json`.
//!
//! The marked addresses decide two things about a provider at one of them: a local runtime
//! there is not redacted (RD-02), and plain `http` may go there (RD-03). They live here, not
//! on a provider, because being local is a property of the address, whichever provider uses
//! it.
//!
//! # Why a file of its own
//! Not `settings.json`: the app's settings page saves that file from a DTO that does not know
//! these fields, so every save there would reset them; and the list of conversations it is
//! off for is not an app-wide preference. Read on each turn (a few hundred bytes), written
//! atomically (a temporary file renamed over the old one). Loading never fails: a missing or
//! unreadable file means the defaults (redaction on, no patterns), so a damaged file can only
//! ever make redaction stricter, never switch it off.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Rules;

/// The file name in the data directory.
pub const FILE_NAME: &str = "redaction.json";
/// The most patterns a person may add.
pub const MAX_PATTERNS: usize = 64;
/// The longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 512;
/// The most addresses a person may mark local.
pub const MAX_LOCAL_HOSTS: usize = 64;

/// Redaction settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedactionSettings {
    /// Whether requests to cloud providers are redacted (on unless the person says otherwise).
    pub enabled: bool,
    /// Extra regular expressions; group 1 is redacted when the pattern has one, else the match.
    pub patterns: Vec<String>,
    /// Conversations it is switched off for (their ids).
    pub off_for: BTreeSet<String>,
    /// Addresses (host names or IPs, without a port) the person marked local: a machine of
    /// theirs on a network they trust ([`crate::llm::locality`]).
    pub local_hosts: BTreeSet<String>,
}

impl Default for RedactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            patterns: Vec::new(),
            off_for: BTreeSet::new(),
            local_hosts: BTreeSet::new(),
        }
    }
}

/// Why redaction settings cannot be saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedactionConfigError {
    /// A pattern is not a valid regular expression, or too long, or there are too many.
    #[error("redaction pattern {pattern:?}: {reason}")]
    Pattern {
        /// The pattern (the person's own text).
        pattern: String,
        /// What is wrong.
        reason: String,
    },
    /// A marked address is not a host name or an IP address (a URL, a port, a space).
    #[error("{host:?} cannot be marked local: {reason}")]
    LocalHost {
        /// The address as given (cut short).
        host: String,
        /// What is wrong.
        reason: String,
    },
    /// The file could not be written.
    #[error("the redaction settings could not be saved to {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl RedactionSettings {
    /// Checks the patterns: each compiles, none too long, not too many.
    pub fn validated(self) -> Result<Self, RedactionConfigError> {
        if self.patterns.len() > MAX_PATTERNS {
            return Err(RedactionConfigError::Pattern {
                pattern: String::new(),
                reason: format!("at most {MAX_PATTERNS} patterns"),
            });
        }
        for p in &self.patterns {
            let bad = |reason: String| RedactionConfigError::Pattern {
                pattern: p.chars().take(80).collect(),
                reason,
            };
            if p.len() > MAX_PATTERN_LEN || p.is_empty() {
                return Err(bad(format!("must be 1 to {MAX_PATTERN_LEN} bytes")));
            }
            regex::Regex::new(p).map_err(|e| bad(e.to_string()))?;
        }
        if self.local_hosts.len() > MAX_LOCAL_HOSTS {
            return Err(RedactionConfigError::LocalHost {
                host: String::new(),
                reason: format!("at most {MAX_LOCAL_HOSTS} addresses"),
            });
        }
        let mut hosts = BTreeSet::new();
        for h in &self.local_hosts {
            hosts.insert(checked_host(h)?);
        }
        Ok(Self {
            local_hosts: hosts,
            ..self
        })
    }

    /// Whether requests of `conversation` (when known) to a provider of `profile_id` at
    /// `base_url` are redacted: on, on for the conversation, and not a local runtime on a
    /// local address ([`super::exempt`]).
    pub fn applies(
        &self,
        profile_id: &str,
        base_url: Option<&str>,
        conversation: Option<&str>,
    ) -> bool {
        self.enabled
            && !self.exempt(profile_id, base_url)
            && conversation.is_none_or(|c| !self.off_for.contains(c))
    }

    /// Whether a provider of `profile_id` at `base_url` runs where nothing is redacted.
    pub fn exempt(&self, profile_id: &str, base_url: Option<&str>) -> bool {
        super::exempt(profile_id, base_url, &self.local_hosts_list())
    }

    /// The marked addresses as a list.
    pub fn local_hosts_list(&self) -> Vec<String> {
        self.local_hosts.iter().cloned().collect()
    }

    /// The compiled rules (a pattern that does not compile, from a hand-edited file, is
    /// skipped with a warning).
    pub fn rules(&self) -> Rules {
        let (rules, bad) = Rules::new(&self.patterns);
        if !bad.is_empty() {
            tracing::warn!(
                count = bad.len(),
                "redaction patterns that do not compile are skipped"
            );
        }
        rules
    }
}

/// `host` normalized ([`crate::llm::locality::normalize_host`]) when it is a host name or an
/// IP address and nothing more: the form it is compared in.
pub fn checked_host(host: &str) -> Result<String, RedactionConfigError> {
    let n = crate::llm::locality::normalize_host(host);
    let bad = |reason: &str| RedactionConfigError::LocalHost {
        host: host.chars().take(80).collect(),
        reason: reason.to_owned(),
    };
    if n.is_empty() || n.len() > 253 {
        return Err(bad("give a host name or an IP address"));
    }
    let bracketed = if n.contains(':') {
        format!("[{n}]")
    } else {
        n.clone()
    };
    let parsed = url::Url::parse(&format!("http://{bracketed}/"))
        .ok()
        .and_then(|u| u.host_str().map(crate::llm::locality::normalize_host));
    if parsed.as_deref() != Some(n.as_str()) {
        return Err(bad(
            "give a host name or an IP address alone (no scheme, port or path)",
        ));
    }
    Ok(n)
}

/// The redaction settings of `data_dir`; the defaults when the file is missing or unreadable.
pub fn load(data_dir: &Path) -> RedactionSettings {
    let file = data_dir.join(FILE_NAME);
    match std::fs::read(&file) {
        Ok(text) => serde_json::from_slice(&text).unwrap_or_else(|e| {
            tracing::warn!(path = %file.display(), error = %e, "redaction settings unreadable; defaults used");
            RedactionSettings::default()
        }),
        Err(_) => RedactionSettings::default(),
    }
}

/// Validates and saves `settings` atomically.
pub fn save(
    data_dir: &Path,
    settings: RedactionSettings,
) -> Result<RedactionSettings, RedactionConfigError> {
    let settings = settings.validated()?;
    let file = data_dir.join(FILE_NAME);
    let io = |source| RedactionConfigError::Io {
        path: file.clone(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(io)?;
    let mut text =
        serde_json::to_vec_pretty(&settings).map_err(|e| io(std::io::Error::other(e)))?;
    text.push(b'\n');
    crate::settings::write_atomically(&file, &text).map_err(io)?;
    Ok(settings)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_bad_patterns_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), RedactionSettings::default());
        let mut s = RedactionSettings::default();
        s.patterns.push("ACME-(\\d+)".into());
        s.off_for.insert("c1".into());
        save(dir.path(), s.clone()).unwrap();
        assert_eq!(load(dir.path()), s);
        let cloud = Some("https://api.openai.com/v1");
        let here = Some("http://127.0.0.1:11434/v1");
        assert!(!s.applies("openai", cloud, Some("c1")));
        assert!(s.applies("openai", cloud, Some("c2")));
        assert!(!s.applies("ollama", here, Some("c2")));
        let mut marked = s.clone();
        marked.local_hosts.insert(" GPU-Box.LAN. ".into());
        assert_eq!(
            save(dir.path(), marked.clone()).unwrap().local_hosts,
            BTreeSet::from(["gpu-box.lan".to_owned()])
        );
        for bad in ["http://gpu-box.lan", "gpu-box.lan:11434", "a b", ""] {
            marked.local_hosts = BTreeSet::from([bad.to_owned()]);
            assert!(save(dir.path(), marked.clone()).is_err(), "{bad}");
        }
        s.patterns.push("(unclosed".into());
        assert!(save(dir.path(), s).is_err());
        std::fs::write(dir.path().join(FILE_NAME), b"{not json").unwrap();
        assert!(load(dir.path()).enabled);
    }

    /// RD-02: "local, nothing redacted" follows the endpoint. A local runtime's kind on another
    /// machine's address is redacted; on loopback or an address the person marked, it is not;
    /// a cloud kind is redacted wherever it points (a loopback proxy forwards to its vendor).
    #[test]
    fn the_endpoint_decides_what_is_local() {
        let mut s = RedactionSettings::default();
        s.local_hosts.insert("gpu-box.lan".into());
        for (kind, url, redacted) in [
            ("ollama", Some("http://127.0.0.1:11434/v1"), false),
            ("ollama", Some("http://localhost:11434/v1"), false),
            ("lmstudio", Some("http://[::1]:1234/v1"), false),
            ("ollama", Some("http://gpu-box.lan:11434/v1"), false),
            ("ollama", Some("https://ollama.example.com/v1"), true),
            ("ollama", Some("http://10.1.2.3:11434/v1"), true),
            ("lmstudio", Some("https://models.example.net/v1"), true),
            ("vllm", Some("http://localhost.example.com:8000/v1"), true),
            ("ollama", None, true),
            ("openai", Some("http://127.0.0.1:4000/v1"), true),
            ("custom", Some("http://127.0.0.1:4000/v1"), true),
            ("anthropic", Some("https://api.anthropic.com"), true),
        ] {
            assert_eq!(s.applies(kind, url, None), redacted, "{kind} at {url:?}");
        }
    }
}
