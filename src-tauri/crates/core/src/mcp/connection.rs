//! One live MCP session, over the official Rust SDK `rmcp`. This is the ONLY file that imports
//! `rmcp`: its types churn between major versions, so everything outside sees our own types
//! from [`catalog`](super::catalog) and errors from [`super::McpError`].
//!
//! What this file adds to rmcp:
//! - A stdio transport of our own: lines capped while reading (RL-01), non-JSON lines skipped
//!   and counted, stderr always drained into the ring buffer (RL-02), every message recorded in
//!   the protocol trace. The child runs in its own process group and its whole tree is stopped
//!   on close (SP-06, RL-08); see [`super::process`].
//! - Streamable HTTP through rmcp's reqwest transport, wrapped to record the same trace.
//! - Per-request timeouts with `notifications/cancelled` on timeout and on user cancel
//!   (RL-03, RL-04), progress routed to the caller, complete pagination with a page cap so a
//!   server that keeps returning cursors cannot loop us forever.
//!
//! rmcp's types are built from and read into JSON (`serde_json`) because most of them are
//! `#[non_exhaustive]`; the wire shape is the stable contract, not rmcp's struct layout.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientConfig, ClientJsonRpcMessage, ClientRequest,
    ProgressNotificationParam, ProgressToken, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, QuitReason, RoleClient, RunningService,
    RunningServiceCancellationToken, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use rmcp::{ClientHandler, Peer, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::catalog::{
    Arguments, Capabilities, Content, PeerInfo, Progress, PromptInfo, PromptResult,
    ResourceContents, ResourceInfo, ResourceTemplateInfo, ToolInfo, ToolResult,
};
use super::framing::{FrameError, LineReader};
use super::logs::{Direction, ServerLogs};
use super::process::{Pipes, ServerProcess};
pub use super::requests::ElicitationAnswer;
use super::requests::{ClientFeatures, ServerRequests};
use super::McpError;

/// Protocol versions we speak, newest first. We offer the first; a server may answer with any.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The most pages we follow for one list before deciding the server is looping.
const MAX_PAGES: usize = 1000;

/// Something the server told us outside a request.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerSignal {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// `notifications/prompts/list_changed`.
    PromptsChanged,
    /// `notifications/message`.
    Log {
        /// Severity.
        level: String,
        /// Logger name.
        logger: Option<String>,
        /// The payload (untrusted).
        data: Value,
    },
}

/// Receives a request's progress notifications, called on the connection's reader task: keep
/// it quick (send on a channel, publish an event).
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>;

