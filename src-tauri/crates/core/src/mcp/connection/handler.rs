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
use serde_json::json;
use tokio::sync::mpsc;

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
        let answer = match (&self.requests, serde_json::to_value(&request)) {
            (Some(r), Ok(params))
                if r.features().elicitation_form || r.features().elicitation_url =>
            {
                // A server that cancels its request withdraws the question (the future drops).
                tokio::select! {
                    a = r.elicit(params) => a,
                    () = context.ct.cancelled() => ElicitationAnswer::Cancel,
                }
            }
            _ => ElicitationAnswer::Decline,
        };
        let v = match answer {
            ElicitationAnswer::Accept(content) => json!({"action": "accept", "content": content}),
            ElicitationAnswer::Decline => json!({"action": "decline"}),
            ElicitationAnswer::Cancel => json!({"action": "cancel"}),
        };
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
        let requests = self
            .requests
            .as_ref()
            .filter(|r| r.features().sampling)
            .ok_or_else(
                rmcp::ErrorData::method_not_found::<rmcp::model::CreateMessageRequestMethod>,
            )?;
        let params = serde_json::to_value(&params).map_err(|e| {
            rmcp::ErrorData::invalid_params(format!("unreadable request: {e}"), None)
        })?;
        // A refusal is "the user rejected the request" (-1 in the spec's examples).
        let result = tokio::select! {
            r = requests.sample(params) => r,
            () = context.ct.cancelled() => Err("cancelled by the server".to_owned()),
        }
        .map_err(|why| rmcp::ErrorData::new(rmcp::model::ErrorCode(-1), why, None))?;
        serde_json::from_value(result).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("could not build the answer: {e}"), None)
        })
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = match self.requests.as_ref().filter(|r| r.features().roots) {
            Some(r) => r.roots().await,
            None => Vec::new(),
        };
        let v = json!({"roots": roots
            .into_iter()
            .map(|r| match r.name {
                Some(name) => json!({"uri": r.uri, "name": name}),
                None => json!({"uri": r.uri}),
            })
            .collect::<Vec<_>>()});
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
