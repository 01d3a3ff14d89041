//! The 2026-07-28 rows (issue 13, point 8): the official TypeScript SDK v2 client
//! (`@modelcontextprotocol/client`, pinned to 2026-07-28: `server/discover`, the per-request
//! `_meta` envelope, over HTTP the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers) and
//! Switchboard's `Host::call_tool`, in the same run, against the same server: a TypeScript SDK
//! v2 server (`tests/fixtures/ts2_server.mjs`), one fresh process per measurement, over stdio and
//! over loopback HTTP.
//!
//! | key | client | wire |
//! |---|---|---|
//! | `ts-sdk-v2-stdio` | `tests/bench/ts2_client.mjs`, which starts the server itself | stdio |
//! | `ts-sdk-v2-http` | the same script, against a server sb-bench started on 127.0.0.1 | HTTP |
//! | `switchboard-v2-stdio` | a real `Host` (like the `switchboard` row): add, trust, start, `call_tool` | stdio |
//! | `switchboard-v2-http` | the same host against a server sb-bench started on 127.0.0.1 | HTTP |
//!
//! The server is not the fake server of the other rows: `fake-mcp-server` speaks only the 2025
//! handshake, and the point of these rows is the 2026-07-28 wire. So they are compared with each
//! other, not with the fake-server rows: the node server's own cost (a fresh `McpServer` per HTTP
//! request, as the SDK's stateless handler does) is in every figure of both clients.
//!
//! The revision each row ran on is shown in its label: the SDK client is pinned to 2026-07-28
//! (it fails rather than fall back), Switchboard's is read from its live connection (it
//! negotiates by discovery, with fallback to `initialize`), so a row that fell back to the 2025
//! handshake says so.
//!
//! Where the packages are: `$SWITCHBOARD_NODE_MODULES`, else `$SWITCHBOARD_NPM_DIR/node_modules`,
//! else `<repo>/tests/npm/node_modules` (the folder holding `@modelcontextprotocol/client`,
//! `server` and `node`); `make deps` installs them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{Map, Value};
use switchboard_core::config::{HttpSpec, ServerSpec, StdioSpec, Timeouts, TransportSpec};
use switchboard_core::harness;
use switchboard_core::host::HostBuilder;
use switchboard_core::ids::{ServerId, ToolRef};
use switchboard_core::mcp::catalog::Content;
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::supervisor::ServerStatus;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::super::{closed_loop, Figure, Outcome, Plan, TEXT};
use super::{env_path, run_script, Peers};

const CLIENT_SCRIPT: &str = include_str!("../../../bench/ts2_client.mjs");
const SERVER_SCRIPT: &str = include_str!("../../../fixtures/ts2_server.mjs");
const PACKAGES: [&str; 3] = ["client", "server", "node"];

/// The keys of the rows, in table order.
pub const KEYS: [&str; 4] = [
    "ts-sdk-v2-stdio",
    "switchboard-v2-stdio",
    "ts-sdk-v2-http",
    "switchboard-v2-http",
];

/// The peers among [`KEYS`] (`--require-peers` fails when one is not measured).
pub const PEER_KEYS: [&str; 2] = ["ts-sdk-v2-stdio", "ts-sdk-v2-http"];

/// What a row is called in the table; `version` is what the run reported (the SDK version and
/// revision of the peer, the revision of Switchboard's connection).
pub fn label(key: &str, version: Option<&str>) -> String {
    let v = version.map(|v| format!(" ({v})")).unwrap_or_default();
    match key {
        "ts-sdk-v2-stdio" => format!("TS SDK v2 client{v}, stdio"),
        "ts-sdk-v2-http" => format!("TS SDK v2 client{v}, HTTP"),
        "switchboard-v2-stdio" => format!("Host::call_tool{v}, stdio, TS v2 server"),
        "switchboard-v2-http" => format!("Host::call_tool{v}, HTTP, TS v2 server"),
        other => other.into(),
    }
}

/// Writes the client and server scripts next to the other peers' scripts.
pub(super) fn write_scripts(dir: &Path) -> Result<()> {
    std::fs::write(dir.join("ts2_client.mjs"), CLIENT_SCRIPT)?;
    std::fs::write(dir.join("ts2_server.mjs"), SERVER_SCRIPT)?;
    Ok(())
}

