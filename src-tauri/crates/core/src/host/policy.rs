//! The approval policy in the host: rules and grants from the store, the context [`decide`]
//! needs (server tags, the tool's digest, counts of limited rules, the conversation's data
//! flow), and the policy's own management (add, remove, export, import, grants, tags).
//!
//! [`decide`] stays pure; everything it needs is gathered here first, and what it decided is
//! recorded here after (rule hits for limits).
//!
//! Two ways to gather the rules and tags (issue 11):
//! - **from memory** ([`Host::decide_cached`]): the [`PolicyView`] the audit writer read inside
//!   its last write transaction. No I/O and no lock, so parallel calls do not queue on SQLite
//!   reads. Such a decision is only a proposal until the append that records it succeeds:
//!   that append is guarded by the state the view was read at (`store::audit::append`), so it
//!   fails when the policy may have changed since, in this process or another (the CLI and the
//!   app share one data dir), and the caller then decides again from the store. Not used when a
//!   rule has a limit: limits count hits, which must be read and written under the lock;
//! - **from the store** ([`Host::decide_call`], under the policy lock in `run.rs`): reads rules
//!   and tags, and the hit counts of limited rules.

use std::collections::HashMap;

use super::{Host, HostError};
use crate::approval::audit::{Actor, AuditContext, AuditEvent, ConfigChange, GrantChange};
use crate::approval::{
    decide, Call, Condition, Context, Decision, Effect, Flow, On, Origin, Policy, PolicyFile,
    RequestKind, Rule, Scope, Source, GRANT_PREFIX,
};
use crate::ids::{ConversationId, ServerId, ToolRef};
use crate::mcp::catalog::ToolInfo;
use crate::store::{PolicyRows, ServerTag, StoreError};

/// The digest grants are bound to: the pin's digest of the tool's definition (TD-02), so a
/// tool that changed no longer matches the grant made for it (AP-02).
pub use crate::approval::pins::tool_digest;

fn rule_error(e: crate::approval::RuleError) -> HostError {
    HostError::Invalid(e.to_string())
}

/// The policy as the audit writer last read it, decoded, shared read-only with deciding calls.
#[derive(Debug)]
pub(super) struct PolicyView {
    /// Which read this is: a decision made from it is stored only while it is current.
    pub(super) generation: u64,
    /// The rules and grants, in order.
    policy: Policy,
    /// Each server's tags, by server id.
    tags: HashMap<String, Vec<ServerTag>>,
    /// Whether a rule has a limit (then calls are decided from the store).
    limited: bool,
}

impl PolicyView {
    /// Decodes rows read by the writer; `None` when a rule no longer parses (deciding from the
    /// store then reports the same error, so the call is refused).
    pub(super) fn decode(rows: &PolicyRows, generation: u64) -> Option<Self> {
        let rules = match rows.decode_rules() {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "the stored policy does not decode; deciding from the store");
                return None;
            }
        };
        Some(Self {
            generation,
            limited: rules.iter().any(|r| r.limit.is_some()),
            policy: Policy { rules },
            tags: rows.tags_by_server(),
        })
    }
}

impl Host {
    /// Decides a request from the policy in memory, without I/O beyond the conversation's data
    /// flow; returns the view's generation for the append that must confirm it
    /// ([`Host::audit_decided`]). `None`: there is no view yet, or a rule has a limit; decide
    /// from the store.
    pub(super) async fn decide_cached(
        &self,
        call: &Call<'_>,
        info: Option<&ToolInfo>,
    ) -> Result<Option<(Decision, u64)>, HostError> {
        let Some(view) = self.inner.audit.policy() else {
            return Ok(None);
        };
        if view.limited {
            return Ok(None);
        }
        let tags = view
            .tags
            .get(call.server.as_str())
            .map_or(&[][..], Vec::as_slice);
        let decision = self
            .decide_with(&view.policy, tags, HashMap::new(), call, info)
            .await?;
        Ok(Some((decision, view.generation)))
    }

