//! The seam's side of the metrics feature: the host hands each request it sends to
//! [`Metrics`] and classifies how a failed one ended (the feature does not know
//! [`HostError`]'s variants' meaning for a call).

use serde::Serialize;

use super::{Host, HostError};
use crate::catalog::ToolResult;
use crate::ids::{ServerId, ToolRef};
use crate::mcp::McpError;
use crate::metrics::{Ended, Meter, Metrics};
use crate::store::{MetricKind, Outcome};

/// How a failed request ended.
fn outcome_of(e: &HostError) -> Outcome {
    match e {
        HostError::Mcp(m) => match m {
            McpError::Timeout(_) => Outcome::Timeout,
            McpError::Cancelled => Outcome::Cancelled,
            McpError::Server { .. } => Outcome::RpcError,
            McpError::Protocol(_) | McpError::Refused { .. } => Outcome::Protocol,
            McpError::Disconnected(_) | McpError::NotRunning { .. } => Outcome::Transport,
            _ => Outcome::Other,
        },
        HostError::Denied { .. } => Outcome::Denied,
        _ => Outcome::Other,
    }
}

fn ended<T>(result: &Result<T, HostError>) -> Ended<'_, T> {
    match result {
        Ok(r) => Ended::Answer(r),
        Err(e) => Ended::Failed(outcome_of(e)),
    }
}

impl Host {
    /// The metrics feature: reports, the export setting, an export now.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.features.metrics
    }

    /// Starts measuring a request about to be sent.
    pub(super) fn meter(
        &self,
        server: &ServerId,
        kind: MetricKind,
        name: &str,
        arguments: &impl Serialize,
    ) -> Meter {
        self.inner
            .features
            .metrics
            .meter(server, kind, name, arguments)
    }

    /// Records a tool call's end.
    pub(super) fn metered_tool(&self, m: Meter, result: &Result<ToolResult, HostError>) {
        self.inner.features.metrics.record_tool(m, ended(result));
    }

    /// Records the end of a resource read or prompt get.
    pub(super) fn metered<T: Serialize>(&self, m: Meter, result: &Result<T, HostError>) {
        self.inner.features.metrics.record(m, ended(result));
    }

    /// Records a tool call the policy or the person refused.
    pub(super) fn record_refusal(&self, tool: &ToolRef) {
        self.inner.features.metrics.record_refusal(tool);
    }
}
