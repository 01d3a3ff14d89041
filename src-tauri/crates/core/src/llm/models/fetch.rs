//! One bounded, timed JSON request to a model list endpoint, with failures named for people.
//!
//! The answer is read chunk by chunk up to [`MAX_BODY`] and parsed only then, so a server that
//! streams forever or sends a gigabyte fails with [`ModelsError::TooLarge`] instead of growing
//! memory. Vendor error text is scrubbed of the key and cut short before it reaches a message.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::redact::{Redactor, Secret};

/// The most bytes of a list answer read (OpenRouter's list with descriptions is ~1 MB).
pub const MAX_BODY: usize = 8 * 1024 * 1024;
/// How long one list request may take, end to end.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(20);
/// The most characters of a vendor's error text kept in a message.
const MAX_MESSAGE: usize = 300;

/// Why a model list could not be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelsError {
    /// 401 or 403: the vendor refused the key (or wants one).
    #[error("the key was refused (HTTP {status}){}", hint(.message))]
    KeyRefused {
        /// The status.
        status: u16,
        /// The vendor's words, scrubbed and cut.
        message: String,
    },
    /// No answer: connection refused, DNS, TLS, or the timeout.
    #[error("{url} is unreachable: {reason}")]
    Unreachable {
        /// The URL asked.
        url: String,
        /// What the connection said.
        reason: String,
    },
    /// Any other non-success status.
    #[error("{url} answered HTTP {status}{}", hint(.message))]
    Status {
        /// The URL asked.
        url: String,
        /// The status.
        status: u16,
        /// The vendor's words, scrubbed and cut.
        message: String,
    },
    /// The answer was not JSON, or not the shape of a model list.
    #[error("{url} did not answer with a model list: {reason}")]
    NotJson {
        /// The URL asked.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// The answer was larger than [`MAX_BODY`].
    #[error("{url} sent more than {} MB; not a model list", MAX_BODY / (1024 * 1024))]
    TooLarge {
        /// The URL asked.
        url: String,
    },
    /// The base URL cannot be used.
    #[error("the base URL is not usable: {0}")]
    BadUrl(String),
    /// The provider needs a key and none is set.
    #[error("no API key is set for this provider")]
    NoKey,
}

fn hint(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// A request about to be sent: where, with which headers, and the key to scrub from errors.
pub(super) struct Call<'a> {
    pub http: &'a reqwest::Client,
    pub url: String,
    pub headers: HeaderMap,
    pub key: Option<&'a Secret>,
    pub timeout: Duration,
}

impl Call<'_> {
    /// `GET url` and its JSON answer.
    pub async fn get(self) -> Result<Value, ModelsError> {
        let req = self.http.get(&self.url);
        self.send(req).await
    }

    /// `POST url` with a JSON body and its JSON answer.
    pub async fn post(self, body: &Value) -> Result<Value, ModelsError> {
        let req = self.http.post(&self.url).json(body);
        self.send(req).await
    }

    async fn send(self, req: reqwest::RequestBuilder) -> Result<Value, ModelsError> {
        let redactor = Redactor::new(self.key);
        let url = self.url.clone();
        let unreachable = |e: reqwest::Error| ModelsError::Unreachable {
            url: url.clone(),
            reason: redactor.redact(&error_chain(&e)),
        };
        let mut resp = req
            .headers(self.headers)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.timeout)
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(ModelsError::TooLarge { url });
            }
            body.extend_from_slice(&chunk);
        }
        if !(200..300).contains(&status) {
            let message = redactor.redact_then_cut(&error_text(&body), MAX_MESSAGE);
            return Err(if status == 401 || status == 403 {
                ModelsError::KeyRefused { status, message }
            } else {
                ModelsError::Status {
                    url,
                    status,
                    message,
                }
            });
        }
        serde_json::from_slice(&body).map_err(|e| ModelsError::NotJson {
            url,
            reason: e.to_string(),
        })
    }
}

/// The readable part of an error body: a JSON `error.message` or `error` string, else the text.
fn error_text(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let v: Option<Value> = serde_json::from_str(&text).ok();
    let from_json = v.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    from_json.unwrap_or_else(|| text.trim().to_owned())
}

fn error_chain(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "could not connect".to_owned()
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_prefers_the_vendor_message() {
        assert_eq!(
            error_text(br#"{"error":{"message":"bad key","type":"x"}}"#),
            "bad key"
        );
        assert_eq!(
            error_text(br#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_text(b"  plain text \n"), "plain text");
    }

    #[test]
    fn messages_read_as_sentences() {
        let e = ModelsError::KeyRefused {
            status: 401,
            message: String::new(),
        };
        assert_eq!(e.to_string(), "the key was refused (HTTP 401)");
        let e = ModelsError::Status {
            url: "http://x/models".into(),
            status: 500,
            message: "down".into(),
        };
        assert_eq!(e.to_string(), "http://x/models answered HTTP 500: down");
    }
}
