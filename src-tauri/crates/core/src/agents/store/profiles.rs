//! The `agent_profiles` table: one row per agent profile, the profile as `agent_data`'s JSON.
//! Validation against the rest of the host (providers, other agents) is the host's; this only
//! keeps rows, refusing a second row with a taken name.

use crate::agent_data::{AgentName, AgentProfile};
use crate::clock::now_ms;
use crate::store::{Store, StoreError};

fn to_json(p: &AgentProfile) -> Result<String, StoreError> {
    serde_json::to_string(p).map_err(|e| StoreError::Corrupt {
        what: format!("agent {}", p.name),
        reason: e.to_string(),
    })
}

fn from_row(name: &str, json: &str) -> Result<AgentProfile, StoreError> {
    let p: AgentProfile = serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
        what: format!("agent {name}"),
        reason: e.to_string(),
    })?;
    if p.name.as_str() != name {
        return Err(StoreError::Corrupt {
            what: format!("agent {name}"),
            reason: format!("the row holds the profile of {}", p.name),
        });
    }
    Ok(p)
}

/// What an import changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentsImported {
    /// Profiles that were new.
    pub added: Vec<AgentName>,
    /// Profiles that replaced one of the same name.
    pub replaced: Vec<AgentName>,
}

impl Store {
    /// Adds a profile; fails with [`StoreError::Exists`] if the name is taken.
    pub async fn insert_agent(&self, p: &AgentProfile) -> Result<(), StoreError> {
        let now = now_ms();
        let res = sqlx::query(
            "INSERT INTO agent_profiles (name, profile, created_ms, updated_ms)
             VALUES (?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
        )
        .bind(p.name.as_str())
        .bind(to_json(p)?)
        .bind(now)
        .bind(now)
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::Exists(format!("an agent named {}", p.name)));
        }
        Ok(())
    }

    /// Replaces the profile of the same name; fails with [`StoreError::NotFound`] if there is
    /// none.
    pub async fn update_agent(&self, p: &AgentProfile) -> Result<(), StoreError> {
        let res =
            sqlx::query("UPDATE agent_profiles SET profile = ?, updated_ms = ? WHERE name = ?")
                .bind(to_json(p)?)
                .bind(now_ms())
                .bind(p.name.as_str())
                .execute(self.writer())
                .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("an agent named {}", p.name)));
        }
        Ok(())
    }

    /// One profile.
    pub async fn get_agent(&self, name: &AgentName) -> Result<Option<AgentProfile>, StoreError> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT name, profile FROM agent_profiles WHERE name = ?")
                .bind(name.as_str())
                .fetch_optional(self.reader())
                .await?;
        row.map(|(n, j)| from_row(&n, &j)).transpose()
    }

    /// Every profile, by name.
    pub async fn list_agents(&self) -> Result<Vec<AgentProfile>, StoreError> {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT name, profile FROM agent_profiles ORDER BY name")
                .fetch_all(self.reader())
                .await?;
        rows.iter().map(|(n, j)| from_row(n, j)).collect()
    }

    /// Removes a profile; returns whether it existed.
    pub async fn delete_agent(&self, name: &AgentName) -> Result<bool, StoreError> {
        let res = sqlx::query("DELETE FROM agent_profiles WHERE name = ?")
            .bind(name.as_str())
            .execute(self.writer())
            .await?;
        Ok(res.rows_affected() > 0)
    }

    /// Writes `profiles` in one transaction: new names are added; a taken name is replaced
    /// when `replace`, else the whole import fails with [`StoreError::Exists`] and nothing is
    /// written.
    pub async fn import_agents(
        &self,
        profiles: &[AgentProfile],
        replace: bool,
    ) -> Result<AgentsImported, StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let mut out = AgentsImported::default();
        for p in profiles {
            let taken: Option<(String,)> =
                sqlx::query_as("SELECT name FROM agent_profiles WHERE name = ?")
                    .bind(p.name.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
            if taken.is_some() {
                if !replace {
                    return Err(StoreError::Exists(format!("an agent named {}", p.name)));
                }
                sqlx::query("UPDATE agent_profiles SET profile = ?, updated_ms = ? WHERE name = ?")
                    .bind(to_json(p)?)
                    .bind(now)
                    .bind(p.name.as_str())
                    .execute(&mut *tx)
                    .await?;
                out.replaced.push(p.name.clone());
            } else {
                sqlx::query(
                    "INSERT INTO agent_profiles (name, profile, created_ms, updated_ms)
                     VALUES (?, ?, ?, ?)",
                )
                .bind(p.name.as_str())
                .bind(to_json(p)?)
                .bind(now)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                out.added.push(p.name.clone());
            }
        }
        tx.commit().await?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;
    use crate::ids::ProviderName;

    fn profile(name: &str) -> AgentProfile {
        AgentProfile::new(
            AgentName::new(name).unwrap(),
            ProviderName::new("local").unwrap(),
        )
    }

    #[tokio::test]
    async fn agents_round_trip_and_names_are_unique() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        let mut b = profile("b");
        b.budget.tool_calls = Some(3);
        store.insert_agent(&b).await.unwrap();
        store.insert_agent(&profile("a")).await.unwrap();
        assert!(matches!(
            store.insert_agent(&profile("a")).await,
            Err(StoreError::Exists(_))
        ));
        let names: Vec<_> = store
            .list_agents()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name.to_string())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(store.get_agent(&b.name).await.unwrap(), Some(b.clone()));
        b.model = Some("m2".into());
        store.update_agent(&b).await.unwrap();
        assert_eq!(
            store.get_agent(&b.name).await.unwrap().unwrap().model,
            b.model
        );
        assert!(matches!(
            store.update_agent(&profile("zz")).await,
            Err(StoreError::NotFound(_))
        ));

        // An import with a taken name changes nothing unless it may replace.
        let mut a2 = profile("a");
        a2.description = "new".into();
        let batch = [profile("c"), a2.clone()];
        assert!(matches!(
            store.import_agents(&batch, false).await,
            Err(StoreError::Exists(_))
        ));
        assert!(store.get_agent(&profile("c").name).await.unwrap().is_none());
        let done = store.import_agents(&batch, true).await.unwrap();
        assert_eq!(done.added, vec![profile("c").name]);
        assert_eq!(done.replaced, vec![a2.name.clone()]);
        assert_eq!(store.get_agent(&a2.name).await.unwrap(), Some(a2.clone()));

        assert!(store.delete_agent(&a2.name).await.unwrap());
        assert!(!store.delete_agent(&a2.name).await.unwrap());
        assert_eq!(store.list_agents().await.unwrap().len(), 2);
    }
}
