//! A hostile legacy (2024-11-05 HTTP+SSE) MCP server on 127.0.0.1:0, in-process, for
//! `tests/legacy_sse.rs`.
//!
//! Hand-written HTTP/1.1 like [`crate::fake_http`], to send what a framework would not: an
//! `endpoint` on another origin, an event that never ends, a stream that drops mid-call, no
//! endpoint at all, garbage between messages. `GET /sse` opens a session whose first event is
//! `endpoint` (`/messages?session_id=N`); `POST /messages?session_id=N` answers 202 and puts
//! the answer on that session's stream; `POST /sse` is 405, which is what sends a Streamable
//! HTTP client to its fallback. Tools: `echo {text}`, `big` (in [`SseMode::Oversized`], an
//! event that never ends), `drop` (closes the stream without answering).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How the server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseMode {
    /// A well-behaved legacy server.
    Good,
    /// The `endpoint` event names `http://localhost:PORT/…`: the same server, another origin.
    ForeignEndpoint,
    /// `big` answers with an event that never ends (64 MiB of one line, then more).
    Oversized,
    /// Every stream but the first ends right after its endpoint event.
    Flapping,
    /// The stream sends comments and pings but never an `endpoint` event.
    NoEndpoint,
    /// Garbage around every event: unknown kinds, data that is not JSON, stray fields.
    Garbage,
    /// `GET /sse` redirects (307) to the same path on another origin (`localhost`).
    Redirect,
    /// No legacy server either: a POST to `/sse` is 405 as always, every GET 404.
    Nothing,
}

/// A running fake; stops when dropped.
pub struct FakeSse {
    /// The SSE URL (what a person would configure).
    pub url: String,
    /// GETs seen.
    pub gets: Arc<AtomicUsize>,
    /// POSTs to the message endpoint seen.
    pub posts: Arc<AtomicUsize>,
    /// The JSON-RPC methods seen, in order.
    pub methods: Arc<Mutex<Vec<String>>>,
    /// Values of the `x-test-key` header, as `GET value` / `POST value`.
    pub keys: Arc<Mutex<Vec<String>>>,
    /// Bytes of the never-ending event written before the client hung up.
    pub big_written: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeSse {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Sessions = Arc<Mutex<HashMap<usize, mpsc::Sender<Option<String>>>>>;

#[derive(Clone)]
struct State {
    mode: SseMode,
    port: u16,
    gets: Arc<AtomicUsize>,
    posts: Arc<AtomicUsize>,
    methods: Arc<Mutex<Vec<String>>>,
    keys: Arc<Mutex<Vec<String>>>,
    big_written: Arc<AtomicUsize>,
    sessions: Sessions,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FakeSse {
    /// Starts a fake in `mode`.
    pub async fn start(mode: SseMode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"))
            .port();
        let state = State {
            mode,
            port,
            gets: Arc::default(),
            posts: Arc::default(),
            methods: Arc::default(),
            keys: Arc::default(),
            big_written: Arc::default(),
            sessions: Arc::default(),
        };
        Self {
            url: format!("http://127.0.0.1:{port}/sse"),
            gets: state.gets.clone(),
            posts: state.posts.clone(),
            methods: state.methods.clone(),
            keys: state.keys.clone(),
            big_written: state.big_written.clone(),
            task: tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let state = state.clone();
                    tokio::spawn(async move {
                        let _ = state.serve(stream).await;
                    });
                }
            }),
        }
    }

    /// The methods seen so far.
    pub fn methods(&self) -> Vec<String> {
        lock(&self.methods).clone()
    }
}

struct Request {
    method: String,
    path: String,
    key: Option<String>,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1024 * 1024 {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut words = head.split(' ');
    let method = words.next().unwrap_or_default().to_owned();
    let path = words.next().unwrap_or_default().to_owned();
    let header = |name: &str| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
    };
    let length = header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(1024 * 1024);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(Request {
        method,
        path,
        key: header("x-test-key"),
        body,
    }))
}

