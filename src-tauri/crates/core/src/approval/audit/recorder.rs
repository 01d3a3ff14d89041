//! Where a feature records what it did: the [`Recorder`] handle. The host's audit writer (the
//! queue in front of the hash-chained log) implements it; a feature below the host (models,
//! skills, ...) gets it as an `Arc<dyn Recorder>` and never the writer or the host itself.

use async_trait::async_trait;
use serde_json::Value;

use super::{AuditContext, AuditEvent, ConfigChange};
use crate::ids::ServerId;

/// Appends audit events and waits until they are on disk.
#[async_trait]
pub trait Recorder: Send + Sync + std::fmt::Debug {
    /// Records `events` in order, in one transaction; never fails (a store error is logged);
    /// returns how many were recorded.
    async fn record(&self, events: Vec<(AuditEvent, AuditContext)>) -> usize;

    /// Records a governance change made by a person (AP-09): `server` goes in the context,
    /// `detail` holds names and settings, never a secret value (it is redacted anyway).
    async fn config_changed(&self, change: ConfigChange, server: Option<&ServerId>, detail: Value) {
        let ctx = AuditContext {
            server: server.cloned(),
            ..AuditContext::default()
        };
        self.record(vec![(AuditEvent::Config { change, detail }, ctx)])
            .await;
    }
}
