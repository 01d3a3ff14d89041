//! Classification of real vendor error bodies and rate-limit headers.

use super::*;
use reqwest::header::{HeaderName, HeaderValue};

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    h
}

fn at(s: &str) -> SystemTime {
    parse_rfc3339(s).unwrap()
}

const OPENAI_429: &str = r#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;

#[test]
fn statuses_map_to_kinds() {
    let h = HeaderMap::new();
    let now = SystemTime::now();
    let openai_401 = r#"{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
    assert_eq!(
        classify_http(401, &h, openai_401, now),
        LlmError::Auth {
            status: 401,
            message: "Incorrect API key provided: sk-abc***xyz.".into()
        }
    );
    let anthropic_403 = r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission"}}"#;
    assert!(matches!(
        classify_http(403, &h, anthropic_403, now),
        LlmError::Auth { status: 403, .. }
    ));
    assert_eq!(
        classify_http(429, &h, OPENAI_429, now),
        LlmError::RateLimited {
            retry_after: None,
            message: "Rate limit reached for gpt-4o".into()
        }
    );
    let quota = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    assert!(matches!(
        classify_http(429, &h, quota, now),
        LlmError::BadRequest { .. }
    ));
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    assert_eq!(
        classify_http(529, &h, overloaded, now),
        LlmError::Server {
            status: 529,
            message: "Overloaded".into()
        }
    );
    assert_eq!(
        classify_http(502, &h, "<html><body>Bad gateway</body></html>", now),
        LlmError::Server {
            status: 502,
            message: "<html><body>Bad gateway</body></html>".into()
        }
    );
    assert_eq!(
        classify_http(503, &h, "", now),
        LlmError::Server {
            status: 503,
            message: "HTTP 503 with an empty body".into()
        }
    );
    let not_found = r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
    assert_eq!(
        classify_http(404, &h, not_found, now),
        LlmError::BadRequest {
            message: "HTTP 404: The model `gpt-9` does not exist".into()
        }
    );
}

#[test]
fn context_length_errors_of_each_vendor() {
    let h = HeaderMap::new();
    let now = SystemTime::now();
    let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}"#;
    for body in [openai, anthropic, vllm] {
        assert!(
            matches!(
                classify_http(400, &h, body, now),
                LlmError::ContextLengthExceeded { .. }
            ),
            "{body}"
        );
    }
    // Other invalid requests stay BadRequest.
    let other = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}"#;
    assert!(matches!(
        classify_http(400, &h, other, now),
        LlmError::BadRequest { .. }
    ));
}

#[test]
fn compatible_vendor_error_shapes() {
    assert_eq!(
        VendorError::parse(r#"{"error":"model 'llama9' not found"}"#).message,
        Some("model 'llama9' not found".into())
    );
    let or = VendorError::parse(r#"{"error":{"message":"No auth","code":401}}"#);
    assert_eq!(or.code.as_deref(), Some("401"));
    assert_eq!(
        VendorError::parse(r#"{"detail":"Not Found"}"#).message,
        Some("Not Found".into())
    );
    assert_eq!(VendorError::parse("  ").message, None);
}

#[test]
fn retry_after_headers() {
    let now = at("2025-01-01T00:00:00Z");
    assert_eq!(
        retry_after(&headers(&[("retry-after", "7")]), now),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        retry_after(&headers(&[("retry-after", "0.5")]), now),
        Some(Duration::from_millis(500))
    );
    // OpenAI sends both; the precise one wins.
    assert_eq!(
        retry_after(
            &headers(&[("retry-after", "1"), ("retry-after-ms", "250")]),
            now
        ),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        retry_after(
            &headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
            now
        ),
        None
    );
    assert_eq!(retry_after(&headers(&[("retry-after", "-3")]), now), None);
}

#[test]
fn anthropic_reset_headers_of_exhausted_limits() {
    let now = at("2025-01-01T00:00:00Z");
    let h = headers(&[
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2025-01-01T00:00:12Z"),
        ("anthropic-ratelimit-tokens-remaining", "5000"),
        ("anthropic-ratelimit-tokens-reset", "2025-01-01T00:01:00Z"),
        ("anthropic-ratelimit-output-tokens-remaining", "0"),
        (
            "anthropic-ratelimit-output-tokens-reset",
            "2025-01-01T00:00:20.5Z",
        ),
    ]);
    assert_eq!(retry_after(&h, now), Some(Duration::from_millis(20_500)));
    let anthropic_429 = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;
    assert!(matches!(
        classify_http(429, &h, anthropic_429, now),
        LlmError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_millis(20_500)
    ));
    // A reset already past means "now".
    let h = headers(&[
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2024-12-31T23:59:00Z"),
    ]);
    assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
    // retry-after wins over the reset times.
    let h = headers(&[
        ("retry-after", "3"),
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2025-01-01T00:00:12Z"),
    ]);
    assert_eq!(retry_after(&h, now), Some(Duration::from_secs(3)));
}

#[test]
fn rfc3339_parsing() {
    let secs =
        |s: &str| parse_rfc3339(s).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64());
    assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0.0));
    assert_eq!(secs("2000-03-01T00:00:00Z"), Some(951_868_800.0));
    assert_eq!(secs("2025-01-01T01:00:00+01:00"), Some(1_735_689_600.0));
    assert_eq!(secs("2025-01-01T00:00:00.25Z"), Some(1_735_689_600.25));
    assert_eq!(secs("2025-13-01T00:00:00Z"), None);
    assert_eq!(secs("yesterday"), None);
    assert_eq!(secs("2025-01-01T00:00:00"), None);
}

#[test]
fn stream_error_events() {
    let ev = |kind: &str| VendorError {
        message: Some("m".into()),
        kind: Some(kind.into()),
        code: None,
    };
    assert_eq!(
        classify_event(&ev("overloaded_error")),
        LlmError::Server {
            status: 529,
            message: "m".into()
        }
    );
    assert!(matches!(
        classify_event(&ev("api_error")),
        LlmError::Server { status: 500, .. }
    ));
    assert!(matches!(
        classify_event(&ev("rate_limit_error")),
        LlmError::RateLimited { .. }
    ));
    assert!(matches!(
        classify_event(&ev("authentication_error")),
        LlmError::Auth { status: 401, .. }
    ));
    assert!(matches!(
        classify_event(&ev("invalid_request_error")),
        LlmError::BadRequest { .. }
    ));
    let ctx = VendorError {
        message: Some("too long".into()),
        kind: Some("invalid_request_error".into()),
        code: Some("context_length_exceeded".into()),
    };
    assert!(matches!(
        classify_event(&ctx),
        LlmError::ContextLengthExceeded { .. }
    ));
}
