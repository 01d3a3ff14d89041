//! The approval policy's tables (migration `0006_policy.sql`): rules and grants in order, the
//! calls limited rules let through, and server tags.
//!
//! [`PolicyRows`] is every rule and tag exactly as stored, read inside the audit writer's
//! transaction: the host decides from a copy of it kept in memory, and compares rows (not
//! decoded rules) to tell whether the copy is still the stored policy (see `host::audit`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sqlx::{Row as _, SqliteConnection};

use super::{now_ms, Store, StoreError};
use crate::ids::ServerId;
use crate::policy_data::{Rule, Source};

/// A tag a person gives a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerTag {
    /// Its annotations may relax friction (TD-01).
    Trusted,
    /// It holds private data (trifecta leg a).
    PrivateData,
    /// It returns content others wrote, such as web pages or mail (trifecta leg b).
    UntrustedContent,
    /// It can send data out (trifecta leg c).
    External,
}

impl ServerTag {
    /// Every tag.
    pub const ALL: [Self; 4] = [
        Self::Trusted,
        Self::PrivateData,
        Self::UntrustedContent,
        Self::External,
    ];

    /// The tag as stored and typed.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trusted => "trusted",
            Self::PrivateData => "private-data",
            Self::UntrustedContent => "untrusted-content",
            Self::External => "external",
        }
    }

    /// Reads a tag.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A rule as stored, with when it was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StoredRule {
    /// The rule.
    pub rule: Rule,
    /// Created, ms since the epoch.
    pub created_at_ms: i64,
}

fn decode(id: &str, json: &str) -> Result<Rule, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
        what: format!("policy rule {id}"),
        reason: e.to_string(),
    })
}

fn encode(rule: &Rule) -> Result<String, StoreError> {
    serde_json::to_string(rule).map_err(|e| StoreError::Corrupt {
        what: format!("policy rule {}", rule.id),
        reason: e.to_string(),
    })
}

/// Every rule and every server tag as stored, in evaluation order (rules) and by server and tag
/// (tags): two reads compare equal exactly when the policy is the same.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRows {
    /// `(id, rule_json)` of each rule and grant.
    pub rules: Vec<(String, String)>,
    /// `(server_id, tag)` of each tag.
    pub tags: Vec<(String, String)>,
}

impl PolicyRows {
    /// The rules, decoded; a rule that no longer parses is an error, as in
    /// [`Store::policy_rules`].
    pub fn decode_rules(&self) -> Result<Vec<Rule>, StoreError> {
        self.rules
            .iter()
            .map(|(id, json)| decode(id, json))
            .collect()
    }

    /// Each server's tags (unknown tags skipped, as in [`Store::server_tags`]).
    pub fn tags_by_server(&self) -> HashMap<String, Vec<ServerTag>> {
        let mut out: HashMap<String, Vec<ServerTag>> = HashMap::new();
        for (server, tag) in &self.tags {
            if let Some(t) = ServerTag::parse(tag) {
                out.entry(server.clone()).or_default().push(t);
            }
        }
        out
    }
}

/// Reads [`PolicyRows`] on `conn` (the audit writer's, inside its write transaction).
pub(super) async fn read_policy_rows(
    conn: &mut SqliteConnection,
) -> Result<PolicyRows, StoreError> {
    let rules: Vec<(String, String)> =
        sqlx::query_as("SELECT id, rule_json FROM policy_rules ORDER BY position, created_at")
            .fetch_all(&mut *conn)
            .await?;
    let tags: Vec<(String, String)> =
        sqlx::query_as("SELECT server_id, tag FROM server_tags ORDER BY server_id, tag")
            .fetch_all(&mut *conn)
            .await?;
    Ok(PolicyRows { rules, tags })
}

