//! The audit table (migration `0007_audit.sql`): an append-only, hash-chained log (OB-01).
//!
//! Each row's `hash` is SHA-256 over [`chain_hash`]'s canonical form of its other columns, the
//! previous row's hash (`prev_hash`) included, so changing, removing or reordering any row
//! breaks the chain from there on. Appends read the chain's head and insert in one `BEGIN
//! IMMEDIATE` transaction on the single writer connection, so two appends can never link to
//! the same head; the audit writer's one-statement append checks the head it links to inside
//! the statement instead (`audit/append.rs`). Ids are issued above `sqlite_sequence` (the highest id ever used), so rows
//! cut from the end leave a visible gap.
//!
//! What the chain cannot prove on its own: that nobody rewrote the whole log from some row on
//! and recomputed every hash after it. [`VerifyReport::head`] is the value to note down (or
//! export) to pin the log as it is now.
//!
//! What goes into a row (redaction, size caps) is decided in `approval::audit`; this file only
//! serializes it, with a last size guard.

use std::io::Write;

use futures::TryStreamExt;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Store, StoreError};
use crate::audit_data::{Actor, AuditContext, AuditKind};

mod append;

pub use append::{AppendStamp, Refreshed};

/// `prev_hash` of the first row.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A stored row's `detail_json` never exceeds this many bytes; the event's own caps keep
/// normal rows far below it.
pub const DETAIL_MAX: usize = 64 * 1024;

/// A page holds at most this many entries.
pub const AUDIT_PAGE_MAX: u32 = 500;

/// The version tag that opens every hashed serialization.
const CHAIN_FORMAT: &str = "switchboard-audit/1";

/// One entry to append.
#[derive(Clone, Debug, PartialEq)]
pub struct NewAuditEntry {
    /// When, ms since the epoch.
    pub at_ms: i64,
    /// What kind.
    pub kind: AuditKind,
    /// Which server, tool, conversation and call.
    pub context: AuditContext,
    /// Who, or which rule.
    pub actor: Actor,
    /// The details, already redacted and capped.
    pub detail: Value,
}

/// One stored row, exactly as stored (the export writes these, so anyone can re-check the
/// chain with [`AuditEntry::computed_hash`] or the recipe in [`chain_hash`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct AuditEntry {
    /// Its position in the chain (1, 2, 3, ...).
    pub id: i64,
    /// When, ms since the epoch.
    pub at: i64,
    /// What kind.
    pub kind: AuditKind,
    /// The server, when about one.
    pub server: Option<String>,
    /// The tool, when about one.
    pub tool: Option<String>,
    /// The conversation, when a model asked.
    pub conversation: Option<String>,
    /// Links the entries of one call.
    pub call_ref: Option<String>,
    /// Who or which rule (see [`Actor::parse`]).
    pub actor: String,
    /// The details as JSON text, exactly as hashed.
    pub detail_json: String,
    /// The previous row's hash.
    pub prev_hash: String,
    /// This row's hash.
    pub hash: String,
}

impl AuditEntry {
    /// The hash this row's contents call for (equal to `hash` unless it was tampered with).
    pub fn computed_hash(&self) -> String {
        chain_hash(&ChainFields {
            id: self.id,
            at: self.at,
            kind: self.kind.as_str(),
            server: self.server.as_deref(),
            tool: self.tool.as_deref(),
            conversation: self.conversation.as_deref(),
            call_ref: self.call_ref.as_deref(),
            actor: &self.actor,
            detail_json: &self.detail_json,
            prev_hash: &self.prev_hash,
        })
    }

    /// The details, parsed.
    pub fn detail(&self) -> Value {
        serde_json::from_str(&self.detail_json).unwrap_or(Value::Null)
    }
}

/// The hashed columns of a row.
#[derive(Clone, Copy, Debug)]
pub struct ChainFields<'a> {
    /// `id`.
    pub id: i64,
    /// `at`.
    pub at: i64,
    /// `kind`.
    pub kind: &'a str,
    /// `server`.
    pub server: Option<&'a str>,
    /// `tool`.
    pub tool: Option<&'a str>,
    /// `conversation`.
    pub conversation: Option<&'a str>,
    /// `call_ref`.
    pub call_ref: Option<&'a str>,
    /// `actor`.
    pub actor: &'a str,
    /// `detail_json`, as stored text (not re-serialized).
    pub detail_json: &'a str,
    /// `prev_hash`.
    pub prev_hash: &'a str,
}

