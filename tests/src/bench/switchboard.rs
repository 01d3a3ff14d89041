//! `switchboard-core` as the client: a real [`Host`] (temp data dir, in-memory secrets, default
//! supervisor settings) that adds, trusts and starts the fake server like the app does, then
//! calls `echo` either through [`Host::call_tool`] (the path the chat loop takes: catalog and
//! disabled-tool checks, progress forwarding, tracing span) or straight through the supervised
//! [`Connection::call_tool`] (to see what the host layer costs).
//!
//! Concurrency: `c` tokio tasks on the multi-threaded runtime share one call counter and loop
//! until `calls` calls have been made; each call is timed alone.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{Map, Value};
use switchboard_core::config::{ServerSpec, StdioSpec, Timeouts, TransportSpec};
use switchboard_core::host::{CallOptions, Host, HostBuilder};
use switchboard_core::ids::{ServerId, ToolRef};
use switchboard_core::mcp::catalog::{Content, ToolResult};
use switchboard_core::mcp::connection::{Connection, RequestOptions};
use switchboard_core::mcp::supervisor::ServerStatus;
use switchboard_core::secrets::{MemoryStore, Secrets};

use super::{Figure, Plan, TEXT};

/// Which entry point of the core is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `Host::call_tool`.
    Host,
    /// `ServerHandle::connection()?.call_tool`.
    Connection,
}

enum Caller {
    Host(Host, ToolRef),
    Connection(Arc<Connection>),
}

impl Caller {
    async fn call(&self, arguments: Map<String, Value>) -> Result<()> {
        let r = match self {
            Caller::Host(host, tool) => host
                .call_tool(tool, arguments, CallOptions::default())
                .await
                .map_err(|e| anyhow!("echo failed: {e}"))?,
            Caller::Connection(conn) => conn
                .call_tool("echo", arguments, RequestOptions::default())
                .await
                .map_err(|e| anyhow!("echo failed: {e}"))?,
        };
        check(&r)
    }
}

fn check(r: &ToolResult) -> Result<()> {
    match r.content.first() {
        Some(Content::Text { text }) if text == TEXT && !r.is_error => Ok(()),
        _ => bail!("unexpected echo result: {r:?}"),
    }
}

fn arguments() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), Value::String(TEXT.into()));
    m
}

/// Runs the plan through a fresh host and a fresh server process.
pub async fn run(server: &Path, plan: &Plan, entry: Entry) -> Result<Vec<Figure>> {
    let dir = tempfile::tempdir().context("could not create a temp dir for the host")?;
    let host = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .build()
        .await
        .context("could not build the host")?;
    let result = measure(&host, server, plan, entry).await;
    host.shutdown().await;
    result
}

async fn measure(host: &Host, server: &Path, plan: &Plan, entry: Entry) -> Result<Vec<Figure>> {
    let id = ServerId::new("bench").map_err(|e| anyhow!("server id: {e}"))?;
    host.add_server(ServerSpec {
        id: id.clone(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: server.to_string_lossy().into_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
        }),
        enabled: true,
        timeouts: Timeouts {
            request_secs: 60,
            init_secs: 30,
        },
    })
    .await?;
    let view = host.trust_view(&id).await?;
    host.trust_server(&id, &view.fingerprint).await?;
    let handle = host.start_server(&id).await?;
    let status = handle.wait_settled(Duration::from_secs(30)).await;
    if !matches!(status, ServerStatus::Running { .. }) {
        bail!("the fake server did not start: {status}");
    }
    let caller = Arc::new(match entry {
        Entry::Host => Caller::Host(
            host.clone(),
            ToolRef {
                server: id,
                tool: "echo".into(),
            },
        ),
        Entry::Connection => Caller::Connection(handle.connection()?),
    });
    if plan.warmup > 0 {
        closed_loop(&caller, 1, plan.warmup).await?;
    }
    let mut out = Vec::with_capacity(plan.conc.len());
    for &c in &plan.conc {
        out.push(closed_loop(&caller, c, plan.calls).await?);
    }
    Ok(out)
}

/// `n` calls by `c` tasks sharing a counter.
async fn closed_loop(caller: &Arc<Caller>, c: usize, n: usize) -> Result<Figure> {
    let caller = caller.clone();
    super::closed_loop(c, n, move || {
        let caller = caller.clone();
        async move { caller.call(arguments()).await }
    })
    .await
}
