//! The HTTP+SSE transport of protocol revision 2024-11-05, for the remote servers that still
//! speak only it, reached by the spec's backwards-compatibility rule (Transports, "Backwards
//! Compatibility", 2025-03-26 and later): a client POSTs its first request to the URL it was
//! given; when that fails with a 4xx, it GETs the same URL expecting an SSE stream whose first
//! event is `endpoint`, and then speaks the old transport.
//!
//! The old transport meets the same rules as the others:
//! - the `endpoint` event's URL must be on the SSE URL's origin (scheme, host, port): the
//!   configured headers, credentials among them, go only where the person pointed us;
//! - each SSE event is capped at the message cap while still bytes ([`stream::Parser`], a
//!   lenient parser of our own: `sse-stream`'s drops the rest of a chunk after a bad line);
//!   a breach ends the session with [`Reason::MessageTooLarge`], as a stdio line's does;
//! - a refused message (too deep, not JSON-RPC) fails its request at once;
//! - the GET waits at most the handshake timeout for its answer and its endpoint, each POST at
//!   most the request timeout; no redirect is followed;
//! - a dropped stream fails the requests waiting on it and is reopened with the Streamable
//!   HTTP transport's [`Pacer`](super::Pacer) backoff.
//!
//! 401 and 403 are not a legacy sign: they go on to sign-in, as for Streamable HTTP.

use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::ServiceExt;
use url::Url;

mod reader;
mod stream;
mod transport;

use self::stream::{endpoint, open, OpenError};
pub(super) use self::transport::LegacySse;
use super::handler::Handler;
use super::CloseReason;
use crate::mcp::McpError;
use crate::redact::Secret;
use crate::server_logs::ServerLogs;

/// Where the typed reason of an answer this transport lost (its stream dropped first) sits in
/// the `data` of the error that stands in for it.
pub(in crate::mcp::connection) const LOST_KEY: &str = "switchboardLost";

/// The HTTP status behind a failed handshake, if one is in the error chain.
fn http_status(e: &(dyn std::error::Error + 'static)) -> Option<u16> {
    let mut source = Some(e);
    while let Some(current) = source {
        let status = match current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(e)) => e.status().map(|s| s.as_u16()),
            Some(StreamableHttpError::HttpStatus(e)) => Some(e.status),
            // rmcp's text for a status it has no variant for: "HTTP 405 Method Not Allowed: …".
            Some(StreamableHttpError::UnexpectedServerResponse(text)) => text
                .strip_prefix("HTTP ")
                .and_then(|t| t.get(..3))
                .and_then(|code| code.parse().ok()),
            _ => current
                .downcast_ref::<reqwest::Error>()
                .and_then(reqwest::Error::status)
                .map(|s| s.as_u16()),
        };
        if status.is_some() {
            return status;
        }
        source = current.source();
    }
    None
}

/// Whether a failed Streamable HTTP handshake says "try the old transport": the first POST
/// (`initialize`, or `initialize` after a `server/discover` probe) failed with a 4xx other
/// than 401/403 (sign-in) and 429 (slow down).
pub(super) fn wants_legacy_fallback(e: &ClientInitializeError) -> bool {
    let status = match e {
        ClientInitializeError::TransportError { error, .. } => http_status(error),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            return wants_legacy_fallback(fallback)
        }
        _ => None,
    };
    status.is_some_and(|s| (400..500).contains(&s) && !matches!(s, 401 | 403 | 429))
}

/// Opens the legacy transport: GETs `url`, reads the `endpoint` event within `wait`, and
/// starts the reader. `Err(NotLegacy)` when the answer is no SSE stream (the caller reports
/// its own error then); `Err(Refused)` when it is one that breaks a rule.
pub(super) async fn connect(
    url: &str,
    headers: &[(String, Secret)],
    max_message: usize,
    logs: &ServerLogs,
    reason: CloseReason,
    (wait, post_timeout): (Duration, Duration),
) -> Result<LegacySse, OpenError> {
    let refused = |e: McpError| OpenError::Refused(e);
    let sse = Url::parse(url).map_err(|e| refused(McpError::Config(format!("the URL: {e}"))))?;
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| refused(McpError::Config(format!("header {name:?}: {e}"))))?;
        let mut v = HeaderValue::from_str(value.expose()).map_err(|_| {
            refused(McpError::Config(format!(
                "the value of header {name:?} is not valid in HTTP"
            )))
        })?;
        v.set_sensitive(true);
        map.insert(n, v);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        // The GET stream may be quiet for long: a peer that is gone is found by the kernel.
        .tcp_keepalive(Duration::from_secs(30))
        // Credentials never follow a redirect (AU-06).
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| refused(McpError::Config(format!("the HTTP client: {e}"))))?;
    // The GET's answer and its endpoint event share one start-up budget.
    let deadline = tokio::time::Instant::now() + wait;
    let mut events = open(&client, &sse, &map, max_message, wait).await?;
    let post = endpoint(&mut events, &sse, deadline, wait)
        .await
        .map_err(refused)?;
    logs.note(&format!(
        "speaking the HTTP+SSE transport of 2024-11-05 with {}",
        sse.origin().ascii_serialization()
    ));
    Ok(LegacySse::start(
        client,
        map,
        sse,
        post,
        events,
        (max_message, wait, post_timeout),
        logs.clone(),
        reason,
    ))
}

