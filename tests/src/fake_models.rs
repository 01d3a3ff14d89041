//! Scripted model-list servers on 127.0.0.1: a fake Ollama (`GET /api/tags`,
//! `POST /api/show`), a fake LM Studio (`GET /api/v0/models`, `GET /v1/models`) and vendor
//! list endpoints (`GET /v1/models` for OpenAI-compatible servers, Anthropic's paged
//! `GET /v1/models?limit=..&after_id=..`), for `tests/models.rs` and `tests/e2e_models.rs`.
//!
//! A server is a list of [`Route`]s matched in order on method, path, optionally the query
//! string and (for `POST /api/show`) the body's `model`; anything unmatched is a 404 with a
//! JSON error, as the real runtimes answer unknown paths. Every request is recorded with its
//! headers so tests assert what the client sent (the key header, the paging cursor). One
//! request per connection, answered with `connection: close`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Route {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The path without the query.
    pub path: String,
    /// When set, the query string must equal this.
    pub query: Option<String>,
    /// When set, the JSON body's `model` must equal this.
    pub model: Option<String>,
    /// The status sent.
    pub status: u16,
    /// The body sent.
    pub body: String,
}

impl Route {
    /// `GET path` answered 200 with `body`.
    pub fn get(path: &str, body: Value) -> Self {
        Self {
            method: "GET",
            path: path.to_owned(),
            query: None,
            model: None,
            status: 200,
            body: body.to_string(),
        }
    }

    /// Only when the query is exactly `query`.
    pub fn with_query(mut self, query: &str) -> Self {
        self.query = Some(query.to_owned());
        self
    }

    /// Answered with `status` and a raw `body`.
    pub fn status(mut self, status: u16, body: &str) -> Self {
        self.status = status;
        self.body = body.to_owned();
        self
    }
}

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The method.
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Headers, lowercased names.
    pub headers: BTreeMap<String, String>,
    /// The body as text.
    pub body: String,
}

/// The routes of an Ollama with these models: `(name, capabilities)`; `None` capabilities
/// makes `/api/show` answer without the field (an older Ollama).
pub fn ollama(models: &[(&str, Option<&[&str]>)]) -> Vec<Route> {
    let tags: Vec<Value> = models
        .iter()
        .map(|(name, _)| json!({"name": name, "model": name, "size": 1, "digest": "d", "details": {"family": "x"}}))
        .collect();
    let mut routes = vec![Route::get("/api/tags", json!({ "models": tags }))];
    for (name, caps) in models {
        let mut show = json!({"modelfile": "", "parameters": "", "template": "", "details": {"format": "gguf"}});
        if let Some(caps) = caps {
            show["capabilities"] = json!(caps);
        }
        routes.push(Route {
            method: "POST",
            path: "/api/show".into(),
            query: None,
            model: Some((*name).to_owned()),
            status: 200,
            body: show.to_string(),
        });
    }
    routes
}

/// The routes of an LM Studio with these models: `(id, type, capabilities)`.
pub fn lmstudio(models: &[(&str, &str, Option<&[&str]>)]) -> Vec<Route> {
    let data: Vec<Value> = models
        .iter()
        .map(|(id, kind, caps)| {
            let mut m = json!({"id": id, "object": "model", "type": kind, "publisher": "p",
                               "arch": "llama", "state": "not-loaded", "max_context_length": 8192});
            if let Some(caps) = caps {
                m["capabilities"] = json!(caps);
            }
            m
        })
        .collect();
    let ids: Vec<Value> = models
        .iter()
        .map(|(id, _, _)| json!({"id": id, "object": "model", "owned_by": "organization_owner"}))
        .collect();
    vec![
        Route::get("/api/v0/models", json!({"object": "list", "data": data})),
        Route::get("/v1/models", json!({"object": "list", "data": ids})),
    ]
}

/// An OpenAI-compatible `GET {prefix}/models` listing `ids`.
pub fn openai_list(prefix: &str, ids: &[&str]) -> Route {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1, "owned_by": "system"}))
        .collect();
    Route::get(
        &format!("{prefix}/models"),
        json!({"object": "list", "data": data}),
    )
}

/// One page of Anthropic's `GET /v1/models`: answered to `query`, listing `ids`.
pub fn anthropic_page(query: &str, ids: &[&str], has_more: bool) -> Route {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"type": "model", "id": id, "display_name": format!("Claude {id}"), "created_at": "2025-01-01T00:00:00Z"}))
        .collect();
    Route::get(
        "/v1/models",
        json!({"data": data, "has_more": has_more, "first_id": ids.first(), "last_id": ids.last()}),
    )
    .with_query(query)
}

/// A loopback URL nothing listens on (a runtime that is not running).
pub async fn closed_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let port = l
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"))
        .port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// A running fake; stops when dropped.
pub struct FakeModels {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeModels {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeModels {
    /// Serves `routes` on an ephemeral loopback port.
    pub async fn start(routes: Vec<Route>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"))
            .port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let routes = Arc::new(routes);
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                while let Ok((sock, _)) = listener.accept().await {
                    let (seen, routes) = (seen.clone(), routes.clone());
                    tokio::spawn(async move {
                        let _ = serve(sock, &routes, &seen).await;
                    });
                }
            }
        });
        Self {
            url: format!("http://127.0.0.1:{port}"),
            seen,
            task,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn serve(
    mut sock: TcpStream,
    routes: &[Route],
    seen: &Mutex<Vec<Seen>>,
) -> std::io::Result<()> {
    let Some(req) = read(&mut sock).await? else {
        return Ok(());
    };
    seen.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(req.clone());
    let (path, query) = match req.path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (req.path.as_str(), None),
    };
    let model = serde_json::from_str::<Value>(&req.body)
        .ok()
        .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_owned));
    let hit = routes.iter().find(|r| {
        r.method == req.method
            && r.path == path
            && r.query.as_deref().is_none_or(|q| Some(q) == query)
            && r.model.as_ref().is_none_or(|m| Some(m) == model.as_ref())
    });
    let (status, body) = match hit {
        Some(r) => (r.status, r.body.clone()),
        None => (404, json!({"error": "not found"}).to_string()),
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body.as_bytes()).await?;
    sock.flush().await?;
    sock.shutdown().await
}

async fn read(sock: &mut TcpStream) -> std::io::Result<Option<Seen>> {
    let mut buf = Vec::new();
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let mut chunk = [0u8; 4096];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let path = first.next().unwrap_or_default().to_owned();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[end + 4..].to_vec();
    while body.len() < len {
        let mut chunk = vec![0u8; len - body.len()];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(Seen {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }))
}
