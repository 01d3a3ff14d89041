//! MCP Skills (`io.modelcontextprotocol/skills`, SEP-2640) as our own types, and the checks a
//! host owes them before anything of a skill is used.
//!
//! A skill is a directory of files served as resources: `skills/list` and `skills/get` give its
//! *entry* (the `SKILL.md` URI, the frontmatter, and a manifest of every file with its size and
//! `sha256:` digest), `resources/read` gives the bytes. The spec asks hosts to fetch nothing
//! ahead of need, and to verify what they fetch against the entry before using it:
//! - [`SkillEntry::validate`]: the entry itself (the URI ends in `/<name>/SKILL.md` and the name
//!   is the frontmatter's, every file lies inside the skill's directory, digests are well formed,
//!   and the skill stays within [`MAX_FILES`] and [`MAX_TOTAL_BYTES`]), checked before any read;
//! - [`verify_file`]: a file's bytes against its manifest entry, the size first (a wrong length
//!   is a failure on its own, equivalent to a digest mismatch), then the digest;
//! - [`check_frontmatter`]: the `SKILL.md` fetched is parsed and its frontmatter compared with
//!   the entry's field by field; any difference refuses the skill.
//!
//! A failure is a [`SkillError`] naming what did not match; the content that failed is never
//! returned. Server text in messages goes through [`ServerText`].
//!
//! A leaf (it was `mcp::skills`): `mcp::connection` lists skills in these types and the `skills`
//! feature checks reads with them, so it sits below both and depends on neither.

mod frontmatter;
mod verify;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::escape::ServerText;

pub use self::frontmatter::parse_frontmatter;
pub use self::verify::{accept, before_read, check_frontmatter, content_bytes, verify_file};

/// The extension's identifier in capabilities.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";
/// The most files one skill may list (the spec's publication limit).
pub const MAX_FILES: usize = 512;
/// The most bytes one skill's files may add up to (16 MiB, the spec's publication limit).
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// The most skills we keep from one server's listing.
pub const MAX_SKILLS: usize = 10_000;
/// A skill's entry point, the last segment of its URI.
pub const SKILL_MD: &str = "SKILL.md";

/// One file of a skill as its manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// Its resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex characters, over the file's bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A skill's files: a manifest, or `"dynamic"` (content that changes, with no stable digests).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillFiles {
    /// Every file with its digest and size.
    Listed(Vec<SkillFile>),
    /// The string `"dynamic"`.
    Dynamic(DynamicMarker),
}

/// The `"dynamic"` marker (any other string is refused when read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DynamicMarker {
    /// `"dynamic"`.
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// One skill as `skills/list` or `skills/get` gives it (untrusted server data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// The frontmatter of its `SKILL.md` as the server states it (`name`, `description`, ...).
    pub frontmatter: Map<String, Value>,
    /// Its files.
    #[serde(rename = "resources")]
    pub files: SkillFiles,
}

/// A file of a skill, read and verified against the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillContent {
    /// The file's URI.
    pub uri: String,
    /// Its MIME type, as the server gave it.
    pub mime_type: Option<String>,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Whether it was checked against a digest (not for `"dynamic"` skills, which have none).
    pub verified: bool,
}

impl SkillContent {
    /// The content as text, if it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// Why a skill or one of its files was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The entry breaks a rule of the spec; nothing of it is read.
    #[error("the skill {} is not valid: {reason}", ServerText(.uri))]
    Invalid {
        /// The skill's URI.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// The skill is larger than a host accepts.
    #[error("the skill {} lists {files} files and {bytes} bytes; at most {MAX_FILES} files and {MAX_TOTAL_BYTES} bytes are accepted", ServerText(.uri))]
    TooLarge {
        /// The skill's URI.
        uri: String,
        /// Files listed.
        files: usize,
        /// Bytes listed.
        bytes: u64,
    },
    /// The server offers no skill of that name or URI.
    #[error("the server offers no skill {}", ServerText(.name))]
    Unknown {
        /// The name or URI asked for.
        name: String,
    },
    /// The file is not in the skill's manifest, so it cannot be verified.
    #[error("{} is not one of the files of the skill {}", ServerText(.uri), ServerText(.skill))]
    NotListed {
        /// The skill's URI.
        skill: String,
        /// The file asked for.
        uri: String,
    },
    /// The bytes read are not as long as the manifest says.
    #[error("{} is {actual} bytes, but the skill's manifest says {expected}; it was not used", ServerText(.uri))]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The manifest's size.
        expected: u64,
        /// The size read.
        actual: u64,
    },
    /// The bytes read do not have the manifest's digest.
    #[error("{} has digest {actual}, but the skill's manifest says {}; it was not used", ServerText(.uri), ServerText(.expected))]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The manifest's digest.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The `SKILL.md` read has no frontmatter we can read, or one that differs from the entry.
    #[error("the frontmatter of {} does not match the skill's entry: {detail}; the skill was not loaded", ServerText(.uri))]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What differs (server text, escaped).
        detail: String,
    },
    /// The read returned nothing usable for the file.
    #[error("reading {} returned no content: {reason}", ServerText(.uri))]
    NoContent {
        /// The file.
        uri: String,
        /// Why.
        reason: String,
    },
}