/// What the fallback needs beside the failed handshake.
pub(super) struct Fallback {
    pub(super) handler: Handler,
    pub(super) url: String,
    pub(super) headers: Vec<(String, Secret)>,
    pub(super) max_message: usize,
    pub(super) logs: ServerLogs,
    pub(super) request_timeout: Duration,
}

impl Fallback {
    /// Runs the Streamable HTTP handshake `first` (`handler` is the one it was started with,
    /// copied: rmcp consumes it); when it fails in a way [`wants_legacy_fallback`] accepts,
    /// opens the legacy transport and runs `initialize` on it. Each attempt has `init_timeout`.
    pub(super) async fn handshake<F>(
        self,
        first: F,
        init_timeout: Duration,
        reason: &CloseReason,
    ) -> Result<RunningService<RoleClient, Handler>, McpError>
    where
        F: std::future::Future<
            Output = Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
        >,
    {
        let first = match tokio::time::timeout(init_timeout, first).await {
            Err(_) => return Err(McpError::HandshakeTimeout(init_timeout)),
            Ok(r) => r,
        };
        let e = match first {
            // After a probe, the initialize's failure is the one that says what happened.
            Err(ClientInitializeError::LegacyFallbackFailed { fallback, .. })
                if wants_legacy_fallback(&fallback) =>
            {
                *fallback
            }
            Err(e) if wants_legacy_fallback(&e) => e,
            other => {
                return super::handshake(std::future::ready(other), init_timeout, reason).await
            }
        };
        self.logs.note(
            "the server refused the Streamable HTTP handshake with a 4xx; trying the HTTP+SSE transport of 2024-11-05",
        );
        let opened = connect(
            &self.url,
            &self.headers,
            self.max_message,
            &self.logs,
            reason.clone(),
            (init_timeout, self.request_timeout),
        )
        .await;
        match opened {
            Ok(t) => super::handshake(self.handler.serve(t), init_timeout, reason).await,
            Err(OpenError::NotLegacy(why)) => {
                self.logs
                    .note(&format!("not an HTTP+SSE server either: {why}"));
                super::handshake(std::future::ready(Err(e)), init_timeout, reason).await
            }
            // An SSE stream without a usable endpoint: say what both attempts met.
            Err(OpenError::Refused(McpError::Handshake(why))) => Err(McpError::Handshake(format!(
                "{}; the HTTP+SSE transport of 2024-11-05, tried next: {why}",
                super::wire::readable(&e)
            ))),
            Err(OpenError::Refused(err)) => Err(err),
        }
    }
}

/// A copy of `h` for a second attempt.
pub(super) fn handler_copy(h: &Handler) -> Handler {
    Handler {
        info: h.info.clone(),
        progress: h.progress.clone(),
        signals: h.signals.clone(),
        requests: h.requests.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rmcp::transport::DynamicTransportError;

    use super::*;

    fn failed(text: &'static str) -> ClientInitializeError {
        let e: StreamableHttpError<reqwest::Error> =
            StreamableHttpError::UnexpectedServerResponse(Cow::Borrowed(text));
        ClientInitializeError::TransportError {
            error: DynamicTransportError::from_parts(
                "test",
                std::any::TypeId::of::<()>(),
                Box::new(e),
            ),
            context: "send initialize request".into(),
        }
    }

    #[test]
    fn a_4xx_other_than_auth_and_rate_limit_falls_back() {
        for (text, wanted) in [
            ("HTTP 405 Method Not Allowed: ", true),
            ("HTTP 404 Not Found: nope", true),
            ("HTTP 400 Bad Request: ", true),
            ("HTTP 401 Unauthorized: ", false),
            ("HTTP 403 Forbidden: ", false),
            ("HTTP 429 Too Many Requests: ", false),
            ("HTTP 500 Internal Server Error: ", false),
            ("something else", false),
        ] {
            assert_eq!(wants_legacy_fallback(&failed(text)), wanted, "{text}");
        }
        // The probe's fallback to initialize got the 4xx (rmcp's Auto lifecycle).
        let both = ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(ClientInitializeError::Cancelled),
            fallback: Box::new(failed("HTTP 405 Method Not Allowed: ")),
        };
        assert!(wants_legacy_fallback(&both));
        assert!(!wants_legacy_fallback(&ClientInitializeError::Cancelled));
    }
}
