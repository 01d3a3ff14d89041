//! The audit log view (OB-01): pages of entries, newest first, with text search, and the
//! hash-chain check. Read-only: the web view can neither write nor delete audit entries.
//! Entry ids are `i64` in the store and travel as strings (JavaScript numbers are not i64).

use serde::Serialize;
use specta::Type;
use switchboard_core::approval::audit::summarize;
use switchboard_core::host::Host;
use switchboard_core::store::{AuditEntry, AuditPage, AuditQuery, VerifyReport};
use tauri::State;

use super::{logged, IpcError};

/// The longest search accepted.
const SEARCH_MAX: usize = 1_000;

/// One audit entry. Every text field is shown as text.
#[derive(Clone, Debug, Serialize, Type)]
pub struct AuditEntryDto {
    /// Its id (an integer, as text).
    pub id: String,
    /// When, ms since the Unix epoch.
    pub at_ms: f64,
    /// `proposed`, `decided`, `edited`, `started`, `finished`, `elicitation`, `sampling`,
    /// `grant`, `policy` or `pin`.
    pub kind: String,
    /// The server, when about one.
    pub server: Option<String>,
    /// The tool, when about one.
    pub tool: Option<String>,
    /// The conversation, when a model asked.
    pub conversation: Option<String>,
    /// Links the entries of one call.
    pub call_ref: Option<String>,
    /// Who or which rule: `user`, `model`, `system`, `policy:<rule>`, `grant:<id>`.
    pub actor: String,
    /// One line about it.
    pub summary: String,
    /// The full details, pretty-printed JSON (secrets already redacted).
    pub detail: String,
    /// The entry's hash in the chain.
    pub hash: String,
}

/// A page of entries.
#[derive(Clone, Debug, Serialize, Type)]
pub struct AuditPageDto {
    /// Newest first.
    pub entries: Vec<AuditEntryDto>,
    /// Pass as `before_id` for the next page; `None` on the last page.
    pub next_before: Option<String>,
}

/// The result of checking the chain.
#[derive(Clone, Debug, Serialize, Type)]
pub struct AuditVerifyDto {
    /// Whether the chain is intact.
    pub ok: bool,
    /// Entries checked.
    pub rows: f64,
    /// The first entry that breaks the chain (its id, as text).
    pub first_bad: Option<String>,
    /// What is wrong with it, in a sentence.
    pub problem: Option<String>,
    /// The last entry's hash, when intact.
    pub head: Option<String>,
}

impl From<AuditEntry> for AuditEntryDto {
    fn from(e: AuditEntry) -> Self {
        let detail = serde_json::to_string_pretty(&e.detail()).unwrap_or_default();
        Self {
            id: e.id.to_string(),
            at_ms: e.at as f64,
            kind: e.kind.as_str().into(),
            summary: summarize(e.kind, &e.detail_json),
            server: e.server,
            tool: e.tool,
            conversation: e.conversation,
            call_ref: e.call_ref,
            actor: e.actor,
            detail,
            hash: e.hash,
        }
    }
}

impl From<AuditPage> for AuditPageDto {
    fn from(p: AuditPage) -> Self {
        Self {
            entries: p.entries.into_iter().map(Into::into).collect(),
            next_before: p.next_before.map(|id| id.to_string()),
        }
    }
}

/// The store's query from the window's: the search capped, the entry id parsed, at most
/// `limit` entries (100 by default; the store caps it).
fn query(
    search: Option<String>,
    before_id: Option<String>,
    limit: Option<u32>,
) -> Result<AuditQuery, IpcError> {
    if search.as_ref().is_some_and(|s| s.len() > SEARCH_MAX) {
        return Err(IpcError::invalid("the search is too long"));
    }
    let before = before_id
        .map(|id| id.parse::<i64>())
        .transpose()
        .map_err(|_| IpcError::invalid("that is not an audit entry id"))?;
    Ok(AuditQuery {
        search,
        before,
        limit: limit.unwrap_or(100),
    })
}

impl From<VerifyReport> for AuditVerifyDto {
    fn from(r: VerifyReport) -> Self {
        Self {
            ok: r.ok,
            rows: r.rows as f64,
            first_bad: r.first_bad.as_ref().map(|b| b.id.to_string()),
            problem: r.first_bad.map(|b| b.why.to_string()),
            head: r.head,
        }
    }
}

/// A page of audit entries, newest first: those matching `search` (kind, server, tool, actor,
/// details), older than `before_id`, at most `limit` (default 100, at most 500).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(before = before_id.as_deref().map(logged), limit = limit))]
pub async fn audit_entries(
    host: State<'_, Host>,
    search: Option<String>,
    before_id: Option<String>,
    limit: Option<u32>,
) -> Result<AuditPageDto, IpcError> {
    let query = query(search, before_id, limit)?;
    Ok(host.audit_page(&query).await?.into())
}

/// Recomputes the audit log's hash chain and reports the first edited or deleted entry.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn verify_audit(host: State<'_, Host>) -> Result<AuditVerifyDto, IpcError> {
    Ok(host.verify_audit().await?.into())
}
