//! The [`Provider`] seam: one model call, streamed.
//!
//! The trait has one job, starting a streamed answer, plus the id of the profile behind it.
//! Non-streamed answers are [`collect`](super::assemble::collect)ed from the stream, so no
//! vendor needs a second code path. Titles, token counting and the like are not the trait's
//! job (contrast Goose's kitchen-sink provider).
//!
//! # The stream contract
//! A successful [`Provider::stream`] resolves once the vendor accepted the request and its
//! first byte arrived. The stream then yields events in arrival order and ends with exactly
//! one terminal item: `Ok(StreamEvent::Done { .. })` or an `Err`. A stream that stops without
//! either is a bug. Cancelling the token ends the stream with `Err(LlmError::Cancelled)`
//! promptly, and dropping the stream closes the connection.
//!
//! # Retries
//! Retryable failures ([`LlmError::retryable`]) are retried with backoff, but only before the
//! first streamed byte: after that, part of an answer may already be on screen or in the
//! transcript, and replaying the request would duplicate or contradict it. Failures after
//! that point are returned for the chat loop to decide on.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use super::error::LlmError;
use super::types::{ChatRequest, StreamEvent};

/// A streamed answer: events in order, ending with `Done` or an error.
pub type EventStream = BoxStream<'static, Result<StreamEvent, LlmError>>;

/// A language-model vendor reached over its wire format.
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// Sends `req` and resolves with the answer's event stream once the first byte arrived
    /// (see the module docs for the contract and the retry rule).
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>>;

    /// The profile this provider was built from (`openai`, `anthropic`, `ollama`, ...), for
    /// spans and settings.
    fn profile_id(&self) -> &str;
}

/// How failures before the first streamed byte are retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = never retry).
    pub max_attempts: u32,
    /// The backoff before the first retry; it doubles each time.
    pub initial_backoff: Duration,
    /// The longest backoff between attempts.
    pub max_backoff: Duration,
    /// The longest `retry-after` we wait for. A vendor asking for more is not retried: the
    /// error goes back at once with its `retry_after`, so the user can see how long it is
    /// instead of watching a silent spinner.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// How long to wait before attempt `attempt + 1` after `err` failed attempt `attempt`
    /// (1-based), or `None` when it must not be retried.
    pub fn delay(&self, attempt: u32, err: &LlmError) -> Option<Duration> {
        if !err.retryable() || attempt >= self.max_attempts {
            return None;
        }
        if let Some(after) = err.retry_after() {
            return (after <= self.max_retry_after).then_some(after);
        }
        let exp = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = exp.min(self.max_backoff);
        // Jitter between half and the full delay, so clients that failed together do not
        // come back together.
        Some(capped.mul_f64(0.5 + rand::random::<f64>() * 0.5))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> LlmError {
        LlmError::Server {
            status: 500,
            message: "x".into(),
        }
    }

    #[test]
    fn delays_grow_and_stop_at_max_attempts() {
        let p = RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(300),
            max_retry_after: Duration::from_secs(1),
        };
        let d1 = p.delay(1, &server()).unwrap();
        assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
        let d2 = p.delay(2, &server()).unwrap();
        assert!(d2 >= Duration::from_millis(100) && d2 <= Duration::from_millis(200));
        let d3 = p.delay(3, &server()).unwrap();
        assert!(d3 >= Duration::from_millis(150) && d3 <= Duration::from_millis(300));
        assert_eq!(p.delay(4, &server()), None);
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let p = RetryPolicy::default();
        let rl = |secs| LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(secs)),
            message: "x".into(),
        };
        assert_eq!(p.delay(1, &rl(2)), Some(Duration::from_secs(2)));
        assert_eq!(p.delay(1, &rl(31)), None);
    }

    #[test]
    fn non_retryable_errors_are_not_retried() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(1, &LlmError::Cancelled), None);
        assert_eq!(
            p.delay(
                1,
                &LlmError::Auth {
                    status: 401,
                    message: "x".into()
                }
            ),
            None
        );
        assert_eq!(RetryPolicy::none().delay(1, &server()), None);
    }
}