/// Our side of the session: identifies us and routes what the server sends.
struct Handler {
    info: ClientConfig,
    progress: ProgressRoutes,
    signals: mpsc::Sender<ServerSignal>,
    requests: Option<Arc<dyn ServerRequests>>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Progress for a token we are not waiting on is dropped (RL-12).
        let route = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        if let Some(sink) = route {
            sink(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    // Logging is deprecated by the 2026-07-28 revision (SEP-2577) but is how every server up
    // to 2025-11-25, the versions we speak, reports its log lines.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".into());
        // A full queue means the server floods us; dropping log lines is the right loss.
        let _ = self.signals.try_send(ServerSignal::Log {
            level,
            logger: params.logger,
            data: params.data,
        });
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let answer = match (&self.requests, serde_json::to_value(&request)) {
            (Some(r), Ok(params))
                if r.features().elicitation_form || r.features().elicitation_url =>
            {
                // A server that cancels its request withdraws the question (the future drops).
                tokio::select! {
                    a = r.elicit(params) => a,
                    () = context.ct.cancelled() => ElicitationAnswer::Cancel,
                }
            }
            _ => ElicitationAnswer::Decline,
        };
        let v = match answer {
            ElicitationAnswer::Accept(content) => json!({"action": "accept", "content": content}),
            ElicitationAnswer::Decline => json!({"action": "decline"}),
            ElicitationAnswer::Cancel => json!({"action": "cancel"}),
        };
        serde_json::from_value(v).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    // Sampling and roots are deprecated by the 2026-07-28 revision (SEP-2577) but are part of
    // every version we speak, and servers use them.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let requests = self
            .requests
            .as_ref()
            .filter(|r| r.features().sampling)
            .ok_or_else(
                rmcp::ErrorData::method_not_found::<rmcp::model::CreateMessageRequestMethod>,
            )?;
        let params = serde_json::to_value(&params).map_err(|e| {
            rmcp::ErrorData::invalid_params(format!("unreadable request: {e}"), None)
        })?;
        // A refusal is "the user rejected the request" (-1 in the spec's examples).
        let result = tokio::select! {
            r = requests.sample(params) => r,
            () = context.ct.cancelled() => Err("cancelled by the server".to_owned()),
        }
        .map_err(|why| rmcp::ErrorData::new(rmcp::model::ErrorCode(-1), why, None))?;
        serde_json::from_value(result).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = match self.requests.as_ref().filter(|r| r.features().roots) {
            Some(r) => r.roots().await,
            None => Vec::new(),
        };
        let v = json!({"roots": roots
            .into_iter()
            .map(|r| match r.name {
                Some(name) => json!({"uri": r.uri, "name": name}),
                None => json!({"uri": r.uri}),
            })
            .collect::<Vec<_>>()});
        serde_json::from_value(v).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.try_send(ServerSignal::ToolsChanged);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.try_send(ServerSignal::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.try_send(ServerSignal::PromptsChanged);
    }
}

/// A stdio transport over a child's pipes with a capped line reader.
struct StdioTransport {
    /// The child's stdin behind a buffer. Writers coalesce: the last of the senders queued on
    /// the lock flushes, so under load one `write` carries many messages, while a lone message
    /// is flushed at once (no extra task hop on the latency path).
    stdin: Arc<tokio::sync::Mutex<Option<tokio::io::BufWriter<tokio::process::ChildStdin>>>>,
    /// Senders that have a line to write and have not written it yet.
    pending: Arc<std::sync::atomic::AtomicUsize>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    logs: ServerLogs,
}

/// Why a stdio stream ended, set by the reader task.
type CloseReason = Arc<Mutex<Option<String>>>;

impl StdioTransport {
    fn new(pipes: Pipes, logs: ServerLogs, max_message: usize, reason: CloseReason) -> Self {
        let (tx, incoming) = mpsc::channel(256);
        let reader_logs = logs.clone();
        tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::new(pipes.stdout), max_message);
            let end = loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        let Ok(text) = std::str::from_utf8(&line) else {
                            reader_logs.note("skipped a stdout line that is not UTF-8");
                            continue;
                        };
                        if text.trim().is_empty() {
                            continue;
                        }
                        match serde_json::from_str::<ServerJsonRpcMessage>(text) {
                            Ok(msg) => {
                                reader_logs.record(Direction::In, text);
                                if tx.send(msg).await.is_err() {
                                    break None;
                                }
                            }
                            Err(e) => {
                                let shown: String = text.chars().take(200).collect();
                                reader_logs.note(&format!(
                                    "skipped a stdout line that is not a JSON-RPC message ({e}): {shown}"
                                ));
                                // The request it answered fails now, not at its timeout.
                                if let Some(refusal) = refused_answer(&line, &e) {
                                    if tx.send(refusal).await.is_err() {
                                        break None;
                                    }
                                }
                            }
                        }
                    }
                    Ok(None) => break Some("the server closed its output".to_owned()),
                    Err(e @ FrameError::TooLong { .. }) => break Some(e.to_string()),
                    Err(e) => break Some(e.to_string()),
                }
            };
            if let Some(end) = end {
                reader_logs.note(&end);
                let mut r = reason.lock().unwrap_or_else(PoisonError::into_inner);
                r.get_or_insert(end);
            }
        });
        let stderr_logs = logs.clone();
        tokio::spawn(drain_stderr(pipes.stderr, stderr_logs));
        Self {
            stdin: Arc::new(tokio::sync::Mutex::new(Some(
                tokio::io::BufWriter::with_capacity(64 * 1024, pipes.stdin),
            ))),
            pending: Arc::default(),
            incoming,
            logs,
        }
    }
}

/// An error answer, in place of a response the host refused, for the request it was for (see
/// `mcp::recover`); `None` when the line names no request of ours.
fn refused_answer(line: &[u8], why: &serde_json::Error) -> Option<ServerJsonRpcMessage> {
    let id = super::recover::response_id(line)?;
    // serde_json says what was wrong ("recursion limit exceeded at line 1 column 129").
    let reason = format!("it is not a valid JSON-RPC message ({why})");
    serde_json::from_value(serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32700,
            "message": format!("Switchboard refused the server's answer: {reason}"),
        },
    }))
    .ok()
}

