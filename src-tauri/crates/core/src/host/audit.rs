//! The audit log in the host (OB-01): recording events, and reading, verifying and exporting
//! the log for the CLI and the desktop shell.
//!
//! Recording never fails the operation being recorded: a tool call that ran must report its
//! result even when the disk is full. A failed append is logged as a warning instead; the gap
//! it leaves is visible (the call's entries are incomplete), unlike a silently lost result.

use std::io::Write;

use super::{Host, HostError};
use crate::approval::audit::{AuditContext, AuditEvent};
use crate::store::{now_ms, AuditEntry, AuditPage, AuditQuery, VerifyReport};

impl Host {
    /// Records one event about `ctx`. Never fails: a store error is logged and `None`
    /// returned.
    pub async fn audit(&self, event: AuditEvent, ctx: AuditContext) -> Option<AuditEntry> {
        let kind = event.kind();
        let entry = event.into_entry(ctx, now_ms());
        match self.inner.store.append_audit(&entry).await {
            Ok(stored) => Some(stored),
            Err(e) => {
                tracing::warn!(kind = %kind, error = %e, "could not append to the audit log");
                None
            }
        }
    }

    /// Records several events in order, in one transaction (one disk sync), for callers that
    /// have more than one at hand (a decision and the start of the call). Never fails, like
    /// [`Host::audit`]; returns how many were recorded.
    pub async fn audit_all(&self, events: Vec<(AuditEvent, AuditContext)>) -> usize {
        let at = now_ms();
        let entries: Vec<_> = events
            .into_iter()
            .map(|(event, ctx)| event.into_entry(ctx, at))
            .collect();
        match self.inner.store.append_audit_all(&entries).await {
            Ok(stored) => stored.len(),
            Err(e) => {
                tracing::warn!(entries = entries.len(), error = %e, "could not append to the audit log");
                0
            }
        }
    }

    /// A page of the log, newest first.
    pub async fn audit_page(&self, query: &AuditQuery) -> Result<AuditPage, HostError> {
        Ok(self.inner.store.audit_page(query).await?)
    }

    /// Recomputes the hash chain and reports the first row that breaks it.
    pub async fn verify_audit(&self) -> Result<VerifyReport, HostError> {
        Ok(self.inner.store.verify_audit().await?)
    }

    /// Writes the whole log as JSON lines, oldest first; returns how many entries.
    pub async fn export_audit(&self, out: &mut (impl Write + Send)) -> Result<u64, HostError> {
        Ok(self.inner.store.export_audit_jsonl(out).await?)
    }
}
