//! A hostile Streamable HTTP MCP server on 127.0.0.1:0, in-process, for `tests/http_faults.rs`.
//!
//! Hand-written HTTP/1.1 over a `TcpListener` rather than a server framework: the point is to
//! send what a framework would not let us (a body nested 200,000 deep, an SSE event over the
//! cap, `retry: 0` on a stream that ends at once, a 401 with a challenge), and to count what
//! the client does (GETs per second, which methods it asked). Every response closes its
//! connection, so no keep-alive state is needed.
//!
//! Tools: `echo {text}`, `sleep {ms}`, `deep {depth, id_last, sse}` (an answer no JSON reader
//! accepts, as a JSON body or an SSE event), `big {bytes, sse}` (an answer of that size), `bare`
//! (a result with `structuredContent` and no `content`), `downgrade` (see [`HttpMode::Modern`]).
//! Only `tools` is advertised; any other method is answered -32601, as rmcp 3.11 servers now
//! answer unadvertised capabilities.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the server misbehaves outside tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMode {
    /// No standalone GET stream (405).
    Plain,
    /// The GET stream sends `retry: 0` and ends at once, every time.
    RetryZero,
    /// The GET stream sends one event of this many bytes.
    BigGet(usize),
    /// Every POST is refused with 401 and a challenge naming resource metadata.
    Unauthorized,
    /// Every POST is refused with a bare 403 (no challenge).
    Forbidden,
    /// A 2026-07-28 server (answers `server/discover`) until the tool `downgrade` is called;
    /// from then on it is a 2025-11-25 server: -32022 to any request that names 2026-07-28 in
    /// its `_meta`, -32601 to `server/discover`, `initialize` accepted (a redeploy behind the
    /// same URL).
    Modern,
}

/// A running fake; stops when dropped.
pub struct FakeHttp {
    /// The MCP endpoint.
    pub url: String,
    /// GET requests seen.
    pub gets: Arc<AtomicUsize>,
    /// POST requests seen.
    pub posts: Arc<AtomicUsize>,
    /// The JSON-RPC methods seen, in order.
    pub methods: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeHttp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeHttp {
    /// Starts a fake in `mode`.
    pub async fn start(mode: HttpMode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"))
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let state = State {
            mode,
            url: url.clone(),
            gets: Arc::default(),
            posts: Arc::default(),
            methods: Arc::default(),
            downgraded: Arc::default(),
        };
        let fake = Self {
            url,
            gets: state.gets.clone(),
            posts: state.posts.clone(),
            methods: state.methods.clone(),
            task: tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let state = state.clone();
                    tokio::spawn(async move {
                        let _ = state.serve(stream).await;
                    });
                }
            }),
        };
        fake
    }

    /// The methods seen so far.
    pub fn methods(&self) -> Vec<String> {
        self.methods
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[derive(Clone)]
struct State {
    mode: HttpMode,
    url: String,
    gets: Arc<AtomicUsize>,
    posts: Arc<AtomicUsize>,
    methods: Arc<Mutex<Vec<String>>>,
    /// `HttpMode::Modern` after `downgrade`.
    downgraded: Arc<std::sync::atomic::AtomicBool>,
}

/// The largest request head or body read.
const REQUEST_MAX: usize = 1024 * 1024;

struct Request {
    method: String,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > REQUEST_MAX {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let method = head.split(' ').next().unwrap_or_default().to_owned();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0)
        .min(REQUEST_MAX);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(Request { method, body }))
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}

/// Starts an SSE response without a length; the stream ends when the connection closes.
async fn sse_head(stream: &mut TcpStream) -> std::io::Result<()> {
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nmcp-session-id: s1\r\n\r\n",
        )
        .await
}

fn json_headers() -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "application/json".into()),
        ("mcp-session-id", "s1".into()),
    ]
}

