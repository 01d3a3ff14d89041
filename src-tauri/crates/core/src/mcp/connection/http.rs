//! Streamable HTTP through rmcp's reqwest client, wrapped ([`Guarded`]) so a remote server
//! meets the same limits as a stdio one:
//!
//! - Size: one JSON body and one SSE event are capped at the stdio message cap. rmcp enforces
//!   the caps we configure; what it does on a breach is generic, so the wrapper turns it into
//!   [`Reason::MessageTooLarge`] for the request that was waiting (a POST's answer) or ends the
//!   session with it (the standalone GET stream, which carries server notifications).
//! - Refusal: an answer the host will not read (nested past serde_json's limit, not JSON-RPC)
//!   fails its request at once with [`McpError::Refused`](crate::mcp::McpError), like a refused
//!   stdio line (point 1 of the transport work): a POST's JSON body is for the POST's own
//!   request; an SSE event's request is found by the same bounded scan as a stdio line
//!   ([`crate::mcp::recover`]). rmcp would otherwise drop the event silently, or fail the POST
//!   with a transport error, and the caller would wait for its timeout.
//! - Reconnects: rmcp honours an SSE `retry:` field as given and starts each reconnect streak
//!   afresh, so a server that sends `retry: 0` and closes its stream gets thousands of GETs a
//!   second. [`Pacer`] spaces every GET by a floor that doubles while streams keep ending
//!   quickly, whatever the server asked; `retry:` values are raised to the floor as well.
//!
//! [`Traced`] records every message in the protocol trace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use serde_json::Value;
use sse_stream::{Error as SseError, Sse};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::wire::{refusal, refusal_reason, refused_answer, JSON_DEPTH_LIMIT};
use crate::mcp::McpError;
use crate::oauth::Authorizer;
use crate::redact::Secret;
use crate::server_logs::{Direction, ServerLogs};
use crate::status::Reason;

/// The shortest wait before any SSE reconnect, whatever the server's `retry:` says. Low enough
/// to honour the `retry:` values servers really send (the conformance suite's is 500 ms).
pub const RECONNECT_FLOOR: Duration = Duration::from_millis(250);
/// The longest wait between reconnects while streams keep ending quickly.
pub const RECONNECT_MAX: Duration = Duration::from_secs(30);
/// A stream that lived this long resets the doubling.
const RECONNECT_STABLE: Duration = Duration::from_secs(60);

type Events = BoxStream<'static, Result<Sse, SseError>>;
type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

/// Set when the session must end for a reason rmcp would not end it for (the GET stream broke
/// a cap); the connection's watcher task stops the session and reports the reason.
#[derive(Debug, Default)]
pub(super) struct FatalEnd {
    reason: Mutex<Option<Reason>>,
    notify: Notify,
}

impl FatalEnd {
    fn raise(&self, reason: Reason) {
        self.reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(reason);
        self.notify.notify_one();
    }

    /// Resolves with the reason once raised.
    pub(super) async fn raised(&self) -> Reason {
        loop {
            let notified = self.notify.notified();
            if let Some(r) = self
                .reason
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
            {
                return r;
            }
            notified.await;
        }
    }
}

/// Spaces SSE GETs: the first goes at once; each later one waits until `floor * 2^streak` has
/// passed since the previous GET, capped at [`RECONNECT_MAX`]. The streak grows with each GET
/// and starts again after a stream lived [`RECONNECT_STABLE`] or delivered a message: a server
/// that resumes streams to answer calls is not slowed, one that only closes them is.
#[derive(Debug)]
pub struct Pacer {
    floor: Duration,
    max: Duration,
    state: Mutex<PacerState>,
}

#[derive(Debug, Default)]
struct PacerState {
    last_open: Option<Instant>,
    streak: u32,
}

impl Pacer {
    /// A pacer with the given floor and ceiling.
    pub fn new(floor: Duration, max: Duration) -> Self {
        Self {
            floor,
            max: max.max(floor),
            state: Mutex::default(),
        }
    }

    /// A stream delivered a message: the next reconnect waits only the floor again.
    pub fn progress(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .streak = 0;
    }

