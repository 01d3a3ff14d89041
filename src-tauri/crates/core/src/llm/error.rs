//! Classified model errors.
//!
//! The chat loop, the UI and the retry logic each branch on *why* a call failed: re-ask for a
//! key, wait and retry, trim the conversation, or show the vendor's complaint. So every failure
//! is one [`LlmError`] variant carrying the data those decisions need, and the classification
//! from HTTP statuses, headers and vendor error bodies happens in one place
//! ([`classify`](super::classify)).
//!
//! Messages are one sentence. They may quote the vendor's own error message (cut short, with
//! the API key scrubbed out, see [`LlmError::redacted`]) but never request headers.

use std::time::Duration;

use crate::redact::Redactor;

/// The longest vendor message we quote, in characters; the rest is cut with an ellipsis.
pub(crate) const MAX_VENDOR_MESSAGE: usize = 300;

/// Why a model call failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The API key is missing, wrong or lacks permission (HTTP 401/403).
    #[error("the provider rejected the API key (HTTP {status}): {message}")]
    Auth {
        /// 401 or 403 (or the status the vendor's error type stands for, mid-stream).
        status: u16,
        /// The vendor's explanation.
        message: String,
    },
    /// Too many requests (HTTP 429, or a rate-limit error event).
    #[error("the provider is rate limiting requests{}: {message}", retry_hint(*retry_after))]
    RateLimited {
        /// How long the vendor asked us to wait, when it said.
        retry_after: Option<Duration>,
        /// The vendor's explanation.
        message: String,
    },
    /// The prompt does not fit the model's context window.
    #[error("the conversation is too long for the model's context window: {message}")]
    ContextLengthExceeded {
        /// The vendor's explanation.
        message: String,
    },
    /// The vendor failed (HTTP 5xx, Anthropic's `overloaded_error` 529, a server error event).
    #[error("the provider failed with HTTP {status}: {message}")]
    Server {
        /// The HTTP status; for an error event in a stream, the status its type stands for
        /// (`overloaded_error` 529, anything else 500).
        status: u16,
        /// The vendor's explanation.
        message: String,
    },
    /// The vendor refused the request as invalid (unknown model, bad parameter, ...).
    #[error("the provider refused the request: {message}")]
    BadRequest {
        /// The vendor's explanation (with the HTTP status when there was one).
        message: String,
    },
    /// The vendor could not be reached or the connection broke (connect, reset, timeout).
    #[error("the connection to the provider failed: {reason}")]
    Network {
        /// What went wrong, without the URL.
        reason: String,
    },
    /// The vendor's answer could not be read: a chunk that is not the expected JSON, an
    /// oversized event, or a stream that ended before its terminal event.
    #[error("the provider's answer could not be read: {reason}")]
    Malformed {
        /// What was wrong.
        reason: String,
    },
    /// The provider answered with a redirect (RD-03). It is never followed: a redirect would
    /// carry the key and the prompt to wherever the server points, so the request stops here
    /// and both addresses are named for the person to fix the base URL.
    #[error(
        "the provider at {from} answered HTTP {status}, redirecting to {to}; redirects are not \
         followed (they would carry the key and the conversation elsewhere): set the base URL \
         to where the model really is"
    )]
    Redirected {
        /// 301, 302, 303, 307 or 308.
        status: u16,
        /// The URL requested.
        from: String,
        /// Where the provider pointed (its `Location`, as sent, cut short), or `(none)`.
        to: String,
    },
    /// The caller cancelled the request.
    #[error("the model request was cancelled")]
    Cancelled,
}

fn retry_hint(after: Option<Duration>) -> String {
    match after {
        Some(d) if d.as_millis() < 1000 => format!(" (retry in {} ms)", d.as_millis()),
        Some(d) => format!(" (retry in {} s)", d.as_secs_f64().ceil()),
        None => String::new(),
    }
}