async fn respond(stream: &mut TcpStream, status: &str) -> std::io::Result<()> {
    let head = format!("HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await
}

fn message(v: &Value) -> String {
    format!("event: message\ndata: {v}\n\n")
}

impl State {
    async fn serve(&self, mut stream: TcpStream) -> std::io::Result<()> {
        let Some(req) = read_request(&mut stream).await? else {
            return Ok(());
        };
        let key = |verb: &str| {
            if let Some(k) = &req.key {
                lock(&self.keys).push(format!("{verb} {k}"));
            }
        };
        match (req.method.as_str(), req.path.split('?').next()) {
            ("GET", _) if self.mode == SseMode::Nothing => {
                self.gets.fetch_add(1, Ordering::SeqCst);
                respond(&mut stream, "404 Not Found").await
            }
            ("GET", Some("/sse")) if self.mode == SseMode::Redirect => {
                self.gets.fetch_add(1, Ordering::SeqCst);
                let head = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://localhost:{}/sse\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
                    self.port
                );
                stream.write_all(head.as_bytes()).await?;
                stream.flush().await
            }
            ("GET", Some("/sse")) => {
                key("GET");
                self.get(&mut stream).await
            }
            ("POST", Some("/messages")) => {
                key("POST");
                self.post(&mut stream, &req).await
            }
            ("POST", Some("/sse")) => respond(&mut stream, "405 Method Not Allowed").await,
            _ => respond(&mut stream, "404 Not Found").await,
        }
    }

    async fn get(&self, stream: &mut TcpStream) -> std::io::Result<()> {
        let n = self.gets.fetch_add(1, Ordering::SeqCst) + 1;
        stream
            .write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n")
            .await?;
        if self.mode == SseMode::NoEndpoint {
            for _ in 0..600 {
                stream
                    .write_all(b": waiting\n\nevent: ping\ndata: {}\n\n")
                    .await?;
                stream.flush().await?;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            return Ok(());
        }
        let garbage = self.mode == SseMode::Garbage;
        if garbage {
            stream
                .write_all(b"event: hello\ndata: not yet\n\n: a comment\n\ndata: {broken\n\nnonsense line\n\n")
                .await?;
        }
        let endpoint = match self.mode {
            SseMode::ForeignEndpoint => {
                format!("http://localhost:{}/messages?session_id={n}", self.port)
            }
            _ => format!("/messages?session_id={n}"),
        };
        stream
            .write_all(format!("event: endpoint\ndata: {endpoint}\n\n").as_bytes())
            .await?;
        stream.flush().await?;
        if self.mode == SseMode::Flapping && n > 1 {
            return Ok(());
        }
        let (tx, mut rx) = mpsc::channel::<Option<String>>(64);
        lock(&self.sessions).insert(n, tx);
        while let Some(item) = rx.recv().await {
            let Some(text) = item else {
                break; // `drop`: end the stream without an answer.
            };
            if garbage {
                stream
                    .write_all(b"event: weird\ndata: {\"jsonrpc\":\"2.0\"}\n\ndata: [[[\n\nid: 7\nretry: x\n\n")
                    .await?;
            }
            if text == "BIG" {
                return self.big(stream).await;
            }
            stream.write_all(text.as_bytes()).await?;
            stream.flush().await?;
        }
        lock(&self.sessions).remove(&n);
        Ok(())
    }

    /// One event that never ends: 64 MiB of a single data line, written until the client hangs up.
    async fn big(&self, stream: &mut TcpStream) -> std::io::Result<()> {
        stream
            .write_all(b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"")
            .await?;
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..1024 {
            stream.write_all(&chunk).await?;
            self.big_written.fetch_add(chunk.len(), Ordering::SeqCst);
        }
        Ok(())
    }

    async fn post(&self, stream: &mut TcpStream, req: &Request) -> std::io::Result<()> {
        self.posts.fetch_add(1, Ordering::SeqCst);
        let session = req
            .path
            .split_once("session_id=")
            .and_then(|(_, n)| n.parse::<usize>().ok());
        let tx = session.and_then(|n| lock(&self.sessions).get(&n).cloned());
        let Some(tx) = tx else {
            return respond(stream, "404 Not Found").await;
        };
        let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
            return respond(stream, "400 Bad Request").await;
        };
        respond(stream, "202 Accepted").await?;
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !method.is_empty() {
            lock(&self.methods).push(method.to_owned());
        }
        let Some(id) = msg.get("id").cloned().filter(|_| !method.is_empty()) else {
            return Ok(());
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => json!({
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-sse", "version": "1"},
            }),
            "ping" => json!({}),
            "tools/list" => json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "big", "inputSchema": {"type": "object"}},
                {"name": "drop", "inputSchema": {"type": "object"}},
            ]}),
            "tools/call" => match params.get("name").and_then(Value::as_str) {
                Some("echo") => {
                    let text = params
                        .pointer("/arguments/text")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    json!({"content": [{"type": "text", "text": text}]})
                }
                Some("big") => {
                    let _ = tx.send(Some("BIG".into())).await;
                    return Ok(());
                }
                Some("drop") => {
                    let _ = tx.send(None).await;
                    return Ok(());
                }
                _ => json!({"content": [], "isError": true}),
            },
            _ => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
                let _ = tx.send(Some(message(&error))).await;
                return Ok(());
            }
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        let _ = tx.send(Some(message(&answer))).await;
        Ok(())
    }
}
