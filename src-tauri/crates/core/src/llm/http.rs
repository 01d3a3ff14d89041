//! The HTTP half shared by both wire formats: send with bounded retries until the first byte
//! arrives, then drive the body through the SSE decoder and a format-specific
//! [`WireDecoder`] into an [`EventStream`].
//!
//! Each wire format only says how to build its request and how to read one SSE event; the
//! rules that must not differ between vendors (when to retry, how cancellation ends a stream,
//! what an early end of stream means, that errors are scrubbed of the key) live here once.
//!
//! # Redirects (RD-03)
//! A provider call carries the key and the whole conversation. reqwest's default client follows
//! up to ten redirects, re-sending the body on a 307 or 308 and dropping only `Authorization`
//! on a change of host (never `x-api-key`), so one misconfigured or hostile endpoint could
//! forward both anywhere. Providers are therefore sent through [`http_client`], which follows none,
//! and a 3xx answer ends the request with [`LlmError::Redirected`] naming both URLs. Following
//! a same-origin redirect was the alternative; it was rejected because nothing legitimate
//! needs it (base URLs are configured, not discovered) and every redirect followed is one more
//! place a key could go.

use std::collections::VecDeque;
use std::time::SystemTime;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE};
use tokio_util::sync::CancellationToken;

use super::classify::classify_http;
use super::error::LlmError;
use super::profiles::{AuthStyle, Profile};
use super::provider::{EventStream, RetryPolicy};
use super::sse::{SseDecoder, SseEvent};
use super::types::StreamEvent;
use crate::redact::{Redactor, Secret};

/// The most of an error body we read: enough for any JSON error, not a whole HTML page.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The longest `Location` quoted in a [`LlmError::Redirected`], in characters.
const MAX_LOCATION: usize = 300;

/// The HTTP client for model providers (and anything else that sends a provider's key): it
/// follows no redirect (see the module docs). Built once per host and cloned, so connections
/// are pooled.
pub fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

/// Where and how a provider sends its requests. The key lives only in the prepared auth
/// header (marked sensitive, so `Debug` shows `Sensitive`) and in the redactor that scrubs
/// it from vendor error text.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub profile: Profile,
    /// Without a trailing slash.
    pub base_url: String,
    http: reqwest::Client,
    retry: RetryPolicy,
    auth: HeaderMap,
    redactor: Redactor,
}

impl Endpoint {
    /// `None` when the key cannot be sent as a header value.
    pub fn new(
        profile: Profile,
        base_url: &str,
        key: Option<Secret>,
        http: reqwest::Client,
        retry: RetryPolicy,
    ) -> Option<Self> {
        let header = match (profile.auth, &key) {
            (AuthStyle::Bearer, Some(k)) => Some((
                reqwest::header::AUTHORIZATION,
                format!("Bearer {}", k.expose().trim()),
            )),
            (AuthStyle::XApiKey, Some(k)) => Some((
                reqwest::header::HeaderName::from_static("x-api-key"),
                k.expose().trim().to_owned(),
            )),
            _ => None,
        };
        let mut auth = HeaderMap::new();
        if let Some((name, value)) = header {
            let mut value = HeaderValue::from_str(&value).ok()?;
            value.set_sensitive(true);
            auth.insert(name, value);
        }
        Some(Self {
            profile,
            base_url: base_url.to_owned(),
            http,
            retry,
            auth,
            redactor: Redactor::new(key.iter()),
        })
    }

    /// POSTs `body` to `{base_url}{path}` and streams the answer through `decoder`.
    pub async fn stream<D: WireDecoder>(
        &self,
        path: &str,
        extra_headers: HeaderMap,
        body: &serde_json::Value,
        decoder: D,
        cancel: CancellationToken,
    ) -> Result<EventStream, LlmError> {
        let mut headers = self.auth.clone();
        headers.extend(extra_headers);
        let url = format!("{}{path}", self.base_url);
        let call = HttpCall {
            http: &self.http,
            url: &url,
            headers,
            body: serde_json::to_vec(body).map_err(|e| {
                LlmError::malformed(format!("the request could not be encoded: {e}"))
            })?,
            retry: self.retry,
            redactor: &self.redactor,
        };
        let opened = open(&call, &cancel).await?;
        Ok(event_stream(opened, decoder, cancel, self.redactor.clone()))
    }
}

