//! The authorization server: discovery, registration, authorize, token, revoke.
//!
//! Strict where a real server is strict and a careless client would slip: PKCE S256 with a
//! 43-128 character verifier, the exact `redirect_uri`, `resource` on both requests (RFC 8707),
//! one-time codes, refresh token rotation, and the client authentication method the client
//! registered (a secret sent by the wrong method is `invalid_client`).

use std::time::Duration;

use serde_json::{json, Value};
use tokio::net::TcpStream;

use super::state::{Client, Code, Grant, Issued};
use super::wire::{param, random, s256, status_line, Request, Response};
use super::{Ctx, Mode};

/// Scopes this server knows; anything else asked for is silently not granted.
const SCOPES: [&str; 3] = ["mcp:read", "mcp:admin", "offline_access"];

/// The issuer named in [`Mode::WrongIss`] redirects and [`Mode::IssuerMismatch`] metadata.
const OTHER_ISSUER: &str = "https://issuer.example.net";

/// Size of the [`Mode::HugeMetadata`] document.
const HUGE: usize = 10 * 1024 * 1024;

pub(super) async fn serve(ctx: &Ctx, req: &Request, stream: &mut TcpStream) -> std::io::Result<()> {
    let resp = match (req.method.as_str(), req.path.as_str()) {
        (
            "GET",
            "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration",
        ) => metadata(ctx).await,
        ("POST", "/register") => register(ctx, req),
        ("GET", "/authorize") => authorize(ctx, req),
        ("POST", "/token") => {
            tokio::time::sleep(ctx.opts.token_delay).await;
            token(ctx, req)
        }
        ("POST", "/revoke") => revoke(ctx, req),
        _ => Response::empty("404 Not Found"),
    };
    resp.write(stream).await
}

