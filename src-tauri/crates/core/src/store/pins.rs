//! The pinned surface of each server and what waits for review (migration `0008_pins.sql`,
//! TD-02). The rules live in `approval::pins`; this file only keeps their data (`pin_data`).

use std::collections::BTreeMap;

use sqlx::Row as _;

use super::{now_ms, Store, StoreError};
use crate::ids::ServerId;
use crate::pin_data::{HoldReason, ItemKey, ItemKind, Pin, PinnedItem};

/// One item seen in a catalog that differs from the pin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingItem {
    /// Which item.
    pub key: ItemKey,
    /// Why it waits.
    pub reason: HoldReason,
    /// The definition seen.
    pub item: PinnedItem,
    /// When it was first seen like this, ms since the epoch.
    pub first_seen_ms: i64,
}

fn corrupt(id: &ServerId, what: &str) -> StoreError {
    StoreError::Corrupt {
        what: format!("pin of {id}"),
        reason: what.to_owned(),
    }
}

fn key_of(id: &ServerId, kind: &str, name: String) -> Result<ItemKey, StoreError> {
    let kind = ItemKind::parse(kind).ok_or_else(|| corrupt(id, "unknown item kind"))?;
    Ok(ItemKey { kind, name })
}

impl Store {
    /// A server's pin, or `None` if it was never pinned.
    pub async fn pin(&self, id: &ServerId) -> Result<Option<Pin>, StoreError> {
        let exists = sqlx::query("SELECT 1 FROM server_pins WHERE server_id = ?")
            .bind(id.as_str())
            .fetch_optional(self.reader())
            .await?;
        if exists.is_none() {
            return Ok(None);
        }
        let rows =
            sqlx::query("SELECT kind, name, digest, canonical FROM pin_items WHERE server_id = ?")
                .bind(id.as_str())
                .fetch_all(self.reader())
                .await?;
        let mut items = BTreeMap::new();
        for r in rows {
            items.insert(
                key_of(id, r.get("kind"), r.get("name"))?,
                PinnedItem {
                    digest: r.get("digest"),
                    canonical: r.get("canonical"),
                },
            );
        }
        Ok(Some(Pin { items }))
    }

    /// Pins a server for the first time. Returns `false`, changing nothing, when it already
    /// has a pin (another caller or process got there first).
    pub async fn pin_first(&self, id: &ServerId, pin: &Pin) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let res = sqlx::query(
            "INSERT INTO server_pins (server_id, pinned_at, updated_at) VALUES (?, ?, ?)
             ON CONFLICT(server_id) DO NOTHING",
        )
        .bind(id.as_str())
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if res.rows_affected() == 0 {
            return Ok(false);
        }
        for (k, item) in &pin.items {
            insert_item(&mut tx, id, k, item, now).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Accepts items into a pin (creating it if needed): `upsert` are pinned as given,
    /// `remove` are dropped from the pin. Their pending rows go too.
    pub async fn approve_pin_items(
        &self,
        id: &ServerId,
        upsert: &[(ItemKey, PinnedItem)],
        remove: &[ItemKey],
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO server_pins (server_id, pinned_at, updated_at) VALUES (?, ?, ?)
             ON CONFLICT(server_id) DO UPDATE SET updated_at = excluded.updated_at",
        )
        .bind(id.as_str())
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        for (k, item) in upsert {
            insert_item(&mut tx, id, k, item, now).await?;
        }
        for k in upsert.iter().map(|(k, _)| k).chain(remove) {
            if remove.contains(k) {
                sqlx::query("DELETE FROM pin_items WHERE server_id = ? AND kind = ? AND name = ?")
                    .bind(id.as_str())
                    .bind(k.kind.as_str())
                    .bind(&k.name)
                    .execute(&mut *tx)
                    .await?;
            }
            sqlx::query("DELETE FROM pin_pending WHERE server_id = ? AND kind = ? AND name = ?")
                .bind(id.as_str())
                .bind(k.kind.as_str())
                .bind(&k.name)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// What the last catalog seen of a server had waiting for review.
    pub async fn pin_pending(&self, id: &ServerId) -> Result<Vec<PendingItem>, StoreError> {
        let rows = sqlx::query(
            "SELECT kind, name, reason, digest, canonical, first_seen_at FROM pin_pending
             WHERE server_id = ? ORDER BY kind, name",
        )
        .bind(id.as_str())
        .fetch_all(self.reader())
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(PendingItem {
                    key: key_of(id, r.get("kind"), r.get("name"))?,
                    reason: HoldReason::parse(r.get("reason"))
                        .ok_or_else(|| corrupt(id, "unknown hold reason"))?,
                    item: PinnedItem {
                        digest: r.get("digest"),
                        canonical: r.get("canonical"),
                    },
                    first_seen_ms: r.get("first_seen_at"),
                })
            })
            .collect()
    }