impl Store {
    /// Every rule and grant, in evaluation order.
    pub async fn policy_rules(&self) -> Result<Vec<StoredRule>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, rule_json, created_at FROM policy_rules ORDER BY position, created_at",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|r| {
                let id: String = r.get("id");
                Ok(StoredRule {
                    rule: decode(&id, r.get("rule_json"))?,
                    created_at_ms: r.get("created_at"),
                })
            })
            .collect()
    }

    /// Adds a rule at the end, or replaces the rule with its id in place.
    pub async fn put_rule(&self, rule: &Rule) -> Result<(), StoreError> {
        let json = encode(rule)?;
        let is_grant = i64::from(matches!(rule.source, Source::Grant { .. }));
        sqlx::query(
            "INSERT INTO policy_rules (id, position, rule_json, is_grant, created_at)
             VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM policy_rules), ?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET rule_json = excluded.rule_json,
                                           is_grant = excluded.is_grant",
        )
        .bind(&rule.id)
        .bind(json)
        .bind(is_grant)
        .bind(now_ms())
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Removes a rule or grant; returns whether it existed.
    pub async fn delete_rule(&self, id: &str) -> Result<bool, StoreError> {
        let res = sqlx::query("DELETE FROM policy_rules WHERE id = ?")
            .bind(id)
            .execute(self.writer())
            .await?;
        Ok(res.rows_affected() > 0)
    }

    /// Removes every grant (the "reset" of AP-02); returns how many.
    pub async fn delete_grants(&self) -> Result<u64, StoreError> {
        let res = sqlx::query("DELETE FROM policy_rules WHERE is_grant = 1")
            .execute(self.writer())
            .await?;
        Ok(res.rows_affected())
    }

    /// Replaces every user rule with `rules` (grants stay), in one transaction.
    pub async fn replace_user_rules(&self, rules: &[Rule]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sqlx::query("DELETE FROM policy_rules WHERE is_grant = 0")
            .execute(&mut *tx)
            .await?;
        let now = now_ms();
        for (i, r) in rules.iter().enumerate() {
            sqlx::query(
                "INSERT INTO policy_rules (id, position, rule_json, is_grant, created_at)
                 VALUES (?, ?, ?, 0, ?)",
            )
            .bind(&r.id)
            .bind(i64::try_from(i).unwrap_or(i64::MAX) - 1_000_000)
            .bind(encode(r)?)
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(|e| match e {
                sqlx::Error::Database(d) if d.is_unique_violation() => {
                    StoreError::Exists(format!("a grant with the id {}", r.id))
                }
                other => other.into(),
            })?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Records that `rule` let a call through.
    pub async fn record_rule_hit(
        &self,
        rule: &str,
        conversation: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO rule_hits (rule_id, conversation, at) VALUES (?, ?, ?)")
            .bind(rule)
            .bind(conversation)
            .bind(now_ms())
            .execute(self.writer())
            .await?;
        Ok(())
    }

    /// Calls `rule` let through since `since_ms` (when given) in `conversation` (when given;
    /// manual runs have none and are counted together).
    pub async fn count_rule_hits(
        &self,
        rule: &str,
        since_ms: Option<i64>,
        conversation: Option<Option<&str>>,
    ) -> Result<u32, StoreError> {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM rule_hits
             WHERE rule_id = ? AND at >= ? AND (? = 0 OR conversation IS ?)",
        )
        .bind(rule)
        .bind(since_ms.unwrap_or(i64::MIN))
        .bind(i64::from(conversation.is_some()))
        .bind(conversation.flatten())
        .fetch_one(self.reader())
        .await?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// The tags of every server whose tool returned a result (done, not an error) in
    /// `conversation`, or from which a person brought something into it (an attached resource,
    /// a prompt): one indexed query, no arguments or results read (it runs before every tool
    /// call, for the trifecta guard).
    pub async fn tags_of_servers_used(
        &self,
        conversation: &str,
    ) -> Result<Vec<ServerTag>, StoreError> {
        let rows: Vec<(String,)> = sqlx::query_as(
            "SELECT g.tag
             FROM messages m JOIN tool_calls t ON t.message_id = m.id
                             JOIN server_tags g ON g.server_id = t.server
             WHERE m.conversation_id = ?1 AND t.status = 'done' AND t.is_error = 0
             UNION
             SELECT g.tag
             FROM conversation_sources s JOIN server_tags g ON g.server_id = s.server_id
             WHERE s.conversation_id = ?1",
        )
        .bind(conversation)
        .fetch_all(self.reader())
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(t,)| ServerTag::parse(&t))
            .collect())
    }

    /// Records that a person brought something from each of `servers` into `conversation`
    /// (AP-04); recording a server again changes nothing.
    pub async fn add_conversation_sources(
        &self,
        conversation: &str,
        servers: &[ServerId],
    ) -> Result<(), StoreError> {
        if servers.is_empty() {
            return Ok(());
        }
        let mut tx = self.writer().begin().await?;
        for s in servers {
            sqlx::query(
                "INSERT INTO conversation_sources (conversation_id, server_id, first_at_ms)
                 VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            )
            .bind(conversation)
            .bind(s.as_str())
            .bind(crate::store::now_ms())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// A server's tags.
    pub async fn server_tags(&self, server: &ServerId) -> Result<Vec<ServerTag>, StoreError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT tag FROM server_tags WHERE server_id = ? ORDER BY tag")
                .bind(server.as_str())
                .fetch_all(self.reader())
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(t,)| ServerTag::parse(&t))
            .collect())
    }

    /// Replaces a server's tags.
    pub async fn set_server_tags(
        &self,
        server: &ServerId,
        tags: &[ServerTag],
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sqlx::query("DELETE FROM server_tags WHERE server_id = ?")
            .bind(server.as_str())
            .execute(&mut *tx)
            .await?;
        for t in tags {
            sqlx::query("INSERT OR IGNORE INTO server_tags (server_id, tag) VALUES (?, ?)")
                .bind(server.as_str())
                .bind(t.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// One durable commit of one small row, the cheapest write this store can make: a rule hit
    /// of a rule no policy has, in autocommit mode (one statement, one sync). The benchmarks
    /// measure it next to `Host::run_tool`, whose target is "a bare call plus one commit".
    #[cfg(feature = "harness")]
    pub async fn commit_probe(&self) -> Result<(), StoreError> {
        self.record_rule_hit("sb-bench-commit-probe", None).await
    }
}
