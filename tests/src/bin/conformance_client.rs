//! `conformance-client`: the client that the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, see `tests/conformance/SCENARIOS.md`) drives through
//! `tests/conformance/run.sh` (`make conformance`).
//!
//! It speaks MCP only through `switchboard-core`'s [`Connection`] (Streamable HTTP over rmcp), so
//! a passing run is our proof that the core itself is conformant; it adds no protocol logic of
//! its own. The suite runs `conformance-client <server-url>` (the URL is the last argument) with
//! `MCP_CONFORMANCE_SCENARIO` set, and reads its verdict from what its mock server saw:
//!
//! - `initialize` and unknown scenarios: initialize, `tools/list`, close.
//! - `tools_call`: also call `add_numbers {a: 2, b: 3}`.
//! - `elicitation-sep1034-client-defaults`: declare elicitation, call
//!   `test_client_elicitation_defaults` and accept every `elicitation/create` with the form
//!   pre-filled from the requested schema's `default`s.
//! - `sse-retry`: call `test_reconnection` and wait for its result, which arrives only after the
//!   transport resumes the interrupted SSE stream (`retry`, `Last-Event-ID`).
//! - `sep-2640-client-*` (Skills): list the skills without reading any, then load each as a
//!   host does before use, refusing one whose size, digest or frontmatter does not match its
//!   manifest (`switchboard_tests::conformance_skills`).
//! - 2026-07-28 scenarios (`sep-2322-client-request-state`, `http-*-headers`,
//!   `json-schema-2020-12-preservation`): the calls a host makes, see [`planned_calls`].
//! - `auth/*`: the first 401 (or a 403 `insufficient_scope` on a call) starts a sign-in through
//!   the core's OAuth flow ([`oauth::sign_in`], or client credentials for the
//!   `client-credentials-*` scenarios) with an in-memory keyring; the "browser" is an in-process
//!   stand-in that follows the authorization server's redirect to the core's loopback listener.
//!   Then it connects again with the stored sign-in, lists tools and calls the first one.
//!
//! Exits 0 when the scenario's steps succeeded, 1 with a one-line reason on stderr otherwise
//! (including an internal deadline of 20 s, well inside the suite's 30 s). Logs go to stderr
//! (`RUST_LOG`, default `warn`).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use switchboard_core::ids::ServerId;
use switchboard_core::mcp::catalog::{Arguments, Content, ToolInfo, ToolResult};
use switchboard_core::mcp::connection::{
    ConnectOptions, Connection, ElicitationAnswer, Endpoint, Lifecycle, RequestOptions,
};
use switchboard_core::mcp::requests::{ClientFeatures, Root, ServerRequests};
use switchboard_core::mcp::McpError;
use switchboard_core::oauth::{self, ClientSettings, Handoff, StepEvent};
use switchboard_core::redact::Secret;
use switchboard_core::secrets::{MemoryStore, Secrets};
use switchboard_core::server_logs::ServerLogs;
use switchboard_core::status::Reason;
use switchboard_core::url_check::CheckedUrl;
use tokio::sync::mpsc;

/// The whole run must end well before the suite kills it (30 s by default).
const DEADLINE: Duration = Duration::from_secs(20);

