//! The Skills extension's requests (SEP-2640): `skills/list` (every page, under a page cap)
//! and `skills/get`, answered in our own types ([`SkillEntry`]); a skill's files are plain
//! `resources/read`s ([`Connection::read_resource`]), verified by the caller with
//! [`crate::skill_data`]. Nothing here reads a file unasked: listing gives manifests only.
//!
//! rmcp's typed client methods do the sending (they refuse, without a round trip, a server
//! that did not declare the extension); each request is held to the connection's default
//! timeout and fails promptly when the session ends. A request given up on is cancelled on
//! the wire by rmcp when its future is dropped.

use std::future::Future;

use rmcp::model::{GetSkillRequestParams, PaginatedRequestParams};
use rmcp::ServiceError;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::wire::map_service_error;
use super::Connection;
use crate::mcp::McpError;
use crate::skill_data::{SkillEntry, MAX_SKILLS};

/// The most `skills/list` pages we follow before deciding the server loops.
const MAX_PAGES: usize = 1000;

impl Connection {
    /// Whether the server declared the skills extension.
    pub fn offers_skills(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|i| i.capabilities.supports_skills())
    }

    /// Every skill the server lists, all pages (manifests only; no file is read).
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, McpError> {
        if !self.offers_skills() {
            return Ok(Vec::new());
        }
        let mut out: Vec<SkillEntry> = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params = PaginatedRequestParams::default();
            params.cursor = cursor.clone();
            let page = self.bounded(self.peer.list_skills(Some(params))).await?;
            out.extend(ours::<_, Vec<SkillEntry>>("skills/list", &page.skills)?);
            if out.len() > MAX_SKILLS {
                return Err(McpError::Protocol(format!(
                    "the server lists more than {MAX_SKILLS} skills"
                )));
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() && Some(&next) != cursor.as_ref() => {
                    cursor = Some(next);
                }
                _ => return Ok(out),
            }
        }
        Err(McpError::Protocol(format!(
            "skills/list kept returning more pages after {MAX_PAGES}; the server seems to loop"
        )))
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`).
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, McpError> {
        if !self.offers_skills() {
            return Err(McpError::Protocol(
                "the server does not offer skills (io.modelcontextprotocol/skills)".into(),
            ));
        }
        let r = self
            .bounded(
                self.peer
                    .get_skill(GetSkillRequestParams::new(uri.to_owned())),
            )
            .await?;
        ours("skills/get", &r.skill)
    }

    /// `fut` within the default timeout, failing promptly when the session ends.
    async fn bounded<T>(
        &self,
        fut: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        if self.is_closed() {
            return Err(McpError::Disconnected(self.closed().await));
        }
        let timeout = self.default_timeout;
        tokio::select! {
            r = tokio::time::timeout(timeout, fut) => match r {
                Ok(r) => r.map_err(|e| map_service_error(e, timeout)),
                Err(_) => Err(McpError::Timeout(timeout)),
            },
            why = self.closed() => Err(McpError::Disconnected(why)),
        }
    }
}

/// An rmcp value in our type, through its JSON.
fn ours<S: Serialize, T: DeserializeOwned>(what: &str, v: &S) -> Result<T, McpError> {
    serde_json::to_value(v)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            McpError::Protocol(format!(
                "the server's {what} answer does not have the expected shape: {e}"
            ))
        })
}
