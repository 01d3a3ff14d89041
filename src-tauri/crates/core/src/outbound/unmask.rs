//! The model's answer text with this turn's placeholders put back, as it streams: what the
//! person reads (and the conversation keeps) says `ana@example.org` where the model wrote
//! `[REDACTED_EMAIL_1]`. Everything stays on this machine: the next request redacts the
//! stored answer again, and a value keeps its number (numbering is by first appearance), so
//! the model sees its own words as it wrote them.
//!
//! A placeholder can arrive split over deltas (`[REDACTED_EM` then `AIL_1]`), so the end of
//! the text that could still become one is held back until the next delta settles it, or until
//! any other event (a tool call, usage, the end) or the end of the stream flushes it. Tool
//! calls pass untouched: [`super::Restoring`] puts their values back and says so at approval.

use std::sync::Arc;

use futures::StreamExt;

use super::Session;
use crate::llm::{EventStream, StreamEvent};

/// More than the longest placeholder (`[REDACTED_URL_PASSWORD_999999]` is 30 bytes): text
/// from a `[` longer than this is let through, whatever follows.
const LONGEST: usize = 48;

/// `stream` with the placeholders of `session`'s latest request put back in its text.
pub(super) fn unmasked(stream: EventStream, session: Arc<Session>) -> EventStream {
    let mut held = String::new();
    stream
        .map(Some)
        .chain(futures::stream::once(async { None }))
        .flat_map(move |item| {
            let mut out = Vec::new();
            match item {
                Some(Ok(StreamEvent::TextDelta { text })) => {
                    held.push_str(&text);
                    let ready: String = held.drain(..settled(&held)).collect();
                    if !ready.is_empty() {
                        out.push(Ok(delta(&session, &ready)));
                    }
                }
                other => {
                    if !held.is_empty() {
                        out.push(Ok(delta(&session, &std::mem::take(&mut held))));
                    }
                    out.extend(other);
                }
            }
            futures::stream::iter(out)
        })
        .boxed()
}

fn delta(session: &Session, text: &str) -> StreamEvent {
    StreamEvent::TextDelta {
        text: session.restore_text(text).0,
    }
}

/// How much of `text` can be let through: all of it, unless its end could still become a
/// placeholder (from the last `[` on).
fn settled(text: &str) -> usize {
    let Some(at) = text.rfind('[') else {
        return text.len();
    };
    if text.len() - at <= LONGEST && could_become_placeholder(&text[at..]) {
        at
    } else {
        text.len()
    }
}

/// Whether `tail` (from a `[`, no `]` yet) is the start of `[REDACTED_KIND_N]`.
fn could_become_placeholder(tail: &str) -> bool {
    const PREFIX: &str = "[REDACTED_";
    if tail.len() <= PREFIX.len() {
        return PREFIX.starts_with(tail);
    }
    tail.starts_with(PREFIX)
        && tail[PREFIX.len()..]
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llm::{ChatRequest, LlmError, Message, StopReason};
    use crate::outbound::Rules;

    /// A session whose latest request had `ana@example.org` (placeholder 1).
    fn session() -> Arc<Session> {
        let s = Session::new(Rules::default(), None);
        s.redact(&ChatRequest {
            model: "m".into(),
            system: None,
            messages: vec![Message::user_text("write to ana@example.org")],
            tools: Vec::new(),
            max_tokens: None,
            temperature: None,
        });
        s
    }

    async fn texts(deltas: &[&str], end: bool) -> Vec<String> {
        let mut events: Vec<Result<StreamEvent, LlmError>> = deltas
            .iter()
            .map(|t| Ok(StreamEvent::TextDelta { text: (*t).into() }))
            .collect();
        if end {
            events.push(Ok(StreamEvent::Done {
                stop: StopReason::EndTurn,
            }));
        }
        let out: Vec<_> = unmasked(futures::stream::iter(events).boxed(), session())
            .collect()
            .await;
        out.into_iter()
            .map(|e| match e.unwrap() {
                StreamEvent::TextDelta { text } => text,
                other => format!("<{other:?}>"),
            })
            .collect()
    }

    #[tokio::test]
    async fn a_placeholder_split_over_deltas_is_put_back_whole() {
        let out = texts(&["I wrote to [REDACT", "ED_EMAIL", "_1] today."], true).await;
        assert_eq!(
            out.concat().replace("<Done { stop: EndTurn }>", ""),
            "I wrote to ana@example.org today."
        );
        assert!(out.iter().all(|t| !t.contains("REDACTED")), "{out:?}");
        // Text that cannot become a placeholder is not held back.
        assert_eq!(out[0], "I wrote to ");
    }

    #[tokio::test]
    async fn held_text_is_flushed_by_the_next_event_or_the_end() {
        let out = texts(&["a list [1", "] and [REDACTED_"], true).await;
        // "[1" cannot become a placeholder, so nothing waits for its "]".
        assert_eq!(
            out,
            [
                "a list [1",
                "] and ",
                "[REDACTED_",
                "<Done { stop: EndTurn }>"
            ]
        );
        let out = texts(&["cut at [REDA"], false).await;
        assert_eq!(out, ["cut at ", "[REDA"]);
    }

    #[tokio::test]
    async fn an_unknown_placeholder_stays_as_written() {
        let out = texts(&["[REDACTED_EMAIL_7] is not known"], true).await;
        assert_eq!(out[0], "[REDACTED_EMAIL_7] is not known");
    }

    #[test]
    fn only_a_placeholder_s_beginning_is_held() {
        assert_eq!(settled("see [REDACTED_API_KEY_1"), 4);
        assert_eq!(settled("see [RED"), 4);
        assert_eq!(settled("see [x]"), 7);
        assert_eq!(settled("see [redacted"), 13);
        assert_eq!(settled("no bracket"), 10);
    }
}
