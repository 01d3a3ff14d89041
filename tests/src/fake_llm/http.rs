//! Just enough HTTP/1.1 for a scripted LLM server, on a raw `TcpStream`.
//!
//! Hand-written rather than hyper or axum (neither is a dependency of ours with server
//! features): the fake must control the bytes on the wire exactly, which a framework hides:
//! where HTTP chunks split an SSE event, a body ended without its final chunk (a reset), or
//! one ended cleanly without the vendor's terminal event (a cut). One request per connection,
//! answered with `connection: close`, keeps the parser to headers plus a `content-length`
//! body; reqwest sends nothing else.

use std::collections::BTreeMap;
use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most header bytes we accept.
const MAX_HEAD: usize = 64 * 1024;
/// The most body bytes we accept (a transcript with images can be large).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// A parsed request.
pub struct Request {
    /// `GET`, `POST`...
    pub method: String,
    /// The path, query included.
    pub path: String,
    /// Headers, names lowercased (a repeated header keeps its last value).
    pub headers: BTreeMap<String, String>,
    /// The body.
    pub body: Vec<u8>,
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

/// Reads one request; `None` if the peer closed before sending one.
pub async fn read_request(sock: &mut TcpStream) -> io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD {
            return Err(bad("request head too large"));
        }
        let mut chunk = [0u8; 8192];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(bad("connection closed inside the request head"))
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = BTreeMap::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = match headers.get("content-length") {
        Some(v) => v.parse().map_err(|_| bad("bad content-length"))?,
        None => 0,
    };
    if len > MAX_BODY {
        return Err(bad("request body too large"));
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let mut chunk = vec![0u8; (len - body.len()).min(64 * 1024)];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Err(bad("connection closed inside the request body"));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(len);
    Ok(Some(Request {
        method,
        path,
        headers,
        body,
    }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

fn head(status: u16, headers: &BTreeMap<String, String>, framing: &str) -> String {
    let mut s = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str(framing);
    s.push_str("connection: close\r\n\r\n");
    s
}

/// Writes a complete response with a `content-length` body.
pub async fn write_response(
    sock: &mut TcpStream,
    status: u16,
    headers: &BTreeMap<String, String>,
    body: &[u8],
) -> io::Result<()> {
    let mut out = head(
        status,
        headers,
        &format!("content-length: {}\r\n", body.len()),
    )
    .into_bytes();
    out.extend_from_slice(body);
    sock.write_all(&out).await?;
    sock.flush().await?;
    sock.shutdown().await
}

/// Writes the head of a `200` SSE answer with a chunked body.
pub async fn write_stream_head(
    sock: &mut TcpStream,
    extra: &BTreeMap<String, String>,
) -> io::Result<()> {
    let mut headers = BTreeMap::from([
        (
            "content-type".to_owned(),
            "text/event-stream; charset=utf-8".to_owned(),
        ),
        ("cache-control".to_owned(), "no-cache".to_owned()),
    ]);
    headers.extend(extra.clone());
    sock.write_all(head(200, &headers, "transfer-encoding: chunked\r\n").as_bytes())
        .await?;
    sock.flush().await
}

/// Writes one HTTP chunk.
pub async fn write_chunk(sock: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    sock.write_all(&out).await?;
    sock.flush().await
}

/// Ends a chunked body cleanly and closes our side.
pub async fn end_chunks(sock: &mut TcpStream) -> io::Result<()> {
    sock.write_all(b"0\r\n\r\n").await?;
    sock.flush().await?;
    sock.shutdown().await
}