    /// How long the next GET must wait from `now`, and books it.
    pub fn next_wait(&self, now: Instant) -> Duration {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(last) = s.last_open else {
            s.last_open = Some(now);
            return Duration::ZERO;
        };
        if now.saturating_duration_since(last) >= RECONNECT_STABLE {
            s.streak = 0;
        }
        let gap = self
            .floor
            .saturating_mul(1u32 << s.streak.min(16))
            .min(self.max);
        s.streak = s.streak.saturating_add(1);
        let at = (last + gap).max(now);
        s.last_open = Some(at);
        at - now
    }
}

/// rmcp's reqwest client with our caps, refusals and reconnect pacing.
/// How a server refused a request's credentials.
enum Refusal {
    /// 401: the token is not (or no longer) good.
    Token,
    /// 403 `insufficient_scope`, with its `WWW-Authenticate` value.
    Scope(String),
}

impl Refusal {
    fn of<T>(result: &HttpResult<T>) -> Option<Self> {
        match result {
            Err(StreamableHttpError::AuthRequired(_)) => Some(Self::Token),
            Err(StreamableHttpError::InsufficientScope(e)) => {
                Some(Self::Scope(e.www_authenticate_header.clone()))
            }
            _ => None,
        }
    }
}

#[derive(Clone)]
pub(super) struct Guarded {
    inner: reqwest::Client,
    cap: usize,
    pacer: Arc<Pacer>,
    fatal: Arc<FatalEnd>,
    logs: ServerLogs,
    /// The server's sign-in: a refused token is replaced (once, whoever got there first) and
    /// the request retried once; a scope challenge is remembered for the next sign-in.
    auth: Option<Authorizer>,
}

impl Guarded {
    /// A token for a retry, when this request carried one and the server refused it: the one
    /// another request already got, a refreshed one, or a renewed client-credentials one. A
    /// 403 scope challenge is remembered instead (a step-up needs the person).
    async fn renewed(&self, sent: &Option<String>, refusal: Option<Refusal>) -> Option<String> {
        let auth = self.auth.as_ref()?;
        let sent = sent.as_deref()?;
        if let Refusal::Scope(header) = refusal? {
            auth.remember_challenge(&header).await;
            return None;
        }
        let fresh = auth.recover(sent).await;
        self.learn(&fresh);
        self.logs.note(match fresh {
            Some(_) => "the server refused the token; retrying with a fresh one",
            None => "the server refused the token and no fresh one could be had",
        });
        fresh
    }

    /// Makes the token a request carries known to this server's log redactor before any
    /// answer is recorded: a server that echoes it back leaves it in no trace (SE-06). A
    /// refreshed token is a new value, so each request's token is offered (known ones cost
    /// a comparison).
    fn learn(&self, token: &Option<String>) {
        if let Some(t) = token {
            self.logs.add_secret(&Secret::new(t.clone()));
        }
    }

    fn limits(&self) -> StreamableHttpResponseLimits {
        let mut l = StreamableHttpResponseLimits::default();
        l.max_json_response_size = self.cap;
        l.max_sse_event_size = self.cap;
        l
    }

    /// Rewrites one SSE stream: `retry:` raised to the floor, refused messages replaced by an
    /// error for their request, a breach of the event cap reported as ours.
    fn guard(&self, events: Events, request: Option<Value>, standalone: bool) -> Events {
        let floor = self.pacer.floor.as_millis() as u64;
        let cap = self.cap as u64;
        let logs = self.logs.clone();
        let fatal = self.fatal.clone();
        let pacer = self.pacer.clone();
        events
            .flat_map(move |item| {
                let out: Vec<Result<Sse, SseError>> = match item {
                    Ok(mut sse) => {
                        if let Some(r) = sse.retry.as_mut() {
                            *r = (*r).max(floor);
                        }
                        if let Some(data) = sse.data.as_mut() {
                            let message = matches!(sse.event.as_deref(), None | Some("message"));
                            // A blank `data:` is a priming event (SEP-1699), not a message.
                            if message && !data.trim().is_empty() {
                                // Parsed here as well as in rmcp: the price of failing the
                                // refused answer's request now rather than at its timeout.
                                match serde_json::from_str::<ServerJsonRpcMessage>(data) {
                                    Ok(_) => pacer.progress(),
                                    Err(e) => {
                                    let shown = logs.excerpt(data, 200);
                                    logs.note(&format!(
                                        "refused an SSE event that is not a JSON-RPC message ({e}): {shown}"
                                    ));
                                    if let Some(text) = refused_answer(data.as_bytes(), &e)
                                        .and_then(|m| serde_json::to_string(&m).ok())
                                    {
                                        *data = text;
                                    }
                                    }
                                }
                            }
                        }
                        vec![Ok(sse)]
                    }
                    Err(e) if too_large(&e) => {
                        let reason = Reason::MessageTooLarge { cap };
                        logs.note(&format!("an SSE event broke the cap: {reason}"));
                        let mut out = Vec::new();
                        match &request {
                            Some(id) => {
                                if let Some(text) = refusal(id.clone(), &reason)
                                    .and_then(|m| serde_json::to_string(&m).ok())
                                {
                                    out.push(Ok(Sse {
                                        event: None,
                                        data: Some(text),
                                        id: None,
                                        retry: None,
                                    }));
                                }
                            }
                            None if standalone => fatal.raise(reason),
                            None => {}
                        }
                        out.push(Err(e));
                        out
                    }
                    Err(e) => vec![Err(e)],
                };
                futures::stream::iter(out)
            })
            .boxed()
    }