/// Reads stderr until it closes, whatever its volume, keeping the tail (RL-02). Lines go to
/// `tracing` at debug level, at most 20 per second, so a flood cannot swamp the host's log.
async fn drain_stderr(stderr: tokio::process::ChildStderr, logs: ServerLogs) {
    let mut reader = BufReader::with_capacity(64 * 1024, stderr);
    let mut line = Vec::with_capacity(1024);
    let mut window = std::time::Instant::now();
    let mut in_window = 0u32;
    loop {
        line.clear();
        // Bound one line's memory: read at most MAX_LINE+1 bytes per line, then skip the rest.
        let n = match (&mut reader)
            .take(super::logs::MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let complete = line.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let kept = if !complete && n > super::logs::MAX_LINE {
            // Discard the remainder of an overlong line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                match (&mut reader)
                    .take(64 * 1024)
                    .read_until(b'\n', &mut sink)
                    .await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sink.last() == Some(&b'\n') => break,
                    Ok(_) => {}
                }
            }
            logs.push_stderr(&format!("{text} … [line cut]"))
        } else {
            logs.push_stderr(text)
        };
        if window.elapsed() >= Duration::from_secs(1) {
            window = std::time::Instant::now();
            in_window = 0;
        }
        in_window += 1;
        if in_window <= 20 {
            // The server's words, escaped: a line break in them cannot forge a log line.
            tracing::debug!(
                target: "switchboard::server_stderr",
                "{}",
                crate::config::escape::ServerText(&kept)
            );
        }
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "switchboard-stdio".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        use std::sync::atomic::Ordering;
        let stdin = self.stdin.clone();
        let pending = self.pending.clone();
        let logs = self.logs.clone();
        async move {
            let mut line = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            logs.record(Direction::Out, &line);
            line.push('\n');
            pending.fetch_add(1, Ordering::AcqRel);
            let mut guard = stdin.lock().await;
            let written = match guard.as_mut() {
                Some(pipe) => pipe.write_all(line.as_bytes()).await,
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "stdin closed",
                )),
            };
            // Whoever leaves the count at zero flushes for everyone written before it; a sender
            // still waiting for the lock will flush after writing its own line.
            let last = pending.fetch_sub(1, Ordering::AcqRel) == 1;
            written?;
            match guard.as_mut() {
                Some(pipe) if last => pipe.flush().await,
                _ => Ok(()),
            }
        }
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<ServerJsonRpcMessage>> {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin is the first step of a graceful stop.
        if let Some(mut pipe) = self.stdin.lock().await.take() {
            let _ = pipe.shutdown().await;
        }
        self.incoming.close();
        Ok(())
    }
}