    /// Replaces the record of what waits for review. An item seen before with the same digest
    /// keeps its first-seen time.
    pub async fn set_pin_pending(
        &self,
        id: &ServerId,
        items: &[(ItemKey, HoldReason, PinnedItem)],
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let mut tx = self.write_tx().await?;
        let before: Vec<(String, String, String, i64)> = sqlx::query_as(
            "SELECT kind, name, digest, first_seen_at FROM pin_pending WHERE server_id = ?",
        )
        .bind(id.as_str())
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM pin_pending WHERE server_id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        for (k, reason, item) in items {
            let first_seen = before
                .iter()
                .find(|(kind, name, digest, _)| {
                    kind == k.kind.as_str() && *name == k.name && *digest == item.digest
                })
                .map_or(now, |b| b.3);
            sqlx::query(
                "INSERT INTO pin_pending (server_id, kind, name, reason, digest, canonical, first_seen_at)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(id.as_str())
            .bind(k.kind.as_str())
            .bind(&k.name)
            .bind(reason.as_str())
            .bind(&item.digest)
            .bind(&item.canonical)
            .bind(first_seen)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

async fn insert_item(
    tx: &mut sqlx::SqliteConnection,
    id: &ServerId,
    k: &ItemKey,
    item: &PinnedItem,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO pin_items (server_id, kind, name, digest, canonical, approved_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(server_id, kind, name) DO UPDATE SET digest = excluded.digest,
           canonical = excluded.canonical, approved_at = excluded.approved_at",
    )
    .bind(id.as_str())
    .bind(k.kind.as_str())
    .bind(&k.name)
    .bind(&item.digest)
    .bind(&item.canonical)
    .bind(now)
    .execute(tx)
    .await?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::{ServerSpec, StdioSpec, Timeouts, TransportSpec};

    /// A pinned item as the store sees it: two strings. How `approval::pins` computes them from
    /// a catalog is its business (and its tests'); building them here keeps `store` off `mcp`.
    fn item(digest: char, canonical: &str) -> PinnedItem {
        PinnedItem {
            digest: digest.to_string().repeat(64),
            canonical: canonical.to_owned(),
        }
    }

    async fn store_with(name: &str) -> (Store, ServerId, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
        let id = ServerId::new(name).unwrap();
        store
            .insert_server(&ServerSpec {
                id: id.clone(),
                transport: TransportSpec::Stdio(StdioSpec {
                    command: "/bin/true".into(),
                    args: vec![],
                    env: vec![],
                    cwd: None,
                    sandbox: Default::default(),
                }),
                enabled: true,
                timeouts: Timeouts::default(),
            })
            .await
            .unwrap();
        (store, id, dir)
    }

    #[tokio::test]
    async fn first_pin_wins_and_approvals_update_it() {
        let (store, id, _dir) = store_with("p").await;
        assert_eq!(store.pin(&id).await.unwrap(), None);
        let empty = Pin::default();
        assert!(store.pin_first(&id, &empty).await.unwrap());
        assert_eq!(
            store.pin(&id).await.unwrap(),
            Some(Pin::default()),
            "an empty surface is a pin too"
        );
        let full = Pin {
            items: [
                (
                    ItemKey::tool("a"),
                    item('a', r#"{"description":"A.","name":"a"}"#),
                ),
                (
                    ItemKey::tool("b"),
                    item('b', r#"{"description":"B.","name":"b"}"#),
                ),
                (
                    ItemKey::instructions(),
                    item('c', r#"{"instructions":"hi"}"#),
                ),
            ]
            .into_iter()
            .collect(),
        };
        assert!(
            !store.pin_first(&id, &full).await.unwrap(),
            "already pinned"
        );

        let a = (ItemKey::tool("a"), full.items[&ItemKey::tool("a")].clone());
        store
            .set_pin_pending(&id, &[(a.0.clone(), HoldReason::New, a.1.clone())])
            .await
            .unwrap();
        let pending = store.pin_pending(&id).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].reason, HoldReason::New);

        store
            .approve_pin_items(&id, std::slice::from_ref(&a), &[])
            .await
            .unwrap();
        let pin = store.pin(&id).await.unwrap().unwrap();
        assert_eq!(pin.tool("a"), Some(&a.1));
        assert!(store.pin_pending(&id).await.unwrap().is_empty());

        store
            .approve_pin_items(&id, &[], &[ItemKey::tool("a")])
            .await
            .unwrap();
        assert_eq!(store.pin(&id).await.unwrap(), Some(Pin::default()));

        assert!(store.delete_server(&id).await.unwrap());
        assert_eq!(store.pin(&id).await.unwrap(), None, "pins cascade");
    }
}
