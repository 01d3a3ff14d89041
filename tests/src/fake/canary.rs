//! `--mode canary`: a server that tries to reach what a sandbox should keep from it (SP-07).
//!
//! It adds one tool, `canary_probe {path, port, abstract, url}`, which reads the file at `path`,
//! connects to `127.0.0.1:port` and to the abstract Unix socket `@abstract`, and GETs `url`
//! (through `HTTP_PROXY` when that is set, as HTTP clients do; SP-13), and reports what it
//! reached as JSON text: `{"file": {"read": CONTENT} | {"error": WHY}, "port": {"greeting":
//! LINE} | {"error": WHY}, "abstract": {"greeting": LINE} | {"error": WHY}, "url": {"status":
//! CODE, "body": TEXT} | {"error": WHY}}` (a part not asked for is `null`).
//! The test's listener writes a greeting line on every connection, so "reached" means the
//! test's own listener answered, not merely that something accepted.
//!
//! At start-up, `CANARY_REQUIRE_FILE` and `CANARY_REQUIRE_PORT` (environment variables, so a
//! host passes them as configured env) make it exit with status 1 when it cannot read that file
//! or reach that port, printing the failure the way servers usually do
//! (`cannot read PATH: Permission denied (os error 13)`): the blocked start a doctor explains.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{json, Value};

use super::catalog::{object_schema, tool};
use super::out::elog;
use super::server::{text_result, tool_error};

/// The tool's name.
pub const PROBE: &str = "canary_probe";

/// The tools `--mode canary` adds.
pub fn tools() -> Vec<Value> {
    vec![tool(
        PROBE,
        "Reads the file at `path`, connects to 127.0.0.1:`port` and the abstract socket \
         `abstract`, GETs `url` (through HTTP_PROXY if set); reports what it reached.",
        object_schema(
            json!({
                "path": {"type": "string"},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                "abstract": {"type": "string"},
                "url": {"type": "string"}
            }),
            &[],
        ),
    )]
}

fn read_file(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
}

fn greet(port: u16) -> Result<String, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(3))
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(3)));
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .map_err(|e| format!("connected to {addr} but read nothing: {e}"))?;
    Ok(line.trim_end().to_owned())
}

fn greet_abstract(name: &str) -> Result<String, String> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
        .map_err(|e| format!("bad abstract name: {e}"))?;
    let stream = std::os::unix::net::UnixStream::connect_addr(&addr)
        .map_err(|e| format!("cannot connect to @{name}: {e}"))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(3)));
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .map_err(|e| format!("connected to @{name} but read nothing: {e}"))?;
    Ok(line.trim_end().to_owned())
}

/// `host:port` and the path of an `http://` URL.
fn split_url(url: &str) -> Result<(String, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: only http:// URLs"))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let authority = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, format!("/{path}")))
}

/// GETs `url`, through the proxy `HTTP_PROXY` names when it is set. Returns the status code
/// and the first line of the body.
fn get(url: &str) -> Result<(u16, String), String> {
    use std::io::{Read, Write};
    use std::net::ToSocketAddrs;
    let (authority, path) = split_url(url)?;
    let host = authority
        .rsplit_once(':')
        .map_or(authority.as_str(), |(h, _)| h);
    let (connect_to, request) = match std::env::var("HTTP_PROXY").ok().filter(|p| !p.is_empty()) {
        Some(proxy) => (
            split_url(&proxy)?.0,
            format!("GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        ),
        None => (
            authority.clone(),
            format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        ),
    };
    let addr = connect_to
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {connect_to}: {e}"))?
        .next()
        .ok_or_else(|| format!("{connect_to} resolves to nothing"))?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(3))
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send to {addr}: {e}"))?;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| format!("no HTTP answer from {addr}: {answer:?}"))?;
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Ok((status, body.lines().next().unwrap_or("").to_owned()))
}

/// `canary_probe`.
pub fn probe(args: &Value) -> Value {
    let file = match args.get("path").and_then(Value::as_str) {
        Some(path) => match read_file(path) {
            Ok(text) => json!({"read": text}),
            Err(e) => json!({"error": e}),
        },
        None => Value::Null,
    };
    let port = match args.get("port").and_then(Value::as_u64) {
        Some(p) => match u16::try_from(p).map_err(|_| "port out of range".to_owned()) {
            Ok(p) => match greet(p) {
                Ok(line) => json!({"greeting": line}),
                Err(e) => json!({"error": e}),
            },
            Err(e) => json!({"error": e}),
        },
        None => Value::Null,
    };
    let abstract_socket = match args.get("abstract").and_then(Value::as_str) {
        Some(name) => match greet_abstract(name) {
            Ok(line) => json!({"greeting": line}),
            Err(e) => json!({"error": e}),
        },
        None => Value::Null,
    };
    let url = match args.get("url").and_then(Value::as_str) {
        Some(url) => match get(url) {
            Ok((status, body)) => json!({"status": status, "body": body}),
            Err(e) => json!({"error": e}),
        },
        None => Value::Null,
    };
    if [&file, &port, &abstract_socket, &url]
        .iter()
        .all(|v| v.is_null())
    {
        return tool_error("canary_probe: give `path`, `port`, `abstract` or `url`");
    }
    text_result(
        json!({"file": file, "port": port, "abstract": abstract_socket, "url": url}).to_string(),
    )
}

/// The start-up requirements: exits with status 1 if a required file or port is out of reach.
pub fn check_requirements() {
    if let Some(path) = std::env::var_os("CANARY_REQUIRE_FILE") {
        if let Err(e) = read_file(&path.to_string_lossy()) {
            elog!("fake-mcp-server: {e}");
            std::process::exit(1);
        }
    }
    if let Some(port) = std::env::var_os("CANARY_REQUIRE_PORT") {
        let port = port.to_string_lossy().parse::<u16>().unwrap_or(0);
        if let Err(e) = greet(port) {
            elog!("fake-mcp-server: {e}");
            std::process::exit(1);
        }
    }
}
