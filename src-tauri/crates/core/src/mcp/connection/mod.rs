//! One live MCP session, over the official Rust SDK `rmcp`. The files of this module are the
//! ONLY ones that import `rmcp` (a test below checks the crate's sources): its types churn
//! between major versions, so everything outside sees our own types from
//! [`catalog`](super::catalog), errors from [`super::McpError`] and typed [`Reason`]s.
//!
//! Split by concern, each file small enough to read whole:
//! - this file: the [`Connection`] itself, connecting, the handshake, the session's end;
//! - `calls`: the requests (timeouts with `notifications/cancelled` on timeout and on user
//!   cancel, RL-03/RL-04; progress routed to the caller; complete pagination with a page cap so
//!   a server that keeps returning cursors cannot loop us forever);
//! - `handler`: our side as rmcp sees it (notifications, the server's own requests);
//! - `stdio`: a stdio transport of our own with capped lines (RL-01) and drained stderr
//!   (RL-02); the child runs in its own process group, stopped whole on close (SP-06, RL-08;
//!   see [`super::process`]);
//! - `http`: Streamable HTTP through rmcp's reqwest client, held to the same caps, refusing
//!   the same answers, and pacing reconnects whatever the server's `retry:` says;
//! - `wire`: JSON in and out of rmcp's types, and its errors into ours.
//!
//! Why a session ended is kept as a [`Reason`] set once by whoever saw it first (the stdio
//! reader, the HTTP guard, our own stop), so the supervisor and the shells can act on it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::ProgressToken;
use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, RoleClient, RunningService,
    RunningServiceCancellationToken,
};
use rmcp::Peer;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

mod calls;
mod handler;
mod http;
mod legacy_sse;
mod listen;
pub mod mrtr;
mod open;
mod skills;
mod stdio;
mod wire;

use self::handler::Handler;
pub use self::http::{Pacer, RECONNECT_FLOOR, RECONNECT_MAX};
use self::wire::{auth_status, client_info, read_peer_info, readable};
use super::catalog::{Content, PeerInfo, Progress};
pub use super::requests::ElicitationAnswer;
use super::requests::ServerRequests;
use super::McpError;
use crate::server_logs::ServerLogs;
use crate::server_process::{Pipes, ServerProcess};
use crate::status::{AuthChallenge, Reason};

/// Protocol versions we speak through the `initialize` handshake, newest first. We offer the
/// first; a server may answer with any.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Protocol versions we speak without a handshake (`server/discover`, then self-contained
/// requests), newest first.
pub const STATELESS_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

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

/// Why a session ended, set once by whoever saw it first.
type CloseReason = Arc<Mutex<Option<Reason>>>;

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
        /// The cap on one JSON body or SSE event, as for a stdio line.
        max_message: usize,
        /// The server's sign-in, when it has one.
        auth: Option<crate::oauth::Authorizer>,
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
    /// How the session starts.
    pub lifecycle: Lifecycle,
}

/// How a session starts: which protocol generation we try, and whether we fall back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lifecycle {
    /// The default: probe with `server/discover` for the stateless 2026-07-28 revision, and
    /// fall back to the `initialize` handshake when the server answers like an older one (an
    /// error to the probe, or silence for 10 s). What was negotiated is in
    /// [`PeerInfo::protocol_version`].
    #[default]
    Auto,
    /// Only the `initialize` handshake of revisions up to 2025-11-25.
    Initialize,
    /// Only the stateless 2026-07-28 revision: `server/discover`, then self-contained requests
    /// that carry the protocol version and client capabilities; an older server is an error.
    Stateless,
}

impl Lifecycle {
    /// Whether a server answering with protocol `version` speaks a revision this lifecycle
    /// asked for.
    fn knows(self, version: &str) -> bool {
        match self {
            Self::Initialize => SUPPORTED_PROTOCOL_VERSIONS.contains(&version),
            Self::Stateless => STATELESS_PROTOCOL_VERSIONS.contains(&version),
            Self::Auto => {
                SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
                    || STATELESS_PROTOCOL_VERSIONS.contains(&version)
            }
        }
    }

