//! The `providers` table: which model vendors the user configured. Keys are not stored here.

use sqlx::Row;

use super::{now_ms, Store, StoreError};
use crate::ids::ProviderName;

/// One configured provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderRecord {
    /// Its name.
    pub name: ProviderName,
    /// The profile id (`openai`, `anthropic`, `ollama`, ...).
    pub profile: String,
    /// A base URL replacing the profile's.
    pub base_url: Option<String>,
    /// The default model.
    pub model: Option<String>,
    /// The context window in tokens, when the user set one (else known from the model).
    pub context_window: Option<u32>,
}

fn record(r: &sqlx::sqlite::SqliteRow) -> Result<ProviderRecord, StoreError> {
    let name: String = r.get("name");
    Ok(ProviderRecord {
        name: ProviderName::new(&name).map_err(|e| StoreError::Corrupt {
            what: format!("provider {name}"),
            reason: e.to_string(),
        })?,
        profile: r.get("profile"),
        base_url: r.get("base_url"),
        model: r.get("model"),
        context_window: r
            .get::<Option<i64>, _>("context_window")
            .and_then(|w| u32::try_from(w).ok()),
    })
}

impl Store {
    /// Every configured provider, by name.
    pub async fn list_providers(&self) -> Result<Vec<ProviderRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT name, profile, base_url, model, context_window FROM providers ORDER BY name",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(record).collect()
    }

    /// One provider.
    pub async fn get_provider(
        &self,
        name: &ProviderName,
    ) -> Result<Option<ProviderRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT name, profile, base_url, model, context_window FROM providers WHERE name = ?",
        )
        .bind(name.as_str())
        .fetch_optional(self.reader())
        .await?;
        row.as_ref().map(record).transpose()
    }

    /// Adds a provider; fails if the name is taken.
    pub async fn insert_provider(&self, p: &ProviderRecord) -> Result<(), StoreError> {
        let now = now_ms();
        let res = sqlx::query(
            "INSERT INTO providers (name, profile, base_url, model, context_window, created_at,
                                    updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
        )
        .bind(p.name.as_str())
        .bind(&p.profile)
        .bind(&p.base_url)
        .bind(&p.model)
        .bind(p.context_window.map(i64::from))
        .bind(now)
        .bind(now)
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::Exists(format!("a provider named {}", p.name)));
        }
        Ok(())
    }

    /// Removes a provider; returns whether it existed.
    pub async fn delete_provider(&self, name: &ProviderName) -> Result<bool, StoreError> {
        let res = sqlx::query("DELETE FROM providers WHERE name = ?")
            .bind(name.as_str())
            .execute(self.writer())
            .await?;
        Ok(res.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn providers_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        let p = ProviderRecord {
            name: ProviderName::new("local").unwrap(),
            profile: "ollama".into(),
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            model: Some("llama3.2".into()),
            context_window: Some(8192),
        };
        store.insert_provider(&p).await.unwrap();
        assert!(matches!(
            store.insert_provider(&p).await,
            Err(StoreError::Exists(_))
        ));
        assert_eq!(store.list_providers().await.unwrap(), vec![p.clone()]);
        assert_eq!(store.get_provider(&p.name).await.unwrap(), Some(p.clone()));
        assert!(store.delete_provider(&p.name).await.unwrap());
        assert!(!store.delete_provider(&p.name).await.unwrap());
        assert!(store.list_providers().await.unwrap().is_empty());
    }
}
