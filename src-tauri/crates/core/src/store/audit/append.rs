//! Appending to the audit chain (issue 11): the plain transactional append, and the one-statement
//! append the host's audit writer uses on its hot path.
//!
//! Why two ways. Every SQL statement is a round trip to sqlx's SQLite worker thread (60-100 us
//! on the project's VM), and the plain append needs five of them (`BEGIN IMMEDIATE`, the chain
//! head, the id sequence, the `INSERT`, `COMMIT`) before its one disk sync. The writer task
//! instead remembers what it saw last ([`AppendStamp`]) and appends with **one guarded
//! statement** in autocommit mode: `INSERT .. SELECT .. FROM (VALUES ..) WHERE <guard>`. An
//! autocommit write takes SQLite's write lock before it reads anything (like `BEGIN
//! IMMEDIATE`), so the guard is evaluated on the newest state of the file, and the insert happens
//! only when nothing changed since the stamp:
//! - `data_version` (via `pragma_data_version()`) is unchanged: no *other connection*, in this
//!   process or another (the CLI, a second app), committed anything;
//! - `total_changes()` is unchanged and `last_insert_rowid()` is still the stamp's last row: this
//!   connection (the single writer every part of this process shares) wrote nothing else, not a
//!   rule, a tag, a message; and it is the same connection (a reopened one starts from 0);
//! - the chain's head row, its hash and the id sequence are the stamp's.
//!
//! When the guard fails, nothing is inserted and the caller takes the transactional path, which
//! reads the head inside `BEGIN IMMEDIATE`: `prev_hash` is never computed from a stale head,
//! whoever else appends. The transactional path also reads the policy's rows in the same
//! transaction ([`Store::append_audit_refreshing`]), so the stamp it returns vouches for that
//! policy too: a later guarded append that succeeds proves the policy it was decided under is
//! still the stored one (see `host::audit`).

use sqlx::{Connection as _, SqliteConnection};

use super::{detail_text, AuditEntry, NewAuditEntry, GENESIS_HASH};
use crate::store::policy::{read_policy_rows, PolicyRows};
use crate::store::{Store, StoreError};

/// Rows in one INSERT statement at most (11 bound values each; SQLite allows 32,766).
pub(super) const INSERT_ROWS_MAX: usize = 1_000;

/// What the writer connection saw after its last append: the state a guarded append requires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendStamp {
    /// `PRAGMA data_version` of the writer connection (changes when another connection commits).
    data_version: i64,
    /// `total_changes()` of the writer connection after the append.
    total_changes: i64,
    /// The id of the chain's head, which is also the highest id issued and this connection's
    /// `last_insert_rowid()`.
    head_id: i64,
    /// The head's hash: the next row's `prev_hash`.
    head_hash: String,
}

/// What a transactional append saw and did.
#[derive(Debug)]
pub struct Refreshed {
    /// The rows appended.
    pub rows: Vec<AuditEntry>,
    /// The state a guarded append may build on; `None` when nothing was appended (the
    /// connection's `last_insert_rowid()` then says nothing about the head).
    pub stamp: Option<AppendStamp>,
    /// The policy's rows, read in the same transaction.
    pub policy: PolicyRows,
}

/// Links `entries` to the chain after `(id, prev)`: the rows as they will be stored.
fn link(entries: &[NewAuditEntry], mut id: i64, mut prev: String) -> Vec<AuditEntry> {
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        id += 1;
        let ctx = &e.context;
        let mut row = AuditEntry {
            id,
            at: e.at_ms,
            kind: e.kind,
            server: ctx.server.as_ref().map(ToString::to_string),
            tool: ctx.tool.as_deref().map(|t| t.chars().take(256).collect()),
            conversation: ctx.conversation.as_ref().map(ToString::to_string),
            call_ref: ctx.call_ref.as_ref().map(ToString::to_string),
            actor: e.actor.to_stored(),
            detail_json: detail_text(&e.detail),
            prev_hash: prev,
            hash: String::new(),
        };
        row.hash = row.computed_hash();
        prev = row.hash.clone();
        out.push(row);
    }
    out
}

/// `VALUES (..), (..)` of `rows`, after whatever `q` holds.
fn push_rows(q: &mut sqlx::QueryBuilder<sqlx::Sqlite>, rows: &[AuditEntry]) {
    q.push_values(rows, |mut b, row| {
        b.push_bind(row.id)
            .push_bind(row.at)
            .push_bind(row.kind.as_str())
            .push_bind(&row.server)
            .push_bind(&row.tool)
            .push_bind(&row.conversation)
            .push_bind(&row.call_ref)
            .push_bind(&row.actor)
            .push_bind(&row.detail_json)
            .push_bind(&row.prev_hash)
            .push_bind(&row.hash);
    });
}

const INSERT_HEAD: &str = "INSERT INTO audit (id, at, kind, server, tool, conversation, call_ref, \
                           actor, detail_json, prev_hash, hash) ";

