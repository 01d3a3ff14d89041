//! A run's shared state (issue 15, point 3): the `run_state` and `run_notes` tables, through
//! which agents on different providers hand each other what they found, in one form.
//!
//! A scope is the [`RunId`] of a delegation tree's root. In it:
//! - **entries**: JSON values under keys. Every write adds a version (the old ones stay, for
//!   [`Store::state_history`]); reads take the newest. A write may name the version it read
//!   (`expected_version`, 0 for "the key must be new"); when another write came first it fails
//!   with [`RunStateError::Conflict`] naming the newest version and its author, so two agents
//!   never overwrite each other unseen.
//! - **notes**: an append-only log of short texts.
//!
//! Limits keep what a model can write bounded, and each is checked inside the write's own
//! `BEGIN IMMEDIATE` transaction, so two processes writing at once cannot both slip under one
//! ([`LIMITS`]). Every refusal is a typed error whose message a model can act on. What counts
//! toward the scope's total is the newest value of each key: history does not crowd out current
//! work, and only the newest [`StateLimits::versions_kept`] versions of a key are kept, so a key
//! rewritten in a loop stays bounded (at most that many values of 64 KiB).
//!
//! Authors are text: an agent's name, or [`PERSON`] for a person. `(person)` cannot be an
//! agent name (agent names are lowercase letters, digits, `-` and `_`), so the two never mix.

use serde::Serialize;
use serde_json::Value;

use crate::clock::now_ms;
use crate::ids::RunId;
use crate::store::{Store, StoreError};

mod limits;

pub use limits::{check_key, RunStateError, StateLimits, LIMITS};

/// The author text of something a person wrote (not a valid agent name).
pub const PERSON: &str = "(person)";

/// One version of one key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateEntry {
    /// The key.
    pub key: String,
    /// Its version: 1 for the first write, one more for each after.
    pub version: u32,
    /// The value.
    pub value: Value,
    /// Who wrote it: an agent's name or [`PERSON`].
    pub author: String,
    /// When, in ms since the Unix epoch.
    pub written_ms: i64,
}

/// The newest version of a key, without its value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateKey {
    /// The key.
    pub key: String,
    /// Its newest version.
    pub version: u32,
    /// Who wrote that version.
    pub author: String,
    /// Its size in bytes of JSON.
    pub bytes: u64,
    /// When it was written.
    pub written_ms: i64,
}

/// One note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateNote {
    /// Its place in the log: 1, 2, ...
    pub seq: u32,
    /// Who wrote it.
    pub author: String,
    /// The note.
    pub text: String,
    /// When.
    pub written_ms: i64,
}

type EntryRow = (String, i64, String, String, i64);
type KeyRow = (String, i64, String, i64, i64);

