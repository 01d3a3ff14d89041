//! The GET half of the 2024-11-05 HTTP+SSE transport: opening the event stream with the
//! configured headers, capping each event while it is still bytes (so a server that never ends
//! an event cannot grow our buffer past the message cap), and reading the `endpoint` event
//! that names where messages are POSTed, which must be on the SSE URL's own origin.

use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use http::header::{HeaderMap, ACCEPT, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use sse_stream::{Error as SseError, Sse};
use url::Url;

use crate::mcp::McpError;
use crate::status::{AuthChallenge, Reason};

pub(super) type Events = BoxStream<'static, Result<Sse, SseError>>;

/// Events that are not `endpoint` tolerated before it (comments, pings, stray messages); a
/// server that sends more has lost the plot.
const BEFORE_ENDPOINT: usize = 32;

/// Why the GET did not give a usable legacy stream.
#[derive(Debug)]
pub(in crate::mcp::connection) enum OpenError {
    /// The answer is not an SSE stream: this is not a legacy server (or not one now).
    NotLegacy(String),
    /// It is one, and it broke a rule or a limit: refuse it, with this error.
    Refused(McpError),
}

/// A lenient SSE parser with a cap (WHATWG rules: a line without a colon, an unknown field or
/// a bad `retry:` is ignored, not an error). `sse-stream`'s parser stops at such a line and
/// drops the rest of the chunk it was in, which can lose the answer that shared the chunk.
/// Each event, and the line being read, is capped at `cap` bytes before it is buffered.
#[derive(Debug)]
pub(super) struct Parser {
    cap: usize,
    line: Vec<u8>,
    after_cr: bool,
    at_start: bool,
    /// Bytes of the current event's complete lines.
    size: usize,
    current: Sse,
    ready: std::collections::VecDeque<Sse>,
}

impl Parser {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            cap,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            size: 0,
            current: Sse::default(),
            ready: std::collections::VecDeque::new(),
        }
    }

    /// Feeds a chunk; `Err(cap)` once the current event is longer than the cap.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Result<(), usize> {
        for &b in bytes {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            if b == b'\r' || b == b'\n' {
                self.end_line();
                self.after_cr = b == b'\r';
            } else {
                self.line.push(b);
                if self.size + self.line.len() > self.cap {
                    return Err(self.cap);
                }
            }
        }
        Ok(())
    }

    /// The next complete event.
    pub(super) fn next(&mut self) -> Option<Sse> {
        self.ready.pop_front()
    }

    fn end_line(&mut self) {
        let mut line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.at_start) && line.starts_with(b"\xEF\xBB\xBF") {
            line.drain(..3);
        }
        if line.is_empty() {
            let event = std::mem::take(&mut self.current);
            self.size = 0;
            if event != Sse::default() {
                self.ready.push_back(event);
            }
            return;
        }
        self.size += line.len() + 1;
        let (name, value) = match line.iter().position(|&c| c == b':') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => (&line[..], &[][..]),
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        let text = || String::from_utf8_lossy(value).into_owned();
        match name {
            b"data" => match self.current.data.as_mut() {
                Some(d) => {
                    d.push('\n');
                    d.push_str(&text());
                }
                None => self.current.data = Some(text()),
            },
            b"event" => self.current.event = Some(text()),
            b"id" if !value.contains(&0) => self.current.id = Some(text()),
            b"retry" => {
                if let Ok(ms) = text().parse() {
                    self.current.retry = Some(ms);
                }
            }
            // Comments and unknown fields.
            _ => {}
        }
    }
}

/// The text of an SSE error that is our cap's, so the reader can tell it from a dropped stream.
const TOO_LARGE: &str = "an SSE event exceeded the message cap";

/// Whether an SSE error is the cap's.
pub(super) fn too_large(e: &SseError) -> bool {
    matches!(e, SseError::Body(inner) if inner.to_string().starts_with(TOO_LARGE))
}

/// GETs the SSE URL; `Ok` when the answer is an event stream.
pub(super) async fn open(
    client: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
    cap: usize,
    wait: Duration,
) -> Result<Events, OpenError> {
    let sent = client
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .header(CACHE_CONTROL, "no-cache")
        .send();
    let response = match tokio::time::timeout(wait, sent).await {
        Err(_) => {
            return Err(OpenError::NotLegacy(format!(
                "the SSE GET got no answer within {}s",
                wait.as_secs()
            )))
        }
        Ok(Err(e)) => return Err(OpenError::NotLegacy(format!("the SSE GET failed: {e}"))),
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    if matches!(status.as_u16(), 401 | 403) {
        let header = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok());
        return Err(OpenError::Refused(McpError::AuthRequired(
            AuthChallenge::from_header(Some(status.as_u16()), header),
        )));
    }
    if !status.is_success() {
        // A redirect is not followed either: the stream and its credentials stay on this origin.
        return Err(OpenError::NotLegacy(format!(
            "the SSE GET answered HTTP {status}"
        )));
    }
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            t.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        });
    if !is_sse {
        return Err(OpenError::NotLegacy(
            "the SSE GET answered something other than an event stream".into(),
        ));
    }
    let bytes = response.bytes_stream().boxed();
    let events = futures::stream::unfold(Some((bytes, Parser::new(cap))), |state| async move {
        let (mut bytes, mut parser) = state?;
        loop {
            if let Some(event) = parser.next() {
                return Some((Ok(event), Some((bytes, parser))));
            }
            let fail = |e: std::io::Error| Some((Err(SseError::Body(Box::new(e))), None));
            match bytes.next().await? {
                Ok(chunk) => {
                    if let Err(cap) = parser.feed(&chunk) {
                        // Nothing is read past the cap: the stream ends here.
                        return fail(std::io::Error::other(format!("{TOO_LARGE} ({cap} bytes)")));
                    }
                }
                Err(e) => return fail(std::io::Error::other(e.without_url())),
            }
        }
    });
    Ok(events.boxed())
}