    /// A failed POST for request `id`, as an answer to it when the failure is a refusal.
    fn refuse_post(
        &self,
        id: Option<Value>,
        e: &StreamableHttpError<reqwest::Error>,
    ) -> Option<Reason> {
        id.as_ref()?;
        match e {
            StreamableHttpError::ResponseBodyTooLarge { max_size } => {
                Some(Reason::MessageTooLarge {
                    cap: *max_size as u64,
                })
            }
            StreamableHttpError::Deserialize(e) => Some(refusal_reason(e)),
            StreamableHttpError::UnexpectedServerResponse(text)
                if text.starts_with("could not parse JSON response") =>
            {
                Some(if text.contains("recursion limit") {
                    Reason::TooDeep {
                        limit: JSON_DEPTH_LIMIT,
                    }
                } else {
                    Reason::InvalidJson {
                        detail: text.chars().take(300).collect(),
                    }
                })
            }
            _ => None,
        }
    }
}

/// Whether an SSE error is rmcp's "event exceeded the maximum size" (its type is private).
fn too_large(e: &SseError) -> bool {
    matches!(e, SseError::Body(inner) if inner.to_string().contains("exceeded the maximum size"))
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<Value> {
    match message {
        ClientJsonRpcMessage::Request(r) => serde_json::to_value(&r.id).ok(),
        _ => None,
    }
}

impl StreamableHttpClient for Guarded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let limits = self.limits();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.learn(&auth_header);
        let id = request_id(&message);
        let retry = self
            .auth
            .is_some()
            .then(|| (message.clone(), session_id.clone(), custom_headers.clone()));
        let mut r = self
            .inner
            .post_message_with_response_limits(
                uri.clone(),
                message,
                session_id,
                auth_header.clone(),
                custom_headers,
                limits,
            )
            .await;
        if let Some((message, session_id, custom_headers)) = retry {
            if let Some(token) = self.renewed(&auth_header, Refusal::of(&r)).await {
                r = self
                    .inner
                    .post_message_with_response_limits(
                        uri,
                        message,
                        session_id,
                        Some(token),
                        custom_headers,
                        limits,
                    )
                    .await;
            }
        }
        match r {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.guard(events, id, false), session),
            ),
            Err(e) => match (self.refuse_post(id.clone(), &e), id) {
                (Some(reason), Some(id)) => {
                    self.logs
                        .note(&format!("refused the answer to request {id}: {reason}"));
                    match refusal(id, &reason) {
                        Some(m) => Ok(StreamableHttpPostResponse::Json(m, None)),
                        None => Err(e),
                    }
                }
                _ => Err(e),
            },
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<Events> {
        let cap = self.cap;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            cap,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<Events> {
        self.learn(&auth_header);
        let wait = self.pacer.next_wait(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let standalone = last_event_id.is_none();
        let size = max_sse_event_size.min(self.cap);
        let mut events = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                size,
            )
            .await;
        if let Some(token) = self.renewed(&auth_header, Refusal::of(&events)).await {
            events = self
                .inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    Some(token),
                    custom_headers,
                    size,
                )
                .await;
        }
        let events = events?;
        Ok(self.guard(events, None, standalone))
    }
}