/// Records every message of an inner transport in the protocol trace.
struct Traced<T> {
    inner: T,
    logs: ServerLogs,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Traced<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Ok(s) = serde_json::to_string(&item) {
            self.logs.record(Direction::Out, &s);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let msg = self.inner.receive().await;
        match &msg {
            Some(m) => {
                if let Ok(s) = serde_json::to_string(m) {
                    self.logs.record(Direction::In, &s);
                }
            }
            None => self.logs.note("the HTTP session ended"),
        }
        msg
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// How to reach the server, fully resolved (secrets included).
pub enum Endpoint {
    /// A spawned child process.
    Stdio {
        /// The process.
        process: Box<ServerProcess>,
        /// Its pipes.
        pipes: Pipes,
        /// The cap on one message.
        max_message: usize,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The URL.
        url: String,
        /// Headers with their values.
        headers: Vec<(String, crate::redact::Secret)>,
    },
}

/// Options for one request.
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// Give up after this long without a response (progress resets it, up to 10x overall).
    pub timeout: Option<Duration>,
    /// Cancels the request; the server is told with `notifications/cancelled`.
    pub cancel: Option<CancellationToken>,
    /// Where progress notifications for this request go.
    pub progress: Option<ProgressSink>,
}

/// How to connect.
#[derive(Clone)]
pub struct ConnectOptions {
    /// Limit for the handshake.
    pub init_timeout: Duration,
    /// Default limit for each request.
    pub request_timeout: Duration,
    /// Where notifications that are not tied to a request go.
    pub signals: mpsc::Sender<ServerSignal>,
    /// Answers the server's own requests (elicitation, sampling, roots); `None` declares no
    /// client capabilities at all.
    pub requests: Option<Arc<dyn ServerRequests>>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// A connected, initialized MCP session.
pub struct Connection {
    peer: Peer<RoleClient>,
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    closed: watch::Receiver<Option<String>>,
    info: PeerInfo,
    instructions: Option<String>,
    progress: ProgressRoutes,
    process: tokio::sync::Mutex<Option<ServerProcess>>,
    close_reason: CloseReason,
    default_timeout: Duration,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

fn client_info(features: ClientFeatures) -> Result<ClientConfig, McpError> {
    let capabilities = features.capabilities();
    from_json(json!({
        "protocolVersion": SUPPORTED_PROTOCOL_VERSIONS[0],
        "capabilities": capabilities,
        "clientInfo": {
            "name": "switchboard",
            "title": "Switchboard",
            "version": crate::VERSION,
        }
    }))
}

fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, McpError> {
    serde_json::from_value(v)
        .map_err(|e| McpError::Protocol(format!("could not build a message: {e}")))
}

fn convert<T: DeserializeOwned>(what: &str, v: impl serde::Serialize) -> Result<T, McpError> {
    serde_json::to_value(v)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            McpError::Protocol(format!(
                "the server's {what} does not have the expected shape: {e}"
            ))
        })
}

fn map_service_error(e: ServiceError, timeout: Duration) -> McpError {
    match e {
        ServiceError::McpError(data) => McpError::Server {
            code: data.code.0,
            message: data.message.into_owned(),
        },
        ServiceError::Timeout { .. } => McpError::Timeout(timeout),
        ServiceError::TransportClosed => McpError::Disconnected("the connection closed".into()),
        // Through `readable`: the transport error's text names Rust types in brackets.
        ServiceError::TransportSend(e) => {
            McpError::Disconnected(format!("could not send: {}", readable(&e)))
        }
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        ServiceError::UnexpectedResponse => {
            McpError::Protocol("the server answered with the wrong kind of result".into())
        }
        other => McpError::Protocol(readable(&other)),
    }
}

impl Connection {
    /// Connects and performs the `initialize` handshake within `opts.init_timeout`.
    pub async fn connect(
        endpoint: Endpoint,
        logs: ServerLogs,
        opts: ConnectOptions,
    ) -> Result<Self, McpError> {
        let (init_timeout, default_timeout) = (opts.init_timeout, opts.request_timeout);
        let progress: ProgressRoutes = Arc::default();
        let handler = Handler {
            info: client_info(
                opts.requests
                    .as_ref()
                    .map(|r| r.features())
                    .unwrap_or_default(),
            )?,
            progress: progress.clone(),
            signals: opts.signals,
            requests: opts.requests,
        };
        let close_reason: CloseReason = Arc::default();
        let (running, process): (RunningService<RoleClient, Handler>, Option<ServerProcess>) =
            match endpoint {
                Endpoint::Stdio {
                    process,
                    pipes,
                    max_message,
                } => {
                    let transport =
                        StdioTransport::new(pipes, logs.clone(), max_message, close_reason.clone());
                    let running =
                        handshake(handler.serve(transport), init_timeout, &close_reason).await;
                    match running {
                        Ok(r) => (r, Some(*process)),
                        Err(e) => {
                            let exit = process.stop().await;
                            return Err(match e {
                                McpError::Disconnected(why) => {
                                    McpError::Disconnected(format!("{why}; the process {exit}"))
                                }
                                other => other,
                            });
                        }
                    }
                }
                Endpoint::Http { url, headers } => {
                    let mut custom = HashMap::new();
                    for (name, value) in &headers {
                        let n = http::HeaderName::from_bytes(name.as_bytes())
                            .map_err(|e| McpError::Config(format!("header {name:?}: {e}")))?;
                        let v = http::HeaderValue::from_str(value.expose()).map_err(|_| {
                            McpError::Config(format!(
                                "the value of header {name:?} is not valid in HTTP"
                            ))
                        })?;
                        custom.insert(n, v);
                    }
                    let client = reqwest::Client::builder()
                        .connect_timeout(Duration::from_secs(10))
                        // Credentials never follow a redirect to another origin (AU-06).
                        .redirect(reqwest::redirect::Policy::none())
                        .build()
                        .map_err(|e| {
                            McpError::Config(format!("could not build the HTTP client: {e}"))
                        })?;
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                    config.custom_headers = custom;
                    let transport = Traced {
                        inner: StreamableHttpClientTransport::with_client(client, config),
                        logs: logs.clone(),
                    };
                    (
                        handshake(handler.serve(transport), init_timeout, &close_reason).await?,
                        None,
                    )
                }
            };
        let peer = running.peer().clone();
        let server: Value = peer
            .peer_info()
            .map(|i| serde_json::to_value(&*i).unwrap_or(Value::Null))
            .unwrap_or(Value::Null);
        let (info, instructions) = read_peer_info(&server)?;
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&info.protocol_version.as_str()) {
            let mut running = running;
            let _ = running.close_with_timeout(Duration::from_secs(2)).await;
            if let Some(p) = process {
                p.stop().await;
            }
            return Err(McpError::Protocol(format!(
                "the server answered with protocol version {}, which Switchboard does not speak (it speaks {})",
                info.protocol_version,
                SUPPORTED_PROTOCOL_VERSIONS.join(", ")
            )));
        }
        let stop = running.cancellation_token();
        let (closed_tx, closed) = watch::channel(None);
        let reason = close_reason.clone();
        tokio::spawn(async move {
            let quit = match running.waiting().await {
                Ok(QuitReason::Cancelled) => "stopped by Switchboard".to_owned(),
                Ok(_) => "the connection closed".to_owned(),
                Err(e) => format!("the connection task failed: {e}"),
            };
            let why = reason
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .unwrap_or(quit);
            let _ = closed_tx.send(Some(why));
        });
        Ok(Self {
            peer,
            stop: Mutex::new(Some(stop)),
            closed,
            info,
            instructions,
            progress,
            process: tokio::sync::Mutex::new(process),
            close_reason,
            default_timeout,
        })
    }

