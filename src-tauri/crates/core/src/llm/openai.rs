//! The OpenAI Chat Completions wire format, shared by every OpenAI-compatible profile
//! (OpenAI, Ollama, LM Studio, vLLM, OpenRouter, DeepSeek, custom servers).
//!
//! - [`request`]: the neutral transcript as a request body, shaped by the profile's quirks.
//! - [`decode`]: stream chunks into [`StreamEvent`](super::types::StreamEvent)s.
//!
//! Vendor differences are profile data ([`super::profiles`]), never branches on a vendor id.

mod decode;
mod request;

use futures::future::BoxFuture;
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use super::error::LlmError;
use super::http::Endpoint;
use super::provider::{EventStream, Provider};
use super::types::ChatRequest;

/// A provider speaking OpenAI Chat Completions.
#[derive(Debug)]
pub(crate) struct OpenAiProvider {
    endpoint: Endpoint,
}

impl OpenAiProvider {
    pub(crate) fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }
}

impl Provider for OpenAiProvider {
    fn stream(
        &self,
        req: ChatRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<EventStream, LlmError>> {
        Box::pin(async move {
            let body = request::build_body(&req, &self.endpoint.profile.quirks);
            self.endpoint
                .stream(
                    "/chat/completions",
                    HeaderMap::new(),
                    &body,
                    decode::OpenAiDecoder::default(),
                    cancel,
                )
                .await
        })
    }

    fn profile_id(&self) -> &str {
        self.endpoint.profile.id
    }
}
