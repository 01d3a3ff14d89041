//! The Anthropic Messages wire format (`POST {base}/v1/messages`, `x-api-key`,
//! `anthropic-version: 2023-06-01`).
//!
//! - [`request`]: the neutral transcript as a request body (role merging, block rules).
//! - [`decode`]: stream events into [`StreamEvent`](super::types::StreamEvent)s.

mod decode;
mod request;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::error::LlmError;
use super::http::Endpoint;
use super::provider::{EventStream, Provider};
use super::types::ChatRequest;

/// The API version we speak; Anthropic versions the wire format by this header.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A provider speaking the Anthropic Messages API.
#[derive(Debug)]
pub(crate) struct AnthropicProvider {
    endpoint: Endpoint,
}

impl AnthropicProvider {
    pub(crate) fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }
}

impl Provider for AnthropicProvider {
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        Box::pin(async move {
            let body = request::build_body(&req);
            let mut headers = HeaderMap::new();
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
            self.endpoint
                .stream(
                    "/v1/messages",
                    headers,
                    &body,
                    decode::AnthropicDecoder::default(),
                    cancel,
                )
                .await
        })
    }

    fn profile_id(&self) -> &str {
        self.endpoint.profile.id
    }
}
