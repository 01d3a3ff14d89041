//! A server's skills (`io.modelcontextprotocol/skills`, SEP-2640): listed lazily, approved by
//! manifest, read only when used and only verified.
//!
//! A feature of its own (issue 26): [`Skills`] owns the approvals file and decides, from a
//! server's listed entries, what state each skill is in and whether it may be read; it records
//! approvals through the audit [`Recorder`]. Listing (a running server's connection) and reading
//! (the governed resource read) are the host's, which composes them with this module: the
//! `Host::` methods named below live in `host/skills.rs`.
//!
//! - [`Host::skills`] lists a running server's skills: manifests only, nothing is read.
//! - Each skill is compared with what the person approved of it: a *fingerprint*, the SHA-256
//!   over the canonical JSON of its whole entry (URI, frontmatter, and every file with its
//!   digest and size), so an approval covers exactly the files the person saw listed. A skill
//!   never approved is [`SkillState::New`]; one whose entry differs is [`SkillState::Changed`]
//!   and held for review like a changed tool: [`Host::read_skill`] refuses both with
//!   [`SkillHostError::Held`] until [`Host::approve_skill`] is given the fingerprint the person
//!   reviewed (an approval of a skill that changed in between is refused).
//! - [`Host::read_skill`] (the `SKILL.md`) and [`Host::read_skill_file`] (any other file) read
//!   through the governed resource read (policy, audit, the run's cancel) and return content
//!   only after [`crate::skill_data::accept`] verified it: size and digest against the
//!   manifest, and the `SKILL.md`'s frontmatter against the entry's.
//!
//! Approvals are kept in `<data dir>/skill-approvals.json` (written whole, through a temporary
//! file and a rename), keyed by server and skill URI, each with the approved entry so a review
//! can show what changed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use std::sync::Arc;

use crate::approval::audit::{AuditContext, AuditEvent, PinChange, Recorder};
use crate::approval::pins::canonical_json;
use crate::catalog::ResourceContents;
use crate::error::HostError;
use crate::ids::ServerId;
use crate::skill_data::{accept, before_read, SkillContent, SkillEntry, SkillError};

/// Where a skill stands with the person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillState {
    /// Approved as it is now.
    Approved,
    /// Never approved: held until it is.
    New,
    /// Approved once, but its entry changed since: held until reviewed again.
    Changed,
}

/// One skill of a server, with its standing.
#[derive(Clone, Debug, Serialize)]
pub struct SkillView {
    /// The server.
    pub server: ServerId,
    /// The entry as the server lists it now (untrusted text).
    pub entry: SkillEntry,
    /// The fingerprint of `entry`: what an approval of it names.
    pub fingerprint: String,
    /// Approved, new or changed.
    pub state: SkillState,
    /// The entry as approved, when it changed since.
    pub approved: Option<SkillEntry>,
    /// Why the entry cannot be used at all, whatever the approval (it breaks the spec's rules).
    pub invalid: Option<String>,
}

/// A skill loaded for use: its `SKILL.md`, verified, and the other files it lists (not read).
#[derive(Clone, Debug, Serialize)]
pub struct LoadedSkill {
    /// The server.
    pub server: ServerId,
    /// Its entry.
    pub entry: SkillEntry,
    /// The `SKILL.md`, verified.
    pub skill_md: SkillContent,
    /// The other files' URIs, read only when asked for.
    pub files: Vec<String>,
}

/// Why a skill operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillHostError {
    /// The host's own failure (the server not running, a request that failed, a refusal).
    #[error(transparent)]
    Host(#[from] HostError),
    /// The skill or a file of it failed verification, or is not offered.
    #[error(transparent)]
    Skill(#[from] SkillError),
    /// The skill waits for the person's review.
    #[error("the skill {name} of {server} is held for review ({}): approve it with `switchboard skill approve {server} {name}` after looking at it", match .state { SkillState::Changed => "it changed since it was approved", _ => "it was never approved" })]
    Held {
        /// The server.
        server: ServerId,
        /// The skill's name.
        name: String,
        /// New or changed.
        state: SkillState,
    },
    /// The approval named a fingerprint that is not the skill's current one.
    #[error("the skill {name} changed while it was being reviewed; look at it again")]
    Stale {
        /// The skill's name.
        name: String,
    },
    /// The approvals file could not be read or written.
    #[error("the skill approvals in {path} could not be {action}: {reason}")]
    Approvals {
        /// The file.
        path: String,
        /// `read` or `written`.
        action: &'static str,
        /// Why.
        reason: String,
    },
}

/// The approvals file: server -> skill URI -> approved entry.
type Approvals = BTreeMap<String, BTreeMap<String, SkillEntry>>;

/// The fingerprint of an entry.
pub fn fingerprint(entry: &SkillEntry) -> String {
    let v = serde_json::to_value(entry).unwrap_or(Value::Null);
    hex::encode(Sha256::digest(canonical_json(&v).as_bytes()))
}

impl SkillView {
    /// What differs between the approved entry and the current one, a line per frontmatter
    /// field or file (empty unless the skill changed). Server text, unescaped.
    pub fn changes(&self) -> Vec<String> {
        let Some(old) = &self.approved else {
            return Vec::new();
        };
        let new = &self.entry;
        let mut out = Vec::new();
        let mut keys: Vec<&String> = old
            .frontmatter
            .keys()
            .chain(new.frontmatter.keys())
            .collect();
        keys.sort();
        keys.dedup();
        let show = |v: Option<&Value>| v.map_or_else(|| "(none)".to_owned(), Value::to_string);
        for k in keys {
            let (b, a) = (old.frontmatter.get(k), new.frontmatter.get(k));
            if b != a {
                out.push(format!("frontmatter {k}: {} -> {}", show(b), show(a)));
            }
        }
        let (before, after) = (
            old.listed().unwrap_or_default(),
            new.listed().unwrap_or_default(),
        );
        for f in after {
            match before.iter().find(|o| o.uri == f.uri) {
                None => out.push(format!("file added: {}", f.uri)),
                Some(o) if o != f => out.push(format!(
                    "file changed: {} ({} -> {} bytes)",
                    f.uri, o.size, f.size
                )),
                Some(_) => {}
            }
        }
        for o in before
            .iter()
            .filter(|o| !after.iter().any(|f| f.uri == o.uri))
        {
            out.push(format!("file removed: {}", o.uri));
        }
        if old.listed().is_some() != new.listed().is_some() {
            out.push("the skill switched between a manifest and \"dynamic\"".into());
        }
        out
    }
}

/// The skills feature: the person's approvals and what they allow to be read.
pub struct Skills {
    data_dir: PathBuf,
    audit: Arc<dyn Recorder>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills").finish_non_exhaustive()
    }
}

