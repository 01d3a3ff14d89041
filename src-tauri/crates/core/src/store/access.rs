//! What a person lets each server see (its roots) and whether its tool results are held for
//! review before a model reads them (AP-05). See migration 0009.

use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::ids::ServerId;
use crate::roots::Root;

/// Whether a server's tool results are held for the person before a model reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultReview {
    /// Held when the server is tagged untrusted-content or the tool reaches the open world.
    #[default]
    Default,
    /// Always held.
    Always,
    /// Never held.
    Never,
}

impl Store {
    /// A server's roots, in the person's order.
    pub async fn server_roots(&self, server: &ServerId) -> Result<Vec<Root>, StoreError> {
        let rows: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT uri, name FROM server_roots WHERE server_id = ? ORDER BY position",
        )
        .bind(server.as_str())
        .fetch_all(self.reader())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(uri, name)| Root { uri, name })
            .collect())
    }

    /// Replaces a server's roots (each a `file://` URI).
    pub async fn set_server_roots(
        &self,
        server: &ServerId,
        roots: &[Root],
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sqlx::query("DELETE FROM server_roots WHERE server_id = ?")
            .bind(server.as_str())
            .execute(&mut *tx)
            .await?;
        for (position, r) in roots.iter().enumerate() {
            sqlx::query(
                "INSERT OR IGNORE INTO server_roots (server_id, uri, name, position)
                 VALUES (?, ?, ?, ?)",
            )
            .bind(server.as_str())
            .bind(&r.uri)
            .bind(r.name.as_deref())
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// A server's result-review setting.
    pub async fn result_review(&self, server: &ServerId) -> Result<ResultReview, StoreError> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT results FROM server_review WHERE server_id = ?")
                .bind(server.as_str())
                .fetch_optional(self.reader())
                .await?;
        Ok(match row.as_ref().map(|(r,)| r.as_str()) {
            Some("always") => ResultReview::Always,
            Some("never") => ResultReview::Never,
            _ => ResultReview::Default,
        })
    }

    /// Sets a server's result-review setting.
    pub async fn set_result_review(
        &self,
        server: &ServerId,
        review: ResultReview,
    ) -> Result<(), StoreError> {
        let value = match review {
            ResultReview::Default => None,
            ResultReview::Always => Some("always"),
            ResultReview::Never => Some("never"),
        };
        match value {
            None => {
                sqlx::query("DELETE FROM server_review WHERE server_id = ?")
                    .bind(server.as_str())
                    .execute(self.writer())
                    .await?;
            }
            Some(v) => {
                sqlx::query(
                    "INSERT INTO server_review (server_id, results) VALUES (?, ?)
                     ON CONFLICT (server_id) DO UPDATE SET results = excluded.results",
                )
                .bind(server.as_str())
                .bind(v)
                .execute(self.writer())
                .await?;
            }
        }
        Ok(())
    }
}
