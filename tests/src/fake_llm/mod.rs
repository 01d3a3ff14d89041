//! A scripted LLM server speaking the real OpenAI and Anthropic streaming wire formats on
//! 127.0.0.1, for driving `switchboard_core::llm` providers without a model.
//!
//! - `POST /v1/chat/completions`: OpenAI Chat Completions SSE (`data: {json}`, `data: [DONE]`).
//! - `POST /v1/messages`: Anthropic Messages SSE (`event:` + `data:` lines).
//! - `GET /requests`: every recorded LLM request so far, as a JSON array.
//!
//! Each POST takes the next reply of its [`Scenario`] (see [`scenario`] for the JSON form):
//! text deltas, tool calls with split arguments, usage, HTTP errors with headers, mid-stream
//! error events, malformed chunks, cut or reset streams, slow streams. Every request is
//! recorded (method, path, headers, JSON body, and whether the client stayed to the end) so
//! tests assert what the client actually sent.
//!
//! In-process use (no subprocess):
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use switchboard_tests::fake_llm::{FakeLlm, Reply, Scenario};
//! let server = FakeLlm::spawn(Scenario::new([Reply::text(&["Hel", "lo"])])).await?;
//! let base = server.openai_base(); // http://127.0.0.1:PORT/v1
//! // ... point a provider at `base`, stream, then:
//! assert_eq!(server.requests().len(), 1);
//! # Ok(()) }
//! ```
//!
//! The `fake-llm-server` binary serves the same thing from a scenario file; [`client`] has
//! helpers to aim real providers at the fake and read their streams.

pub mod client;
pub mod fixtures;
mod http;
pub mod render;
pub mod scenario;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};

pub use render::Vendor;
pub use scenario::{End, HttpError, Reply, Scenario, ScriptedCall, ScriptedUsage, StreamError};

/// How the exchange with the client ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Everything scripted was written.
    Completed,
    /// The client went away before the end (a cancelled stream).
    ClientGone,
}

/// One request the server received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// Its number, from 0 (which reply it got).
    pub index: usize,
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON (a string of the raw text if it was not JSON).
    pub body: Value,
    /// How it ended; `None` while the answer is still being written.
    pub outcome: Option<Outcome>,
}

struct Shared {
    scenario: Scenario,
    requests: Mutex<Vec<RecordedRequest>>,
    record: Option<PathBuf>,
}

impl Shared {
    fn requests(&self) -> std::sync::MutexGuard<'_, Vec<RecordedRequest>> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_outcome(&self, index: usize, outcome: Outcome) {
        if let Some(r) = self.requests().get_mut(index) {
            r.outcome = Some(outcome);
        }
    }
}