impl Skills {
    /// The feature over the host's handles.
    pub(crate) fn new(data_dir: PathBuf, audit: Arc<dyn Recorder>) -> Self {
        Self { data_dir, audit }
    }

    /// What `server` lists, each compared with what the person approved of it.
    pub fn views(
        &self,
        server: &ServerId,
        listed: Vec<SkillEntry>,
    ) -> Result<Vec<SkillView>, SkillHostError> {
        let approvals = self.skill_approvals()?;
        let mine = approvals.get(server.as_str());
        Ok(listed
            .into_iter()
            .map(|entry| {
                let approved = mine.and_then(|m| m.get(&entry.uri));
                let fp = fingerprint(&entry);
                let state = match approved {
                    None => SkillState::New,
                    Some(a) if fingerprint(a) == fp => SkillState::Approved,
                    Some(_) => SkillState::Changed,
                };
                SkillView {
                    server: server.clone(),
                    invalid: entry.validate().err().map(|e| e.to_string()),
                    approved: approved.filter(|_| state == SkillState::Changed).cloned(),
                    fingerprint: fp,
                    state,
                    entry,
                }
            })
            .collect())
    }

    /// Approves a skill as it is now. `reviewed`, when given, is the fingerprint the person
    /// looked at; a skill that changed since is refused with [`SkillHostError::Stale`].
    pub async fn approve(
        &self,
        view: SkillView,
        name: &str,
        reviewed: Option<&str>,
    ) -> Result<SkillView, SkillHostError> {
        let server = view.server.clone();
        if reviewed.is_some_and(|r| r != view.fingerprint) {
            return Err(SkillHostError::Stale {
                name: name.to_owned(),
            });
        }
        view.entry.validate()?;
        let mut all = self.skill_approvals()?;
        all.entry(server.as_str().to_owned())
            .or_default()
            .insert(view.entry.uri.clone(), view.entry.clone());
        self.save_skill_approvals(&all)?;
        // Recorded like a tool's approved pin: the skill's fingerprint now and before.
        let previous = view.approved.as_ref().map(fingerprint);
        self.audit
            .record(vec![(
                AuditEvent::Pin {
                    change: PinChange::Approved,
                    digest: view.fingerprint.clone(),
                    previous,
                },
                AuditContext {
                    server: Some(server.clone()),
                    tool: Some(std::sync::Arc::from(format!("skill {name}"))),
                    ..AuditContext::default()
                },
            )])
            .await;
        Ok(SkillView {
            state: SkillState::Approved,
            approved: None,
            ..view
        })
    }

    /// `view` when it may be read: valid and approved as it is now.
    pub fn usable(view: SkillView) -> Result<SkillView, SkillHostError> {
        view.entry.validate()?;
        if view.state != SkillState::Approved {
            return Err(SkillHostError::Held {
                server: view.server.clone(),
                name: view.entry.name().to_owned(),
                state: view.state,
            });
        }
        Ok(view)
    }

    /// Checks that `uri` may be read for `view`, reads it with `read` (the governed resource
    /// read) and returns its content only once verified against the manifest.
    pub async fn verified_read<F>(
        view: &SkillView,
        uri: &str,
        read: F,
    ) -> Result<SkillContent, SkillHostError>
    where
        F: std::future::Future<Output = Result<Vec<ResourceContents>, HostError>>,
    {
        let file = before_read(&view.entry, uri)?;
        let contents = read.await?;
        Ok(accept(&view.entry, uri, file, &contents)?)
    }

    fn approvals_path(&self) -> PathBuf {
        self.data_dir.join("skill-approvals.json")
    }

    fn skill_approvals(&self) -> Result<Approvals, SkillHostError> {
        let path = self.approvals_path();
        let failed = |reason: String| SkillHostError::Approvals {
            path: path.display().to_string(),
            action: "read",
            reason,
        };
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| failed(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Approvals::new()),
            Err(e) => Err(failed(e.to_string())),
        }
    }

    fn save_skill_approvals(&self, all: &Approvals) -> Result<(), SkillHostError> {
        let path = self.approvals_path();
        let failed = |reason: String| SkillHostError::Approvals {
            path: path.display().to_string(),
            action: "written",
            reason,
        };
        let bytes = serde_json::to_vec_pretty(all).map_err(|e| failed(e.to_string()))?;
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(|e| failed(e.to_string()))?;
        std::fs::rename(&tmp, &path).map_err(|e| failed(e.to_string()))
    }
}
