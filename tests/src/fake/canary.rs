//! `--mode canary`: a server that tries to reach what a sandbox should keep from it (SP-07).
//!
//! It adds one tool, `canary_probe {path, port}`, which reads the file at `path` and connects to
//! `127.0.0.1:port`, and reports what it reached as JSON text:
//! `{"file": {"read": CONTENT} | {"error": WHY}, "port": {"greeting": LINE} | {"error": WHY}}`.
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
        "Reads the file at `path` and connects to 127.0.0.1:`port`; reports what it reached.",
        object_schema(
            json!({
                "path": {"type": "string"},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535}
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
    if file.is_null() && port.is_null() {
        return tool_error("canary_probe: give `path`, `port` or both");
    }
    text_result(json!({"file": file, "port": port}).to_string())
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
