//! Opening a session: the handshake over each kind of endpoint ([`Greeting::over`]), and the
//! task that watches a session until it ends and says why ([`watch_session`]). Kept apart
//! from `mod.rs`, which assembles a [`super::Connection`] from what these return.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, QuitReason, RoleClient, RunningService,
};
use tokio::sync::watch;

use super::handler::Handler;
use super::stdio::StdioTransport;
use super::{handshake, http, legacy_sse, CloseReason, Endpoint};
use crate::mcp::McpError;
use crate::server_logs::ServerLogs;
use crate::server_process::ServerProcess;
use crate::status::Reason;

/// A session once the handshake is done.
pub(super) type Running = RunningService<RoleClient, Handler>;

/// What a handshake needs besides the endpoint and the handler.
pub(super) struct Greeting<'a> {
    pub(super) logs: &'a ServerLogs,
    pub(super) mode: ClientLifecycleMode,
    pub(super) init_timeout: Duration,
    pub(super) request_timeout: Duration,
    /// Where the transports leave why the session closed.
    pub(super) close_reason: &'a CloseReason,
    /// Raised by the HTTP guard on what rmcp would not end the session for.
    pub(super) fatal: &'a Arc<http::FatalEnd>,
}

impl Greeting<'_> {
    /// Shakes hands over `endpoint`: the running session and, over stdio, the process.
    pub(super) async fn over(
        self,
        endpoint: Endpoint,
        handler: Handler,
    ) -> Result<(Running, Option<ServerProcess>), McpError> {
        match endpoint {
            Endpoint::Stdio {
                process,
                pipes,
                max_message,
            } => {
                let transport = StdioTransport::new(
                    pipes,
                    self.logs.clone(),
                    max_message,
                    self.close_reason.clone(),
                );
                let serve = handler.serve_with_lifecycle(transport, self.mode);
                match handshake(serve, self.init_timeout, self.close_reason).await {
                    Ok(r) => Ok((r, Some(*process))),
                    Err(e) => {
                        let exit = process.stop().await;
                        Err(match e {
                            McpError::Disconnected(why) => {
                                McpError::Disconnected(why.with_exit(Some(exit)))
                            }
                            other => other,
                        })
                    }
                }
            }
            Endpoint::Http {
                url,
                headers,
                max_message,
                auth,
            } => {
                let transport = http::transport(
                    &url,
                    &headers,
                    max_message,
                    self.logs,
                    self.fatal.clone(),
                    auth.as_ref(),
                )
                .await?;
                let running = match transport {
                    // A 4xx to the first POST may mean a 2024-11-05 HTTP+SSE server.
                    http::HttpTransport::Plain(t) => {
                        let fallback = legacy_sse::Fallback {
                            handler: legacy_sse::handler_copy(&handler),
                            url,
                            headers,
                            max_message,
                            logs: self.logs.clone(),
                            request_timeout: self.request_timeout,
                        };
                        let serve = handler.serve_with_lifecycle(t, self.mode);
                        fallback
                            .handshake(serve, self.init_timeout, self.close_reason)
                            .await?
                    }
                    http::HttpTransport::Authorized(t) => {
                        let serve = handler.serve_with_lifecycle(t, self.mode);
                        handshake(serve, self.init_timeout, self.close_reason).await?
                    }
                };
                Ok((running, None))
            }
        }
    }
}

/// Watches `running` until it ends (or the HTTP guard raises `fatal`, which ends it) and
/// sends why on `closed`: the reason a transport left, else how the session quit.
pub(super) fn watch_session(
    running: Running,
    fatal: Arc<http::FatalEnd>,
    reason: CloseReason,
    closed: watch::Sender<Option<Reason>>,
) {
    tokio::spawn(async move {
        let running_stop = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        let quit = tokio::select! {
            q = &mut waiting => q,
            // The HTTP guard saw something rmcp would not end the session for.
            why = fatal.raised() => {
                reason
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(why);
                running_stop.cancel();
                waiting.await
            }
        };
        let quit = match quit {
            Ok(QuitReason::Cancelled) => Reason::Stopped,
            Ok(_) => Reason::OutputClosed,
            Err(e) => Reason::Other {
                detail: format!("the connection task failed: {e}"),
            },
        };
        let why = reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or(quit);
        let _ = closed.send(Some(why));
    });
}