    /// What the handshake told us.
    pub fn info(&self) -> &PeerInfo {
        &self.info
    }

    /// The server's `instructions`, if any (untrusted text).
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The leader process id, for stdio servers.
    pub async fn pid(&self) -> Option<u32> {
        self.process
            .lock()
            .await
            .as_ref()
            .and_then(ServerProcess::pid)
    }

    /// Resolves when the session has ended, with the reason.
    pub async fn closed(&self) -> String {
        let mut rx = self.closed.clone();
        loop {
            if let Some(why) = rx.borrow().clone() {
                return why;
            }
            if rx.changed().await.is_err() {
                return "the connection task ended".into();
            }
        }
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.borrow().is_some()
    }

    /// Ends the session: closes the transport, then stops the process tree. Returns how the
    /// process ended (stdio) or a note (HTTP).
    pub async fn shutdown(&self) -> String {
        let stop = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(stop) = stop {
            stop.cancel();
        }
        let _ = tokio::time::timeout(Duration::from_secs(3), self.closed()).await;
        let process = self.process.lock().await.take();
        match process {
            Some(p) => p.stop().await,
            None => self
                .close_reason
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .unwrap_or_else(|| "session closed".into()),
        }
    }

    /// A request given as its JSON shape, for the cold paths (lists, reads, prompts).
    async fn request_json(
        &self,
        request: Value,
        opts: RequestOptions,
    ) -> Result<ServerResult, McpError> {
        let request: ClientRequest = from_json(request)?;
        self.request(request, opts).await
    }

