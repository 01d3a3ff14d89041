//! The legacy transport as rmcp sees it: messages go out as POSTs to the endpoint the stream
//! named, answers and the server's own requests come back as `message` events on the stream.
//!
//! One reader task (`reader.rs`) owns the stream. When the stream drops, the requests still
//! waiting fail at once with an error (their answers would have come on the stream that is
//! gone), sends wait for the new endpoint, and the stream is reopened, paced by the same
//! [`Pacer`](crate::mcp::connection::Pacer) as the Streamable HTTP GETs. A new stream is a new
//! session on the server, so the reader replays our `initialize` on it (its answer is ours,
//! not rmcp's) before messages flow again. A cap breach, an endpoint on another origin or an
//! auth refusal ends the session instead, with its reason.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::header::{HeaderMap, CONTENT_TYPE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::stream::Events;
use super::LOST_KEY;
use crate::mcp::connection::CloseReason;
use crate::server_logs::{Direction, ServerLogs};
use crate::status::Reason;

/// Where messages go now.
#[derive(Clone, Debug)]
pub(super) enum Post {
    Ready(Url),
    /// The stream dropped; a new endpoint is coming.
    Waiting,
    /// The session is over.
    Closed,
}

/// What the transport's halves share.
pub(super) struct Shared {
    pub(super) client: reqwest::Client,
    pub(super) headers: HeaderMap,
    pub(super) sse: Url,
    pub(super) cap: usize,
    /// The wait for a GET's answer and its endpoint event, and for a replayed handshake.
    pub(super) wait: Duration,
    /// The longest one POST may take.
    pub(super) post_timeout: Duration,
    pub(super) logs: ServerLogs,
    pub(super) post: watch::Sender<Post>,
    /// Requests sent and not answered, by the JSON text of their id.
    pub(super) pending: Mutex<HashMap<String, Value>>,
    /// Our `initialize` params, replayed on a new stream.
    pub(super) init: Mutex<Option<Value>>,
    pub(super) reconnects: AtomicU32,
}

/// The legacy HTTP+SSE client transport.
pub(in crate::mcp::connection) struct LegacySse {
    shared: Arc<Shared>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    stop: CancellationToken,
}

impl LegacySse {
    /// Starts the reader on an opened stream whose endpoint is `post`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start(
        client: reqwest::Client,
        headers: HeaderMap,
        sse: Url,
        post: Url,
        events: Events,
        (cap, wait, post_timeout): (usize, Duration, Duration),
        logs: ServerLogs,
        reason: CloseReason,
    ) -> Self {
        let shared = Arc::new(Shared {
            client,
            headers,
            sse,
            cap,
            wait,
            post_timeout,
            logs,
            post: watch::Sender::new(Post::Ready(post)),
            pending: Mutex::default(),
            init: Mutex::default(),
            reconnects: AtomicU32::new(0),
        });
        let (tx, incoming) = mpsc::channel(256);
        let stop = CancellationToken::new();
        tokio::spawn(super::reader::read(
            shared.clone(),
            events,
            tx,
            reason,
            stop.clone(),
        ));
        Self {
            shared,
            incoming,
            stop,
        }
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the SSE session is closed")
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// POSTs one message to `url`; any status but 2xx is an error.
    pub(super) async fn post_to(&self, url: &Url, body: String) -> std::io::Result<()> {
        let sent = self
            .client
            .post(url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .timeout(self.post_timeout)
            .send()
            .await
            // Without the URL: the endpoint's query names the session.
            .map_err(|e| std::io::Error::other(format!("the POST failed: {}", e.without_url())))?;
        let status = sent.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "the server refused the message with HTTP {status}"
            )))
        }
    }

    /// The endpoint, once there is one (bounded by the POST timeout).
    async fn endpoint(&self) -> std::io::Result<Url> {
        let mut rx = self.post.subscribe();
        let ready = tokio::time::timeout(
            self.post_timeout,
            rx.wait_for(|p| !matches!(p, Post::Waiting)),
        )
        .await;
        match ready {
            Err(_) => Err(std::io::Error::other(
                "the server's SSE stream is reconnecting; the message was not sent",
            )),
            Ok(Ok(post)) => match &*post {
                Post::Ready(url) => Ok(url.clone()),
                _ => Err(closed()),
            },
            Ok(Err(_)) => Err(closed()),
        }
    }

    /// Fails every request still waiting: its answer would have come on the stream that dropped.
    pub(super) async fn fail_pending(&self, tx: &mpsc::Sender<ServerJsonRpcMessage>, detail: &str) {
        let ids: Vec<Value> = lock(&self.pending).drain().map(|(_, v)| v).collect();
        let why = Reason::Unreachable {
            detail: format!(
                "the server's SSE stream dropped before the answer came ({detail}); the request may or may not have run"
            ),
        };
        for id in ids {
            let answer = serde_json::from_value(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32000,
                    "message": why.to_string(),
                    "data": {LOST_KEY: why},
                },
            }));
            if let Ok(answer) = answer {
                let _ = tx.send(answer).await;
            }
        }
    }
}

impl Transport<RoleClient> for LegacySse {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "switchboard-legacy-sse".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            let value = serde_json::to_value(&item).map_err(std::io::Error::other)?;
            let text = value.to_string();
            shared.logs.record(Direction::Out, &text);
            let request = value.get("method").and(value.get("id")).cloned();
            if value.get("method").and_then(Value::as_str) == Some("initialize") {
                *lock(&shared.init) = value.get("params").cloned();
            }
            if let Some(id) = &request {
                lock(&shared.pending).insert(id.to_string(), id.clone());
            }
            let url = shared.endpoint().await;
            let sent = match url {
                Ok(url) => shared.post_to(&url, text).await,
                Err(e) => Err(e),
            };
            if let (Err(_), Some(id)) = (&sent, &request) {
                lock(&shared.pending).remove(&id.to_string());
            }
            sent
        }
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<ServerJsonRpcMessage>> {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stop.cancel();
        self.shared.post.send_replace(Post::Closed);
        self.incoming.close();
        Ok(())
    }
}