    fn mode(self) -> ClientLifecycleMode {
        // rmcp's constants, in the order of STATELESS_PROTOCOL_VERSIONS (a test keeps them equal).
        let modern = || vec![ProtocolVersion::V_2026_07_28];
        match self {
            Self::Initialize => ClientLifecycleMode::Initialize,
            Self::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: modern(),
            },
            Self::Auto => ClientLifecycleMode::Auto {
                preferred_versions: modern(),
                legacy_version: None,
            },
        }
    }
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
    closed: watch::Receiver<Option<Reason>>,
    info: PeerInfo,
    instructions: Option<String>,
    progress: ProgressRoutes,
    process: tokio::sync::Mutex<Option<ServerProcess>>,
    close_reason: CloseReason,
    default_timeout: Duration,
    /// Answers the questions of `input_required` results (the same as the handler's).
    requests: Option<Arc<dyn ServerRequests>>,
    /// The caching hint of each list's last complete fetch, by method.
    ttls: Mutex<HashMap<String, Option<Duration>>>,
    /// The session negotiated a stateless revision (2026-07-28): no handshake, per-request
    /// metadata, `subscriptions/listen`.
    stateless: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects and starts the session (the `server/discover` probe, then `initialize` where the
    /// server is older; see [`Lifecycle`]) within `opts.init_timeout`.
    ///
    /// A remote server that answers the probe with something that is not an answer to it (an
    /// older server that replies `{}` to every method it does not know) is asked again from
    /// the start with `initialize` alone: a new HTTP exchange costs nothing. A local server in
    /// that case fails with [`McpError::Protocol`], and the supervisor's next start of it uses
    /// [`Lifecycle::Initialize`] (a process cannot be asked twice to start).
    pub async fn connect(
        endpoint: Endpoint,
        logs: ServerLogs,
        opts: ConnectOptions,
    ) -> Result<Self, McpError> {
        let again = match (&endpoint, opts.lifecycle) {
            (
                Endpoint::Http {
                    url,
                    headers,
                    max_message,
                    auth,
                },
                Lifecycle::Auto,
            ) => Some(Endpoint::Http {
                url: url.clone(),
                headers: headers.clone(),
                max_message: *max_message,
                auth: auth.clone(),
            }),
            _ => None,
        };
        match (
            Self::connect_once(endpoint, logs.clone(), opts.clone()).await,
            again,
        ) {
            (Err(McpError::Protocol(why)), Some(endpoint)) => {
                logs.note(&format!(
                    "the server did not answer server/discover as a 2026-07-28 server ({why}); \
                     starting again with initialize"
                ));
                let opts = ConnectOptions {
                    lifecycle: Lifecycle::Initialize,
                    ..opts
                };
                Self::connect_once(endpoint, logs, opts).await
            }
            (outcome, _) => outcome,
        }
    }

    async fn connect_once(
        endpoint: Endpoint,
        logs: ServerLogs,
        opts: ConnectOptions,
    ) -> Result<Self, McpError> {
        let default_timeout = opts.request_timeout;
        let lifecycle = opts.lifecycle;
        let progress: ProgressRoutes = Arc::default();
        let requests = opts.requests.clone();
        let listen_signals = opts.signals.clone();
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
        let fatal: Arc<http::FatalEnd> = Arc::default();
        let greeting = open::Greeting {
            logs: &logs,
            mode: lifecycle.mode(),
            init_timeout: opts.init_timeout,
            request_timeout: default_timeout,
            close_reason: &close_reason,
            fatal: &fatal,
        };
        let (running, process) = greeting.over(endpoint, handler).await?;
        let peer = running.peer().clone();
        let server: Value = peer
            .peer_info()
            .map(|i| serde_json::to_value(&*i).unwrap_or(Value::Null))
            .unwrap_or(Value::Null);
        let (info, instructions) = read_peer_info(&server)?;
        if !lifecycle.knows(info.protocol_version.as_str()) {
            let mut running = running;
            let _ = running.close_with_timeout(Duration::from_secs(2)).await;
            if let Some(p) = process {
                p.stop().await;
            }
            return Err(McpError::Disconnected(Reason::UnsupportedProtocol {
                version: info.protocol_version,
            }));
        }
        let stop = running.cancellation_token();
        let (closed_tx, closed) = watch::channel(None);
        let stateless = STATELESS_PROTOCOL_VERSIONS.contains(&info.protocol_version.as_str());
        // A stateless session has no stream for list changes unless we open one.
        if stateless {
            let caps = server.get("capabilities").cloned().unwrap_or(Value::Null);
            if let Some(filter) = listen::wanted(&caps) {
                listen::spawn(peer.clone(), filter, listen_signals, closed.clone());
            }
        }
        open::watch_session(running, fatal, close_reason.clone(), closed_tx);
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
            requests,
            ttls: Mutex::default(),
            stateless,
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

    /// Why the session ended, once a request has failed because it did: the reason the
    /// transport recorded, else what the session task reports (briefly awaited: it follows the
    /// transport's end closely), else a plain "closed its output".
    pub(super) async fn end_reason(&self) -> Reason {
        let recorded = self
            .close_reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(why) = recorded {
            return why;
        }
        tokio::time::timeout(Duration::from_millis(250), self.closed())
            .await
            .unwrap_or(Reason::OutputClosed)
    }

    /// Resolves when the session has ended, with the reason.
    pub async fn closed(&self) -> Reason {
        let mut rx = self.closed.clone();
        loop {
            if let Some(why) = rx.borrow().clone() {
                return why;
            }
            if rx.changed().await.is_err() {
                return Reason::Other {
                    detail: "the connection task ended".into(),
                };
            }
        }
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.borrow().is_some()
    }

    /// Ends the session: closes the transport, then stops the process tree. Returns how the
    /// process ended (stdio); `None` for HTTP.
    pub async fn shutdown(&self) -> Option<String> {
        let stop = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(stop) = stop {
            // Ours, unless the session had already ended for a reason of its own.
            self.close_reason
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(Reason::Stopped);
            stop.cancel();
        }
        let ended = tokio::time::timeout(Duration::from_secs(3), self.closed());
        let process = self.process.lock().await.take();
        match process {
            // The first stop phase waits for the exit that also ends the session: one wait,
            // not the session's and then the process's one after the other.
            Some(p) => Some(tokio::join!(p.stop(), ended).0),
            None => {
                let _ = ended.await;
                None
            }
        }
    }
}

async fn handshake<F>(
    fut: F,
    init_timeout: Duration,
    reason: &CloseReason,
) -> Result<RunningService<RoleClient, Handler>, McpError>
where
    F: std::future::Future<
        Output = Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
    >,
{
    match tokio::time::timeout(init_timeout, fut).await {
        Err(_) => Err(McpError::HandshakeTimeout(init_timeout)),
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) if e.is_authorization_required() || init_auth_status(&e).is_some() => {
            Err(McpError::AuthRequired(AuthChallenge::from_header(
                init_auth_status(&e),
                e.auth_challenge(),
            )))
        }
        // The first answer is not one to what we asked (an older server that answers `{}` to
        // the `server/discover` probe): a protocol error, which the caller may retry with
        // `initialize` alone.
        Ok(Err(
            e @ (ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ExpectedInitResponse(_)),
        )) => Err(McpError::Protocol(readable(&e))),
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
                Some(why) => McpError::Disconnected(why),
                None => McpError::Handshake(readable(&e)),
            })
        }
    }
}