    /// Decides a request: gathers the context from the store and runs the policy. The flag
    /// says whether an allowing rule has a limit (so its hit must be counted).
    pub(super) async fn decide_call(
        &self,
        call: &Call<'_>,
        info: Option<&ToolInfo>,
    ) -> Result<(Decision, bool), HostError> {
        self.decide_call_counting(call, info, &HashMap::new()).await
    }

    /// [`Host::decide_call`] as if the limited allow rules in `pending` had also been hit
    /// that many more times: a pipeline's earlier steps, decided before any of them ran.
    pub(super) async fn decide_call_counting(
        &self,
        call: &Call<'_>,
        info: Option<&ToolInfo>,
        pending: &HashMap<String, u32>,
    ) -> Result<(Decision, bool), HostError> {
        let store = &self.inner.store;
        let rules: Vec<Rule> = store
            .policy_rules()
            .await?
            .into_iter()
            .map(|r| r.rule)
            .collect();
        let tags = store.server_tags(call.server).await?;
        let conversation = call.origin.conversation();
        let now = crate::store::now_ms();
        let mut counts = HashMap::new();
        for r in rules.iter().filter(|r| r.effect == Effect::Allow) {
            let Some(limit) = r.limit else { continue };
            let scope = match limit.per.millis() {
                None => (None, Some(conversation.map(ConversationId::as_str))),
                Some(ms) => (Some(now - ms), None),
            };
            let hits = store.count_rule_hits(&r.id, scope.0, scope.1).await?;
            let more = pending.get(&r.id).copied().unwrap_or(0);
            counts.insert(r.id.clone(), hits.saturating_add(more));
        }
        let policy = Policy { rules };
        let decision = self.decide_with(&policy, &tags, counts, call, info).await?;
        let limited = match &decision {
            Decision::Allow { by } => by
                .id()
                .is_some_and(|id| policy.rules.iter().any(|r| r.id == id && r.limit.is_some())),
            _ => false,
        };
        Ok((decision, limited))
    }

    /// Runs the policy on the gathered rules, tags and counts, with the conversation's flow.
    async fn decide_with(
        &self,
        policy: &Policy,
        tags: &[ServerTag],
        counts: HashMap<String, u32>,
        call: &Call<'_>,
        info: Option<&ToolInfo>,
    ) -> Result<Decision, HostError> {
        let conversation = call.origin.conversation();
        let digest = info.map(tool_digest);
        let home = dirs::home_dir();
        let ctx = Context {
            trusted_server: tags.contains(&ServerTag::Trusted),
            tool_digest: digest.as_deref(),
            counts,
            flow: match conversation {
                Some(c) => {
                    let stored = self.flow(c).await?;
                    let live = self.inner.flows().get(c).copied().unwrap_or_default();
                    Flow {
                        private_read: stored.private_read || live.private_read,
                        untrusted_ingested: stored.untrusted_ingested || live.untrusted_ingested,
                    }
                }
                None => Flow::default(),
            },
            can_exfiltrate: call.kind == RequestKind::Tool
                && (tags.contains(&ServerTag::External) || call.claims.open_world),
            home: home.as_deref(),
        };
        Ok(decide(policy, call, &ctx))
    }

    /// What the conversation's finished tool calls brought in (AP-04): private data from a
    /// server tagged so, untrusted content from a server tagged so.
    async fn flow(&self, conversation: &ConversationId) -> Result<Flow, HostError> {
        let tags = self
            .inner
            .store
            .tags_of_servers_used(conversation.as_str())
            .await?;
        Ok(Flow {
            private_read: tags.contains(&ServerTag::PrivateData),
            untrusted_ingested: tags.contains(&ServerTag::UntrustedContent),
        })
    }

