//! Client-side helpers for tests that point real providers at a [`FakeLlm`].

use std::time::Duration;

use futures::StreamExt;
use switchboard_core::llm::profiles::{profile, Profile};
use switchboard_core::llm::{
    ChatRequest, EventStream, LlmError, Provider, ProviderConfig, RetryPolicy, StreamEvent,
};
use switchboard_core::redact::Secret;
use tokio_util::sync::CancellationToken;

use super::FakeLlm;

/// A retry policy with test-sized backoffs.
pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(5),
    }
}

/// The profile with this id; panics on a typo.
pub fn profile_of(id: &str) -> Profile {
    *profile(id).unwrap_or_else(|| panic!("no profile {id}"))
}

/// A provider for `profile` aimed at `server` (the base URL matching its wire format).
pub fn provider_for(
    server: &FakeLlm,
    profile: Profile,
    key: Option<&str>,
    retry: RetryPolicy,
) -> Box<dyn Provider> {
    let base = match profile.wire {
        switchboard_core::llm::profiles::Wire::OpenAi => server.openai_base(),
        switchboard_core::llm::profiles::Wire::Anthropic => server.anthropic_base(),
    };
    ProviderConfig {
        base_url: Some(base),
        api_key: key.map(Secret::new),
        retry,
        ..ProviderConfig::new(&profile)
    }
    // The production client (no redirects followed, RD-03).
    .build(switchboard_core::llm::http_client().unwrap_or_else(|e| panic!("client: {e}")))
    .unwrap_or_else(|e| panic!("build provider: {e}"))
}

/// Reads a stream to its end: the events, and the error that ended it, if any. Fails the
/// test if anything follows a terminal item.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut events = Vec::new();
    let mut err = None;
    while let Some(item) = stream.next().await {
        assert!(
            err.is_none(),
            "an item followed the error {err:?}: {item:?}"
        );
        assert!(
            !matches!(events.last(), Some(StreamEvent::Done { .. })),
            "an item followed Done: {item:?}"
        );
        match item {
            Ok(ev) => events.push(ev),
            Err(e) => err = Some(e),
        }
    }
    (events, err)
}

/// Sends `req` and drains the answer; an error before streaming comes back as the error.
pub async fn run(p: &dyn Provider, req: ChatRequest) -> (Vec<StreamEvent>, Option<LlmError>) {
    match p.stream(req, CancellationToken::new()).await {
        Ok(s) => drain(s).await,
        Err(e) => (Vec::new(), Some(e)),
    }
}

/// The text of all `TextDelta`s, concatenated.
pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