/// A JSON-RPC response with `result` given as raw text, the id first or last.
fn raw_response(id: &Value, result: &str, id_last: bool) -> String {
    if id_last {
        format!(r#"{{"jsonrpc":"2.0","result":{result},"id":{id}}}"#)
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
    }
}

fn text_result(text: &str) -> String {
    json!({"content": [{"type": "text", "text": text}]}).to_string()
}

impl State {
    async fn serve(&self, mut stream: TcpStream) -> std::io::Result<()> {
        let Some(req) = read_request(&mut stream).await? else {
            return Ok(());
        };
        match req.method.as_str() {
            "GET" => self.get(&mut stream).await,
            "POST" => self.post(&mut stream, &req.body).await,
            _ => respond(&mut stream, "200 OK", &[], b"").await,
        }
    }

    async fn get(&self, stream: &mut TcpStream) -> std::io::Result<()> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        match self.mode {
            HttpMode::RetryZero => {
                sse_head(stream).await?;
                stream.write_all(b"id: 1\nretry: 0\ndata: \n\n").await?;
                stream.flush().await
            }
            HttpMode::BigGet(size) => {
                sse_head(stream).await?;
                let event = format!(
                    "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"{}\"}}}}\n\n",
                    "x".repeat(size)
                );
                stream.write_all(event.as_bytes()).await?;
                stream.flush().await?;
                // Hold the stream open: the client must end it, not the server.
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(())
            }
            _ => respond(stream, "405 Method Not Allowed", &[], b"").await,
        }
    }

    async fn post(&self, stream: &mut TcpStream, body: &[u8]) -> std::io::Result<()> {
        self.posts.fetch_add(1, Ordering::SeqCst);
        match self.mode {
            HttpMode::Unauthorized => {
                let challenge = format!(
                    r#"Bearer realm="fake", resource_metadata="{}/.well-known/oauth-protected-resource""#,
                    self.url.trim_end_matches("/mcp")
                );
                return respond(
                    stream,
                    "401 Unauthorized",
                    &[("www-authenticate", challenge)],
                    b"",
                )
                .await;
            }
            HttpMode::Forbidden => return respond(stream, "403 Forbidden", &[], b"").await,
            _ => {}
        }
        let Ok(msg) = serde_json::from_slice::<Value>(body) else {
            return respond(stream, "400 Bad Request", &[], b"").await;
        };
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let downgraded = self.mode == HttpMode::Modern && self.downgraded.load(Ordering::SeqCst);
        let modern = self.mode == HttpMode::Modern && !downgraded;
        let names_modern = msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
            == Some("2026-07-28");
        if let (Some(id), true) = (
            msg.get("id"),
            downgraded && names_modern && method != "server/discover",
        ) {
            self.note(method);
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}});
            return respond(
                stream,
                "200 OK",
                &json_headers(),
                error.to_string().as_bytes(),
            )
            .await;
        }
        let Some(id) = msg.get("id").cloned() else {
            // A notification or a response of the client's.
            if !method.is_empty() {
                self.note(method);
            }
            return respond(stream, "202 Accepted", &[], b"").await;
        };
        self.note(method);
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => json!({
                "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-http", "version": "1"},
            })
            .to_string(),
            "server/discover" if modern => json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-http", "version": "1"}},
            })
            .to_string(),
            "ping" => "{}".into(),
            "tools/list" => json!({"tools": tools()}).to_string(),
            "tools/call" => return self.call(stream, &id, &params).await,
            _ => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
                return respond(stream, "200 OK", &json_headers(), error.to_string().as_bytes())
                    .await;
            }
        };
        let answer = raw_response(&id, &result, false);
        respond(stream, "200 OK", &json_headers(), answer.as_bytes()).await
    }

    fn note(&self, method: &str) {
        self.methods
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(method.to_owned());
    }

    async fn call(
        &self,
        stream: &mut TcpStream,
        id: &Value,
        params: &Value,
    ) -> std::io::Result<()> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let flag = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(false);
        let num = |k: &str, d: u64| args.get(k).and_then(Value::as_u64).unwrap_or(d);
        let (answer, sse) = match name {
            "echo" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                (raw_response(id, &text_result(text), false), false)
            }
            "sleep" => {
                tokio::time::sleep(Duration::from_millis(num("ms", 100))).await;
                (raw_response(id, &text_result("slept"), false), flag("sse"))
            }
            "deep" => {
                let depth = num("depth", 200_000) as usize;
                let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                (raw_response(id, &nested, flag("id_last")), flag("sse"))
            }
            "big" => {
                let text = "b".repeat(num("bytes", 1024) as usize);
                (raw_response(id, &text_result(&text), false), flag("sse"))
            }
            "downgrade" => {
                self.downgraded.store(true, Ordering::SeqCst);
                (raw_response(id, &text_result("downgraded"), false), false)
            }
            "bare" => (
                raw_response(id, &json!({"structuredContent": {"n": 3}}).to_string(), false),
                false,
            ),
            _ => (
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "no such tool"}})
                    .to_string(),
                false,
            ),
        };
        if sse {
            sse_head(stream).await?;
            stream
                .write_all(format!("id: e1\ndata: {answer}\n\n").as_bytes())
                .await?;
            return stream.flush().await;
        }
        respond(stream, "200 OK", &json_headers(), answer.as_bytes()).await
    }
}

fn tools() -> Value {
    let object = json!({"type": "object"});
    json!([
        {"name": "echo", "inputSchema": object},
        {"name": "sleep", "inputSchema": object},
        {"name": "deep", "inputSchema": object},
        {"name": "big", "inputSchema": object},
        {"name": "bare", "inputSchema": object},
        {"name": "downgrade", "inputSchema": object},
    ])
}
