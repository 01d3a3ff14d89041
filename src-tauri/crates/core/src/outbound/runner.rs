//! [`Restoring`]: a [`ToolRunner`] that puts the real values back into a call's arguments
//! before the call reaches the governed seam.
//!
//! The placeholders replaced travel to the approval prompt as a task-local note
//! ([`restored_in_this_call`]): the runner seam (`chat::ToolRunner::run`) has no field for
//! it, and the call's future is polled inside the scope the note is set in, down to the
//! seam's `Ask`. Only placeholder names travel, never values.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::provider::Session;
use crate::chat::{Started, ToolRunner};
use crate::ids::ToolRef;
use crate::llm::ToolSpec;
use crate::mcp::catalog::{Progress, ToolResult};

tokio::task_local! {
    static RESTORED: Vec<String>;
}

/// The placeholders replaced by real values in the call being run, when it came from a
/// model through [`Restoring`] (empty otherwise).
pub fn restored_in_this_call() -> Vec<String> {
    RESTORED.try_with(Clone::clone).unwrap_or_default()
}

/// `reason` (why a person is asked) with a sentence naming the placeholders put back in the
/// call being asked about, when there are any: the prompt shows the real values (what will be
/// sent) and this says the model wrote these placeholders in their place.
pub fn with_restored_note(reason: String) -> String {
    let restored = restored_in_this_call();
    if restored.is_empty() {
        return reason;
    }
    format!(
        "{reason} The model saw placeholders, not your data: {} {} replaced by the real \
         values shown here before sending.",
        restored.join(", "),
        if restored.len() == 1 { "was" } else { "were" }
    )
}

/// A turn's runner with placeholders restored in every call.
pub struct Restoring<'a> {
    inner: &'a dyn ToolRunner,
    session: Arc<Session>,
}

impl<'a> Restoring<'a> {
    /// Restores `session`'s placeholders in the calls `inner` runs.
    pub fn new(inner: &'a dyn ToolRunner, session: Arc<Session>) -> Self {
        Self { inner, session }
    }
}

impl ToolRunner for Restoring<'_> {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.specs()
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        self.inner.resolve(llm_name)
    }

    fn run(
        &self,
        tool: ToolRef,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Progress>,
        started: oneshot::Sender<Started>,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        let (arguments, restored) = self.session.restore(&arguments);
        let call = self.inner.run(tool, arguments, cancel, progress, started);
        Box::pin(RESTORED.scope(restored, call))
    }

    fn is_local(&self, llm_name: &str) -> bool {
        self.inner.is_local(llm_name)
    }

    fn run_local(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        let (arguments, restored) = self.session.restore(&arguments);
        let call = self.inner.run_local(llm_name, arguments, cancel);
        Box::pin(RESTORED.scope(restored, call))
    }
}
