//! The protected MCP server: protected resource metadata, the bearer check, and a minimal
//! Streamable HTTP MCP (JSON answers only) with `whoami` and `admin` tools.
//!
//! `whoami` names the caller (subject, client id, scopes) and never the token, so a test can
//! print its answer freely. `admin` answers 403 `insufficient_scope` without `mcp:admin`, the
//! trigger for step-up authorization.

use serde_json::{json, Value};
use tokio::net::TcpStream;

use super::state::Grant;
use super::wire::{Request, Response};
use super::{prm_path_url, Ctx, Mode, PrmAt};

/// Protocol versions echoed back by `initialize`; anything else gets the newest.
const VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// Where [`Mode::RedirectToMetadataIp`] sends the metadata fetch.
const CLOUD_METADATA: &str = "http://169.254.169.254/latest/meta-data/";

/// The `resource` of [`Mode::ResourceMismatch`] metadata.
const OTHER_RESOURCE: &str = "https://mcp.example.net/mcp";

pub(super) async fn serve(ctx: &Ctx, req: &Request, stream: &mut TcpStream) -> std::io::Result<()> {
    let path_aware = matches!(ctx.opts.prm_at, PrmAt::PathAware | PrmAt::Both);
    let root = matches!(ctx.opts.prm_at, PrmAt::Root | PrmAt::Both);
    let resp = match req.path.as_str() {
        "/.well-known/oauth-protected-resource/mcp" if path_aware => prm(ctx).await,
        "/.well-known/oauth-protected-resource" if root => prm(ctx).await,
        "/mcp" => mcp(ctx, req),
        _ => Response::empty("404 Not Found"),
    };
    resp.write(stream).await
}

/// The metadata URL the challenges name.
fn prm_url(ctx: &Ctx) -> String {
    match ctx.opts.prm_at {
        PrmAt::Root => format!("{}/.well-known/oauth-protected-resource", ctx.mcp_origin),
        PrmAt::PathAware | PrmAt::Both => prm_path_url(&ctx.mcp_url),
    }
}

async fn prm(ctx: &Ctx) -> Response {
    let mode = {
        let mut g = ctx.state.lock();
        g.counts.metadata_fetches += 1;
        g.mode.clone()
    };
    match mode {
        Mode::SlowMetadata => std::future::pending().await,
        Mode::RedirectToMetadataIp => Response::redirect(CLOUD_METADATA),
        _ => {
            let resource = if mode == Mode::ResourceMismatch {
                OTHER_RESOURCE
            } else {
                ctx.mcp_url.as_str()
            };
            Response::json(
                "200 OK",
                &json!({
                    "resource": resource,
                    "authorization_servers": [ctx.issuer],
                    "scopes_supported": ctx.opts.prm_scopes,
                    "bearer_methods_supported": ["header"],
                }),
            )
        }
    }
}

/// `WWW-Authenticate` for a 401: `error` is set when a token was presented and refused.
fn challenge(ctx: &Ctx, error: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(e) = error {
        parts.push(format!(r#"error="{e}""#));
    }
    if ctx.opts.challenge_names_metadata {
        parts.push(format!(r#"resource_metadata="{}""#, prm_url(ctx)));
    }
    parts.push(r#"scope="mcp:read""#.to_owned());
    format!("Bearer {}", parts.join(", "))
}

fn bearer(req: &Request) -> Option<&str> {
    let (scheme, token) = req.header("authorization")?.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

fn mcp(ctx: &Ctx, req: &Request) -> Response {
    let token = bearer(req);
    let grant = token.and_then(|t| ctx.state.lock().valid_access(t, &ctx.mcp_url));
    let Some(grant) = grant else {
        let error = token.is_some().then_some("invalid_token");
        return Response::empty("401 Unauthorized")
            .with_header("www-authenticate", challenge(ctx, error));
    };
    match req.method.as_str() {
        "POST" => rpc(ctx, &grant, token.unwrap_or_default(), &req.body),
        "DELETE" => Response::empty("200 OK"),
        _ => Response::empty("405 Method Not Allowed").with_header("allow", "POST, DELETE".into()),
    }
}

fn answer(id: &Value, result: Value) -> Response {
    Response::json(
        "200 OK",
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Response {
    Response::json(
        "200 OK",
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

fn rpc(ctx: &Ctx, grant: &Grant, token: &str, body: &[u8]) -> Response {
    let Ok(msg) = serde_json::from_slice::<Value>(body) else {
        return Response::empty("400 Bad Request");
    };
    let Some(id) = msg.get("id").filter(|_| msg.get("method").is_some()) else {
        // A notification or a response of the client's.
        return Response::empty("202 Accepted");
    };
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    match method {
        "initialize" => {
            let asked = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let version = VERSIONS
                .into_iter()
                .find(|v| *v == asked)
                .unwrap_or(VERSIONS[0]);
            answer(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake-oauth", "version": "1"},
                }),
            )
            .with_header("mcp-session-id", "oauth-session-1".into())
        }
        "ping" => answer(id, json!({})),
        "tools/list" => answer(id, json!({"tools": tools()})),
        "tools/call" => call(ctx, grant, token, id, &params),
        _ => rpc_error(id, -32601, "Method not found"),
    }
}

fn text(id: &Value, text: &str) -> Response {
    answer(id, json!({"content": [{"type": "text", "text": text}]}))
}

fn call(ctx: &Ctx, grant: &Grant, token: &str, id: &Value, params: &Value) -> Response {
    let scopes: Vec<&str> = grant.scope.split_whitespace().collect();
    match params.get("name").and_then(Value::as_str).unwrap_or_default() {
        "whoami" => text(
            id,
            &format!(
                "subject={} client={} scopes={}",
                grant.subject, grant.client_id, grant.scope
            ),
        ),
        "echo_token" => text(id, &format!("you called with {token}")),
        "admin" if scopes.contains(&"mcp:admin") => text(id, "admin ok"),
        "admin" => Response::empty("403 Forbidden").with_header(
            "www-authenticate",
            format!(
                r#"Bearer error="insufficient_scope", scope="mcp:read mcp:admin", resource_metadata="{}""#,
                prm_url(ctx)
            ),
        ),
        _ => rpc_error(id, -32602, "no such tool"),
    }
}

fn tools() -> Value {
    let empty = json!({"type": "object", "properties": {}});
    json!([
        {"name": "whoami", "description": "Who the server thinks is calling: subject, client id and scopes.", "inputSchema": empty},
        {"name": "admin", "description": "An action that needs the mcp:admin scope.", "inputSchema": empty},
        {"name": "echo_token", "description": "Answers with the token it was called with (a leaky server).", "inputSchema": empty},
    ])
}