/// Reads up to the `endpoint` event by `deadline` (`limit` is shown) and resolves its URL against `sse`; refuses
/// one on another origin (scheme, host and port).
pub(super) async fn endpoint(
    events: &mut Events,
    sse: &Url,
    deadline: tokio::time::Instant,
    limit: Duration,
) -> Result<Url, McpError> {
    let read = async {
        let mut skipped = 0usize;
        while let Some(item) = events.next().await {
            let event = match item {
                Ok(e) => e,
                Err(e) if too_large(&e) => {
                    return Err(McpError::Disconnected(Reason::MessageTooLarge {
                        cap: cap_of(&e),
                    }))
                }
                Err(e) => {
                    return Err(McpError::Disconnected(Reason::Unreachable {
                        detail: format!("the SSE stream failed before its endpoint event: {e}"),
                    }))
                }
            };
            if event.event.as_deref() == Some("endpoint") {
                return same_origin(sse, event.data.as_deref().unwrap_or_default());
            }
            skipped += 1;
            if skipped > BEFORE_ENDPOINT {
                break;
            }
        }
        Err(McpError::Handshake(
            "the server's SSE stream ended without an endpoint event".into(),
        ))
    };
    match tokio::time::timeout_at(deadline, read).await {
        Ok(r) => r,
        Err(_) => Err(McpError::Handshake(format!(
            "the server's SSE stream sent no endpoint event within the {}s start-up limit",
            limit.as_secs()
        ))),
    }
}

fn cap_of(e: &SseError) -> u64 {
    let text = e.to_string();
    text.rsplit_once('(')
        .and_then(|(_, n)| n.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_default()
}

/// The POST URL an `endpoint` event names, when it is on the SSE URL's origin. The error names
/// origins only: a URL's path or query may carry a credential.
pub(super) fn same_origin(sse: &Url, data: &str) -> Result<Url, McpError> {
    let data = data.trim();
    let refused = |why: String| {
        McpError::Protocol(format!(
            "refused the server's SSE endpoint event: {why}; messages go only to {}",
            sse.origin().ascii_serialization()
        ))
    };
    if data.is_empty() {
        return Err(refused("it names no URL".into()));
    }
    let url = sse
        .join(data)
        .map_err(|e| refused(format!("it is not a URL ({e})")))?;
    if url.origin() != sse.origin() {
        return Err(refused(format!(
            "it names another origin, {}",
            url.origin().ascii_serialization()
        )));
    }
    Ok(url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    fn events(p: &mut Parser) -> Vec<(Option<String>, Option<String>)> {
        std::iter::from_fn(|| p.next())
            .map(|e| (e.event, e.data))
            .collect()
    }

    #[test]
    fn an_event_is_capped_until_its_blank_line() {
        let mut p = Parser::new(12);
        assert!(p.feed(b"data: ab\n").is_ok());
        assert_eq!(
            p.feed(b"data: x\n"),
            Err(12),
            "two lines of one event add up"
        );
        let mut p = Parser::new(12);
        assert!(p.feed(b"data: ab\r\n\r\ndata: cd\r\r").is_ok());
        assert!(p.feed(b"data: ef\n\n").is_ok(), "each event starts afresh");
        let mut p = Parser::new(12);
        assert!(p.feed(b"data:").is_ok());
        assert_eq!(
            p.feed(b" abcdefghij"),
            Err(12),
            "a line split across chunks"
        );
    }

    #[test]
    fn garbage_lines_are_ignored_and_lose_nothing() {
        let mut p = Parser::new(1024);
        let stream = b"\xEF\xBB\xBFnonsense\nevent: endpoint\ndata: /m\n\n: hi\n\nretry: x\nfoo: 1\nevent: a\nevent: message\ndata: 1\ndata: 2\n\n";
        // Byte by byte, so every split point is tried.
        for b in stream {
            p.feed(&[*b]).unwrap();
        }
        assert_eq!(
            events(&mut p),
            [
                (Some("endpoint".into()), Some("/m".into())),
                (Some("message".into()), Some("1\n2".into())),
            ]
        );
    }

    #[test]
    fn the_endpoint_must_be_on_the_same_origin() {
        let sse = Url::parse("http://127.0.0.1:8000/sse?key=s3cret").unwrap();
        let ok = same_origin(&sse, "/messages/?session_id=abc").unwrap();
        assert_eq!(
            ok.as_str(),
            "http://127.0.0.1:8000/messages/?session_id=abc"
        );
        assert_eq!(
            same_origin(&sse, "http://127.0.0.1:8000/m")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8000/m"
        );
        for other in [
            "http://127.0.0.1:8001/m",
            "https://127.0.0.1:8000/m",
            "http://localhost:8000/m",
            "//evil.example/m",
            "http://evil.example/m",
            "",
        ] {
            let e = same_origin(&sse, other).unwrap_err().to_string();
            assert!(e.contains("refused"), "{other}: {e}");
            assert!(!e.contains("s3cret"), "the error shows the query: {e}");
        }
    }
}