/// Reads one wire format's SSE events into stream events.
pub(crate) trait WireDecoder: Send + 'static {
    /// Handles one SSE event, appending what it means to `out`.
    fn event(&mut self, ev: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), LlmError>;
    /// The body ended: appends what remains (usually `Done`), or fails when the answer is
    /// incomplete.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError>;
    /// Whether the terminal event was seen; nothing more is read after it.
    fn is_done(&self) -> bool;
}

/// One POST of a JSON body expecting an SSE answer.
pub(crate) struct HttpCall<'a> {
    pub http: &'a reqwest::Client,
    pub url: &'a str,
    /// Auth and vendor headers, secrets marked sensitive.
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub retry: RetryPolicy,
    pub redactor: &'a Redactor,
}

/// An accepted answer whose first bytes arrived.
pub(crate) struct Opened {
    response: reqwest::Response,
    first: Vec<u8>,
}

/// Sends `call`, retrying retryable failures that happen before the first body byte.
pub(crate) async fn open(
    call: &HttpCall<'_>,
    cancel: &CancellationToken,
) -> Result<Opened, LlmError> {
    let mut attempt = 1;
    loop {
        let err = match send_once(call, cancel).await {
            Ok(opened) => return Ok(opened),
            Err(e) => e.redacted(call.redactor),
        };
        let Some(delay) = call.retry.delay(attempt, &err) else {
            return Err(err);
        };
        tracing::warn!(
            attempt,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            error = %err,
            "model request failed before streaming; retrying"
        );
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
        attempt += 1;
    }
}

async fn send_once(call: &HttpCall<'_>, cancel: &CancellationToken) -> Result<Opened, LlmError> {
    let request = call
        .http
        .post(call.url)
        .headers(call.headers.clone())
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
        .body(call.body.clone());
    let mut response = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
        r = request.send() => r.map_err(LlmError::from_transport)?,
    };
    let status = response.status();
    if status.is_redirection() {
        return Err(redirected(call.url, &response));
    }
    if !status.is_success() {
        let headers = response.headers().clone();
        let mut body = Vec::new();
        loop {
            let chunk = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                c = response.chunk() => c,
            };
            match chunk {
                Ok(Some(b)) => {
                    body.extend_from_slice(&b);
                    if body.len() >= MAX_ERROR_BODY {
                        break;
                    }
                }
                // A body cut short still classifies by its status.
                Ok(None) | Err(_) => break,
            }
        }
        let body = String::from_utf8_lossy(&body);
        return Err(classify_http(
            status.as_u16(),
            &headers,
            &body,
            SystemTime::now(),
        ));
    }
    // The first body byte is the point of no return (see `provider` docs), so it is awaited
    // here, inside the retry loop.
    loop {
        let chunk = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            c = response.chunk() => c.map_err(LlmError::from_transport)?,
        };
        match chunk {
            Some(b) if b.is_empty() => continue,
            Some(b) => {
                return Ok(Opened {
                    response,
                    first: b.to_vec(),
                })
            }
            // An empty body: the decoder reports the missing answer.
            None => {
                return Ok(Opened {
                    response,
                    first: Vec::new(),
                })
            }
        }
    }
}

/// The error for a redirect answer: where it was asked and where it pointed. The `Location`
/// is the server's text: quoted cut short, with control characters dropped.
fn redirected(url: &str, response: &reqwest::Response) -> LlmError {
    let to = response
        .headers()
        .get(reqwest::header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .map(|to| match url::Url::parse(url).and_then(|u| u.join(&to)) {
            Ok(joined) => joined.to_string(),
            Err(_) => to,
        })
        .unwrap_or_else(|| "(none)".to_owned());
    let mut to: String = to
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_LOCATION + 1)
        .collect();
    if to.chars().count() > MAX_LOCATION {
        to = to.chars().take(MAX_LOCATION).collect::<String>() + "…";
    }
    LlmError::Redirected {
        status: response.status().as_u16(),
        from: url.to_owned(),
        to,
    }
}

