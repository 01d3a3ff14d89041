//! Servers proposed by `switchboard://` links (SP-01): shown, then added only on approval.
//!
//! A proposed server is not saved until the person approves it. A link arrives from a web
//! page, unasked; saving it "unapproved" would let any page put entries in a person's server
//! list (and names in their keyring prompts) with one click, and Cancel would leave something
//! behind to clean up. So the proposal lives in the dialog only, and approval adds and trusts
//! it in one step, for exactly the plan the person saw (its fingerprint). The link is parsed
//! again at approval, so what is added is what the link says, never what the window sent.

use serde::Serialize;

use super::servers::AddOptions;
use super::trust::{resolve, TrustState, TrustView};
use super::{Host, HostError};
use crate::config::launch::Fingerprint;
use crate::config::link::{parse_link, LinkError, LinkProposal};
use crate::ids::ServerId;
use crate::redact::Secret;

/// What the dialog shows for a link: the proposed server under the name it would get, its
/// plan, and the values the person is asked for.
#[derive(Clone, Debug, Serialize)]
pub struct LinkView {
    /// The plan as the trust dialog shows it; `state` is always not approved.
    pub trust: TrustView,
    /// The name the link asked for, when it is taken and the server would get another one.
    pub renamed_from: Option<ServerId>,
    /// The env vars or headers whose values the person types (they go to the keyring).
    pub asked: Vec<String>,
    /// Whether it is a remote server.
    pub remote: bool,
}

impl From<LinkError> for HostError {
    fn from(e: LinkError) -> Self {
        Self::Invalid(e.to_string())
    }
}

impl Host {
    /// Reads `link` and works out what approving it would run. Stores nothing, starts nothing.
    pub async fn propose_link(&self, link: &str) -> Result<LinkView, HostError> {
        let (proposal, renamed_from) = self.named_proposal(link).await?;
        let plan = resolve(&self.inner, &proposal.spec)
            .await
            .map_err(|e| HostError::Launch {
                server: proposal.spec.id.clone(),
                reason: e.to_string(),
            })?;
        Ok(LinkView {
            remote: matches!(
                proposal.spec.transport,
                crate::config::TransportSpec::Http(_)
            ),
            trust: TrustView {
                server: proposal.spec.id.clone(),
                lines: plan.consent_lines(),
                warnings: plan.warnings(),
                fingerprint: plan.fingerprint(),
                plan,
                state: TrustState::NotApproved,
            },
            renamed_from,
            asked: proposal.asked,
        })
    }

    /// Adds the server `link` proposes and approves its plan, which must have `fingerprint`
    /// (the one [`Host::propose_link`] showed). `secrets` are the values typed for asked
    /// fields; a field the link did not ask for is refused. Returns the server's name. Does
    /// not start it. If anything fails, nothing is left behind.
    pub async fn add_from_link(
        &self,
        link: &str,
        secrets: Vec<(String, Secret)>,
        fingerprint: &Fingerprint,
    ) -> Result<ServerId, HostError> {
        let (proposal, _) = self.named_proposal(link).await?;
        if let Some((field, _)) = secrets.iter().find(|(f, _)| !proposal.asked.contains(f)) {
            return Err(HostError::Invalid(format!(
                "the link does not ask for {}",
                crate::escape::short_for_display(field, 64)
            )));
        }
        let id = proposal.spec.id.clone();
        let plan = resolve(&self.inner, &proposal.spec)
            .await
            .map_err(|e| HostError::Launch {
                server: id.clone(),
                reason: e.to_string(),
            })?;
        if &plan.fingerprint() != fingerprint {
            return Err(HostError::TrustRace(id));
        }
        self.add_server_with(
            proposal.spec,
            AddOptions {
                secrets,
                replace_secrets: false,
            },
        )
        .await?;
        if let Err(e) = self.trust_server(&id, fingerprint).await {
            // Approval is what the person asked for; without it, take the server away again.
            if let Err(undo) = self.remove_server(&id).await {
                tracing::warn!(server = %id, error = %undo, "could not remove a server whose approval failed");
            }
            return Err(e);
        }
        tracing::info!(server = %id, "server added from a link");
        Ok(id)
    }

    /// The link's proposal under a free name (`name-2`... when the name is taken).
    async fn named_proposal(
        &self,
        link: &str,
    ) -> Result<(LinkProposal, Option<ServerId>), HostError> {
        let mut proposal = parse_link(link)?;
        let taken: Vec<String> = self
            .inner
            .store
            .list_servers()
            .await?
            .into_iter()
            .map(|s| s.id.as_str().to_ascii_lowercase())
            .collect();
        let wanted = proposal.spec.id.clone();
        if !taken.contains(&wanted.as_str().to_ascii_lowercase()) {
            return Ok((proposal, None));
        }
        let free = (2..1000)
            .filter_map(|n| ServerId::new(format!("{wanted}-{n}")).ok())
            .find(|c| !taken.contains(&c.as_str().to_ascii_lowercase()))
            .ok_or_else(|| HostError::ServerExists(wanted.clone()))?;
        proposal.spec.id = free;
        Ok((proposal, Some(wanted)))
    }
}