/// The `node_modules` folder with every TypeScript SDK v2 package the rows need.
pub(super) fn modules(root: &Path) -> Option<PathBuf> {
    [
        env_path("SWITCHBOARD_NODE_MODULES"),
        env_path("SWITCHBOARD_NPM_DIR").map(|d| d.join("node_modules")),
        Some(root.join("tests/npm/node_modules")),
    ]
    .into_iter()
    .flatten()
    .find(|d| {
        PACKAGES.iter().all(|p| {
            d.join("@modelcontextprotocol")
                .join(p)
                .join("package.json")
                .is_file()
        })
    })
}

impl Peers {
    /// Measures one of the rows in [`KEYS`]. The second value goes into the row's label.
    pub async fn run_v2(&self, key: &str, plan: &Plan) -> (Outcome, Option<String>) {
        if !KEYS.contains(&key) {
            return (
                Outcome::Failed(format!("{key:?} is not a 2026-07-28 row")),
                None,
            );
        }
        let Some(modules) = &self.ts2_modules else {
            return (
                Outcome::Unavailable(
                    "the TypeScript SDK v2 (@modelcontextprotocol/client, server, node) was not \
                     found: run `make deps`, or set SWITCHBOARD_NODE_MODULES"
                        .into(),
                ),
                None,
            );
        };
        let http = key.ends_with("-http");
        let server = match http {
            true => match self.serve_http(modules).await {
                Ok(s) => Some(s),
                Err(e) => return (Outcome::Failed(format!("{e:#}")), None),
            },
            false => None,
        };
        if key.starts_with("switchboard") {
            let transport = match &server {
                Some(s) => TransportSpec::Http(HttpSpec {
                    url: s.url.clone(),
                    headers: Vec::new(),
                    auth: None,
                    allow_insecure: false,
                }),
                None => TransportSpec::Stdio(StdioSpec {
                    command: self.node.to_string_lossy().into_owned(),
                    args: self.server_args(modules),
                    env: Vec::new(),
                    cwd: None,
                    sandbox: Default::default(),
                }),
            };
            return match switchboard(transport, plan).await {
                Ok((figures, revision)) => (Outcome::Measured(figures), Some(revision)),
                Err(e) => (Outcome::Failed(format!("{e:#}")), None),
            };
        }
        let mut args: Vec<OsString> = vec![
            self.scripts.path().join("ts2_client.mjs").into(),
            "--modules".into(),
            modules.into(),
        ];
        match &server {
            Some(s) => args.extend(["--url".into(), s.url.clone().into()]),
            None => {
                let mut cmd = vec![self.node.to_string_lossy().into_owned()];
                cmd.extend(self.server_args(modules));
                let json = serde_json::to_string(&cmd).unwrap_or_default();
                args.extend(["--server-cmd".into(), json.into()]);
            }
        }
        run_script(&self.node, args, plan, "SWITCHBOARD_NODE").await
    }

    fn server_args(&self, modules: &Path) -> Vec<String> {
        vec![
            self.scripts
                .path()
                .join("ts2_server.mjs")
                .to_string_lossy()
                .into_owned(),
            "--modules".into(),
            modules.to_string_lossy().into_owned(),
        ]
    }