impl SkillEntry {
    /// The frontmatter's `name` (empty when missing).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The frontmatter's `description` (empty when missing).
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The manifest, or `None` for a dynamic skill.
    pub fn listed(&self) -> Option<&[SkillFile]> {
        match &self.files {
            SkillFiles::Listed(f) => Some(f),
            SkillFiles::Dynamic(_) => None,
        }
    }

    /// The directory of the skill: its URI without `SKILL.md` (ends in `/`).
    pub fn root(&self) -> &str {
        self.uri.strip_suffix(SKILL_MD).unwrap_or(&self.uri)
    }

    /// The manifest entry of `uri`, if listed.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.listed()?.iter().find(|f| f.uri == uri)
    }

    /// The URI of a file given by its path inside the skill (`references/FORMS.md`), or as a
    /// full URI.
    pub fn resolve(&self, path_or_uri: &str) -> String {
        if path_or_uri.contains("://") {
            path_or_uri.to_owned()
        } else {
            format!("{}{}", self.root(), path_or_uri.trim_start_matches('/'))
        }
    }

    /// Checks the entry against the spec's rules and our limits, before anything is read.
    pub fn validate(&self) -> Result<(), SkillError> {
        let invalid = |reason: String| SkillError::Invalid {
            uri: self.uri.clone(),
            reason,
        };
        if self.uri.contains(['?', '#']) || !self.uri.contains("://") {
            return Err(invalid("its URI is not a plain resource URI".into()));
        }
        let Some(segment) = self
            .uri
            .strip_suffix(SKILL_MD)
            .and_then(|p| p.strip_suffix('/'))
            .and_then(|p| p.rsplit('/').next())
            .filter(|s| !s.is_empty() && !s.ends_with(':'))
        else {
            return Err(invalid("its URI does not end in /<name>/SKILL.md".into()));
        };
        for field in ["name", "description"] {
            let present = self
                .frontmatter
                .get(field)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty());
            if !present {
                return Err(invalid(format!("its frontmatter has no {field}")));
            }
        }
        let name = self.name();
        if !valid_name(name) {
            return Err(invalid(format!(
                "the name {} breaks the naming rules (1-64 lowercase letters, digits and single inner hyphens)",
                ServerText(name)
            )));
        }
        if percent_decode(segment).as_deref() != Some(name) {
            return Err(invalid(format!(
                "its URI names {} but its frontmatter names {}",
                ServerText(segment),
                ServerText(name)
            )));
        }
        let Some(files) = self.listed() else {
            return Ok(());
        };
        let bytes: u64 = files.iter().map(|f| f.size).fold(0, u64::saturating_add);
        if files.len() > MAX_FILES || bytes > MAX_TOTAL_BYTES {
            return Err(SkillError::TooLarge {
                uri: self.uri.clone(),
                files: files.len(),
                bytes,
            });
        }
        if self.file(&self.uri).is_none() {
            return Err(invalid(
                "its manifest does not list its own SKILL.md".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for f in files {
            if !inside(self.root(), &f.uri) {
                return Err(invalid(format!(
                    "the file {} lies outside the skill's directory",
                    ServerText(&f.uri)
                )));
            }
            if !is_digest(&f.digest) {
                return Err(invalid(format!(
                    "the file {} has a malformed digest",
                    ServerText(&f.uri)
                )));
            }
            if !seen.insert(f.uri.as_str()) {
                return Err(invalid(format!(
                    "the file {} is listed twice",
                    ServerText(&f.uri)
                )));
            }
        }
        Ok(())
    }
}

/// The spec's digest of `bytes`: `sha256:` and the lowercase hex SHA-256.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Whether `d` is `sha256:` and 64 lowercase hex characters.
pub fn is_digest(d: &str) -> bool {
    d.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// The Agent Skills naming rules: 1-64 characters, lowercase letters and digits, single
/// hyphens between them.
fn valid_name(name: &str) -> bool {
    let n = name.chars().count();
    (1..=64).contains(&n)
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .chars()
            .all(|c| c == '-' || (c.is_alphanumeric() && !c.is_uppercase()))
}

/// Whether `uri` names a file inside the directory `root` (which ends in `/`): no dot segments,
/// no empty last segment, no query or fragment.
pub(super) fn inside(root: &str, uri: &str) -> bool {
    let Some(rel) = uri.strip_prefix(root) else {
        return false;
    };
    !rel.is_empty()
        && !rel.contains(['?', '#', '\\'])
        && rel.split('/').all(|s| {
            let s = percent_decode(s).unwrap_or_default();
            !s.is_empty() && s != "." && s != ".." && !s.contains('/')
        })
}

/// `%XX` escapes decoded, or `None` if malformed or not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests;