/// Turns an opened answer into events through `decoder`.
pub(crate) fn event_stream<D: WireDecoder>(
    opened: Opened,
    decoder: D,
    cancel: CancellationToken,
    redactor: Redactor,
) -> EventStream {
    let driver = Driver {
        response: Some(opened.response),
        first: Some(opened.first),
        sse: SseDecoder::new(),
        decoder,
        pending: VecDeque::new(),
        cancel,
        redactor,
    };
    futures::stream::unfold(driver, |mut d| async move {
        let item = d.next().await?;
        Some((item, d))
    })
    .boxed()
}

struct Driver<D> {
    /// `None` once nothing more will be read (terminal event, error, cancel, end of body);
    /// dropping it closes the connection.
    response: Option<reqwest::Response>,
    first: Option<Vec<u8>>,
    sse: SseDecoder,
    decoder: D,
    pending: VecDeque<Result<StreamEvent, LlmError>>,
    cancel: CancellationToken,
    redactor: Redactor,
}

impl<D: WireDecoder> Driver<D> {
    async fn next(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            if self.response.is_some() && self.cancel.is_cancelled() {
                self.pending.clear();
                self.fail(LlmError::Cancelled);
            }
            if let Some(item) = self.pending.pop_front() {
                return Some(item);
            }
            if let Some(first) = self.first.take() {
                self.feed(&first);
                continue;
            }
            let response = self.response.as_mut()?;
            let chunk = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => continue,
                c = response.chunk() => c,
            };
            match chunk {
                Ok(Some(bytes)) => self.feed(&bytes),
                Ok(None) => self.end_of_body(),
                Err(e) => self.fail(LlmError::from_transport(e)),
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        match self.sse.push(bytes) {
            Ok(events) => {
                for ev in events {
                    if self.response.is_none() {
                        break;
                    }
                    self.handle(ev);
                }
            }
            Err(e) => self.fail(LlmError::malformed(e.to_string())),
        }
    }

    fn handle(&mut self, ev: SseEvent) {
        let mut out = Vec::new();
        let res = self.decoder.event(ev, &mut out);
        self.pending.extend(out.into_iter().map(Ok));
        match res {
            Err(e) => self.fail(e),
            Ok(()) if self.decoder.is_done() => self.response = None,
            Ok(()) => {}
        }
    }

    fn end_of_body(&mut self) {
        if let Some(ev) = self.sse.finish() {
            self.handle(ev);
        }
        if self.response.is_none() {
            return;
        }
        let mut out = Vec::new();
        let res = self.decoder.finish(&mut out);
        self.pending.extend(out.into_iter().map(Ok));
        match res {
            Ok(()) => self.response = None,
            Err(e) => self.fail(e),
        }
    }

    fn fail(&mut self, e: LlmError) {
        self.response = None;
        self.pending.push_back(Err(e.redacted(&self.redactor)));
    }
}

/// Runs SSE bytes through `decoder` as the driver would, `chunk` bytes at a time; returns
/// the events and the error that ended the stream, if any.
#[cfg(test)]
pub(crate) fn decode_fixture<D: WireDecoder>(
    mut decoder: D,
    bytes: &[u8],
    chunk: usize,
) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut sse = SseDecoder::new();
    let mut out = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        let events = match sse.push(piece) {
            Ok(evs) => evs,
            Err(e) => return (out, Some(LlmError::malformed(e.to_string()))),
        };
        for ev in events {
            if let Err(e) = decoder.event(ev, &mut out) {
                return (out, Some(e));
            }
            if decoder.is_done() {
                return (out, None);
            }
        }
    }
    if let Some(ev) = sse.finish() {
        if let Err(e) = decoder.event(ev, &mut out) {
            return (out, Some(e));
        }
        if decoder.is_done() {
            return (out, None);
        }
    }
    let err = decoder.finish(&mut out).err();
    (out, err)
}