/// A row's hash: lowercase hex SHA-256 of the compact JSON array
/// `["switchboard-audit/1", id, at, kind, server, tool, conversation, call_ref, actor,
/// detail_json, prev_hash]` (NULL as `null`, `detail_json` as a string). A JSON array of
/// scalars has one compact spelling, so any JSON library can reproduce it.
pub fn chain_hash(f: &ChainFields<'_>) -> String {
    let canonical = serde_json::to_vec(&(
        CHAIN_FORMAT,
        f.id,
        f.at,
        f.kind,
        f.server,
        f.tool,
        f.conversation,
        f.call_ref,
        f.actor,
        f.detail_json,
        f.prev_hash,
    ))
    .unwrap_or_default();
    hex::encode(Sha256::digest(&canonical))
}

/// Which entries to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Text to find in the kind, server, tool, actor, conversation, call or details
    /// (case-insensitive for ASCII); `None` or blank lists everything.
    pub search: Option<String>,
    /// Only entries older than this id (the previous page's `next_before`).
    pub before: Option<i64>,
    /// At most this many (capped at [`AUDIT_PAGE_MAX`]; 0 means 50).
    pub limit: u32,
}

/// One page, newest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditPage {
    /// The entries.
    pub entries: Vec<AuditEntry>,
    /// Pass as `before` for the next page; `None` on the last page.
    pub next_before: Option<i64>,
}

/// What verification found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Rows checked.
    pub rows: u64,
    /// Whether the chain is intact.
    pub ok: bool,
    /// The first row that breaks the chain.
    pub first_bad: Option<BadRow>,
    /// The last row's hash: note it to detect a later rewrite of the whole tail.
    pub head: Option<String>,
}

/// A row where the chain breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BadRow {
    /// The row's id (for a cut tail: the first missing id).
    pub id: i64,
    /// What is wrong.
    pub why: Tamper,
}

/// How the chain is broken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Tamper {
    /// The row's contents do not match its hash.
    Edited,
    /// Rows with these ids, just before this one, are gone.
    Missing {
        /// The first missing id.
        from: i64,
        /// The last missing id.
        to: i64,
    },
    /// The row does not link to the row before it.
    Unlinked,
    /// Rows after the last one were removed (ids up to `highest` were issued).
    Truncated {
        /// The highest id ever issued.
        highest: i64,
    },
}

impl std::fmt::Display for Tamper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Edited => f.write_str("its contents do not match its hash: it was edited"),
            Self::Missing { from, to } if from == to => {
                write!(f, "row {from} before it is missing: it was deleted")
            }
            Self::Missing { from, to } => {
                write!(
                    f,
                    "rows {from} to {to} before it are missing: they were deleted"
                )
            }
            Self::Unlinked => f.write_str(
                "it does not link to the row before it: that row was rewritten, or rows were \
                 replaced or reordered",
            ),
            Self::Truncated { highest } => write!(
                f,
                "the last rows (up to {highest}) are missing: they were deleted"
            ),
        }
    }
}

type RawRow = (
    i64,
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    String,
);

/// The columns, in [`RawRow`]'s order (a macro, so queries stay `&'static str` literals).
macro_rules! columns {
    () => {
        "id, at, kind, server, tool, conversation, call_ref, actor, detail_json, prev_hash, hash"
    };
}

/// Every row, oldest first.
const ALL_ROWS: &str = concat!("SELECT ", columns!(), " FROM audit ORDER BY id");

fn entry(r: RawRow) -> Result<AuditEntry, StoreError> {
    let kind = AuditKind::parse(&r.2).ok_or_else(|| StoreError::Corrupt {
        what: format!("audit entry {}", r.0),
        reason: format!("unknown kind {:?}", r.2),
    })?;
    Ok(AuditEntry {
        id: r.0,
        at: r.1,
        kind,
        server: r.3,
        tool: r.4,
        conversation: r.5,
        call_ref: r.6,
        actor: r.7,
        detail_json: r.8,
        prev_hash: r.9,
        hash: r.10,
    })
}

/// The stored details: the JSON, or a marker when it is over [`DETAIL_MAX`].
fn detail_text(detail: &Value) -> String {
    let s = detail.to_string();
    if s.len() <= DETAIL_MAX {
        return s;
    }
    serde_json::json!({ "truncated": true, "bytes": s.len() }).to_string()
}

/// `%text%` for LIKE with `\` as the escape character.
fn like_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

impl Store {
    /// Appends one entry to the chain and returns it as stored.
    pub async fn append_audit(&self, e: &NewAuditEntry) -> Result<AuditEntry, StoreError> {
        let mut rows = self.append_audit_all(std::slice::from_ref(e)).await?;
        rows.pop().ok_or_else(|| StoreError::Corrupt {
            what: "audit log".into(),
            reason: "an append returned no row".into(),
        })
    }

