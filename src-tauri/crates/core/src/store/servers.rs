//! The `servers`, `server_trust` and `tool_prefs` tables.

use sqlx::Row;

use super::{now_ms, Store, StoreError};
use crate::config::launch::{Fingerprint, LaunchPlan};
use crate::config::ServerSpec;
use crate::ids::ServerId;

/// An approval of a launch plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustRecord {
    /// The fingerprint that was approved.
    pub fingerprint: Fingerprint,
    /// The plan as it was shown; `None` when it was written by an earlier release in a shape
    /// this one does not read (its fingerprint cannot match a current plan anyway).
    pub plan: Option<LaunchPlan>,
    /// When, in milliseconds since the Unix epoch.
    pub approved_at_ms: i64,
}

fn parse_spec(id: &str, json: &str) -> Result<ServerSpec, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
        what: format!("server {id}"),
        reason: e.to_string(),
    })
}

fn to_json<T: serde::Serialize>(what: &str, v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt {
        what: what.to_owned(),
        reason: e.to_string(),
    })
}

impl Store {
    /// Every configured server, ordered by name.
    pub async fn list_servers(&self) -> Result<Vec<ServerSpec>, StoreError> {
        let rows = sqlx::query("SELECT id, spec_json FROM servers ORDER BY id")
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|r| parse_spec(r.get("id"), r.get("spec_json")))
            .collect()
    }

    /// One server.
    pub async fn get_server(&self, id: &ServerId) -> Result<Option<ServerSpec>, StoreError> {
        let row = sqlx::query("SELECT spec_json FROM servers WHERE id = ?")
            .bind(id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|r| parse_spec(id.as_str(), r.get("spec_json")))
            .transpose()
    }

    /// Adds a server; fails if the name is taken.
    pub async fn insert_server(&self, spec: &ServerSpec) -> Result<(), StoreError> {
        let json = to_json("server spec", spec)?;
        let now = now_ms();
        let res = sqlx::query(
            "INSERT INTO servers (id, spec_json, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
        )
        .bind(spec.id.as_str())
        .bind(json)
        .bind(now)
        .bind(now)
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::Exists(format!("a server named {}", spec.id)));
        }
        Ok(())
    }

    /// Inserts several servers in one transaction: all of them, or none (an import).
    pub async fn insert_servers(&self, specs: &[ServerSpec]) -> Result<(), StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        for spec in specs {
            let res = sqlx::query(
                "INSERT INTO servers (id, spec_json, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
            )
            .bind(spec.id.as_str())
            .bind(to_json("server spec", spec)?)
            .bind(now)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if res.rows_affected() == 0 {
                // Dropping the transaction rolls back the ones before it.
                return Err(StoreError::Exists(format!("a server named {}", spec.id)));
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Replaces a server's spec.
    pub async fn update_server(&self, spec: &ServerSpec) -> Result<(), StoreError> {
        let json = to_json("server spec", spec)?;
        let res = sqlx::query("UPDATE servers SET spec_json = ?, updated_at = ? WHERE id = ?")
            .bind(json)
            .bind(now_ms())
            .bind(spec.id.as_str())
            .execute(self.writer())
            .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("server {}", spec.id)));
        }
        Ok(())
    }

    /// Replaces a server's spec only if it is still `expected`; returns whether it did. For
    /// changes made from a spec read earlier without the person (a migration at start): when
    /// another process or the person changed the server in between, their change stands.
    pub async fn replace_server_if(
        &self,
        expected: &ServerSpec,
        spec: &ServerSpec,
    ) -> Result<bool, StoreError> {
        let json = to_json("server spec", spec)?;
        // Compared as parsed specs, not as text: a spec stored by an earlier release may spell
        // the same spec differently (a field added since, with its default).
        let mut tx = self.write_tx().await?;
        let row: Option<(String,)> = sqlx::query_as("SELECT spec_json FROM servers WHERE id = ?")
            .bind(spec.id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let Some((stored,)) = row else {
            return Ok(false);
        };
        if parse_spec(spec.id.as_str(), &stored)? != *expected {
            return Ok(false);
        }
        sqlx::query("UPDATE servers SET spec_json = ?, updated_at = ? WHERE id = ?")
            .bind(json)
            .bind(now_ms())
            .bind(spec.id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Removes a server with its trust record and tool preferences. Returns whether it existed.
    pub async fn delete_server(&self, id: &ServerId) -> Result<bool, StoreError> {
        let res = sqlx::query("DELETE FROM servers WHERE id = ?")
            .bind(id.as_str())
            .execute(self.writer())
            .await?;
        Ok(res.rows_affected() > 0)
    }

    /// Records the user's approval of a launch plan.
    pub async fn set_trust(&self, id: &ServerId, plan: &LaunchPlan) -> Result<(), StoreError> {
        let json = to_json("launch plan", plan)?;
        sqlx::query(
            "INSERT INTO server_trust (server_id, fingerprint, plan_json, approved_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(server_id) DO UPDATE SET fingerprint = excluded.fingerprint, plan_json = excluded.plan_json, approved_at = excluded.approved_at",
        )
        .bind(id.as_str())
        .bind(plan.fingerprint().0)
        .bind(json)
        .bind(now_ms())
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// The standing approval for a server, if any.
    pub async fn trust(&self, id: &ServerId) -> Result<Option<TrustRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT fingerprint, plan_json, approved_at FROM server_trust WHERE server_id = ?",
        )
        .bind(id.as_str())
        .fetch_optional(self.reader())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let plan = serde_json::from_str(row.get("plan_json")).ok();
        Ok(Some(TrustRecord {
            fingerprint: Fingerprint(row.get("fingerprint")),
            plan,
            approved_at_ms: row.get("approved_at"),
        }))
    }

    /// Withdraws a server's approval.
    pub async fn clear_trust(&self, id: &ServerId) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM server_trust WHERE server_id = ?")
            .bind(id.as_str())
            .execute(self.writer())
            .await?;
        Ok(())
    }

    /// Switches one tool on or off.
    pub async fn set_tool_enabled(
        &self,
        id: &ServerId,
        tool: &str,
        enabled: bool,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tool_prefs (server_id, tool, enabled) VALUES (?, ?, ?)
             ON CONFLICT(server_id, tool) DO UPDATE SET enabled = excluded.enabled",
        )
        .bind(id.as_str())
        .bind(tool)
        .bind(enabled as i64)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// The tools of a server the user switched off.
    pub async fn disabled_tools(&self, id: &ServerId) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT tool FROM tool_prefs WHERE server_id = ? AND enabled = 0")
                .bind(id.as_str())
                .fetch_all(self.reader())
                .await?;
        Ok(rows.into_iter().map(|(t,)| t).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{StdioSpec, Timeouts, TransportSpec};

    fn spec(name: &str) -> ServerSpec {
        ServerSpec {
            id: ServerId::new(name).unwrap(),
            transport: TransportSpec::Stdio(StdioSpec {
                command: "/bin/true".into(),
                args: vec![],
                env: vec![],
                cwd: None,
                sandbox: Default::default(),
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        }
    }

    #[tokio::test]
    async fn crud_and_trust_cascade() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
        let a = spec("a");
        store.insert_server(&a).await.unwrap();
        assert!(matches!(
            store.insert_server(&a).await,
            Err(StoreError::Exists(_))
        ));
        store.insert_server(&spec("b")).await.unwrap();
        let all = store.list_servers().await.unwrap();
        assert_eq!(
            all.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );

        let plan = LaunchPlan::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![],
            allow_insecure: false,
        };
        store.set_trust(&a.id, &plan).await.unwrap();
        let t = store.trust(&a.id).await.unwrap().unwrap();
        assert_eq!(t.fingerprint, plan.fingerprint());
        assert_eq!(t.plan, Some(plan.clone()));
        // A plan in an older shape still reads as an approval (of something else).
        sqlx::query("UPDATE server_trust SET plan_json = '{\"type\":\"http\",\"url\":\"x\",\"header_names\":[]}'")
            .execute(store.writer())
            .await
            .unwrap();
        let old = store.trust(&a.id).await.unwrap().unwrap();
        assert_eq!((old.plan, old.fingerprint), (None, plan.fingerprint()));
        store.set_tool_enabled(&a.id, "echo", false).await.unwrap();
        assert_eq!(store.disabled_tools(&a.id).await.unwrap(), ["echo"]);

        let mut changed = a.clone();
        changed.enabled = false;
        store.update_server(&changed).await.unwrap();
        assert!(!store.get_server(&a.id).await.unwrap().unwrap().enabled);

        assert!(store.delete_server(&a.id).await.unwrap());
        assert!(
            store.trust(&a.id).await.unwrap().is_none(),
            "trust cascades"
        );
        assert!(store.disabled_tools(&a.id).await.unwrap().is_empty());
        assert!(!store.delete_server(&a.id).await.unwrap());
    }

    /// A change computed from a spec read earlier lands only if nobody changed it meanwhile.
    #[tokio::test]
    async fn a_conditional_replace_never_overwrites_a_newer_change() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
        let read = spec("a");
        store.insert_server(&read).await.unwrap();
        let mut mine = read.clone();
        mine.timeouts.request_secs = 7;
        let mut theirs = read.clone();
        theirs.enabled = false;
        // Someone else's change lands first: mine, computed from `read`, is refused.
        store.update_server(&theirs).await.unwrap();
        assert!(!store.replace_server_if(&read, &mine).await.unwrap());
        assert_eq!(
            store.get_server(&read.id).await.unwrap(),
            Some(theirs.clone())
        );
        // From what is stored now, it lands.
        let mut again = theirs.clone();
        again.timeouts.request_secs = 7;
        assert!(store.replace_server_if(&theirs, &again).await.unwrap());
        assert_eq!(store.get_server(&read.id).await.unwrap(), Some(again));
        // A server removed meanwhile is not brought back.
        store.delete_server(&read.id).await.unwrap();
        assert!(!store.replace_server_if(&read, &mine).await.unwrap());
        assert_eq!(store.get_server(&read.id).await.unwrap(), None);
    }
}
