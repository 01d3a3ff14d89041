//! The host's side of the skills feature ([`crate::skills`]): listing a running server's skills
//! through its connection and reading them through the governed resource read (policy, audit,
//! the run's cancel), with the feature deciding what is approved and verifying what is read.

use super::{CallOptions, Host, HostError};
use crate::approval::policy::Origin;
use crate::ids::ServerId;
use crate::skill_data::{SkillContent, SkillError};
use crate::skills::{LoadedSkill, SkillHostError, SkillView, Skills};

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
        self.inner.features.skills.views(server, listed)
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
        self.inner
            .features
            .skills
            .approve(view, name, reviewed)
            .await
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
        Skills::usable(self.skill(server, name).await?)
    }

    async fn verified_read(
        &self,
        view: &SkillView,
        uri: &str,
        origin: Origin,
        opts: CallOptions,
    ) -> Result<SkillContent, SkillHostError> {
        let read = self.read_resource(&view.server, uri, origin, opts);
        Skills::verified_read(view, uri, read).await
    }
}
