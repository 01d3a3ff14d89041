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
use crate::mcp::supervisor::ServerHandle;
use crate::mcp::McpError;

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