    /// Notes what a finished call of `server` brought into `conversation`, at once: the store
    /// learns of it a little later, and the next call of the same turn must not miss it.
    pub(super) async fn note_flow(&self, conversation: &ConversationId, server: &ServerId) {
        let tags = match self.inner.store.server_tags(server).await {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "could not read server tags for the trifecta guard");
                return;
            }
        };
        let mut flows = self.inner.flows();
        let f = flows.entry(conversation.clone()).or_default();
        f.private_read |= tags.contains(&ServerTag::PrivateData);
        f.untrusted_ingested |= tags.contains(&ServerTag::UntrustedContent);
    }

    /// Records that `rule` let a call through (for its limit).
    pub(super) async fn rule_hit(&self, rule: &str, origin: &Origin) {
        let conversation = origin.conversation().map(ConversationId::as_str);
        if let Err(e) = self.inner.store.record_rule_hit(rule, conversation).await {
            tracing::warn!(rule, error = %e, "could not record a rule hit; its limit may undercount");
        }
    }

    /// Makes a grant from an approval answer; `Once` makes none.
    pub(super) async fn grant(
        &self,
        tool: &ToolRef,
        info: Option<&ToolInfo>,
        scope: Scope,
        constraints: Vec<Condition>,
        origin: &Origin,
    ) -> Result<Option<String>, HostError> {
        let conversation = match (scope, origin) {
            (Scope::Once, _) => return Ok(None),
            (Scope::Conversation, Origin::Model { conversation, .. }) => Some(conversation.clone()),
            (
                Scope::Conversation,
                Origin::App {
                    conversation: Some(c),
                    ..
                },
            ) => Some(c.clone()),
            // A conversation grant for a run by hand (or an app it shows) has no conversation
            // to be bound to.
            (Scope::Conversation, Origin::Manual | Origin::Attach { .. } | Origin::App { .. }) => {
                return Ok(None)
            }
            (Scope::Always, _) => None,
        };
        let Some(info) = info else { return Ok(None) };
        let agent = origin.acting().map(|a| a.agent.to_string());
        let app = origin.app();
        let whom = match (app, &agent) {
            (Some(app), _) => format!(" for {}", app.describe()),
            (None, Some(a)) => format!(" for agent {a}"),
            (None, None) => String::new(),
        };
        let suffix: String = hex::encode(rand::random::<[u8; 3]>());
        let id: String = format!("{GRANT_PREFIX}{}-{}", tool.server, tool.tool)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .take(56)
            .collect::<String>()
            + "-"
            + &suffix;
        let rule = Rule {
            id: id.clone(),
            effect: Effect::Allow,
            server: tool.server.to_string(),
            on: On::Tool,
            tool: glob_literal(&tool.tool),
            origin: None,
            note: Some(match (&conversation, constraints.is_empty()) {
                (Some(_), _) => {
                    format!("allowed{whom} for this conversation from an approval prompt")
                }
                (None, true) => format!("always allowed{whom} from an approval prompt"),
                (None, false) => {
                    format!("always allowed{whom} with these arguments from an approval prompt")
                }
            }),
            when: constraints,
            limit: None,
            source: Source::Grant {
                conversation,
                tool_digest: tool_digest(info),
                agent,
                app: app.map(|a| a.uri.clone()),
            },
        };
        rule.validate().map_err(rule_error)?;
        self.inner.store.put_rule(&rule).await?;
        Ok(Some(id))
    }

    /// Every rule and grant, in order.
    pub async fn policy_rules(&self) -> Result<Vec<Rule>, HostError> {
        Ok(self
            .inner
            .store
            .policy_rules()
            .await?
            .into_iter()
            .map(|r| r.rule)
            .collect())
    }

    /// Adds (or replaces, by id) a user rule after checking it.
    pub async fn put_policy_rule(&self, mut rule: Rule) -> Result<(), HostError> {
        rule.source = Source::User;
        rule.validate().map_err(rule_error)?;
        self.inner.store.put_rule(&rule).await?;
        self.audit_policy(
            "rule saved",
            Some(&rule.id),
            serde_json::to_value(&rule).ok(),
        )
        .await;
        Ok(())
    }

    async fn audit_policy(&self, change: &str, id: Option<&str>, rule: Option<serde_json::Value>) {
        self.audit(
            AuditEvent::Policy {
                change: change.into(),
                rule_id: id.map(str::to_owned),
                rule,
            },
            AuditContext::default(),
        )
        .await;
    }

    /// Removes a rule or revokes a grant.
    pub async fn remove_policy_rule(&self, id: &str) -> Result<(), HostError> {
        // What was removed is told by the rule's source, never by its name.
        let was_grant = self
            .inner
            .store
            .policy_rules()
            .await?
            .iter()
            .any(|r| r.rule.id == id && matches!(r.rule.source, Source::Grant { .. }));
        if self.inner.store.delete_rule(id).await? {
            if was_grant {
                self.audit(
                    AuditEvent::Grant {
                        change: GrantChange::Revoked,
                        grant_id: Some(id.to_owned()),
                        scope: None,
                        by: Actor::User,
                    },
                    AuditContext::default(),
                )
                .await;
            } else {
                self.audit_policy("rule removed", Some(id), None).await;
            }
            Ok(())
        } else {
            Err(HostError::Store(StoreError::NotFound(format!(
                "policy rule {}",
                crate::escape::short_for_display(id, 64)
            ))))
        }
    }

    /// Revokes every grant; returns how many there were.
    pub async fn reset_grants(&self) -> Result<u64, HostError> {
        let n = self.inner.store.delete_grants().await?;
        self.audit(
            AuditEvent::Grant {
                change: GrantChange::ResetAll,
                grant_id: None,
                scope: None,
                by: Actor::User,
            },
            AuditContext::default(),
        )
        .await;
        Ok(n)
    }

    /// The policy as a TOML file (rules and grants).
    pub async fn export_policy(&self) -> Result<String, HostError> {
        Ok(PolicyFile {
            version: 1,
            rules: self.policy_rules().await?,
        }
        .render())
    }

    /// Replaces the user rules with those of a TOML file (grants in it are ignored; the
    /// current grants stay). Nothing changes when any rule is invalid.
    pub async fn import_policy(&self, text: &str) -> Result<usize, HostError> {
        let file = PolicyFile::parse(text).map_err(rule_error)?;
        let rules: Vec<Rule> = file
            .rules
            .into_iter()
            .filter(|r| r.source == Source::User)
            .collect();
        self.inner.store.replace_user_rules(&rules).await?;
        self.audit_policy(
            &format!("{} rules imported", rules.len()),
            None,
            serde_json::to_value(&rules).ok(),
        )
        .await;
        Ok(rules.len())
    }

    /// A server's tags.
    pub async fn server_tags(&self, server: &ServerId) -> Result<Vec<ServerTag>, HostError> {
        Ok(self.inner.store.server_tags(server).await?)
    }

    /// Replaces a server's tags.
    pub async fn set_server_tags(
        &self,
        server: &ServerId,
        tags: &[ServerTag],
    ) -> Result<(), HostError> {
        if self.inner.store.get_server(server).await?.is_none() {
            return Err(HostError::UnknownServer(server.to_string()));
        }
        self.inner.store.set_server_tags(server, tags).await?;
        self.audit_config(
            ConfigChange::Tags,
            Some(server),
            serde_json::json!({ "tags": tags }),
        )
        .await;
        Ok(())
    }
}

/// A tool name as a pattern that matches only itself (`*` cannot appear in MCP tool names
/// that reach here, but a literal one would widen the grant, so it is refused as a wildcard).
fn glob_literal(name: &str) -> String {
    name.replace('*', "_")
}

#[cfg(test)]
mod tests;