#[tokio::main]
async fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("conformance-client: error: usage: conformance-client <server-url>");
        return ExitCode::from(2);
    };
    match run(&scenario, &url).await {
        Ok(()) => {
            eprintln!("conformance-client: {scenario}: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance-client: {scenario}: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Connects, runs the scenario's steps within the deadline, and always shuts the connection down.
async fn run(scenario: &str, url: &str) -> Result<()> {
    let started = Instant::now();
    // Notifications outside requests are not part of any scenario; keep the receiver alive so
    // the core's sends succeed, and ignore what arrives.
    let (signals, _signals_rx) = mpsc::channel(64);
    let opts = ConnectOptions {
        init_timeout: Duration::from_secs(10),
        request_timeout: Duration::from_secs(15),
        signals,
        requests: (scenario.starts_with("elicitation") || scenario.starts_with("sep-2322"))
            .then(|| Arc::new(AcceptWithDefaults) as Arc<dyn ServerRequests>),
        lifecycle: lifecycle(scenario),
    };
    let auth = Auth::new(scenario);
    let conn = connect(url, &opts, &auth, None).await?;
    if scenario.starts_with("elicitation") {
        // The scenario's server sends `elicitation/create` on the standalone GET stream, which
        // rmcp opens on its own task after `initialized`; the TS SDK server drops a message sent
        // before that stream exists, so a call made at once loses the race about 1 run in 20
        // (seen: the GET arrived 6 ms after the tools/call POST). Give the stream a moment.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let info = conn.info();
    eprintln!(
        "conformance-client: connected to {} {} (protocol {})",
        info.server_name, info.server_version, info.protocol_version
    );
    let left = DEADLINE.saturating_sub(started.elapsed());
    let outcome = match tokio::time::timeout(left, steps(&conn, scenario, url, &opts, &auth)).await
    {
        Ok(r) => r,
        Err(_) => Err(anyhow!(
            "the scenario did not finish within {}s",
            DEADLINE.as_secs()
        )),
    };
    let closed = conn.shutdown().await;
    tracing::debug!("shutdown: {closed:?}");
    outcome
}

/// The scenario's steps after the handshake.
async fn steps(
    conn: &Connection,
    scenario: &str,
    url: &str,
    opts: &ConnectOptions,
    auth: &Auth,
) -> Result<()> {
    if scenario.starts_with("auth/") {
        return auth_steps(conn, url, opts, auth).await;
    }
    if scenario.starts_with("sep-2640-") {
        return switchboard_tests::conformance_skills::run(conn, scenario).await;
    }
    let tools = conn.list_tools().await.context("tools/list failed")?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("conformance-client: tools: {names:?}");
    for (tool, args) in planned_calls(scenario, &tools)? {
        if !names.contains(&tool.as_str()) {
            bail!("the server does not list the tool {tool:?}");
        }
        let result = conn
            .call_tool(&tool, args, RequestOptions::default())
            .await
            .with_context(|| format!("tools/call {tool} failed"))?;
        let text = result_text(&result);
        println!("{tool}: {text}");
        if result.is_error {
            bail!("the tool {tool} reported an error: {text}");
        }
    }
    Ok(())
}

/// The tool calls a scenario expects after `tools/list`, as a host would make them:
/// - the suite's `MCP_CONFORMANCE_CONTEXT.toolCalls` when it names them (`http-custom-headers`);
/// - `json-schema-2020-12-preservation`: the focal tool's `inputSchema`, as the catalog holds
///   it, echoed back through `json_schema_echo` (the suite diffs it against what it served);
/// - the 2026-07-28 scenarios that test what a client does with each tool it kept
///   (`sep-2322-client-request-state`: the multi-round-trip answers; `http-invalid-tool-headers`:
///   that tools with invalid `x-mcp-header` annotations were dropped from the catalog): every
///   listed tool, with a placeholder for each required string argument.
fn planned_calls(scenario: &str, tools: &[ToolInfo]) -> Result<Vec<(String, Arguments)>> {
    let object = |v: Value| match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    if let Some(calls) = context_tool_calls() {
        return Ok(calls);
    }
    Ok(match scenario {
        "tools_call" => vec![("add_numbers".into(), object(json!({"a": 2, "b": 3})))],
        "elicitation-sep1034-client-defaults" => {
            vec![("test_client_elicitation_defaults".into(), Map::new())]
        }
        "sse-retry" => vec![("test_reconnection".into(), Map::new())],
        "json-schema-2020-12-preservation" => {
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .context("the server does not list json_schema_2020_12_tool")?;
            let schema = focal.input_schema.clone();
            vec![("json_schema_echo".into(), object(json!({"schema": schema})))]
        }
        "sep-2322-client-request-state" | "http-invalid-tool-headers" => tools
            .iter()
            .map(|t| (t.name.clone(), placeholder_args(&t.input_schema)))
            .collect(),
        _ => Vec::new(),
    })
}

/// `MCP_CONFORMANCE_CONTEXT.toolCalls` (`[{name, arguments}]`), when the suite gives them.
fn context_tool_calls() -> Option<Vec<(String, Arguments)>> {
    let context: Value =
        serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?).ok()?;
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?.to_owned();
                let args = c.get("arguments").and_then(Value::as_object).cloned();
                Some((name, args.unwrap_or_default()))
            })
            .collect(),
    )
}

