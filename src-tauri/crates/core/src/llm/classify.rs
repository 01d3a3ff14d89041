//! From HTTP statuses, rate-limit headers and vendor error bodies to [`LlmError`].
//!
//! Both wire formats put errors in nearly the same envelope: OpenAI
//! `{"error":{"message","type","code"}}`, Anthropic `{"type":"error","error":{"type","message"}}`.
//! OpenAI-compatible servers vary: `"error"` as a bare string (Ollama), `code` as a number
//! (OpenRouter), `{"message","type","code"}` at the top level (vLLM), `{"detail"}` (FastAPI
//! servers). [`VendorError::parse`] reads all of them, so one classifier serves every profile.
//!
//! The status decides first; the vendor's `type`/`code` refine it. Context-length errors are
//! the one place we must read message text: Anthropic reports "prompt is too long" only as an
//! `invalid_request_error` message, and compatible servers (vLLM, llama.cpp) only say
//! "maximum context length" in prose. Those two phrases are matched, nothing else.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::error::{cut, LlmError};

/// The useful fields of a vendor error body or error event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VendorError {
    pub message: Option<String>,
    pub kind: Option<String>,
    pub code: Option<String>,
}

fn as_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl VendorError {
    /// Reads an error envelope; `None` when `v` has no recognisable error.
    pub fn from_value(v: &Value) -> Option<Self> {
        match v.get("error") {
            Some(Value::Object(e)) => Some(Self {
                message: as_text(e.get("message")),
                kind: as_text(e.get("type")),
                code: as_text(e.get("code")),
            }),
            Some(Value::String(s)) => Some(Self {
                message: Some(s.clone()),
                ..Self::default()
            }),
            _ => {
                let message = as_text(v.get("message")).or_else(|| as_text(v.get("detail")))?;
                Some(Self {
                    message: Some(message),
                    kind: as_text(v.get("type")),
                    code: as_text(v.get("code")),
                })
            }
        }
    }

    /// Reads an HTTP error body, JSON or not.
    pub fn parse(body: &str) -> Self {
        serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| Self::from_value(&v))
            .unwrap_or_else(|| {
                let text = body.trim();
                Self {
                    message: (!text.is_empty()).then(|| text.to_owned()),
                    ..Self::default()
                }
            })
    }

    fn text(&self, fallback: &str) -> String {
        cut(self.message.as_deref().unwrap_or(fallback))
    }

    fn is(&self, what: &str) -> bool {
        self.kind.as_deref() == Some(what) || self.code.as_deref() == Some(what)
    }

    fn is_context_length(&self) -> bool {
        if self.is("context_length_exceeded") {
            return true;
        }
        let m = self.message.as_deref().unwrap_or("").to_ascii_lowercase();
        m.contains("prompt is too long") || m.contains("maximum context length")
    }
}

/// Classifies a non-success HTTP answer. `now` anchors Anthropic's reset timestamps.
pub(crate) fn classify_http(
    status: u16,
    headers: &HeaderMap,
    body: &str,
    now: SystemTime,
) -> LlmError {
    let v = VendorError::parse(body);
    let fallback = format!("HTTP {status} with an empty body");
    let message = v.text(&fallback);
    match status {
        401 | 403 => LlmError::Auth { status, message },
        // OpenAI answers an exhausted billing quota with 429 too; waiting will not help.
        429 if v.is("insufficient_quota") => LlmError::BadRequest { message },
        429 => LlmError::RateLimited {
            retry_after: retry_after(headers, now),
            message,
        },
        _ if v.is("overloaded_error") => LlmError::Server {
            status: if status >= 500 { status } else { 529 },
            message,
        },
        500..=599 => LlmError::Server { status, message },
        _ if v.is_context_length() => LlmError::ContextLengthExceeded { message },
        _ => LlmError::BadRequest {
            message: format!("HTTP {status}: {message}"),
        },
    }
}

/// Classifies an error that arrived inside a stream (an OpenAI `{"error":..}` chunk or an
/// Anthropic `error` event), where there is no status to go by.
pub(crate) fn classify_event(v: &VendorError) -> LlmError {
    let message = v.text("the stream reported an error without a message");
    if v.is_context_length() {
        return LlmError::ContextLengthExceeded { message };
    }
    match v.kind.as_deref().or(v.code.as_deref()) {
        Some("authentication_error") => LlmError::Auth {
            status: 401,
            message,
        },
        Some("permission_error") => LlmError::Auth {
            status: 403,
            message,
        },
        Some("rate_limit_error" | "rate_limit_exceeded") => LlmError::RateLimited {
            retry_after: None,
            message,
        },
        Some("overloaded_error") => LlmError::Server {
            status: 529,
            message,
        },
        Some("invalid_request_error" | "not_found_error" | "request_too_large") => {
            LlmError::BadRequest { message }
        }
        _ => LlmError::Server {
            status: 500,
            message,
        },
    }
}

/// How long a 429 asks us to wait: `retry-after-ms` (OpenAI, milliseconds), else `retry-after`
/// (seconds; the HTTP-date form is not used by LLM vendors and is ignored), else the latest
/// Anthropic `anthropic-ratelimit-*-reset` time among the limits whose `*-remaining` is 0.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let secs = |s: &str, scale: f64| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| Duration::from_secs_f64(n / scale))
    };
    if let Some(d) = header("retry-after-ms").and_then(|s| secs(s, 1000.0)) {
        return Some(d);
    }
    if let Some(d) = header("retry-after").and_then(|s| secs(s, 1.0)) {
        return Some(d);
    }
    let mut latest: Option<Duration> = None;
    for limit in ["requests", "tokens", "input-tokens", "output-tokens"] {
        let remaining = header(&format!("anthropic-ratelimit-{limit}-remaining"));
        if remaining.map(str::trim) != Some("0") {
            continue;
        }
        let Some(reset) = header(&format!("anthropic-ratelimit-{limit}-reset")) else {
            continue;
        };
        if let Some(at) = parse_rfc3339(reset) {
            let wait = at.duration_since(now).unwrap_or(Duration::ZERO);
            latest = Some(latest.map_or(wait, |l| l.max(wait)));
        }
    }
    latest
}

/// Parses an RFC 3339 timestamp (`2025-01-01T12:00:00Z`, fractional seconds and `+hh:mm`
/// offsets allowed). Hand-rolled: it is the only date the LLM layer reads, not worth a crate.
pub(crate) fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let sep_ok = s.get(4..5) == Some("-")
        && s.get(7..8) == Some("-")
        && matches!(s.get(10..11), Some("T" | "t" | " "))
        && s.get(13..14) == Some(":")
        && s.get(16..17) == Some(":");
    if !sep_ok || !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 {
        return None;
    }
    let mut rest = s.get(19..)?;
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let d = frac.get(..digits.min(9))?;
        nanos = format!("{d:0<9}").parse().ok()?;
        rest = frac.get(digits..)?;
    }
    let offset_secs = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let (h, m) = rest.get(1..)?.split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    // Days from the civil calendar (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let unix = days * 86_400 + hour * 3600 + min * 60 + sec.min(59) - offset_secs;
    let secs = u64::try_from(unix).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests;
