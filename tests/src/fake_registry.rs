//! An MCP Registry of ours on 127.0.0.1:0, speaking the v0.1 API the official registry serves
//! (`GET /v0.1/servers?search=&limit=&cursor=&version=latest`,
//! `GET /v0.1/servers/{name}/versions/{version|latest}`), with entries in the published
//! `server.json` shape (2025-12-11 schema) wrapped as `{server, _meta}`.
//!
//! Hand-written HTTP/1.1 over a `TcpListener`, like `fake_http`, so it can send what a real
//! registry would not: a malformed page, a body that never ends, a 503. [`hostile_entries`] is
//! the catalogue tests use: ordinary npm / PyPI / OCI / remote entries next to shell
//! metacharacters in arguments, a 1 MB description, an unknown registry type, a flag posing as
//! a package name, deprecated and deleted entries, and entries that are not `server.json`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the registry answers, switchable while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryMode {
    /// Pages and entries as published.
    Normal,
    /// Every answer is `{"servers": [` and then nothing.
    MalformedJson,
    /// Every answer is a 200 whose body never ends.
    Endless,
    /// Every answer is `503 Service Unavailable` (the registry is down).
    Down,
}

/// A running fake registry; stops when dropped.
pub struct FakeRegistry {
    /// The base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// Requests served.
    pub requests: Arc<AtomicUsize>,
    mode: Arc<Mutex<RegistryMode>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeRegistry {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The official registry's `_meta` key.
pub const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// Wraps a `server.json` as the API lists it, with `status`.
pub fn wrap(server: Value, status: &str) -> Value {
    json!({
        "server": server,
        "_meta": {OFFICIAL: {
            "status": status,
            "publishedAt": "2025-11-01T10:00:00Z",
            "updatedAt": "2025-11-01T10:00:00Z",
            "isLatest": true
        }}
    })
}

/// The shell metacharacters the first entry's arguments carry, exactly.
pub const METACHARS: &str =
    "; rm -rf ~/canary && $(touch /tmp/pwned) `id` | cat > /dev/null 'x' \"y\" *";

/// The catalogue: ordinary and hostile entries, in listing order.
#[allow(clippy::too_many_lines)] // the catalogue as data: one entry after another
pub fn hostile_entries() -> Vec<Value> {
    vec![
        wrap(
            json!({
                "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
                "name": "io.example/everything",
                "title": "Everything",
                "description": "Exercises every MCP feature",
                "version": "2.1.0",
                "repository": {"url": "https://github.com/example/everything", "source": "github"},
                "packages": [{
                    "registryType": "npm",
                    "registryBaseUrl": "https://registry.npmjs.org",
                    "identifier": "@example/server-everything",
                    "version": "2.1.0",
                    "runtimeHint": "npx",
                    "transport": {"type": "stdio"},
                    "packageArguments": [
                        {"type": "positional", "value": METACHARS},
                        {"type": "named", "name": "--root", "valueHint": "root", "isRequired": true,
                         "description": "The folder to serve"},
                        {"type": "named", "name": "--mode", "default": "fast", "choices": ["fast", "slow"]}
                    ],
                    "environmentVariables": [
                        {"name": "EVERYTHING_API_KEY", "description": "Your API key", "isRequired": true, "isSecret": true},
                        {"name": "LOG_LEVEL", "default": "info"}
                    ]
                }]
            }),
            "active",
        ),
        wrap(
            json!({
                "name": "io.example/weather-remote",
                "description": "Weather over HTTP",
                "version": "1.0.0",
                "remotes": [{
                    "type": "streamable-http",
                    "url": "https://{region}.weather.example.com/mcp",
                    "variables": {"region": {"description": "Region", "isRequired": true, "choices": ["eu", "us"]}},
                    "headers": [
                        {"name": "Authorization", "value": "Bearer {token}",
                         "variables": {"token": {"description": "API token", "isRequired": true, "isSecret": true}}},
                        {"name": "X-Client", "value": "switchboard"}
                    ]
                }]
            }),
            "active",
        ),
        wrap(
            json!({
                "name": "io.example/python-tool",
                "description": "A PyPI server",
                "version": "0.4.1",
                "packages": [{"registryType": "pypi", "identifier": "mcp-python-tool", "version": "0.4.1",
                              "runtimeHint": "uvx", "transport": {"type": "stdio"}}]
            }),
            "active",
        ),
        wrap(
            json!({
                "name": "io.example/container",
                "description": "A container image",
                "version": "3.0.0",
                "packages": [{"registryType": "oci", "identifier": "ghcr.io/example/container-mcp:3.0.0",
                              "runtimeHint": "docker", "transport": {"type": "stdio"},
                              "environmentVariables": [{"name": "CONTAINER_TOKEN", "isSecret": true, "isRequired": true}]}]
            }),
            "active",
        ),
        wrap(
            json!({
                "name": "io.example/huge-description",
                "description": "D".repeat(1024 * 1024),
                "version": "1.0.0",
                "packages": [{"registryType": "npm", "identifier": "huge", "version": "1.0.0", "transport": {"type": "stdio"}}]
            }),
            "active",
        ),
        wrap(
            json!({
                "name": "io.example/unknown-type",
                "description": "A registry type nobody knows",
                "version": "1.0.0",
                "packages": [{"registryType": "cargo", "identifier": "unknown-mcp", "version": "1.0.0", "transport": {"type": "stdio"}}]
            }),
            "active",
        ),
        wrap(
            json!({
                "name": "io.example/flag-identifier",
                "description": "A package name that is a flag",
                "version": "1.0.0",
                "packages": [{"registryType": "npm", "identifier": "--eval=require('child_process').exec('id')",
                              "version": "1.0.0", "transport": {"type": "stdio"}}]
            }),
            "active",
        ),
        wrap(
            json!({"name": "io.example/deprecated", "description": "Old", "version": "1.0.0",
                   "packages": [{"registryType": "npm", "identifier": "old", "version": "1.0.0", "transport": {"type": "stdio"}}]}),
            "deprecated",
        ),
        wrap(
            json!({"name": "io.example/deleted", "description": "Gone", "version": "1.0.0",
                   "packages": [{"registryType": "npm", "identifier": "gone", "version": "1.0.0", "transport": {"type": "stdio"}}]}),
            "deleted",
        ),
        json!({"server": {"name": 42, "description": "not a server.json"}}),
        json!("not even an object"),
    ]
}

impl FakeRegistry {
    /// Starts a registry serving `entries` (items of the list answer, in order).
    pub async fn start(entries: Vec<Value>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"))
            .port();
        let state = State {
            entries: Arc::new(entries),
            requests: Arc::default(),
            mode: Arc::new(Mutex::new(RegistryMode::Normal)),
        };
        let requests = state.requests.clone();
        let mode = state.mode.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = state.clone();
                tokio::spawn(async move {
                    let _ = state.serve(stream).await;
                });
            }
        });
        Self {
            url: format!("http://127.0.0.1:{port}"),
            requests,
            mode,
            task,
        }
    }

    /// Switches how it answers.
    pub fn set_mode(&self, m: RegistryMode) {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner) = m;
    }

    /// Requests served so far.
    pub fn served(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
struct State {
    entries: Arc<Vec<Value>>,
    requests: Arc<AtomicUsize>,
    mode: Arc<Mutex<RegistryMode>>,
}

impl State {
    #[allow(clippy::too_many_lines)] // the fake's routes side by side, one arm each
    async fn serve(&self, mut stream: TcpStream) -> std::io::Result<()> {
        let Some(target) = read_target(&mut stream).await? else {
            return Ok(());
        };
        self.requests.fetch_add(1, Ordering::SeqCst);
        let mode = *self.mode.lock().unwrap_or_else(PoisonError::into_inner);
        match mode {
            RegistryMode::Down => {
                return respond(
                    &mut stream,
                    "503 Service Unavailable",
                    b"{\"error\":\"down\"}",
                )
                .await
            }
            RegistryMode::MalformedJson => {
                return respond(&mut stream, "200 OK", b"{\"servers\": [").await
            }
            RegistryMode::Endless => {
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{\"servers\": [")
                    .await?;
                let chunk = vec![b' '; 64 * 1024];
                loop {
                    stream.write_all(&chunk).await?;
                }
            }
            RegistryMode::Normal => {}
        }
        let url = url::Url::parse(&format!("http://x{target}"))
            .unwrap_or_else(|_| url::Url::parse("http://x/").unwrap_or_else(|e| panic!("{e}")));
        let segments: Vec<String> = url
            .path_segments()
            .map(|s| {
                s.map(|p| {
                    url::form_urlencoded::parse(format!("a={p}").as_bytes())
                        .next()
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default()
                })
                .collect()
            })
            .unwrap_or_default();
        let seg: Vec<&str> = segments.iter().map(String::as_str).collect();
        match seg.as_slice() {
            ["v0.1", "servers"] => {
                let q = |k: &str| {
                    url.query_pairs()
                        .find(|(n, _)| n == k)
                        .map(|(_, v)| v.into_owned())
                };
                let search = q("search").unwrap_or_default();
                let limit: usize = q("limit").and_then(|l| l.parse().ok()).unwrap_or(30);
                let start: usize = q("cursor").and_then(|c| c.parse().ok()).unwrap_or(0);
                let matching: Vec<&Value> = self
                    .entries
                    .iter()
                    .filter(|e| {
                        search.is_empty()
                            || e["server"]["name"]
                                .as_str()
                                .is_some_and(|n| n.contains(search.as_str()))
                    })
                    .collect();
                let page: Vec<&Value> = matching.iter().skip(start).take(limit).copied().collect();
                let end = start + page.len();
                let mut metadata = json!({"count": page.len()});
                if end < matching.len() {
                    metadata["nextCursor"] = json!(end.to_string());
                }
                let body = json!({"servers": page, "metadata": metadata});
                respond(&mut stream, "200 OK", body.to_string().as_bytes()).await
            }
            ["v0.1", "servers", name, "versions", version] => {
                let found = self.entries.iter().find(|e| {
                    e["server"]["name"].as_str() == Some(name)
                        && (*version == "latest"
                            || e["server"]["version"].as_str() == Some(version))
                });
                match found {
                    Some(e) => respond(&mut stream, "200 OK", e.to_string().as_bytes()).await,
                    None => {
                        respond(
                            &mut stream,
                            "404 Not Found",
                            b"{\"error\":\"Server not found\"}",
                        )
                        .await
                    }
                }
            }
            _ => {
                respond(
                    &mut stream,
                    "404 Not Found",
                    b"{\"error\":\"no such path\"}",
                )
                .await
            }
        }
    }
}

/// The request target of a GET (`/v0.1/servers?...`); the head only, there is no body.
async fn read_target(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
        if buf.len() > 64 * 1024 {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    Ok(head.split(' ').nth(1).map(str::to_owned))
}

async fn respond(stream: &mut TcpStream, status: &str, body: &[u8]) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}