    /// Starts the server on a free loopback port and waits for the URL it prints.
    async fn serve_http(&self, modules: &Path) -> Result<Served> {
        let mut child = tokio::process::Command::new(&self.node)
            .args(self.server_args(modules))
            .args(["--transport", "http", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("{} cannot be started", self.node.display()))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .map_err(|_| anyhow!("the TS v2 server did not listen within 30 s"))?
            .context("reading the TS v2 server's stdout")?
            .context("the TS v2 server exited before it listened")?;
        let url = line
            .strip_prefix("listening ")
            .with_context(|| format!("unexpected line from the TS v2 server: {line:?}"))?
            .trim()
            .to_owned();
        Ok(Served { url, _child: child })
    }
}

/// An HTTP server process of one measurement, killed when dropped.
struct Served {
    url: String,
    _child: tokio::process::Child,
}

/// A fresh host (temp data dir, in-memory secrets) that adds, trusts and starts the server and
/// calls `echo` through `Host::call_tool`, like the `switchboard` row. Returns the figures and
/// the revision the connection negotiated.
async fn switchboard(transport: TransportSpec, plan: &Plan) -> Result<(Vec<Figure>, String)> {
    let dir = tempfile::tempdir().context("could not create a temp dir for the host")?;
    let host = HostBuilder::new(dir.path())
        .secrets(Secrets::new(MemoryStore::default()))
        .build()
        .await
        .context("could not build the host")?;
    let result = async {
        let id = ServerId::new("bench-v2").map_err(|e| anyhow!("server id: {e}"))?;
        host.add_server(ServerSpec {
            id: id.clone(),
            transport,
            enabled: true,
            timeouts: Timeouts {
                request_secs: 60,
                init_secs: 30,
                max_message_mib: switchboard_core::config::DEFAULT_MAX_MESSAGE_MIB,
            },
        })
        .await?;
        let view = host.trust_view(&id).await?;
        host.trust_server(&id, &view.fingerprint).await?;
        let handle = host.start_server(&id).await?;
        let status = handle.wait_settled(Duration::from_secs(30)).await;
        if !matches!(status, ServerStatus::Running { .. }) {
            bail!("the TS v2 server did not start: {status}");
        }
        let revision = harness::connection(&handle)?
            .info()
            .protocol_version
            .clone();
        let tool = ToolRef {
            server: id,
            tool: "echo".into(),
        };
        let call = {
            let host = host.clone();
            move || {
                let host = host.clone();
                let tool = tool.clone();
                async move {
                    let mut args = Map::new();
                    args.insert("text".into(), Value::String(TEXT.into()));
                    let r = harness::call_tool_ungoverned(&host, &tool, args)
                        .await
                        .map_err(|e| anyhow!("echo failed: {e}"))?;
                    match r.content.first() {
                        Some(Content::Text { text }) if text == TEXT && !r.is_error => Ok(()),
                        _ => bail!("unexpected echo result: {r:?}"),
                    }
                }
            }
        };
        if plan.warmup > 0 {
            closed_loop(1, plan.warmup, call.clone()).await?;
        }
        let mut figures = Vec::with_capacity(plan.conc.len());
        for &c in &plan.conc {
            figures.push(closed_loop(c, plan.calls, call.clone()).await?);
        }
        Ok((figures, revision))
    }
    .await;
    host.shutdown().await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four rows run end to end on a tiny plan: the TypeScript SDK v2 client and
    /// Switchboard's host, each against its own TypeScript SDK v2 server, over stdio and HTTP.
    /// Nothing is timed; every row must produce a figure for every level, so the peer cannot rot
    /// unnoticed between benchmark runs. Skipped without the packages, unless
    /// `SWITCHBOARD_REQUIRE_PEERS=1` (as in `make test`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_row_measures_on_a_tiny_plan() {
        let peers = Peers::locate().expect("locate the peers");
        if peers.ts2_modules.is_none() {
            assert!(
                std::env::var("SWITCHBOARD_REQUIRE_PEERS").as_deref() != Ok("1"),
                "SWITCHBOARD_REQUIRE_PEERS=1 but the TypeScript SDK v2 packages are not installed \
                 (run `make deps`)"
            );
            eprintln!(
                "skipped: the TypeScript SDK v2 packages are not installed (run `make deps`)"
            );
            return;
        }
        let plan = Plan {
            calls: 40,
            warmup: 5,
            conc: vec![1, 4],
        };
        for key in KEYS {
            let (outcome, version) = peers.run_v2(key, &plan).await;
            match outcome {
                Outcome::Measured(figures) => {
                    let levels: Vec<usize> = figures.iter().map(|f| f.c).collect();
                    assert_eq!(levels, plan.conc, "{key}");
                    assert!(
                        figures.iter().all(|f| f.calls == plan.calls),
                        "{key}: {figures:?}"
                    );
                }
                other => panic!("{key} was not measured: {other:?}"),
            }
            // Both clients must have been on the 2026-07-28 wire, Switchboard's by discovery.
            let version = version.unwrap_or_default();
            assert!(version.ends_with("2026-07-28"), "{key}: {version}");
            eprintln!("{}", label(key, Some(&version)));
        }
    }
}
