//! The person's redaction settings: on or off, their own patterns, and the conversations it is
//! switched off for, in `<data dir>/redaction.json`.
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
}

impl Default for RedactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            patterns: Vec::new(),
            off_for: BTreeSet::new(),
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
        Ok(self)
    }

    /// Whether requests of `conversation` (when known) to a provider of `profile_id` are
    /// redacted.
    pub fn applies(&self, profile_id: &str, conversation: Option<&str>) -> bool {
        self.enabled
            && super::applies_to(profile_id)
            && conversation.is_none_or(|c| !self.off_for.contains(c))
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
        assert!(!s.applies("openai", Some("c1")));
        assert!(s.applies("openai", Some("c2")));
        assert!(!s.applies("ollama", Some("c2")));
        s.patterns.push("(unclosed".into());
        assert!(save(dir.path(), s).is_err());
        std::fs::write(dir.path().join(FILE_NAME), b"{not json").unwrap();
        assert!(load(dir.path()).enabled);
    }
}