/// Arguments that satisfy a schema's required string properties (`"x"`), for scenarios that
/// only check which tools are called and how.
fn placeholder_args(schema: &Value) -> Arguments {
    let props = schema.get("properties").and_then(Value::as_object);
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|k| {
            let kind = props
                .and_then(|p| p.get(k))
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str);
            let v = match kind {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                _ => json!("x"),
            };
            (k.to_owned(), v)
        })
        .collect()
}

/// An auth scenario after the handshake: list tools and call the first. A 401, or a 403
/// `insufficient_scope`, on either asks for a (step-up) sign-in with the union of scopes and a
/// new connection; at most two per operation (AU-07), then the error stands.
async fn auth_steps(
    conn: &Connection,
    url: &str,
    opts: &ConnectOptions,
    auth: &Auth,
) -> Result<()> {
    let mut current: Option<Connection> = None;
    let mut tool: Option<String> = None;
    let outcome = async {
        for op in ["tools/list", "tools/call"] {
            let mut attempt = 0;
            loop {
                let c = current.as_ref().unwrap_or(conn);
                let result = match (op, &tool) {
                    ("tools/list", _) => c.list_tools().await.map(|t| {
                        tool = t.first().map(|t| t.name.clone());
                    }),
                    (_, Some(name)) => c
                        .call_tool(name, Map::new(), RequestOptions::default())
                        .await
                        .map(|r| println!("{name}: {}", result_text(&r))),
                    (_, None) => Ok(()),
                };
                match result {
                    Ok(()) => break,
                    Err(e) if attempt < 2 && challenge_of(&e).is_some() => {
                        attempt += 1;
                        eprintln!("conformance-client: {op}: sign-in {attempt}: {e}");
                        auth.sign_in(url, challenge_of(&e).unwrap_or_default().as_deref())
                            .await?;
                        if let Some(old) = current.take() {
                            let _ = old.shutdown().await;
                        }
                        current = Some(connect(url, opts, auth, None).await?);
                    }
                    Err(e) => return Err(anyhow!("{op} failed: {e}")),
                }
            }
        }
        Ok(())
    }
    .await;
    if let Some(c) = current {
        let _ = c.shutdown().await;
    }
    outcome
}

/// The text items of a tool result, joined.
fn result_text(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Accepts every elicitation with the form pre-filled from the schema: each property that has a
/// `default` gets it, as given (so its JSON type is the schema's); the others are left out.
/// Declares form elicitation only.
struct AcceptWithDefaults;

impl ServerRequests for AcceptWithDefaults {
    fn features(&self) -> ClientFeatures {
        ClientFeatures {
            elicitation_form: true,
            ..ClientFeatures::default()
        }
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, ElicitationAnswer> {
        Box::pin(async move {
            let content: Map<String, Value> = params
                .pointer("/requestedSchema/properties")
                .and_then(Value::as_object)
                .map(|props| {
                    props
                        .iter()
                        .filter_map(|(k, p)| Some((k.clone(), p.get("default")?.clone())))
                        .collect()
                })
                .unwrap_or_default();
            eprintln!(
                "conformance-client: elicitation accepted with {}",
                Value::Object(content.clone())
            );
            ElicitationAnswer::Accept(content)
        })
    }

    fn sample(&self, _params: Value) -> BoxFuture<'static, Result<Value, String>> {
        Box::pin(async { Err("not offered".to_owned()) })
    }

    fn roots(&self) -> BoxFuture<'static, Vec<Root>> {
        Box::pin(async { Vec::new() })
    }
}

/// The product's lifecycle, whatever revision the suite runs at (`MCP_CONFORMANCE_PROTOCOL_VERSION`):
/// probe with `server/discover`, fall back to `initialize` for older servers. Each scenario's mock
/// speaks one generation, so passing both proves the probe and the fallback.
fn lifecycle(_scenario: &str) -> Lifecycle {
    Lifecycle::Auto
}

/// The `WWW-Authenticate` of a 401 or 403 behind an error (`Some(None)` when there was none).
fn challenge_of(e: &McpError) -> Option<Option<String>> {
    match e.reason().root() {
        Reason::AuthRequired(c) => Some(c.challenge.clone()),
        _ => None,
    }
}

