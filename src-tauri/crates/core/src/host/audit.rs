//! The audit log in the host (OB-01): recording events, and reading, verifying and exporting
//! the log for the CLI and the desktop shell.
//!
//! Recording never fails the operation being recorded: a tool call that ran must report its
//! result even when the disk is full. A failed append is logged as a warning instead; the gap
//! it leaves is visible (the call's entries are incomplete), unlike a silently lost result.
//!
//! Appends go through one writer task ([`AuditWriter`]) that commits whatever is queued in one
//! transaction: the log is hash-chained, so appends are serial anyway, and with
//! `synchronous=FULL` each transaction costs a disk sync. Parallel calls thus share syncs (group
//! commit). What must be on disk before a call goes out (its proposal and decision) is awaited;
//! what happens after (its end) is queued and not waited for, and lingers up to [`LINGER`] for
//! the next awaited append to share its transaction: back-to-back calls then cost one disk sync
//! each, not two. Readers (page, verify, export) and shutdown flush the queue first, so nothing
//! queued is ever missing from what they see; a SIGKILL can lose at most the queued ends of the
//! last few milliseconds (the chain stays valid).

use std::io::Write;

use tokio::sync::{mpsc, oneshot};

use super::{Host, HostError};
use crate::approval::audit::{AuditContext, AuditEvent};
use crate::store::{now_ms, AuditPage, AuditQuery, NewAuditEntry, Store, VerifyReport};

/// Most entries committed in one transaction.
const BATCH_MAX: usize = 512;
/// How long entries nobody waits for may wait for a commit someone does wait for.
const LINGER: std::time::Duration = std::time::Duration::from_millis(20);

enum Job {
    /// Append these, then say how many were stored (when someone waits).
    Append(Vec<NewAuditEntry>, Option<oneshot::Sender<usize>>),
    /// Answer once everything queued before is committed.
    Flush(oneshot::Sender<()>),
}

/// The queue in front of the audit table. Cheap to clone; the task ends with the last clone.
#[derive(Clone, Debug)]
pub(super) struct AuditWriter(mpsc::UnboundedSender<Job>);

impl Job {
    /// Whether someone waits for this job (an awaited append, a flush).
    fn awaited(&self) -> bool {
        !matches!(self, Self::Append(_, None))
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Append(e, _) => write!(f, "Append({})", e.len()),
            Self::Flush(_) => f.write_str("Flush"),
        }
    }
}