    async fn request(
        &self,
        request: ClientRequest,
        opts: RequestOptions,
    ) -> Result<ServerResult, McpError> {
        if self.is_closed() {
            return Err(McpError::Disconnected(self.closed().await));
        }
        let timeout = opts.timeout.unwrap_or(self.default_timeout);
        let mut options = PeerRequestOptions::with_timeout(timeout);
        options.reset_timeout_on_progress = true;
        options.max_total_timeout = Some(timeout.saturating_mul(10));
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| map_service_error(e, timeout))?;
        let token = handle.progress_token.clone();
        let routed = opts.progress.is_some();
        if let Some(sink) = opts.progress {
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(token.clone(), sink);
        }
        let id = handle.id.clone();
        let cancel = opts.cancel.unwrap_or_default();
        let closed = self.closed();
        let outcome = tokio::select! {
            r = handle.await_response() => r.map_err(|e| map_service_error(e, timeout)),
            _ = cancel.cancelled() => {
                let params: Result<CancelledNotificationParam, _> = from_json(json!({
                    "requestId": id,
                    "reason": "cancelled by the user",
                }));
                if let Ok(p) = params {
                    let _ = self.peer.notify_cancelled(p).await;
                }
                Err(McpError::Cancelled)
            }
            // rmcp fails pending requests when its loop ends; this makes sure it is prompt
            // even if the loop is slow to notice (RL-05).
            why = closed => Err(McpError::Disconnected(why)),
        };
        if routed {
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&token);
        }
        outcome
    }

    /// Calls a tool.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Arguments,
        opts: RequestOptions,
    ) -> Result<ToolResult, McpError> {
        // Built typed: this is the hot path, and rmcp's untagged request enum is slow to
        // deserialize into.
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
            rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(arguments),
        ));
        let r = self.request(request, opts).await?;
        match r {
            ServerResult::CallToolResult(r) => convert("tool result", r),
            other => Err(unexpected(&other)),
        }
    }

    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
    ) -> Result<Vec<T>, McpError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self
                .request_json(
                    json!({"method": method, "params": params}),
                    RequestOptions::default(),
                )
                .await?;
            let page = serde_json::to_value(&r)
                .map_err(|e| McpError::Protocol(format!("{method}: {e}")))?;
            let items = page.get(field).cloned().unwrap_or(Value::Array(vec![]));
            let items: Vec<T> = serde_json::from_value(items).map_err(|e| {
                McpError::Protocol(format!(
                    "the server's {method} answer does not have the expected shape: {e}"
                ))
            })?;
            out.extend(items);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() && Some(next) != cursor.as_deref() => {
                    cursor = Some(next.to_owned());
                }
                _ => return Ok(out),
            }
        }
        Err(McpError::Protocol(format!(
            "{method} kept returning more pages after {MAX_PAGES}; the server seems to loop"
        )))
    }

    /// Every tool, all pages.
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, McpError> {
        self.list_all("tools/list", "tools").await
    }

    /// Every resource, all pages.
    pub async fn list_resources(&self) -> Result<Vec<ResourceInfo>, McpError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template, all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplateInfo>, McpError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Every prompt, all pages.
    pub async fn list_prompts(&self) -> Result<Vec<PromptInfo>, McpError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
        let r = self
            .request_json(
                json!({"method": "resources/read", "params": {"uri": uri}}),
                RequestOptions::default(),
            )
            .await?;
        let v = serde_json::to_value(&r).map_err(|e| McpError::Protocol(e.to_string()))?;
        serde_json::from_value(v.get("contents").cloned().unwrap_or(Value::Array(vec![]))).map_err(
            |e| {
                McpError::Protocol(format!(
                    "the server's resource contents do not have the expected shape: {e}"
                ))
            },
        )
    }

    /// Expands a prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &HashMap<String, String>,
    ) -> Result<PromptResult, McpError> {
        let r = self
            .request_json(
                json!({"method": "prompts/get", "params": {"name": name, "arguments": arguments}}),
                RequestOptions::default(),
            )
            .await?;
        match r {
            ServerResult::GetPromptResult(r) => convert("prompt", r),
            other => Err(unexpected(&other)),
        }
    }

    /// Asks for completions of a prompt argument.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, McpError> {
        let r = self
            .request_json(
                json!({"method": "completion/complete", "params": {
                    "ref": {"type": "ref/prompt", "name": prompt},
                    "argument": {"name": argument, "value": value},
                }}),
                RequestOptions::default(),
            )
            .await?;
        let v = serde_json::to_value(&r).map_err(|e| McpError::Protocol(e.to_string()))?;
        Ok(v.pointer("/completion/values")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Sends `ping`.
    pub async fn ping(&self) -> Result<(), McpError> {
        self.request_json(json!({"method": "ping"}), RequestOptions::default())
            .await
            .map(|_| ())
    }

    /// Sends `notifications/roots/list_changed` (the person changed which folders it may see).
    pub async fn roots_changed(&self) -> Result<(), McpError> {
        self.peer
            .notify_roots_list_changed()
            .await
            .map_err(|e| map_service_error(e, self.default_timeout))
    }
}

