//! The `server_run_prefs` and `server_last_tools` tables: which servers the person keeps always
//! on, and the tools each server offered when it last ran (see `host::demand`).

use super::{Store, StoreError};
use crate::ids::ServerId;

/// The tools a server offered when it last ran.
#[derive(Clone, Debug, PartialEq)]
pub struct LastTools {
    /// The server.
    pub server: ServerId,
    /// The tool definitions, as listed.
    pub tools: Vec<crate::catalog::ToolInfo>,
    /// When they were listed, in milliseconds since the Unix epoch.
    pub seen_at_ms: i64,
}

impl Store {
    /// Keeps a server running whenever the host runs (`true`), or starts it when needed.
    pub async fn set_always_on(&self, id: &ServerId, on: bool) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO server_run_prefs (server_id, always_on) VALUES (?, ?)
             ON CONFLICT(server_id) DO UPDATE SET always_on = excluded.always_on",
        )
        .bind(id.as_str())
        .bind(i64::from(on))
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// The servers kept always on.
    pub async fn always_on(&self) -> Result<Vec<ServerId>, StoreError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT server_id FROM server_run_prefs WHERE always_on = 1")
                .fetch_all(self.reader())
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id,)| ServerId::new(&id).ok())
            .collect())
    }

    /// Records the tools a running server offers now.
    pub async fn save_last_tools(
        &self,
        id: &ServerId,
        tools: &[crate::catalog::ToolInfo],
        seen_at_ms: i64,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(tools).map_err(|e| StoreError::Corrupt {
            what: format!("the tools of {id}"),
            reason: e.to_string(),
        })?;
        sqlx::query(
            "INSERT INTO server_last_tools (server_id, tools, seen_at_ms) VALUES (?, ?, ?)
             ON CONFLICT(server_id) DO UPDATE SET tools = excluded.tools,
                                                  seen_at_ms = excluded.seen_at_ms",
        )
        .bind(id.as_str())
        .bind(json)
        .bind(seen_at_ms)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// The last tools of every server that has run. A row that no longer reads (written by
    /// another release) is skipped: it is only a preview, and the next run rewrites it.
    pub async fn last_tools(&self) -> Result<Vec<LastTools>, StoreError> {
        let rows: Vec<(String, String, i64)> =
            sqlx::query_as("SELECT server_id, tools, seen_at_ms FROM server_last_tools")
                .fetch_all(self.reader())
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, tools, seen_at_ms)| {
                Some(LastTools {
                    server: ServerId::new(&id).ok()?,
                    tools: serde_json::from_str(&tools).ok()?,
                    seen_at_ms,
                })
            })
            .collect())
    }
}
