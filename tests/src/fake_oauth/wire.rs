//! HTTP/1.1 plumbing for the OAuth fixture: read one request, write one response, close.
//!
//! Kept apart from `fake_http.rs` on purpose: that server only needs the method and body, this
//! one routes on paths, reads headers and query strings, and records everything it sees.
//! Sharing a parser would mean changing what `http_faults.rs` relies on.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest request head or body read.
const REQUEST_MAX: usize = 1024 * 1024;

/// One parsed request.
pub(super) struct Request {
    pub method: String,
    pub path: String,
    pub raw_query: String,
    /// Header names lowercased, values trimmed, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The query string, decoded.
    pub fn query(&self) -> Vec<(String, String)> {
        decode_form(self.raw_query.as_bytes())
    }

    /// The body as `application/x-www-form-urlencoded`, decoded.
    pub fn form(&self) -> Vec<(String, String)> {
        decode_form(&self.body)
    }
}

/// Decodes `a=b&c=d` (also a query string).
pub(super) fn decode_form(bytes: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

/// The first value named `name` in decoded pairs.
pub(super) fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

pub(super) async fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Request>> {
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
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let target = first.next().unwrap_or_default();
    let (path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
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
    body.truncate(length);
    Ok(Some(Request {
        method,
        path: path.to_owned(),
        raw_query: raw_query.to_owned(),
        headers,
        body,
    }))
}

/// A response to write: status line text, headers, body.
pub(super) struct Response {
    pub status: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn empty(status: &'static str) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn json(status: &'static str, value: &serde_json::Value) -> Self {
        Self {
            status,
            headers: vec![
                ("content-type", "application/json".into()),
                ("cache-control", "no-store".into()),
            ],
            body: value.to_string().into_bytes(),
        }
    }

    pub fn redirect(location: &str) -> Self {
        Self {
            status: "302 Found",
            headers: vec![("location", location.to_owned())],
            body: Vec::new(),
        }
    }

    pub fn with_header(mut self, name: &'static str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    pub async fn write(&self, stream: &mut TcpStream) -> std::io::Result<()> {
        let mut head = format!("HTTP/1.1 {}\r\nconnection: close\r\n", self.status);
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", self.body.len()));
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&self.body).await?;
        stream.flush().await
    }
}

/// The status line for an HTTP status code the fixture may be told to answer with.
pub(super) fn status_line(code: u16) -> &'static str {
    match code {
        200 => "200 OK",
        400 => "400 Bad Request",
        401 => "401 Unauthorized",
        403 => "403 Forbidden",
        404 => "404 Not Found",
        429 => "429 Too Many Requests",
        500 => "500 Internal Server Error",
        502 => "502 Bad Gateway",
        503 => "503 Service Unavailable",
        _ => "400 Bad Request",
    }
}

/// A fresh random opaque value with a readable prefix (`at_`, `rt_`, ...), 128 bits of entropy.
pub(super) fn random(prefix: &str) -> String {
    use rand::Rng;
    let bytes: [u8; 16] = rand::rng().random();
    format!("{prefix}{}", hex::encode(bytes))
}

/// `BASE64URL-NOPAD(SHA256(verifier))`, the S256 PKCE transform (RFC 7636 §4.2).
pub(super) fn s256(verifier: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}