pub(super) fn oauth_error(status: &'static str, error: &str, description: &str) -> Response {
    Response::json(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

async fn metadata(ctx: &Ctx) -> Response {
    let mode = {
        let mut g = ctx.state.lock();
        g.counts.metadata_fetches += 1;
        g.mode.clone()
    };
    if mode == Mode::SlowMetadata {
        std::future::pending::<()>().await;
    }
    let base = if mode == Mode::HttpDowngrade {
        "http://auth.example.com"
    } else {
        ctx.issuer.as_str()
    };
    let mut doc = json!({
        "issuer": ctx.issuer,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "revocation_endpoint": format!("{base}/revoke"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ctx.opts.auth_methods,
        "revocation_endpoint_auth_methods_supported": ctx.opts.auth_methods,
        "scopes_supported": SCOPES,
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": false,
    });
    if let Some(obj) = doc.as_object_mut() {
        if !ctx.opts.dcr {
            obj.remove("registration_endpoint");
        }
        match mode {
            Mode::IssuerMismatch => {
                obj.insert("issuer".into(), json!(OTHER_ISSUER));
            }
            Mode::NoS256 => {
                obj.remove("code_challenge_methods_supported");
            }
            Mode::PlainOnly => {
                obj.insert("code_challenge_methods_supported".into(), json!(["plain"]));
            }
            Mode::HugeMetadata => {
                obj.insert("x_padding".into(), json!("x".repeat(HUGE)));
            }
            _ => {}
        }
    }
    Response::json("200 OK", &doc)
}

/// Whether `uri` is a plain-http loopback IP literal with a port (RFC 8252 §7.3).
pub(super) fn is_loopback_redirect(uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|u| {
        u.scheme() == "http"
            && matches!(u.host_str(), Some("127.0.0.1" | "[::1]"))
            && u.port().is_some()
    })
}

/// Whether `uri` matches a registered redirect URI; the port may vary (RFC 8252 §7.3).
fn matches_registered(uri: &str, registered: &[String]) -> bool {
    let Ok(u) = url::Url::parse(uri) else {
        return false;
    };
    registered.is_empty()
        || registered.iter().any(|r| {
            url::Url::parse(r).is_ok_and(|r| {
                r.scheme() == u.scheme() && r.host_str() == u.host_str() && r.path() == u.path()
            })
        })
}

fn register(ctx: &Ctx, req: &Request) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
        return oauth_error("400 Bad Request", "invalid_client_metadata", "not JSON");
    };
    let redirect_uris: Vec<String> = body
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(bad) = redirect_uris.iter().find(|u| !is_loopback_redirect(u)) {
        return oauth_error(
            "400 Bad Request",
            "invalid_redirect_uri",
            &format!("not a loopback redirect: {bad}"),
        );
    }
    // RFC 7591 §2: an omitted method means client_secret_basic.
    let requested = body
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic");
    if !ctx.opts.auth_methods.iter().any(|m| m == requested) {
        return oauth_error(
            "400 Bad Request",
            "invalid_client_metadata",
            &format!("token_endpoint_auth_method {requested} is not supported"),
        );
    }
    let method = if ctx.opts.confidential && requested == "none" {
        ["client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| ctx.opts.auth_methods.iter().any(|a| a == m))
            .unwrap_or("client_secret_basic")
    } else {
        requested
    };
    let client_id = random("client_");
    let secret = (method != "none").then(|| random("secret_"));
    let mut answer = body.clone();
    if let Some(obj) = answer.as_object_mut() {
        obj.insert("client_id".into(), json!(client_id));
        obj.insert("client_id_issued_at".into(), json!(0));
        obj.insert("token_endpoint_auth_method".into(), json!(method));
        if let Some(s) = &secret {
            obj.insert("client_secret".into(), json!(s));
            obj.insert("client_secret_expires_at".into(), json!(0));
        }
    }
    let mut g = ctx.state.lock();
    g.counts.registrations += 1;
    g.clients.insert(
        client_id,
        Client {
            secret,
            auth_method: Some(method.to_owned()),
            redirect_uris,
        },
    );
    Response::json("201 Created", &answer)
}

/// `redirect_uri` with `params` appended to its query.
fn with_params(redirect_uri: &str, params: &[(&str, &str)]) -> String {
    match url::Url::parse(redirect_uri) {
        Ok(mut u) => {
            u.query_pairs_mut().extend_pairs(params);
            u.into()
        }
        Err(_) => redirect_uri.to_owned(),
    }
}

/// The scopes granted for a request: the known ones asked for, at least `mcp:read`.
fn grant_scope(requested: Option<&str>) -> String {
    let mut granted: Vec<&str> = requested
        .unwrap_or_default()
        .split_whitespace()
        .filter(|s| SCOPES.contains(s))
        .collect();
    if !granted.iter().any(|s| s.starts_with("mcp:")) {
        granted.insert(0, "mcp:read");
    }
    granted.dedup();
    granted.join(" ")
}

fn authorize(ctx: &Ctx, req: &Request) -> Response {
    let q = req.query();
    let get = |k: &str| param(&q, k);
    let mut g = ctx.state.lock();
    g.counts.authorizations += 1;
    let client_id = get("client_id").unwrap_or_default();
    let redirect_uri = get("redirect_uri").unwrap_or_default();
    // RFC 6749 §4.1.2.1: with an unknown client or a bad redirect URI, never redirect.
    let Some(client) = g.clients.get(client_id) else {
        return Response::json("400 Bad Request", &json!({"error": "invalid_client"}));
    };
    if !is_loopback_redirect(redirect_uri)
        || !matches_registered(redirect_uri, &client.redirect_uris)
    {
        return Response::json("400 Bad Request", &json!({"error": "invalid_redirect_uri"}));
    }
    let state = get("state").unwrap_or_default();
    let iss = if g.mode == Mode::WrongIss {
        OTHER_ISSUER
    } else {
        ctx.issuer.as_str()
    };
    let refuse = |error: &str, description: &str| {
        let mut params = vec![("error", error), ("error_description", description)];
        if !state.is_empty() {
            params.push(("state", state));
        }
        params.push(("iss", iss));
        Response::redirect(&with_params(redirect_uri, &params))
    };
    if get("response_type") != Some("code") {
        return refuse("unsupported_response_type", "only code is supported");
    }
    let challenge = get("code_challenge").unwrap_or_default();
    if get("code_challenge_method") != Some("S256") || challenge.is_empty() {
        return refuse("invalid_request", "PKCE with S256 is required");
    }
    match get("resource") {
        None => return refuse("invalid_target", "the resource parameter is required"),
        Some(r) if r != ctx.mcp_url => return refuse("invalid_target", "unknown resource"),
        Some(_) => {}
    }
    if g.mode == Mode::ConsentDenied {
        return refuse("access_denied", "the user denied the request");
    }
    let code = random("code_");
    g.codes.insert(
        code.clone(),
        Code {
            client_id: client_id.to_owned(),
            challenge: challenge.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            resource: ctx.mcp_url.clone(),
            scope: grant_scope(get("scope")),
        },
    );
    let mut params = vec![("code", code.as_str())];
    if !state.is_empty() {
        params.push(("state", state));
    }
    params.push(("iss", iss));
    Response::redirect(&with_params(redirect_uri, &params))
}

/// Decodes `Authorization: Basic` into (id, secret); both parts are form-urlencoded first
/// (RFC 6749 §2.3.1).
fn basic_credentials(req: &Request) -> Option<(String, String)> {
    use base64::Engine;
    let header = req.header("authorization")?;
    let (scheme, value) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    let unform = |s: &str| {
        url::form_urlencoded::parse(format!("v={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Some((unform(id), unform(secret)))
}

/// Authenticates the client of a token request; returns its id or an `invalid_client` answer.
/// `need_secret` is for client credentials, where a public client has nothing to prove.
fn authenticate(
    ctx: &Ctx,
    req: &Request,
    form: &[(String, String)],
    need_secret: bool,
) -> Result<String, Response> {
    let deny = |why: &str| Err(oauth_error("401 Unauthorized", "invalid_client", why));
    let basic = basic_credentials(req);
    let post_secret = param(form, "client_secret");
    let Some(client_id) = basic
        .as_ref()
        .map(|(id, _)| id.as_str())
        .or_else(|| param(form, "client_id"))
    else {
        return deny("no client_id");
    };
    let (used, presented) = match (&basic, post_secret) {
        (Some(_), Some(_)) => return deny("more than one authentication method"),
        (Some((_, s)), None) => ("client_secret_basic", Some(s.as_str())),
        (None, Some(s)) => ("client_secret_post", Some(s)),
        (None, None) => ("none", None),
    };
    let g = ctx.state.lock();
    let Some(client) = g.clients.get(client_id) else {
        return deny("unknown client");
    };
    let secret_ok = client.secret.is_some() && presented == client.secret.as_deref();
    // Client credentials accept either secret method; otherwise the registered one only.
    if let (Some(m), false) = (&client.auth_method, need_secret) {
        if m != used {
            return deny(&format!("registered for {m}, authenticated with {used}"));
        }
    }
    let must_prove = need_secret
        || match &client.auth_method {
            Some(m) => m != "none",
            None => client.secret.is_some(),
        };
    if must_prove && (used == "none" || !secret_ok) {
        return deny("bad client credentials");
    }
    Ok(client_id.to_owned())
}

fn token_answer(issued: Issued, ttl: u64, mode: &Mode) -> Response {
    let token_type = match mode {
        Mode::TokenType(t) => t.as_str(),
        _ => "Bearer",
    };
    let mut body = json!({
        "access_token": issued.access_token,
        "token_type": token_type,
        "expires_in": ttl,
        "scope": issued.scope,
    });
    if let (Some(rt), Some(obj)) = (issued.refresh_token, body.as_object_mut()) {
        obj.insert("refresh_token".into(), json!(rt));
    }
    Response::json("200 OK", &body)
}

fn token(ctx: &Ctx, req: &Request) -> Response {
    let form = req.form();
    let grant_type = param(&form, "grant_type").unwrap_or_default();
    let mode = {
        let mut g = ctx.state.lock();
        match grant_type {
            "authorization_code" => g.counts.token_authorization_code += 1,
            "refresh_token" => g.counts.token_refresh += 1,
            "client_credentials" => g.counts.token_client_credentials += 1,
            _ => {}
        }
        g.mode.clone()
    };
    if let Mode::TokenError(status, error) = &mode {
        if matches!(grant_type, "authorization_code" | "refresh_token") {
            return Response::json(status_line(*status), &json!({"error": error}));
        }
    }
    let client_id = match authenticate(ctx, req, &form, grant_type == "client_credentials") {
        Ok(id) => id,
        Err(resp) => return resp,
    };
    let resource = param(&form, "resource");
    if resource.is_some_and(|r| r != ctx.mcp_url) {
        return oauth_error("400 Bad Request", "invalid_target", "unknown resource");
    }
    let ttl = ctx.opts.access_ttl_secs;
    let invalid_grant = |why: &str| oauth_error("400 Bad Request", "invalid_grant", why);
    let mut g = ctx.state.lock();
    let issued = match grant_type {
        "authorization_code" => {
            let Some(code) = param(&form, "code").and_then(|c| g.codes.remove(c)) else {
                return invalid_grant("unknown or used code");
            };
            if code.client_id != client_id {
                return invalid_grant("code issued to another client");
            }
            if param(&form, "redirect_uri") != Some(code.redirect_uri.as_str()) {
                return invalid_grant("redirect_uri differs from the authorization request");
            }
            let verifier = param(&form, "code_verifier").unwrap_or_default();
            if !(43..=128).contains(&verifier.len()) || s256(verifier) != code.challenge {
                return invalid_grant("PKCE verification failed");
            }
            if resource != Some(code.resource.as_str()) {
                return oauth_error("400 Bad Request", "invalid_target", "resource is required");
            }
            let grant = Grant {
                client_id,
                subject: "user-1".into(),
                scope: code.scope,
                resource: code.resource,
                expires_at: None,
                revoked: false,
            };
            g.issue(grant, Duration::from_secs(ttl), true)
        }
        "refresh_token" => {
            let rt = param(&form, "refresh_token").unwrap_or_default();
            let Some(mut grant) = g.refresh.get(rt).filter(|g| !g.revoked).cloned() else {
                return invalid_grant("unknown, rotated or revoked refresh token");
            };
            if grant.client_id != client_id {
                return invalid_grant("refresh token issued to another client");
            }
            if let Some(asked) = param(&form, "scope") {
                let had: Vec<&str> = grant.scope.split_whitespace().collect();
                if !asked.split_whitespace().all(|s| had.contains(&s)) {
                    return oauth_error("400 Bad Request", "invalid_scope", "wider than granted");
                }
                grant.scope = asked.to_owned();
            }
            let rotate = g.mode != Mode::RefreshOmitsRefreshToken;
            if rotate {
                g.refresh.remove(rt);
            }
            g.counts.refreshes += 1;
            g.issue(grant, Duration::from_secs(ttl), rotate)
        }
        "client_credentials" => {
            let grant = Grant {
                subject: client_id.clone(),
                client_id,
                scope: grant_scope(param(&form, "scope")),
                resource: ctx.mcp_url.clone(),
                expires_at: None,
                revoked: false,
            };
            g.issue(grant, Duration::from_secs(ttl), false)
        }
        _ => {
            return oauth_error(
                "400 Bad Request",
                "unsupported_grant_type",
                "authorization_code, refresh_token or client_credentials",
            )
        }
    };
    drop(g);
    token_answer(issued, ttl, &mode)
}

fn revoke(ctx: &Ctx, req: &Request) -> Response {
    let form = req.form();
    let mut g = ctx.state.lock();
    g.counts.revocations += 1;
    if let Some(t) = param(&form, "token") {
        g.revoke(t);
    }
    Response::empty("200 OK")
}
