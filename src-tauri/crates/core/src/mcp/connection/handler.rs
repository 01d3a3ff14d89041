//! Our side of the session as rmcp sees it: identifies us, routes progress and notifications,
//! and answers the server's own requests (elicitation, sampling, roots) through
//! [`ServerRequests`], declining what the person did not enable.
//!
//! Separate from the transports because it is the same for stdio and HTTP, and because it is
//! where rmcp's handler trait churns (methods renamed, deprecated, added between majors).

use std::sync::{Arc, PoisonError};

use rmcp::model::{ClientConfig, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::ClientHandler;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ElicitationAnswer, Progress, ProgressRoutes, ServerSignal};
use crate::mcp::requests::ServerRequests;

/// Our side of the session: identifies us and routes what the server sends.
pub(super) struct Handler {
    pub(super) info: ClientConfig,
    pub(super) progress: ProgressRoutes,
    pub(super) signals: mpsc::Sender<ServerSignal>,
    pub(super) requests: Option<Arc<dyn ServerRequests>>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Progress for a token we are not waiting on is dropped (RL-12).
        let route = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        if let Some(sink) = route {
            sink(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    // Logging is deprecated by the 2026-07-28 revision (SEP-2577) but is how every server up
    // to 2025-11-25, the versions we speak, reports its log lines.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".into());
        // A full queue means the server floods us; dropping log lines is the right loss.
        let _ = self.signals.try_send(ServerSignal::Log {
            level,
            logger: params.logger,
            data: params.data,
        });
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let params = serde_json::to_value(&request).map_err(|e| {
            rmcp::ErrorData::invalid_params(format!("unreadable request: {e}"), None)
        })?;
        let v = elicitation_result(self.requests.as_ref(), params, &context.ct).await;
        serde_json::from_value(v).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    // Sampling and roots are deprecated by the 2026-07-28 revision (SEP-2577) but are part of
    // every version we speak, and servers use them.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let params = serde_json::to_value(&params).map_err(|e| {
            rmcp::ErrorData::invalid_params(format!("unreadable request: {e}"), None)
        })?;
        let result = match sampling_result(self.requests.as_ref(), params, &context.ct).await {
            Ok(v) => v,
            Err(SamplingRefusal::NotOffered) => {
                return Err(rmcp::ErrorData::method_not_found::<
                    rmcp::model::CreateMessageRequestMethod,
                >())
            }
            // A refusal is "the user rejected the request" (-1 in the spec's examples).
            Err(SamplingRefusal::Refused(why)) => {
                return Err(rmcp::ErrorData::new(rmcp::model::ErrorCode(-1), why, None))
            }
        };
        serde_json::from_value(result).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let v = roots_result(self.requests.as_ref()).await;
        serde_json::from_value(v).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.try_send(ServerSignal::ToolsChanged);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.try_send(ServerSignal::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.try_send(ServerSignal::PromptsChanged);
    }
}

/// Our answer to an `elicitation/create` as its result's JSON: the same for a request the server
/// sends us and for one inside an `input_required` result (MRTR), so both reach the person
/// through the one question inbox, under the same limits and audit. A withdrawn request
/// (`cancel`) drops the question.
pub(super) async fn elicitation_result(
    requests: Option<&Arc<dyn ServerRequests>>,
    params: Value,
    cancel: &CancellationToken,
) -> Value {
    let answer = match requests {
        Some(r) if r.features().elicitation_form || r.features().elicitation_url => {
            tokio::select! {
                a = r.elicit(params) => a,
                () = cancel.cancelled() => ElicitationAnswer::Cancel,
            }
        }
        _ => ElicitationAnswer::Decline,
    };
    match answer {
        ElicitationAnswer::Accept(content) => json!({"action": "accept", "content": content}),
        ElicitationAnswer::Decline => json!({"action": "decline"}),
        ElicitationAnswer::Cancel => json!({"action": "cancel"}),
    }
}

/// Why a sampling request got no completion.
pub(super) enum SamplingRefusal {
    /// The person did not enable sampling for this server.
    NotOffered,
    /// The person (or a limit) refused this one, with the reason.
    Refused(String),
}

/// Our answer to a `sampling/createMessage` as its result's JSON (see [`elicitation_result`]).
pub(super) async fn sampling_result(
    requests: Option<&Arc<dyn ServerRequests>>,
    params: Value,
    cancel: &CancellationToken,
) -> Result<Value, SamplingRefusal> {
    let requests = requests
        .filter(|r| r.features().sampling)
        .ok_or(SamplingRefusal::NotOffered)?;
    tokio::select! {
        r = requests.sample(params) => r,
        () = cancel.cancelled() => Err("cancelled by the server".to_owned()),
    }
    .map_err(SamplingRefusal::Refused)
}

/// Our answer to a `roots/list` as its result's JSON: the folders the person chose, or none.
pub(super) async fn roots_result(requests: Option<&Arc<dyn ServerRequests>>) -> Value {
    let roots = match requests.filter(|r| r.features().roots) {
        Some(r) => r.roots().await,
        None => Vec::new(),
    };
    json!({"roots": roots
        .into_iter()
        .map(|r| match r.name {
            Some(name) => json!({"uri": r.uri, "name": name}),
            None => json!({"uri": r.uri}),
        })
        .collect::<Vec<_>>()})
}