    /// A page of entries, newest first.
    pub async fn audit_page(&self, q: &AuditQuery) -> Result<AuditPage, StoreError> {
        let limit = match q.limit {
            0 => 50,
            n => n.min(AUDIT_PAGE_MAX),
        };
        let pattern = q
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(like_pattern);
        // One more than asked tells whether there is a next page.
        let rows: Vec<RawRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM audit
             WHERE (?1 IS NULL OR id < ?1)
               AND (?2 IS NULL OR kind LIKE ?2 ESCAPE '\\' OR server LIKE ?2 ESCAPE '\\'
                    OR tool LIKE ?2 ESCAPE '\\' OR actor LIKE ?2 ESCAPE '\\'
                    OR conversation LIKE ?2 ESCAPE '\\' OR call_ref LIKE ?2 ESCAPE '\\'
                    OR detail_json LIKE ?2 ESCAPE '\\')
             ORDER BY id DESC LIMIT ?3"
        ))
        .bind(q.before)
        .bind(pattern)
        .bind(i64::from(limit) + 1)
        .fetch_all(self.reader())
        .await?;
        let more = rows.len() > limit as usize;
        let entries = rows
            .into_iter()
            .take(limit as usize)
            .map(entry)
            .collect::<Result<Vec<_>, _>>()?;
        let next_before = if more {
            entries.last().map(|e| e.id)
        } else {
            None
        };
        Ok(AuditPage {
            entries,
            next_before,
        })
    }

    /// Recomputes the whole chain and reports the first row that breaks it.
    pub async fn verify_audit(&self) -> Result<VerifyReport, StoreError> {
        // The highest id issued is read before the walk, whose snapshot is then at least as
        // new: an append racing the verification cannot look like a cut tail.
        let (issued,): (i64,) = sqlx::query_as(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0)",
        )
        .fetch_one(self.reader())
        .await?;
        // One statement reads one consistent snapshot (WAL), however long the walk takes.
        let mut rows = sqlx::query_as::<_, RawRow>(ALL_ROWS).fetch(self.reader());
        let mut report = VerifyReport {
            rows: 0,
            ok: true,
            first_bad: None,
            head: None,
        };
        let mut last_id = 0;
        let mut prev = GENESIS_HASH.to_owned();
        while let Some(raw) = rows.try_next().await? {
            report.rows += 1;
            let (id, kind) = (raw.0, raw.2.clone());
            let fields = ChainFields {
                id,
                at: raw.1,
                kind: &kind,
                server: raw.3.as_deref(),
                tool: raw.4.as_deref(),
                conversation: raw.5.as_deref(),
                call_ref: raw.6.as_deref(),
                actor: &raw.7,
                detail_json: &raw.8,
                prev_hash: &raw.9,
            };
            let why = if id != last_id + 1 {
                Some(Tamper::Missing {
                    from: last_id + 1,
                    to: id - 1,
                })
            } else if chain_hash(&fields) != raw.10 {
                Some(Tamper::Edited)
            } else if raw.9 != prev {
                Some(Tamper::Unlinked)
            } else {
                None
            };
            if let Some(why) = why {
                report.ok = false;
                report.first_bad = Some(BadRow { id, why });
                break;
            }
            last_id = id;
            prev = raw.10;
        }
        drop(rows);
        if report.ok {
            report.head = (last_id > 0).then_some(prev);
            if issued > last_id {
                report.ok = false;
                report.first_bad = Some(BadRow {
                    id: last_id + 1,
                    why: Tamper::Truncated { highest: issued },
                });
            }
        }
        Ok(report)
    }

    /// Writes every entry, oldest first, as one JSON object per line; returns how many.
    pub async fn export_audit_jsonl(
        &self,
        out: &mut (impl Write + Send),
    ) -> Result<u64, StoreError> {
        let mut rows = sqlx::query_as::<_, RawRow>(ALL_ROWS).fetch(self.reader());
        let mut n = 0;
        let io = |source| StoreError::Io {
            context: "could not write the audit export".into(),
            source,
        };
        while let Some(raw) = rows.try_next().await? {
            let e = entry(raw)?;
            let mut line = serde_json::to_vec(&e).map_err(|err| StoreError::Corrupt {
                what: format!("audit entry {}", e.id),
                reason: err.to_string(),
            })?;
            line.push(b'\n');
            out.write_all(&line).map_err(io)?;
            n += 1;
        }
        out.flush().map_err(io)?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