async fn handshake<F>(
    fut: F,
    init_timeout: Duration,
    reason: &CloseReason,
) -> Result<RunningService<RoleClient, Handler>, McpError>
where
    F: std::future::Future<
        Output = Result<RunningService<RoleClient, Handler>, rmcp::service::ClientInitializeError>,
    >,
{
    match tokio::time::timeout(init_timeout, fut).await {
        Err(_) => Err(McpError::HandshakeTimeout(init_timeout)),
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) if e.is_authorization_required() => Err(McpError::AuthRequired(
            e.auth_challenge()
                .map(|c| format!("WWW-Authenticate: {c}"))
                .unwrap_or_else(|| "no challenge given".into()),
        )),
        Ok(Err(e)) => {
            // A process that dies at start-up may fail our first write before the reader has
            // seen its output close; give the reader a moment so the error names the real cause.
            let mut why = None;
            for _ in 0..25 {
                why = reason
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                if why.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(match why {
                Some(why) => McpError::Disconnected(format!("during the handshake {why}")),
                None => McpError::Handshake(readable(&e)),
            })
        }
    }
}

/// An error from rmcp as a person should read it: its own text without the Rust type names
/// rmcp puts in brackets, followed by the root cause from the source chain (the OS or HTTP
/// error that says what really happened, e.g. "Connection refused").
fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut depth = 0usize;
    let top = e.to_string();
    let mut span = String::new();
    for c in top.chars() {
        match c {
            '[' => {
                depth += 1;
                span.clear();
            }
            ']' if depth > 0 => {
                depth -= 1;
                if !(span.contains("::") || span.contains('<')) {
                    text.push('[');
                    text.push_str(&span);
                    text.push(']');
                }
            }
            _ if depth > 0 => span.push(c),
            _ => text.push(c),
        }
    }
    let mut root = e.source();
    let mut last = None;
    while let Some(r) = root {
        last = Some(r.to_string());
        root = r.source();
    }
    let mut out = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(last) = last.filter(|l| !out.contains(l.as_str())) {
        out.push_str(": ");
        out.push_str(&last);
    }
    out
}

fn read_peer_info(v: &Value) -> Result<(PeerInfo, Option<String>), McpError> {
    let caps = v.get("capabilities").cloned().unwrap_or(Value::Null);
    let has = |k: &str| caps.get(k).is_some_and(|c| !c.is_null());
    let info = PeerInfo {
        protocol_version: v
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        server_name: v
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        server_version: v
            .pointer("/serverInfo/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        capabilities: Capabilities {
            tools: has("tools"),
            resources: has("resources"),
            prompts: has("prompts"),
            logging: has("logging"),
            completions: has("completions"),
        },
    };
    let instructions = v
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((info, instructions))
}

fn unexpected(r: &ServerResult) -> McpError {
    let shown = serde_json::to_string(r).unwrap_or_default();
    let shown: String = shown.chars().take(200).collect();
    McpError::Protocol(format!(
        "the server answered with an unexpected result: {shown}"
    ))
}

/// Converts content read elsewhere (used by tests and the CLI to print results).
pub fn content_text(c: &Content) -> Option<&str> {
    match c {
        Content::Text { text } => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Send message error Transport [a::b::Traced<c::D<e::F>>] error: client error, when send initialize request [id 3]")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn errors_read_without_type_names_and_with_the_root_cause() {
        let e = Outer(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        ));
        assert_eq!(
            readable(&e),
            "Send message error Transport error: client error, when send initialize request [id 3]: Connection refused (os error 111)"
        );
    }

    use super::*;

    #[test]
    fn hostile_json_is_an_error_not_a_crash() {
        // 100k-deep nesting stops at serde_json's recursion limit (FZ-01).
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(serde_json::from_str::<ServerJsonRpcMessage>(&deep).is_err());
        let deep_obj = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            r#"{"a":"#.repeat(50_000),
            "}".repeat(50_000)
        );
        assert!(serde_json::from_str::<ServerJsonRpcMessage>(&deep_obj).is_err());
        for odd in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"x":1e999999}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"s":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":{"no":"objects"},"result":{}}"#,
        ] {
            // Either refused or parsed; never a panic.
            let _ = serde_json::from_str::<ServerJsonRpcMessage>(odd);
        }
    }

    #[test]
    fn peer_info_reads_capabilities() {
        let (info, instructions) = read_peer_info(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "prompts": {"listChanged": true}},
            "serverInfo": {"name": "x", "version": "1"},
            "instructions": "be nice"
        }))
        .unwrap();
        assert_eq!(info.protocol_version, "2025-06-18");
        assert!(
            info.capabilities.tools && info.capabilities.prompts && !info.capabilities.resources
        );
        assert_eq!(instructions.as_deref(), Some("be nice"));
    }
}