/// Reads the head, links `entries` to it and inserts them, inside the caller's transaction.
async fn insert_linked(
    conn: &mut SqliteConnection,
    entries: &[NewAuditEntry],
) -> Result<Vec<AuditEntry>, StoreError> {
    let head: Option<(i64, String)> =
        sqlx::query_as("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1")
            .fetch_optional(&mut *conn)
            .await?;
    let (issued,): (i64,) = sqlx::query_as(
        "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0)",
    )
    .fetch_one(&mut *conn)
    .await?;
    let (id, prev) = match head {
        Some((id, hash)) => (id.max(issued), hash),
        None => (issued, GENESIS_HASH.to_owned()),
    };
    let out = link(entries, id, prev);
    // One statement per batch rather than one per row: a group commit of many calls' entries
    // costs one statement's overhead.
    for rows in out.chunks(INSERT_ROWS_MAX) {
        let mut q = sqlx::QueryBuilder::new(INSERT_HEAD);
        push_rows(&mut q, rows);
        q.build().execute(&mut *conn).await?;
    }
    Ok(out)
}

impl Store {
    /// Appends entries in order, in one transaction (one disk sync for all of them).
    pub async fn append_audit_all(
        &self,
        entries: &[NewAuditEntry],
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let mut conn = self.writer().acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let out = insert_linked(&mut tx, entries).await?;
        tx.commit().await?;
        Ok(out)
    }

    /// The transactional append of the audit writer: reads the policy's rows in the write
    /// transaction, lets `choose` pick what to append knowing them (the entries of decisions
    /// made under another policy are left out), appends that, and returns the stamp a
    /// [`Store::append_audit_guarded`] can build on.
    pub async fn append_audit_refreshing(
        &self,
        choose: impl FnOnce(&PolicyRows) -> Vec<NewAuditEntry> + Send,
    ) -> Result<Refreshed, StoreError> {
        let mut conn = self.writer().acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        // Inside the write lock: nobody can commit between this and the commit below, so the
        // version, the policy and the head all describe the state the rows are appended to.
        let (data_version,): (i64,) = sqlx::query_as("PRAGMA data_version")
            .fetch_one(&mut *tx)
            .await?;
        let policy = read_policy_rows(&mut tx).await?;
        let entries = choose(&policy);
        let rows = insert_linked(&mut tx, &entries).await?;
        tx.commit().await?;
        let stamp = match rows.last() {
            Some(last) => {
                // Read on the same connection, still held: nothing ran on it in between.
                let (total_changes, last_rowid): (i64, i64) =
                    sqlx::query_as("SELECT total_changes(), last_insert_rowid()")
                        .fetch_one(&mut *conn)
                        .await?;
                (last_rowid == last.id).then(|| AppendStamp {
                    data_version,
                    total_changes,
                    head_id: last.id,
                    head_hash: last.hash.clone(),
                })
            }
            None => None,
        };
        Ok(Refreshed {
            rows,
            stamp,
            policy,
        })
    }

    /// Appends entries in one guarded statement, only if nothing in the database changed since
    /// `stamp` (see the module docs). `Ok(None)`: the guard failed and nothing was appended;
    /// take the transactional path.
    pub async fn append_audit_guarded(
        &self,
        entries: &[NewAuditEntry],
        stamp: &AppendStamp,
    ) -> Result<Option<(Vec<AuditEntry>, AppendStamp)>, StoreError> {
        if entries.is_empty() || entries.len() > INSERT_ROWS_MAX {
            return Ok(None);
        }
        let rows = link(entries, stamp.head_id, stamp.head_hash.clone());
        let mut q = sqlx::QueryBuilder::new(INSERT_HEAD);
        q.push(
            "SELECT column1, column2, column3, column4, column5, column6, column7, column8, \
             column9, column10, column11 FROM (",
        );
        push_rows(&mut q, &rows);
        q.push(") WHERE (SELECT data_version FROM pragma_data_version()) = ")
            .push_bind(stamp.data_version)
            .push(" AND total_changes() = ")
            .push_bind(stamp.total_changes)
            .push(" AND last_insert_rowid() = ")
            .push_bind(stamp.head_id)
            .push(" AND (SELECT MAX(id) FROM audit) = ")
            .push_bind(stamp.head_id)
            .push(" AND (SELECT hash FROM audit WHERE id = ")
            .push_bind(stamp.head_id)
            .push(") = ")
            .push_bind(&stamp.head_hash)
            .push(" AND (SELECT seq FROM sqlite_sequence WHERE name = 'audit') = ")
            .push_bind(stamp.head_id);
        let done = q.build().execute(self.writer()).await?;
        if done.rows_affected() != rows.len() as u64 {
            // The guard is one condition for every row: all or nothing were inserted.
            return Ok(None);
        }
        let Some(last) = rows.last() else {
            return Ok(None);
        };
        let next = AppendStamp {
            data_version: stamp.data_version,
            // Inserts into `audit` fire no triggers, so each row counts once.
            total_changes: stamp.total_changes + rows.len() as i64,
            head_id: last.id,
            head_hash: last.hash.clone(),
        };
        Ok(Some((rows, next)))
    }
}
