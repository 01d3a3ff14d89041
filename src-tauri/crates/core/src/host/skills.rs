//! A server's skills (`io.modelcontextprotocol/skills`, SEP-2640) in the host: listed lazily,
//! approved by manifest, read only when used and only verified.
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
//!   only after [`crate::mcp::skills::accept`] verified it: size and digest against the
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

use super::{CallOptions, Host, HostError};
use crate::approval::audit::{AuditContext, AuditEvent, PinChange};
use crate::approval::pins::canonical_json;
use crate::approval::policy::Origin;
use crate::ids::ServerId;
use crate::mcp::skills::{accept, before_read, SkillContent, SkillEntry, SkillError};

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

impl Host {
    /// The skills of every running server that offers some, by server; a server whose listing
    /// failed is given with its error.
    pub async fn all_skills(
        &self,
    ) -> Result<Vec<(ServerId, Result<Vec<SkillView>, SkillHostError>)>, SkillHostError> {
        let mut out = Vec::new();
        for c in self.catalogs().await? {
            let offers = self
                .running(&c.server)
                .ok()
                .and_then(|h| h.connection().ok())
                .is_some_and(|conn| conn.offers_skills());
            if offers {
                let listed = self.skills(&c.server).await;
                out.push((c.server.clone(), listed));
            }
        }
        Ok(out)
    }

    /// The skills of a running server (manifests only; nothing is read), with their standing.
    pub async fn skills(&self, server: &ServerId) -> Result<Vec<SkillView>, SkillHostError> {
        let conn = self
            .running(server)?
            .connection()
            .map_err(HostError::from)?;
        let listed = conn.list_skills().await.map_err(HostError::from)?;
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

    /// One skill of a running server, by name or `SKILL.md` URI.
    pub async fn skill(&self, server: &ServerId, name: &str) -> Result<SkillView, SkillHostError> {
        self.skills(server)
            .await?
            .into_iter()
            .find(|s| s.entry.name() == name || s.entry.uri == name)
            .ok_or_else(|| {
                SkillError::Unknown {
                    name: name.to_owned(),
                }
                .into()
            })
    }

    /// Approves a skill as it is now. `reviewed`, when given, is the fingerprint the person
    /// looked at; a skill that changed since is refused with [`SkillHostError::Stale`].
    pub async fn approve_skill(
        &self,
        server: &ServerId,
        name: &str,
        reviewed: Option<&str>,
    ) -> Result<SkillView, SkillHostError> {
        let view = self.skill(server, name).await?;
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
        self.audit_all(vec![(
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

    /// Loads an approved skill for use: its `SKILL.md` read through the seam and verified.
    /// `origin` says who uses it ([`Origin::Attach`] for a conversation).
    pub async fn read_skill(
        &self,
        server: &ServerId,
        name: &str,
        origin: Origin,
        opts: CallOptions,
    ) -> Result<LoadedSkill, SkillHostError> {
        let view = self.usable_skill(server, name).await?;
        let uri = view.entry.uri.clone();
        let skill_md = self.verified_read(&view, &uri, origin, opts).await?;
        let files = view
            .entry
            .listed()
            .unwrap_or_default()
            .iter()
            .map(|f| f.uri.clone())
            .filter(|u| *u != uri)
            .collect();
        Ok(LoadedSkill {
            server: server.clone(),
            entry: view.entry,
            skill_md,
            files,
        })
    }

    /// Reads one file of an approved skill (a path inside it, or its URI), verified.
    pub async fn read_skill_file(
        &self,
        server: &ServerId,
        name: &str,
        path: &str,
        origin: Origin,
        opts: CallOptions,
    ) -> Result<SkillContent, SkillHostError> {
        let view = self.usable_skill(server, name).await?;
        let uri = view.entry.resolve(path);
        self.verified_read(&view, &uri, origin, opts).await
    }

    /// The skill, if it may be used: valid and approved as it is.
    async fn usable_skill(
        &self,
        server: &ServerId,
        name: &str,
    ) -> Result<SkillView, SkillHostError> {
        let view = self.skill(server, name).await?;
        view.entry.validate()?;
        if view.state != SkillState::Approved {
            return Err(SkillHostError::Held {
                server: server.clone(),
                name: view.entry.name().to_owned(),
                state: view.state,
            });
        }
        Ok(view)
    }

    async fn verified_read(
        &self,
        view: &SkillView,
        uri: &str,
        origin: Origin,
        opts: CallOptions,
    ) -> Result<SkillContent, SkillHostError> {
        let file = before_read(&view.entry, uri)?;
        let contents = self.read_resource(&view.server, uri, origin, opts).await?;
        Ok(accept(&view.entry, uri, file, &contents)?)
    }

    fn approvals_path(&self) -> PathBuf {
        self.inner.data_dir.join("skill-approvals.json")
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
