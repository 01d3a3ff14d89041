//! Doors around the governed seam, for the project's own test harness and benchmarks only
//! (feature `harness`, enabled by `switchboard-tests`).
//!
//! Everything a shell does goes through `Host` and its seam (`host::run`): policy, holds,
//! approval and the audit log. Benchmarks need to measure what that seam costs against the
//! raw connection, and protocol-level tests need to reach a supervised server's connection;
//! that is all this module is for. The desktop shell and the CLI never enable the feature,
//! and `tests/tests/seam.rs` fails if their sources name this module.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::host::{Host, HostError};
use crate::ids::ToolRef;
use crate::mcp::catalog::{Arguments, ToolResult};
use crate::mcp::connection::Connection;
use crate::mcp::McpError;
use crate::supervisor::ServerHandle;

/// The live connection of a supervised server.
pub fn connection(handle: &ServerHandle) -> Result<Arc<Connection>, McpError> {
    handle.connection()
}

/// A tool call with the host's checks (schema, holds, switches) but no policy, approval or
/// audit: the floor the governed call is measured against.
pub async fn call_tool_ungoverned(
    host: &Host,
    tool: &ToolRef,
    arguments: Arguments,
) -> Result<ToolResult, HostError> {
    host.call_tool(tool, arguments, CancellationToken::new(), None)
        .await
}

/// Switches metrics recording (`host::metrics`) on or off for `host`'s calls from now on, to
/// measure what recording adds to a call (`sb-bench --only metrics`). On by default; nothing but
/// this door switches it off.
pub fn set_metrics_recording(host: &Host, on: bool) {
    host.set_metrics_recording(on);
}

/// Records `n` metric samples of `tool` as the seam records a call that ended with `result`,
/// without making the call, in chunks of `chunk` with a flush after each; per chunk, the time
/// spent recording and the time the flush waited for the writer (see `host::metrics_bench`).
pub async fn record_metric_samples(
    host: &Host,
    tool: &ToolRef,
    arguments: &Arguments,
    result: &ToolResult,
    n: usize,
    chunk: usize,
) -> Vec<(std::time::Duration, std::time::Duration)> {
    host.record_samples_for_bench(tool, arguments, result, n, chunk)
        .await
}
