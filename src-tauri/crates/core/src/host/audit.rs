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
//!
//! **One statement per commit (issue 11).** The writer remembers what the writer connection saw
//! after its last append (`store::AppendStamp`) and appends a batch with one guarded `INSERT`
//! that goes in only if nothing changed since (see `store/audit/append.rs`): one round trip to
//! SQLite and one sync, instead of five round trips. When anything else wrote (another process
//! on the same data dir, a rule or a message written by this one), the guard refuses and the
//! batch goes through a `BEGIN IMMEDIATE` transaction that reads the chain head, so `prev_hash`
//! is never computed from a stale head.
//!
//! **The policy in memory.** That transaction also reads every rule and tag; the writer decodes
//! them into a [`PolicyView`] published on a `watch` channel, from which calls are decided
//! without I/O (`host::policy`). A decision made from the view is appended with the view's
//! generation, and stored only if the view is still the stored policy: by the guard (nothing
//! changed at all), or, in the transaction, by comparing the rows read with the view's. If they
//! differ, the new view gets a new generation and the older decisions are left out of the batch;
//! their callers decide again from the store. So no call leaves on a decision the stored policy
//! no longer supports at the moment the decision became durable, whichever process changed it,
//! and a view that cannot be checked (an error) is never trusted (fail closed).

use std::io::Write;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};

use super::policy::PolicyView;
use super::{Host, HostError};
use crate::approval::audit::{AuditContext, AuditEvent};
use crate::store::{
    now_ms, AppendStamp, AuditPage, AuditQuery, NewAuditEntry, PolicyRows, Store, VerifyReport,
};

/// Most entries committed in one transaction.
const BATCH_MAX: usize = 512;
/// How long entries nobody waits for may wait for a commit someone does wait for.
const LINGER: std::time::Duration = std::time::Duration::from_millis(20);

enum Job {
    /// Append these, then say whether they were stored (when someone waits). `under`: the
    /// generation of the in-memory policy a decision among them was made under; they are
    /// stored only if that policy is still the stored one.
    Append {
        entries: Vec<NewAuditEntry>,
        done: Option<oneshot::Sender<bool>>,
        under: Option<u64>,
    },
    /// Answer once everything queued before is committed.
    Flush(oneshot::Sender<()>),
}

/// The queue in front of the audit table, and the policy the writer last validated. Cheap to
/// clone; the task ends with the last clone.
#[derive(Clone, Debug)]
pub(super) struct AuditWriter {
    jobs: mpsc::UnboundedSender<Job>,
    policy: watch::Receiver<Option<Arc<PolicyView>>>,
}

impl Job {
    /// Whether someone waits for this job (an awaited append, a flush).
    fn awaited(&self) -> bool {
        !matches!(self, Self::Append { done: None, .. })
    }

    fn entries(&self) -> usize {
        match self {
            Self::Append { entries, .. } => entries.len(),
            Self::Flush(_) => 0,
        }
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Append { entries, under, .. } => {
                write!(f, "Append({}, {under:?})", entries.len())
            }
            Self::Flush(_) => f.write_str("Flush"),
        }
    }
}

impl AuditWriter {
    /// Starts the writer task (on the current tokio runtime).
    pub(super) fn spawn(store: Store) -> Self {
        let (jobs, rx) = mpsc::unbounded_channel();
        let (view, policy) = watch::channel(None);
        tokio::spawn(write_loop(
            Writer {
                store,
                stamp: None,
                rows: None,
                generation: 0,
                view,
            },
            rx,
        ));
        Self { jobs, policy }
    }

    /// The policy as last validated by the writer; `None` before its first append, or when the
    /// stored policy does not decode (the host then decides from the store and fails closed).
    pub(super) fn policy(&self) -> Option<Arc<PolicyView>> {
        self.policy.borrow().clone()
    }

    async fn append(&self, entries: Vec<NewAuditEntry>, under: Option<u64>) -> bool {
        let (tx, rx) = oneshot::channel();
        let job = Job::Append {
            entries,
            done: Some(tx),
            under,
        };
        if self.jobs.send(job).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }

    fn append_later(&self, entries: Vec<NewAuditEntry>) {
        let _ = self.jobs.send(Job::Append {
            entries,
            done: None,
            under: None,
        });
    }

