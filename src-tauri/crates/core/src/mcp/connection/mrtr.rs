//! Multi-round-trip requests (SEP-2322, protocol 2026-07-28). A stateless server cannot send us
//! requests of its own in the middle of a `tools/call`, `prompts/get` or `resources/read`;
//! instead it answers `resultType: "input_required"` with the questions it needs answered
//! (`inputRequests`: elicitation, sampling, roots) and an opaque `requestState`, and we send the
//! same request again with `inputResponses` and the state echoed verbatim.
//!
//! Every question goes through the same [`ServerRequests`](crate::mcp::requests::ServerRequests)
//! as a server's own request on an older session (see `handler`), so the person sees it in the
//! one question inbox, under the same enablement, rate limits and audit. The rounds are capped
//! ([`MAX_ROUNDS`]); rounds that carry only state back off, so a server cannot spin us; a
//! cancel stops the rounds and withdraws any open question.

use std::time::Duration;

use rmcp::model::{ClientRequest, InputRequiredResult, ServerResult};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::handler::{elicitation_result, roots_result, sampling_result, SamplingRefusal};
use super::wire::from_json;
use super::{Connection, RequestOptions};
use crate::mcp::McpError;
use crate::status::Reason;

/// The most `input_required` answers we follow for one request (the other Tier 1 SDKs use 10).
pub const MAX_ROUNDS: usize = 10;

/// The first pause before repeating a request whose answer carried only state; doubled each
/// time such a round follows another, up to [`STATE_ONLY_MAX`].
const STATE_ONLY_FLOOR: Duration = Duration::from_millis(100);
const STATE_ONLY_MAX: Duration = Duration::from_secs(2);

impl Connection {
    /// Sends `request` and answers every `input_required` result until the server gives the
    /// final one. `opts` hold for each round; one cancel ends them all.
    pub(super) async fn request_rounds(
        &self,
        mut request: ClientRequest,
        mut opts: RequestOptions,
    ) -> Result<ServerResult, McpError> {
        let cancel = opts
            .cancel
            .get_or_insert_with(CancellationToken::new)
            .clone();
        let mut state_only = 0u32;
        for _ in 0..MAX_ROUNDS {
            let asked = match self.request(request.clone(), opts.clone()).await? {
                ServerResult::InputRequiredResult(asked) => asked,
                done => return Ok(done),
            };
            let (responses, state) = self.answer(asked, &cancel, &mut state_only).await?;
            request = with_retry(request, responses, state)?;
        }
        Err(McpError::Protocol(format!(
            "the server asked for more input {MAX_ROUNDS} times without finishing the request"
        )))
    }

    /// Answers one `input_required` result: every question, or a pause for a state-only round.
    async fn answer(
        &self,
        asked: InputRequiredResult,
        cancel: &CancellationToken,
        state_only: &mut u32,
    ) -> Result<(Map<String, Value>, Option<String>), McpError> {
        let questions = asked.input_requests.unwrap_or_default();
        if questions.is_empty() {
            if asked.request_state.is_none() {
                return Err(McpError::Protocol(
                    "the server asked for input but named no question and no state".into(),
                ));
            }
            let pause = STATE_ONLY_FLOOR
                .saturating_mul(1 << (*state_only).min(5))
                .min(STATE_ONLY_MAX);
            *state_only += 1;
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            }
            return Ok((Map::new(), asked.request_state));
        }
        *state_only = 0;
        let mut responses = Map::new();
        // One at a time: each may be a question to the person, and the inbox shows them in order.
        for (key, question) in questions {
            let question =
                serde_json::to_value(&question).map_err(|e| McpError::Protocol(e.to_string()))?;
            let answer = self.answer_one(&question, cancel).await?;
            if cancel.is_cancelled() {
                return Err(McpError::Cancelled);
            }
            responses.insert(key, answer);
        }
        Ok((responses, asked.request_state))
    }

    async fn answer_one(
        &self,
        question: &Value,
        cancel: &CancellationToken,
    ) -> Result<Value, McpError> {
        let method = question.get("method").and_then(Value::as_str).unwrap_or("");
        let params = question.get("params").cloned().unwrap_or(Value::Null);
        let requests = self.requests.as_ref();
        match method {
            "elicitation/create" => Ok(elicitation_result(requests, params, cancel).await),
            "roots/list" => Ok(roots_result(requests).await),
            "sampling/createMessage" => match sampling_result(requests, params, cancel).await {
                Ok(v) => Ok(v),
                Err(SamplingRefusal::NotOffered) => Err(McpError::Protocol(
                    "the server asked for a sampling answer, which Switchboard did not offer it"
                        .into(),
                )),
                Err(SamplingRefusal::Refused(why)) => Err(McpError::Refused {
                    reason: Reason::Other {
                        detail: format!("the request needed a sampling answer, refused: {why}"),
                    },
                }),
            },
            other => Err(McpError::Protocol(format!(
                "the server asked for input of an unknown kind ({})",
                crate::escape::ServerText(other)
            ))),
        }
    }
}

/// The same request again, carrying the answers and the server's state verbatim.
fn with_retry(
    request: ClientRequest,
    responses: Map<String, Value>,
    state: Option<String>,
) -> Result<ClientRequest, McpError> {
    let mut v = serde_json::to_value(&request).map_err(|e| McpError::Protocol(e.to_string()))?;
    let params = v
        .as_object_mut()
        .map(|o| {
            o.entry("params")
                .or_insert_with(|| Value::Object(Map::new()))
        })
        .and_then(Value::as_object_mut)
        .ok_or_else(|| {
            McpError::Protocol("a request without parameters cannot be retried".into())
        })?;
    if responses.is_empty() {
        params.remove("inputResponses");
    } else {
        params.insert("inputResponses".into(), Value::Object(responses));
    }
    match state {
        Some(s) => params.insert("requestState".into(), Value::String(s)),
        None => params.remove("requestState"),
    };
    from_json(v)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_retry_carries_the_answers_and_the_state_verbatim_and_drops_stale_ones() {
        let first: ClientRequest = from_json(json!({
            "method": "tools/call",
            "params": {"name": "t", "arguments": {"a": 1}},
        }))
        .unwrap();
        let mut answers = Map::new();
        answers.insert(
            "q1".into(),
            json!({"action": "accept", "content": {"x": 1}}),
        );
        let second = with_retry(first, answers, Some("opaque==".into())).unwrap();
        let v = serde_json::to_value(&second).unwrap();
        assert_eq!(v["params"]["inputResponses"]["q1"]["content"]["x"], 1);
        assert_eq!(v["params"]["requestState"], "opaque==");
        assert_eq!(v["params"]["arguments"]["a"], 1);
        let third = with_retry(second, Map::new(), None).unwrap();
        let v = serde_json::to_value(&third).unwrap();
        assert!(v["params"].get("inputResponses").is_none(), "{v}");
        assert!(v["params"].get("requestState").is_none(), "{v}");
    }
}