impl LlmError {
    /// Whether trying the same request again may succeed: rate limits, server failures and
    /// network errors. The provider retries these only before the first streamed byte.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::Server { .. } | Self::Network { .. }
        )
    }

    /// How long the vendor asked us to wait before retrying, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A malformed-answer error.
    pub(crate) fn malformed(reason: impl Into<String>) -> Self {
        Self::Malformed {
            reason: reason.into(),
        }
    }

    /// The same error with every secret known to `redactor` scrubbed from its text. Vendors do
    /// echo keys: OpenAI's 401 quotes the key it was given, partly masked.
    pub fn redacted(self, redactor: &Redactor) -> Self {
        if redactor.is_empty() {
            return self;
        }
        let r = |s: String| redactor.redact(&s);
        match self {
            Self::Auth { status, message } => Self::Auth {
                status,
                message: r(message),
            },
            Self::RateLimited {
                retry_after,
                message,
            } => Self::RateLimited {
                retry_after,
                message: r(message),
            },
            Self::ContextLengthExceeded { message } => Self::ContextLengthExceeded {
                message: r(message),
            },
            Self::Server { status, message } => Self::Server {
                status,
                message: r(message),
            },
            Self::BadRequest { message } => Self::BadRequest {
                message: r(message),
            },
            Self::Network { reason } => Self::Network { reason: r(reason) },
            Self::Malformed { reason } => Self::Malformed { reason: r(reason) },
            Self::Redirected { status, from, to } => Self::Redirected {
                status,
                from: r(from),
                to: r(to),
            },
            Self::Cancelled => Self::Cancelled,
        }
    }

    /// Maps a transport error from reqwest: connect failures, resets and timeouts.
    pub(crate) fn from_transport(e: reqwest::Error) -> Self {
        use std::error::Error as _;
        let kind = if e.is_timeout() {
            "the request timed out"
        } else if e.is_connect() {
            "the connection failed"
        } else if e.is_body() || e.is_decode() {
            "the connection broke while the answer was streaming"
        } else {
            "the request failed"
        };
        // The URL is dropped (it names the endpoint, which the caller already knows, and a
        // misconfigured base URL could carry credentials); the source chain says what broke.
        let e = e.without_url();
        let mut causes = Vec::new();
        let mut src = e.source();
        while let Some(s) = src {
            let text = s.to_string();
            if !causes.contains(&text) {
                causes.push(text);
            }
            src = s.source();
        }
        let reason = if causes.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind} ({})", causes.join(": "))
        };
        Self::Network {
            reason: cut(&reason),
        }
    }
}

/// Vendor text on one line, with the secrets this process knows redacted, cut to
/// [`MAX_VENDOR_MESSAGE`] characters and never inside a secret (SE-06).
pub(crate) fn cut(text: &str) -> String {
    let one_line =
        crate::redact::redact_for_logs(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    match one_line.char_indices().nth(MAX_VENDOR_MESSAGE) {
        Some((at, _)) => {
            let mut s = crate::redact::cut_for_logs(&one_line, at).to_owned();
            s.push('…');
            s
        }
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Secret;

    #[test]
    fn retryable_kinds() {
        let rl = LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
            message: "slow down".into(),
        };
        assert!(rl.retryable());
        assert_eq!(rl.retry_after(), Some(Duration::from_secs(2)));
        assert!(LlmError::Server {
            status: 503,
            message: "x".into()
        }
        .retryable());
        assert!(LlmError::Network { reason: "x".into() }.retryable());
        for e in [
            LlmError::Auth {
                status: 401,
                message: "x".into(),
            },
            LlmError::ContextLengthExceeded {
                message: "x".into(),
            },
            LlmError::BadRequest {
                message: "x".into(),
            },
            LlmError::malformed("x"),
            LlmError::Cancelled,
        ] {
            assert!(!e.retryable(), "{e}");
            assert_eq!(e.retry_after(), None);
        }
    }

    #[test]
    fn messages_are_one_sentence_with_data() {
        let e = LlmError::RateLimited {
            retry_after: Some(Duration::from_millis(1500)),
            message: "Rate limit reached".into(),
        };
        assert_eq!(
            e.to_string(),
            "the provider is rate limiting requests (retry in 2 s): Rate limit reached"
        );
        let e = LlmError::RateLimited {
            retry_after: Some(Duration::from_millis(20)),
            message: "m".into(),
        };
        assert_eq!(
            e.to_string(),
            "the provider is rate limiting requests (retry in 20 ms): m"
        );
        assert_eq!(
            LlmError::Server {
                status: 529,
                message: "Overloaded".into()
            }
            .to_string(),
            "the provider failed with HTTP 529: Overloaded"
        );
    }

    #[test]
    fn redaction_scrubs_the_key_from_every_message() {
        let key = Secret::new("sk-test-canary-0123456789");
        let r = Redactor::new([&key]);
        let e = LlmError::Auth {
            status: 401,
            message: "Incorrect API key provided: sk-test-canary-0123456789.".into(),
        }
        .redacted(&r);
        assert_eq!(
            e.to_string(),
            "the provider rejected the API key (HTTP 401): Incorrect API key provided: [redacted]."
        );
        let e = LlmError::malformed("chunk sk-test-canary-0123456789").redacted(&r);
        assert!(!format!("{e} {e:?}").contains("canary"));
    }

    #[test]
    fn cut_keeps_short_text_and_trims_long_text() {
        assert_eq!(cut("a\n  b"), "a b");
        let long = "x".repeat(1000);
        let c = cut(&long);
        assert_eq!(c.chars().count(), MAX_VENDOR_MESSAGE + 1);
        assert!(c.ends_with('…'));
    }
}