/// Connects, signing in once when the server asks for it.
async fn connect(
    url: &str,
    opts: &ConnectOptions,
    auth: &Auth,
    _hint: Option<()>,
) -> Result<Connection> {
    let endpoint = |a| Endpoint::Http {
        url: url.to_owned(),
        headers: vec![],
        max_message: switchboard_core::mcp::framing::DEFAULT_MAX_MESSAGE,
        auth: a,
    };
    let first = Connection::connect(
        endpoint(auth.authorizer(url).await?),
        ServerLogs::new(None),
        opts.clone(),
    )
    .await;
    match first {
        Err(e) if auth.enabled && challenge_of(&e).is_some() => {
            let ch = challenge_of(&e).unwrap_or_default();
            auth.sign_in(url, ch.as_deref()).await?;
            Connection::connect(
                endpoint(auth.authorizer(url).await?),
                ServerLogs::new(None),
                opts.clone(),
            )
            .await
            .with_context(|| format!("could not connect to {url} after signing in"))
        }
        other => other.with_context(|| format!("could not connect to {url}")),
    }
}

/// The scenario's sign-in: an in-memory keyring and what `MCP_CONFORMANCE_CONTEXT` gives.
struct Auth {
    enabled: bool,
    server: ServerId,
    secrets: Secrets,
    context: Value,
    scenario: String,
}

/// The Client ID Metadata Document URL the suite's authorization servers expect (the product
/// takes its own from `SWITCHBOARD_CLIENT_METADATA_URL`, see docs/oauth.md).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

impl Auth {
    fn new(scenario: &str) -> Self {
        let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
            .ok()
            .and_then(|c| serde_json::from_str(&c).ok())
            .unwrap_or(Value::Null);
        Self {
            enabled: scenario.starts_with("auth/"),
            server: ServerId::new("conformance").unwrap_or_else(|_| unreachable!()),
            secrets: Secrets::new(MemoryStore::default()),
            context,
            scenario: scenario.to_owned(),
        }
    }

    fn ctx(&self, key: &str) -> Option<String> {
        self.context
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    async fn authorizer(&self, url: &str) -> Result<Option<oauth::Authorizer>> {
        Ok(oauth::authorizer(
            &self.secrets,
            &self.server,
            url,
            self.ctx("client_secret").map(bound),
            oauth::Network::system(),
            None,
        )
        .await?)
    }

    async fn sign_in(&self, url: &str, challenge: Option<&str>) -> Result<()> {
        if self.scenario.starts_with("auth/client-credentials") {
            let signed = oauth::client_credentials(oauth::ClientCredentials {
                server: &self.server,
                url,
                secrets: &self.secrets,
                client_id: self.ctx("client_id").unwrap_or_default(),
                secret: self.ctx("client_secret").map(bound),
                key: self
                    .ctx("private_key_pem")
                    .map(|k| (bound(k), self.ctx("signing_algorithm"))),
                scopes: vec![],
                challenge,
                net: oauth::Network::system(),
            })
            .await?;
            eprintln!("conformance-client: client credentials: {signed:?}");
            return Ok(());
        }
        let client = ClientSettings {
            client_id: self.ctx("client_id"),
            client_secret: self.ctx("client_secret").map(bound),
            metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
            name: "Switchboard conformance client".to_owned(),
        };
        let signed = oauth::sign_in(
            oauth::SignIn {
                server: &self.server,
                url,
                secrets: &self.secrets,
                client: &client,
                challenge,
                net: oauth::Network::system(),
                wait: Some(Duration::from_secs(10)),
            },
            &FollowRedirect,
        )
        .await?;
        eprintln!("conformance-client: signed in: {signed:?}");
        Ok(())
    }
}

/// The browser stand-in: fetches the authorization page and delivers its redirect to the
/// loopback listener, as a browser would.
struct FollowRedirect;

#[async_trait::async_trait]
impl Handoff for FollowRedirect {
    fn step(&self, event: StepEvent) {
        eprintln!("conformance-client: sign-in {event:?}");
    }

    async fn open(&self, url: &CheckedUrl) -> std::result::Result<(), String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let answer = client
            .get(&url.url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let location = answer
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                format!(
                    "the authorization page answered {} without a redirect",
                    answer.status()
                )
            })?
            .to_owned();
        tokio::spawn(async move {
            if let Err(e) = reqwest::get(&location).await {
                eprintln!("conformance-client: the redirect to {location} failed: {e}");
            }
        });
        Ok(())
    }
}

/// A secret from the scenario's context, not yet bound to a client or issuer (each run of the
/// suite is one server, one authorization server).
fn bound(value: String) -> oauth::BoundSecret {
    oauth::BoundSecret::new(Secret::new(value), None)
}
