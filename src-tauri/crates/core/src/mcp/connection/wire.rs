//! Translation between rmcp's world and ours: building rmcp messages from JSON, reading its
//! results into our catalog types, and its errors into [`McpError`] and typed [`Reason`]s.
//!
//! rmcp's types are built from and read into JSON (`serde_json`) because most of them are
//! `#[non_exhaustive]`; the wire shape is the stable contract, not rmcp's struct layout.
//!
//! A refused answer (a response the host will not read: too deep, not JSON-RPC, too large) is
//! replaced by a JSON-RPC error for its request ([`refusal`]), carrying the typed reason in its
//! `data` under [`REFUSED_KEY`], so the caller gets [`McpError::Refused`] at once and the
//! session goes on. The same path serves stdio lines and HTTP bodies and SSE events.

use std::time::Duration;

use rmcp::model::{ClientConfig, ServerJsonRpcMessage, ServerResult};
use rmcp::service::ServiceError;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpError,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::SUPPORTED_PROTOCOL_VERSIONS;
use crate::mcp::catalog::{Capabilities, PeerInfo};
use crate::mcp::requests::ClientFeatures;
use crate::mcp::McpError;
use crate::status::{AuthChallenge, Reason};

/// Where a refusal's typed reason sits in the `data` of the error that stands in for it.
pub(super) const REFUSED_KEY: &str = "switchboardRefused";

/// The nesting serde_json accepts before it stops with "recursion limit exceeded".
pub(super) const JSON_DEPTH_LIMIT: u32 = 128;

pub(super) fn client_info(features: ClientFeatures) -> Result<ClientConfig, McpError> {
    let capabilities = features.capabilities();
    from_json(json!({
        "protocolVersion": SUPPORTED_PROTOCOL_VERSIONS[0],
        "capabilities": capabilities,
        "clientInfo": {
            "name": "switchboard",
            "title": "Switchboard",
            "version": crate::VERSION,
        }
    }))
}

pub(super) fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, McpError> {
    serde_json::from_value(v)
        .map_err(|e| McpError::Protocol(format!("could not build a message: {e}")))
}

pub(super) fn convert<T: DeserializeOwned>(
    what: &str,
    v: impl serde::Serialize,
) -> Result<T, McpError> {
    serde_json::to_value(v)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            McpError::Protocol(format!(
                "the server's {what} does not have the expected shape: {e}"
            ))
        })
}

pub(super) fn map_service_error(e: ServiceError, timeout: Duration) -> McpError {
    let status = auth_status(&e);
    if e.is_authorization_required() || status.is_some() {
        return McpError::AuthRequired(AuthChallenge::from_header(status, e.auth_challenge()));
    }
    match e {
        ServiceError::McpError(data) => {
            // The legacy SSE transport reports a lost stream as an error answer carrying why.
            if let Some(reason) = data
                .data
                .as_ref()
                .and_then(|d| d.get(super::legacy_sse::LOST_KEY))
                .and_then(|r| serde_json::from_value::<Reason>(r.clone()).ok())
            {
                return McpError::Disconnected(reason);
            }
            if let Some(reason) = data
                .data
                .as_ref()
                .and_then(|d| d.get(REFUSED_KEY))
                .and_then(|r| serde_json::from_value::<Reason>(r.clone()).ok())
            {
                return McpError::Refused { reason };
            }
            McpError::Server {
                code: data.code.0,
                message: data.message.into_owned(),
            }
        }
        ServiceError::Timeout { .. } => McpError::Timeout(timeout),
        ServiceError::TransportClosed => McpError::Disconnected(Reason::OutputClosed),
        // Through `readable`: the transport error's text names Rust types in brackets.
        ServiceError::TransportSend(e) => McpError::Disconnected(Reason::Unreachable {
            detail: format!("could not send: {}", readable(&e)),
        }),
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        ServiceError::UnexpectedResponse => {
            McpError::Protocol("the server answered with the wrong kind of result".into())
        }
        other => McpError::Protocol(readable(&other)),
    }
}

/// 401 or 403, from rmcp's typed errors in a source chain.
pub(super) fn auth_status(e: &(dyn std::error::Error + 'static)) -> Option<u16> {
    let mut source = Some(e);
    while let Some(current) = source {
        if current.downcast_ref::<AuthRequiredError>().is_some() {
            return Some(401);
        }
        if current.downcast_ref::<InsufficientScopeError>().is_some() {
            return Some(403);
        }
        // A 401/403 without a challenge is a plain HTTP error to rmcp.
        let plain = match current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(e)) => e.status().map(|s| s.as_u16()),
            // rmcp's text for a status it has no variant for: "HTTP 403 Forbidden: <body>".
            Some(StreamableHttpError::UnexpectedServerResponse(text)) => text
                .strip_prefix("HTTP ")
                .and_then(|t| t.get(..3))
                .and_then(|code| code.parse().ok()),
            _ => current
                .downcast_ref::<reqwest::Error>()
                .and_then(reqwest::Error::status)
                .map(|s| s.as_u16()),
        };
        if let Some(s) = plain.filter(|s| matches!(s, 401 | 403)) {
            return Some(s);
        }
        source = current.source();
    }
    None
}