fn num(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn entry((key, version, value, author, written_ms): EntryRow) -> Result<StateEntry, StoreError> {
    let value = serde_json::from_str(&value).map_err(|e| StoreError::Corrupt {
        what: format!("state entry {key} version {version}"),
        reason: e.to_string(),
    })?;
    Ok(StateEntry {
        key,
        version: num(version),
        value,
        author,
        written_ms,
    })
}

/// The newest version of each key of a scope: a correlated subquery over the primary key,
/// spelled out in each query (sqlx takes only static SQL text).
macro_rules! newest {
    () => {
        "version = (SELECT MAX(n.version) FROM run_state n WHERE n.scope = r.scope AND n.entry = r.entry)"
    };
}

impl Store {
    /// Writes a new version of `key` in `scope` (see the module docs for versions and limits);
    /// returns what was written, without the value.
    pub async fn state_put(
        &self,
        scope: &RunId,
        key: &str,
        value: &Value,
        author: &str,
        expected_version: Option<u32>,
    ) -> Result<StateKey, RunStateError> {
        check_key(key)?;
        let json = serde_json::to_string(value).map_err(|e| StoreError::Corrupt {
            what: format!("the value for {key}"),
            reason: e.to_string(),
        })?;
        let bytes = json.len();
        if bytes > LIMITS.value_bytes {
            return Err(RunStateError::ValueTooLarge { bytes });
        }
        let mut tx = self.write_tx().await.map_err(RunStateError::Store)?;
        let newest: Option<(i64, String)> = sqlx::query_as(
            "SELECT version, written_by FROM run_state WHERE scope = ? AND entry = ?
             ORDER BY version DESC LIMIT 1",
        )
        .bind(scope.as_str())
        .bind(key)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        let newest = newest.map(|(v, a)| (num(v), a));
        if let Some(expected) = expected_version {
            let current = newest.as_ref().map_or(0, |(v, _)| *v);
            if current != expected {
                return Err(RunStateError::Conflict {
                    key: key.to_owned(),
                    expected,
                    newest,
                });
            }
        }
        let (others, used): (i64, i64) = sqlx::query_as(concat!(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(value AS BLOB))), 0) FROM run_state r \
             WHERE scope = ? AND entry <> ? AND ",
            newest!()
        ))
        .bind(scope.as_str())
        .bind(key)
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        if newest.is_none() && usize::try_from(others).unwrap_or(usize::MAX) >= LIMITS.keys {
            return Err(RunStateError::TooManyKeys);
        }
        let used = usize::try_from(used).unwrap_or(usize::MAX);
        let total = used.saturating_add(bytes);
        if total > LIMITS.scope_bytes {
            return Err(RunStateError::ScopeFull { used, total });
        }
        let version = newest.map_or(1, |(v, _)| v.saturating_add(1));
        let now = now_ms();
        sqlx::query(
            "INSERT INTO run_state (scope, entry, version, value, written_by, written_ms)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(scope.as_str())
        .bind(key)
        .bind(i64::from(version))
        .bind(&json)
        .bind(author)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        sqlx::query("DELETE FROM run_state WHERE scope = ? AND entry = ? AND version <= ?")
            .bind(scope.as_str())
            .bind(key)
            .bind(i64::from(version) - i64::from(LIMITS.versions_kept))
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(StateKey {
            key: key.to_owned(),
            version,
            author: author.to_owned(),
            bytes: bytes as u64,
            written_ms: now,
        })
    }

    /// The newest version of `key`, if it was ever written.
    pub async fn state_get(
        &self,
        scope: &RunId,
        key: &str,
    ) -> Result<Option<StateEntry>, StoreError> {
        let row: Option<EntryRow> = sqlx::query_as(
            "SELECT entry, version, value, written_by, written_ms FROM run_state
             WHERE scope = ? AND entry = ? ORDER BY version DESC LIMIT 1",
        )
        .bind(scope.as_str())
        .bind(key)
        .fetch_optional(self.reader())
        .await?;
        row.map(entry).transpose()
    }

    /// Every version of `key`, oldest first (empty if it was never written).
    pub async fn state_history(
        &self,
        scope: &RunId,
        key: &str,
    ) -> Result<Vec<StateEntry>, StoreError> {
        let rows: Vec<EntryRow> = sqlx::query_as(
            "SELECT entry, version, value, written_by, written_ms FROM run_state
             WHERE scope = ? AND entry = ? ORDER BY version",
        )
        .bind(scope.as_str())
        .bind(key)
        .fetch_all(self.reader())
        .await?;
        rows.into_iter().map(entry).collect()
    }

    /// The newest version of every key of `scope`, by key.
    pub async fn state_list(&self, scope: &RunId) -> Result<Vec<StateKey>, StoreError> {
        let rows: Vec<KeyRow> = sqlx::query_as(concat!(
            "SELECT entry, version, written_by, LENGTH(CAST(value AS BLOB)), written_ms \
             FROM run_state r WHERE scope = ? AND ",
            newest!(),
            " ORDER BY entry"
        ))
        .bind(scope.as_str())
        .fetch_all(self.reader())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(key, version, author, bytes, written_ms)| StateKey {
                key,
                version: num(version),
                author,
                bytes: u64::try_from(bytes).unwrap_or(0),
                written_ms,
            })
            .collect())
    }

    /// Appends a note to `scope`'s log; returns it.
    pub async fn state_add_note(
        &self,
        scope: &RunId,
        author: &str,
        text: &str,
    ) -> Result<StateNote, RunStateError> {
        if text.trim().is_empty() {
            return Err(RunStateError::EmptyNote);
        }
        if text.len() > LIMITS.note_bytes {
            return Err(RunStateError::NoteTooLarge { bytes: text.len() });
        }
        let mut tx = self.write_tx().await?;
        let (count, last): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM run_notes WHERE scope = ?")
                .bind(scope.as_str())
                .fetch_one(&mut *tx)
                .await
                .map_err(StoreError::from)?;
        if usize::try_from(count).unwrap_or(usize::MAX) >= LIMITS.notes {
            return Err(RunStateError::TooManyNotes);
        }
        let seq = num(last).saturating_add(1);
        let now = now_ms();
        sqlx::query(
            "INSERT INTO run_notes (scope, seq, written_by, text, written_ms) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(scope.as_str())
        .bind(i64::from(seq))
        .bind(author)
        .bind(text)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(StateNote {
            seq,
            author: author.to_owned(),
            text: text.to_owned(),
            written_ms: now,
        })
    }

    /// Every note of `scope`, oldest first.
    pub async fn state_notes(&self, scope: &RunId) -> Result<Vec<StateNote>, StoreError> {
        let rows: Vec<(i64, String, String, i64)> = sqlx::query_as(
            "SELECT seq, written_by, text, written_ms FROM run_notes WHERE scope = ? ORDER BY seq",
        )
        .bind(scope.as_str())
        .fetch_all(self.reader())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(seq, author, text, written_ms)| StateNote {
                seq: num(seq),
                author,
                text,
                written_ms,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