/// A running in-process fake; the server stops accepting when this is dropped.
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeLlm {
    /// Serves `scenario` on a fresh 127.0.0.1 port.
    pub async fn spawn(scenario: Scenario) -> std::io::Result<Self> {
        Self::spawn_with(scenario, None).await
    }

    /// Like [`FakeLlm::spawn`], also appending each request as a JSON line to `record`.
    pub async fn spawn_with(scenario: Scenario, record: Option<PathBuf>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            scenario,
            requests: Mutex::new(Vec::new()),
            record,
        });
        let task = tokio::spawn(serve(listener, shared.clone()));
        Ok(Self { addr, shared, task })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL for an OpenAI-wire provider (`http://127.0.0.1:PORT/v1`).
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The base URL for an Anthropic-wire provider (`http://127.0.0.1:PORT`).
    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests().clone()
    }

    /// Waits up to `timeout` for request `index` to have an outcome.
    pub async fn outcome(&self, index: usize, timeout: Duration) -> Option<Outcome> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let o = self.shared.requests().get(index).and_then(|r| r.outcome);
            if o.is_some() || tokio::time::Instant::now() >= deadline {
                return o;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Serves `scenario` on `listener` until the task is dropped (the binary's main loop).
pub async fn serve_forever(listener: TcpListener, scenario: Scenario, record: Option<PathBuf>) {
    let shared = Arc::new(Shared {
        scenario,
        requests: Mutex::new(Vec::new()),
        record,
    });
    serve(listener, shared).await;
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((sock, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = sock.set_nodelay(true);
        tokio::spawn(handle(sock, shared.clone()));
    }
}

async fn handle(mut sock: TcpStream, shared: Arc<Shared>) {
    let Ok(Some(req)) = http::read_request(&mut sock).await else {
        return;
    };
    let json_headers = BTreeMap::from([("content-type".to_owned(), "application/json".to_owned())]);
    let vendor = match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/v1/chat/completions") => Vendor::OpenAi,
        ("POST", "/v1/messages") => Vendor::Anthropic,
        ("GET", "/requests") => {
            let body = serde_json::to_vec(&*shared.requests()).unwrap_or_default();
            let _ = http::write_response(&mut sock, 200, &json_headers, &body).await;
            return;
        }
        _ => {
            let body = json!({"error": {"message": format!("fake-llm-server: no route for {} {}", req.method, req.path), "type": "not_found"}});
            let _ =
                http::write_response(&mut sock, 404, &json_headers, body.to_string().as_bytes())
                    .await;
            return;
        }
    };
    let body: Value = serde_json::from_slice(&req.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()));
    let recorded = {
        let mut requests = shared.requests();
        let r = RecordedRequest {
            index: requests.len(),
            method: req.method,
            path: req.path,
            headers: req.headers,
            body,
            outcome: None,
        };
        requests.push(r.clone());
        r
    };
    if let Some(path) = &shared.record {
        let line = serde_json::to_string(&recorded).unwrap_or_default();
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
    let index = recorded.index;
    let Some(reply) = shared.scenario.reply_for(index).cloned() else {
        let body = json!({"error": {"message": format!("fake-llm-server: the scenario has no reply #{index}"), "type": "server_error"}});
        let _ =
            http::write_response(&mut sock, 500, &json_headers, body.to_string().as_bytes()).await;
        shared.set_outcome(index, Outcome::Completed);
        return;
    };
    let result = match &reply.http_error {
        Some(e) => {
            let mut headers = json_headers;
            headers.extend(e.headers.clone());
            let body = render::error_body(vendor, e);
            http::write_response(&mut sock, e.status, &headers, body.as_bytes()).await
        }
        None => {
            let model = recorded.body["model"].as_str().unwrap_or("fake-model");
            let include_usage = recorded.body["stream_options"]["include_usage"] == json!(true);
            stream_reply(&mut sock, vendor, &reply, model, include_usage).await
        }
    };
    let outcome = match result {
        Ok(()) => Outcome::Completed,
        Err(_) => Outcome::ClientGone,
    };
    shared.set_outcome(index, outcome);
}

async fn stream_reply(
    sock: &mut TcpStream,
    vendor: Vendor,
    reply: &Reply,
    model: &str,
    include_usage: bool,
) -> std::io::Result<()> {
    http::write_stream_head(sock, &reply.headers).await?;
    let frames = match &reply.raw {
        Some(raw) => raw.clone(),
        None => {
            let r = render::render(vendor, reply, model, include_usage);
            let mut frames = r.content;
            match &reply.end {
                End::Complete => frames.extend(r.terminal),
                End::Cut | End::Reset => {}
                End::Malformed => {
                    frames.push(render::malformed_frame(vendor));
                    frames.extend(r.terminal);
                }
                End::Error(e) => frames.push(render::error_frame(vendor, e)),
            }
            frames
        }
    };
    for (i, frame) in frames.into_iter().enumerate() {
        if reply.chunk_delay_ms > 0 && i >= reply.immediate_frames {
            tokio::time::sleep(Duration::from_millis(reply.chunk_delay_ms)).await;
        }
        let bytes = frame.as_bytes();
        let size = if reply.split_bytes == 0 {
            bytes.len().max(1)
        } else {
            reply.split_bytes
        };
        for piece in bytes.chunks(size) {
            http::write_chunk(sock, piece).await?;
        }
    }
    if reply.end == End::Reset {
        // Dropping the socket without the final chunk: the client sees the body break.
        return Ok(());
    }
    http::end_chunks(sock).await
}