/// 401 or 403 behind a failed handshake (rmcp keeps the transport error out of the chain).
fn init_auth_status(e: &ClientInitializeError) -> Option<u16> {
    match e {
        ClientInitializeError::TransportError { error, .. } => auth_status(error),
        _ => None,
    }
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
    use std::path::{Path, PathBuf};

    /// Every `.rs` file under `dir`.
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn the_stateless_versions_are_the_ones_we_ask_rmcp_for() {
        let rmcp::service::ClientLifecycleMode::Auto {
            preferred_versions, ..
        } = super::Lifecycle::Auto.mode()
        else {
            panic!("Auto is not rmcp's Auto");
        };
        let asked: Vec<String> = preferred_versions.iter().map(|v| v.to_string()).collect();
        assert_eq!(asked, super::STATELESS_PROTOCOL_VERSIONS);
    }

    #[test]
    fn only_this_module_and_oauth_import_rmcp() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mine = root.join("mcp").join("connection");
        // The sign-in speaks rmcp's auth types (issue 26: out of this module, below it).
        let oauth = [root.join("oauth.rs"), root.join("oauth")];
        let mut files = Vec::new();
        sources(&root, &mut files);
        assert!(files.len() > 20, "found only {} sources", files.len());
        let mut offenders = Vec::new();
        let mut seen_here = false;
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let uses = text.lines().any(|l| {
                let code = l.split("//").next().unwrap_or_default();
                code.contains("rmcp::") || code.contains("use rmcp")
            });
            if f.starts_with(&mine) {
                seen_here |= uses;
            } else if oauth.iter().any(|o| f.starts_with(o)) {
                continue;
            } else if uses {
                offenders.push(f.display().to_string());
            }
        }
        assert!(
            seen_here,
            "the check does not see this module's own imports"
        );
        assert!(
            offenders.is_empty(),
            "rmcp used outside mcp/connection/ and oauth: {offenders:?}"
        );
    }
}