impl AuditWriter {
    /// Starts the writer task (on the current tokio runtime).
    pub(super) fn spawn(store: Store) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(store, rx));
        Self(tx)
    }

    async fn append(&self, entries: Vec<NewAuditEntry>) -> usize {
        let (tx, rx) = oneshot::channel();
        if self.0.send(Job::Append(entries, Some(tx))).is_err() {
            return 0;
        }
        rx.await.unwrap_or(0)
    }

    fn append_later(&self, entries: Vec<NewAuditEntry>) {
        let _ = self.0.send(Job::Append(entries, None));
    }

    pub(super) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.0.send(Job::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

async fn write_loop(store: Store, mut rx: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = rx.recv().await {
        let mut jobs = vec![first];
        let mut queued = 0;
        loop {
            // Take what is queued already: they share this transaction's sync.
            while queued < BATCH_MAX {
                match rx.try_recv() {
                    Ok(job) => {
                        if let Job::Append(e, _) = &job {
                            queued += e.len();
                        }
                        jobs.push(job);
                    }
                    Err(_) => break,
                }
            }
            // Nobody waits for what is queued so far (a call's end): let it ride on the next
            // commit someone does wait for (the next call's decision), so a call costs one
            // disk sync rather than two; a short linger bounds how late it is written.
            if queued >= BATCH_MAX || jobs.iter().any(Job::awaited) {
                break;
            }
            match tokio::time::timeout(LINGER, rx.recv()).await {
                Ok(Some(job)) => {
                    if let Job::Append(e, _) = &job {
                        queued += e.len();
                    }
                    jobs.push(job);
                }
                Ok(None) | Err(_) => break,
            }
        }
        let entries: Vec<NewAuditEntry> = jobs
            .iter_mut()
            .flat_map(|j| match j {
                Job::Append(e, _) => std::mem::take(e),
                Job::Flush(_) => Vec::new(),
            })
            .collect();
        let stored = if entries.is_empty() {
            true
        } else {
            match store.append_audit_all(&entries).await {
                Ok(_) => true,
                Err(e) => {
                    tracing::warn!(entries = entries.len(), error = %e, "could not append to the audit log");
                    false
                }
            }
        };
        for job in jobs {
            match job {
                Job::Append(_, Some(done)) => {
                    // How many of the waiter's own entries are stored is all or nothing.
                    let _ = done.send(usize::from(stored));
                }
                Job::Append(_, None) => {}
                Job::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }
}

impl Host {
    /// Records one event about `ctx` and waits until it is on disk. Never fails: a store
    /// error is logged; returns whether it was recorded.
    pub async fn audit(&self, event: AuditEvent, ctx: AuditContext) -> bool {
        self.audit_all(vec![(event, ctx)]).await > 0
    }

    /// Records several events in order, in one transaction (shared with whatever else is
    /// queued), and waits until they are on disk. Never fails, like [`Host::audit`]; returns
    /// how many were recorded.
    pub async fn audit_all(&self, events: Vec<(AuditEvent, AuditContext)>) -> usize {
        let n = events.len();
        let stored = self.inner.audit.append(entries(events)).await;
        if stored > 0 {
            n
        } else {
            0
        }
    }

    /// Records a governance change made by a person (AP-09): `server` goes in the context,
    /// `detail` holds names and settings, never a secret value (it is redacted anyway).
    pub(crate) async fn audit_config(
        &self,
        change: crate::approval::audit::ConfigChange,
        server: Option<&crate::ids::ServerId>,
        detail: serde_json::Value,
    ) {
        let ctx = AuditContext {
            server: server.cloned(),
            ..AuditContext::default()
        };
        self.audit(AuditEvent::Config { change, detail }, ctx).await;
    }

    /// Queues an event without waiting for the disk: for what happened after the fact (a
    /// call's end), where the caller must not be slowed down. Readers flush first.
    pub(super) fn audit_later(&self, event: AuditEvent, ctx: AuditContext) {
        self.inner.audit.append_later(entries(vec![(event, ctx)]));
    }

    /// A page of the log, newest first.
    pub async fn audit_page(&self, query: &AuditQuery) -> Result<AuditPage, HostError> {
        self.inner.audit.flush().await;
        Ok(self.inner.store.audit_page(query).await?)
    }

    /// Recomputes the hash chain and reports the first row that breaks it.
    pub async fn verify_audit(&self) -> Result<VerifyReport, HostError> {
        self.inner.audit.flush().await;
        Ok(self.inner.store.verify_audit().await?)
    }

    /// Writes the whole log as JSON lines, oldest first; returns how many entries.
    pub async fn export_audit(&self, out: &mut (impl Write + Send)) -> Result<u64, HostError> {
        self.inner.audit.flush().await;
        Ok(self.inner.store.export_audit_jsonl(out).await?)
    }
}

fn entries(events: Vec<(AuditEvent, AuditContext)>) -> Vec<NewAuditEntry> {
    let at = now_ms();
    events
        .into_iter()
        .map(|(event, ctx)| event.into_entry(ctx, at))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sqlx::ConnectOptions as _;

    use super::*;
    use crate::approval::audit::AuditEvent;

    /// A reader's flush waits for entries queued before it, even while the disk is busy.
    #[tokio::test]
    async fn flush_waits_for_what_was_queued() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let store = Store::open(&path).await.unwrap();
        let writer = AuditWriter::spawn(store.clone());
        // Another connection holds the write lock, so the writer cannot commit yet.
        let mut other = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .connect()
            .await
            .unwrap();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut other)
            .await
            .unwrap();
        writer.append_later(entries(vec![(
            AuditEvent::Started,
            AuditContext::default(),
        )]));
        let flushing = tokio::spawn({
            let writer = writer.clone();
            async move { writer.flush().await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !flushing.is_finished(),
            "the flush returned before the entry was written"
        );
        sqlx::query("COMMIT").execute(&mut other).await.unwrap();
        flushing.await.unwrap();
        let page = store.audit_page(&AuditQuery::default()).await.unwrap();
        assert_eq!(page.entries.len(), 1);
    }
}