    pub(super) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.jobs.send(Job::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// The writer task's state: it alone appends (through this host), so it alone knows what the
/// writer connection saw last.
struct Writer {
    store: Store,
    /// The state a one-statement append builds on; `None` until the first transactional append
    /// and after any failure.
    stamp: Option<AppendStamp>,
    /// The policy's rows as of `stamp`.
    rows: Option<PolicyRows>,
    /// Bumped whenever the rows read differ from the ones before.
    generation: u64,
    /// Publishes the decoded policy to the deciding calls.
    view: watch::Sender<Option<Arc<PolicyView>>>,
}

impl Writer {
    /// Appends every job's entries in order, in one transaction; returns, per job, whether its
    /// entries were stored.
    async fn commit(&mut self, jobs: &mut [Job]) -> Vec<bool> {
        let total: usize = jobs.iter().map(Job::entries).sum();
        if total == 0 {
            return vec![true; jobs.len()];
        }
        let current = |j: &Job| match j {
            Job::Append { under: Some(g), .. } => *g == self.generation,
            _ => true,
        };
        if let Some(stamp) = self.stamp.take() {
            if jobs.iter().all(current) {
                // Moved out, and back into their jobs if the guard fails.
                let lens: Vec<usize> = jobs.iter().map(Job::entries).collect();
                let mut entries = Vec::with_capacity(total);
                for j in jobs.iter_mut() {
                    if let Job::Append { entries: e, .. } = j {
                        entries.append(e);
                    }
                }
                match self.store.append_audit_guarded(&entries, &stamp).await {
                    Ok(Some((_, next))) => {
                        self.stamp = Some(next);
                        return vec![true; jobs.len()];
                    }
                    // Something changed since the stamp: the transactional path finds out what.
                    Ok(None) => {}
                    Err(e) => {
                        tracing::debug!(error = %e, "one-statement audit append failed; retrying in a transaction");
                    }
                }
                let mut rest = entries.into_iter();
                for (j, n) in jobs.iter_mut().zip(lens) {
                    if let Job::Append { entries: e, .. } = j {
                        e.extend(rest.by_ref().take(n));
                    }
                }
            }
        }
        self.commit_refreshing(jobs).await
    }

    /// The transactional path: re-reads the policy inside the write transaction, leaves out the
    /// entries of decisions made under a policy that is no longer the stored one, and appends
    /// the rest.
    async fn commit_refreshing(&mut self, jobs: &mut [Job]) -> Vec<bool> {
        let mut stored = vec![true; jobs.len()];
        let Self {
            store,
            rows,
            generation,
            view,
            ..
        } = self;
        let result = store
            .append_audit_refreshing(|policy| {
                if rows.as_ref() != Some(policy) {
                    *generation += 1;
                    let _ =
                        view.send_replace(PolicyView::decode(policy, *generation).map(Arc::new));
                    *rows = Some(policy.clone());
                }
                let mut out = Vec::new();
                for (job, ok) in jobs.iter_mut().zip(stored.iter_mut()) {
                    if let Job::Append { entries, under, .. } = job {
                        if under.is_some_and(|g| g != *generation) {
                            *ok = false;
                        } else {
                            out.append(entries);
                        }
                    }
                }
                out
            })
            .await;
        match result {
            Ok(done) => {
                self.stamp = done.stamp;
                stored
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not append to the audit log");
                self.stamp = None;
                vec![false; jobs.len()]
            }
        }
    }
}

async fn write_loop(mut writer: Writer, mut rx: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = rx.recv().await {
        let mut queued = first.entries();
        let mut jobs = vec![first];
        loop {
            // Take what is queued already: they share this transaction's sync.
            while queued < BATCH_MAX {
                match rx.try_recv() {
                    Ok(job) => {
                        queued += job.entries();
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
                    queued += job.entries();
                    jobs.push(job);
                }
                Ok(None) | Err(_) => break,
            }
        }
        let stored = writer.commit(&mut jobs).await;
        for (job, ok) in jobs.into_iter().zip(stored) {
            match job {
                Job::Append {
                    done: Some(done), ..
                } => {
                    // A waiter's own entries are stored all or nothing.
                    let _ = done.send(ok);
                }
                Job::Append { done: None, .. } => {}
                Job::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl crate::approval::audit::Recorder for AuditWriter {
    async fn record(&self, events: Vec<(AuditEvent, AuditContext)>) -> usize {
        let n = events.len();
        if self.append(entries(events), None).await {
            n
        } else {
            0
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
        if self.inner.audit.append(entries(events), None).await {
            n
        } else {
            0
        }
    }

    /// Records a request's proposal and the decision made from the in-memory policy of
    /// `generation` (plus what goes with it), waiting until they are on disk; returns `false`,
    /// with nothing recorded, when that policy is no longer the stored one or could not be
    /// checked: the caller must decide again from the store (fail closed).
    pub(super) async fn audit_decided(
        &self,
        events: Vec<(AuditEvent, AuditContext)>,
        generation: u64,
    ) -> bool {
        self.inner
            .audit
            .append(entries(events), Some(generation))
            .await
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