/// The typed reason serde_json refused a message for.
pub(super) fn refusal_reason(e: &serde_json::Error) -> Reason {
    let text = e.to_string();
    if text.contains("recursion limit") {
        Reason::TooDeep {
            limit: JSON_DEPTH_LIMIT,
        }
    } else {
        Reason::InvalidJson {
            detail: text.chars().take(300).collect(),
        }
    }
}

/// An error answer to request `id`, in place of a response the host refused.
pub(super) fn refusal(id: Value, reason: &Reason) -> Option<ServerJsonRpcMessage> {
    serde_json::from_value(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32700,
            "message": format!("Switchboard refused the server's answer: {reason}"),
            "data": {REFUSED_KEY: reason},
        },
    }))
    .ok()
}

/// An error answer, in place of a line or event the host refused, for the request it was
/// for (see `mcp::recover`); `None` when the text names no request of ours.
pub(super) fn refused_answer(line: &[u8], why: &serde_json::Error) -> Option<ServerJsonRpcMessage> {
    let id = crate::mcp::recover::response_id(line)?;
    refusal(id, &refusal_reason(why))
}

/// An error from rmcp as a person should read it: its own text without the Rust type names
/// rmcp puts in brackets, followed by the root cause from the source chain (the OS or HTTP
/// error that says what really happened, e.g. "Connection refused").
pub(super) fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut depth = 0usize;
    let top = e.to_string();
    let mut span = String::new();
    for c in top.chars() {
        match c {
            '[' => {
                depth += 1;
                span.clear();
            }
            ']' if depth > 0 => {
                depth -= 1;
                if !(span.contains("::") || span.contains('<')) {
                    text.push('[');
                    text.push_str(&span);
                    text.push(']');
                }
            }
            _ if depth > 0 => span.push(c),
            _ => text.push(c),
        }
    }
    let mut root = e.source();
    let mut last = None;
    while let Some(r) = root {
        last = Some(r.to_string());
        root = r.source();
    }
    let mut out = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(last) = last.filter(|l| !out.contains(l.as_str())) {
        out.push_str(": ");
        out.push_str(&last);
    }
    out
}

pub(super) fn read_peer_info(v: &Value) -> Result<(PeerInfo, Option<String>), McpError> {
    let caps = v.get("capabilities").cloned().unwrap_or(Value::Null);
    let has = |k: &str| caps.get(k).is_some_and(|c| !c.is_null());
    let info = PeerInfo {
        protocol_version: v
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        server_name: v
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        server_version: v
            .pointer("/serverInfo/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        capabilities: Capabilities {
            tools: has("tools"),
            resources: has("resources"),
            prompts: has("prompts"),
            logging: has("logging"),
            completions: has("completions"),
        },
    };
    let instructions = v
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((info, instructions))
}

pub(super) fn unexpected(r: &ServerResult) -> McpError {
    let shown = serde_json::to_string(r).unwrap_or_default();
    // Redacted whole, then cut never inside a secret (SE-06).
    let shown = crate::redact::redact_for_logs(&shown);
    let shown = crate::redact::cut_for_logs(&shown, 200);
    McpError::Protocol(format!(
        "the server answered with an unexpected result: {shown}"
    ))
}

#[cfg(test)]
mod tests {
    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Send message error Transport [a::b::Traced<c::D<e::F>>] error: client error, when send initialize request [id 3]")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn errors_read_without_type_names_and_with_the_root_cause() {
        let e = Outer(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        ));
        assert_eq!(
            readable(&e),
            "Send message error Transport error: client error, when send initialize request [id 3]: Connection refused (os error 111)"
        );
    }

    use super::*;

    #[test]
    fn hostile_json_is_an_error_not_a_crash() {
        // 100k-deep nesting stops at serde_json's recursion limit (FZ-01).
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(serde_json::from_str::<ServerJsonRpcMessage>(&deep).is_err());
        let deep_obj = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            r#"{"a":"#.repeat(50_000),
            "}".repeat(50_000)
        );
        assert!(serde_json::from_str::<ServerJsonRpcMessage>(&deep_obj).is_err());
        for odd in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"x":1e999999}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"s":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":{"no":"objects"},"result":{}}"#,
        ] {
            // Either refused or parsed; never a panic.
            let _ = serde_json::from_str::<ServerJsonRpcMessage>(odd);
        }
    }

    #[test]
    fn peer_info_reads_capabilities() {
        let (info, instructions) = read_peer_info(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "prompts": {"listChanged": true}},
            "serverInfo": {"name": "x", "version": "1"},
            "instructions": "be nice"
        }))
        .unwrap();
        assert_eq!(info.protocol_version, "2025-06-18");
        assert!(
            info.capabilities.tools && info.capabilities.prompts && !info.capabilities.resources
        );
        assert_eq!(instructions.as_deref(), Some("be nice"));
    }
}