/// Records every message of an inner transport in the protocol trace.
pub(super) struct Traced<T> {
    inner: T,
    logs: ServerLogs,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Traced<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Ok(s) = serde_json::to_string(&item) {
            self.logs.record(Direction::Out, &s);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let msg = self.inner.receive().await;
        match &msg {
            Some(m) => {
                if let Ok(s) = serde_json::to_string(m) {
                    self.logs.record(Direction::In, &s);
                }
            }
            None => self.logs.note("the HTTP session ended"),
        }
        msg
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// The transport rmcp runs for an HTTP endpoint: with a sign-in, rmcp's [`AuthClient`] puts the
/// token on every request and refreshes it once when the server refuses it (AU-06: the token
/// goes in the `Authorization` header only, to this URL only, and no redirect is followed).
pub(super) enum HttpTransport {
    /// No sign-in (headers may still carry a static credential).
    Plain(Traced<StreamableHttpClientTransport<Guarded>>),
    /// With the server's sign-in.
    Authorized(Traced<StreamableHttpClientTransport<AuthClient<Guarded>>>),
}

/// Builds the guarded transport for `url` with `headers`, capping messages at `max_message`.
pub(super) async fn transport(
    url: &str,
    headers: &[(String, Secret)],
    max_message: usize,
    logs: &ServerLogs,
    fatal: Arc<FatalEnd>,
    auth: Option<&Authorizer>,
) -> Result<HttpTransport, McpError> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| McpError::Config(format!("header {name:?}: {e}")))?;
        let v = HeaderValue::from_str(value.expose()).map_err(|_| {
            McpError::Config(format!("the value of header {name:?} is not valid in HTTP"))
        })?;
        custom.insert(n, v);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        // Credentials never follow a redirect to another origin (AU-06).
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| McpError::Config(format!("could not build the HTTP client: {e}")))?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    config.custom_headers = custom;
    config.max_json_response_size = max_message;
    config.max_sse_event_size = max_message;
    // rmcp's own waits between failed reconnects: from the floor, doubling, capped.
    let mut backoff = ExponentialBackoff::default();
    backoff.base_duration = RECONNECT_FLOOR;
    backoff.max_delay = Some(RECONNECT_MAX);
    config.retry_config = Arc::new(backoff);
    let guarded = Guarded {
        inner: client,
        cap: max_message,
        pacer: Arc::new(Pacer::new(RECONNECT_FLOOR, RECONNECT_MAX)),
        fatal,
        logs: logs.clone(),
        auth: auth.cloned(),
    };
    Ok(match auth {
        None => HttpTransport::Plain(Traced {
            inner: StreamableHttpClientTransport::with_client(guarded, config),
            logs: logs.clone(),
        }),
        Some(a) => HttpTransport::Authorized(Traced {
            inner: StreamableHttpClientTransport::with_client(
                a.client(guarded)
                    .await
                    .map_err(|e| McpError::Config(e.to_string()))?,
                config,
            ),
            logs: logs.clone(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnects_keep_a_floor_and_back_off_while_streams_end_quickly() {
        let p = Pacer::new(Duration::from_secs(1), Duration::from_secs(30));
        let t0 = Instant::now();
        assert_eq!(
            p.next_wait(t0),
            Duration::ZERO,
            "the first GET goes at once"
        );
        // A stream that ends at once: each reconnect waits longer, up to the ceiling.
        let mut now = t0;
        let mut waits = Vec::new();
        for _ in 0..8 {
            let w = p.next_wait(now);
            waits.push(w.as_secs());
            now += w;
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        // A stream that lived a long time starts the doubling again, from the floor.
        now += Duration::from_secs(600);
        assert_eq!(p.next_wait(now), Duration::ZERO);
        assert_eq!(p.next_wait(now), Duration::from_secs(2));
        // A stream that delivered a message does too.
        now += Duration::from_secs(2);
        p.progress();
        assert_eq!(p.next_wait(now), Duration::from_secs(1));
    }

    #[test]
    fn concurrent_reconnects_are_spaced_too() {
        let p = Pacer::new(Duration::from_secs(1), Duration::from_secs(30));
        let now = Instant::now();
        let waits: Vec<_> = (0..4).map(|_| p.next_wait(now).as_secs()).collect();
        // Booked one after another: 0, then 1 s later, then 2 s after that, then 4 s.
        assert_eq!(waits, [0, 1, 3, 7]);
    }
}
