//! The requests of a [`Connection`]: one generic path ([`Connection::request`]) with the
//! per-request timeout (reset by progress, at most 10x overall), `notifications/cancelled` on
//! a user's cancel (RL-03, RL-04), progress routed to the caller and a prompt failure when the
//! session ends (RL-05); then the typed calls on top, with complete pagination under a page
//! cap so a server that keeps returning cursors cannot loop us forever.

use std::collections::HashMap;
use std::sync::PoisonError;
use std::time::Duration;

use rmcp::model::{CancelledNotificationParam, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::wire::{convert, from_json, map_service_error, unexpected};
use super::{Connection, RequestOptions};
use crate::mcp::catalog::{
    Arguments, PromptInfo, PromptResult, ResourceContents, ResourceInfo, ResourceTemplateInfo,
    ToolInfo, ToolResult,
};
use crate::mcp::McpError;

/// JSON-RPC errors of the 2026-07-28 revision: the request's protocol version is not one the
/// server supports, or it needs a client capability we did not declare.
const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;

/// The most pages we follow for one list before deciding the server is looping.
const MAX_PAGES: usize = 1000;

impl Connection {
    /// A request given as its JSON shape, for the cold paths (lists, reads, prompts).
    async fn request_json(
        &self,
        request: Value,
        opts: RequestOptions,
    ) -> Result<ServerResult, McpError> {
        let request: ClientRequest = from_json(request)?;
        self.request(request, opts).await
    }

    pub(super) async fn request(
        &self,
        mut request: ClientRequest,
        opts: RequestOptions,
    ) -> Result<ServerResult, McpError> {
        if self.is_closed() {
            return Err(McpError::Disconnected(self.closed().await));
        }
        // A stateless session has no `logging/setLevel`: a request that names no level gets no
        // log lines at all, so each asks for what an older session hears (SEP-2575). Asked of
        // every server: the logging capability is deprecated in the same revision, and servers
        // that log do not all declare it.
        if self.stateless {
            use rmcp::model::GetMeta;
            // Deprecated by the same revision (SEP-2577), and still how servers report.
            #[allow(deprecated)]
            let info = rmcp::model::LoggingLevel::Info;
            request.get_meta_mut().set_log_level(info);
        }
        let timeout = opts.timeout.unwrap_or(self.default_timeout);
        let mut options = PeerRequestOptions::with_timeout(timeout);
        options.reset_timeout_on_progress = true;
        options.max_total_timeout = Some(timeout.saturating_mul(10));
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| map_service_error(e, timeout))?;
        let token = handle.progress_token.clone();
        let routed = opts.progress.is_some();
        if let Some(sink) = opts.progress {
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(token.clone(), sink);
        }
        let id = handle.id.clone();
        let cancel = opts.cancel.unwrap_or_default();
        let closed = self.closed();
        let outcome = tokio::select! {
            r = handle.await_response() => match r.map_err(|e| map_service_error(e, timeout)) {
                // rmcp only says the transport closed; the session knows why (a line over
                // the cap, a refused stream), and that is what the person needs to read.
                Err(McpError::Disconnected(crate::status::Reason::OutputClosed)) => {
                    Err(McpError::Disconnected(self.end_reason().await))
                }
                other => other,
            },
            _ = cancel.cancelled() => {
                let params: Result<CancelledNotificationParam, _> = from_json(json!({
                    "requestId": id,
                    "reason": "cancelled by the user",
                }));
                if let Ok(p) = params {
                    let _ = self.peer.notify_cancelled(p).await;
                }
                Err(McpError::Cancelled)
            }
            // rmcp fails pending requests when its loop ends; this makes sure it is prompt
            // even if the loop is slow to notice (RL-05).
            why = closed => Err(McpError::Disconnected(why)),
        };
        if routed {
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&token);
        }
        match outcome {
            Err(McpError::Server { code, .. }) if code == UNSUPPORTED_PROTOCOL_VERSION => {
                Err(self.renegotiate().await)
            }
            Err(McpError::Server { code, message })
                if code == MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                Err(McpError::Server {
                    code,
                    message: format!(
                        "the server needs Switchboard to offer a capability it does not offer \
                         this server (enable elicitation, sampling or roots for it if you want \
                         this to work): {message}"
                    ),
                })
            }
            other => other,
        }
    }

    /// The server no longer speaks the revision this session negotiated (a stateless server can
    /// change between two requests, e.g. redeployed behind a load balancer). The session ends
    /// with that reason, and the supervisor's next start negotiates again, once, at a revision
    /// both sides support.
    async fn renegotiate(&self) -> McpError {
        let why = crate::status::Reason::UnsupportedProtocol {
            version: self.info.protocol_version.clone(),
        };
        self.close_reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(why.clone());
        let stop = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(stop) = stop {
            stop.cancel();
        }
        McpError::Disconnected(why)
    }

    /// Calls a tool.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Arguments,
        opts: RequestOptions,
    ) -> Result<ToolResult, McpError> {
        // Built typed: this is the hot path, and rmcp's untagged request enum is slow to
        // deserialize into.
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
            rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(arguments),
        ));
        let r = self.request_rounds(request, opts).await?;
        match r {
            ServerResult::CallToolResult(r) => convert("tool result", r),
            // A result with no `content` (only `structuredContent`, or nothing) reads as
            // another of rmcp's untagged variants; the spec allows it (rmcp 3.11 does too).
            other => contentless_tool_result(&other).ok_or_else(|| unexpected(&other)),
        }
    }

    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
    ) -> Result<Vec<T>, McpError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        // The list is as fresh as its stalest page: the smallest `ttlMs`, none if a page has none.
        let mut ttl: Option<u64> = Some(u64::MAX);
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self
                .request_json(
                    json!({"method": method, "params": params}),
                    RequestOptions::default(),
                )
                .await?;
            let page = serde_json::to_value(&r)
                .map_err(|e| McpError::Protocol(format!("{method}: {e}")))?;
            let items = page.get(field).cloned().unwrap_or(Value::Array(vec![]));
            let items: Vec<T> = serde_json::from_value(items).map_err(|e| {
                McpError::Protocol(format!(
                    "the server's {method} answer does not have the expected shape: {e}"
                ))
            })?;
            out.extend(items);
            let page_ttl = page.get("ttlMs").and_then(Value::as_u64);
            ttl = ttl.zip(page_ttl).map(|(a, b)| a.min(b));
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() && Some(next) != cursor.as_deref() => {
                    cursor = Some(next.to_owned());
                }
                _ => {
                    self.ttls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(method.to_owned(), ttl.map(Duration::from_millis));
                    return Ok(out);
                }
            }
        }
        Err(McpError::Protocol(format!(
            "{method} kept returning more pages after {MAX_PAGES}; the server seems to loop"
        )))
    }

    /// How long the last complete `method` list (`tools/list`, ...) may be kept, from its
    /// pages' `ttlMs` caching hints (2026-07-28); `None` when the server gave none.
    pub fn list_ttl(&self, method: &str) -> Option<Duration> {
        self.ttls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(method)
            .copied()
            .flatten()
    }

    /// Every tool, all pages.
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, McpError> {
        self.list_all("tools/list", "tools").await
    }

    /// Every resource, all pages.
    pub async fn list_resources(&self) -> Result<Vec<ResourceInfo>, McpError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template, all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplateInfo>, McpError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Every prompt, all pages.
    pub async fn list_prompts(&self) -> Result<Vec<PromptInfo>, McpError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
        let request = from_json(json!({"method": "resources/read", "params": {"uri": uri}}))?;
        let r = self
            .request_rounds(request, RequestOptions::default())
            .await?;
        let v = serde_json::to_value(&r).map_err(|e| McpError::Protocol(e.to_string()))?;
        serde_json::from_value(v.get("contents").cloned().unwrap_or(Value::Array(vec![]))).map_err(
            |e| {
                McpError::Protocol(format!(
                    "the server's resource contents do not have the expected shape: {e}"
                ))
            },
        )
    }

    /// Expands a prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &HashMap<String, String>,
    ) -> Result<PromptResult, McpError> {
        let request = from_json(
            json!({"method": "prompts/get", "params": {"name": name, "arguments": arguments}}),
        )?;
        let r = self
            .request_rounds(request, RequestOptions::default())
            .await?;
        match r {
            ServerResult::GetPromptResult(r) => convert("prompt", r),
            other => Err(unexpected(&other)),
        }
    }

    /// Asks for completions of a prompt argument.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, McpError> {
        // A server that did not advertise completions has none to give; since rmcp 3.11 its
        // servers answer the method with -32601 rather than an empty list. Not asked at all.
        if !self.info.capabilities.completions {
            return Ok(Vec::new());
        }
        let r = self
            .request_json(
                json!({"method": "completion/complete", "params": {
                    "ref": {"type": "ref/prompt", "name": prompt},
                    "argument": {"name": argument, "value": value},
                }}),
                RequestOptions::default(),
            )
            .await?;
        let v = serde_json::to_value(&r).map_err(|e| McpError::Protocol(e.to_string()))?;
        Ok(v.pointer("/completion/values")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Sends `ping`.
    pub async fn ping(&self) -> Result<(), McpError> {
        self.request_json(json!({"method": "ping"}), RequestOptions::default())
            .await
            .map(|_| ())
    }

    /// Sends `notifications/roots/list_changed` (the person changed which folders it may see).
    pub async fn roots_changed(&self) -> Result<(), McpError> {
        self.peer
            .notify_roots_list_changed()
            .await
            .map_err(|e| map_service_error(e, self.default_timeout))
    }
}

/// A `tools/call` result without `content`, if `r` can be one: an object whose fields are
/// among a tool result's.
fn contentless_tool_result(r: &ServerResult) -> Option<ToolResult> {
    let v = serde_json::to_value(r).ok()?;
    let fields = v.as_object()?;
    let known = [
        "content",
        "structuredContent",
        "isError",
        "_meta",
        "resultType",
    ];
    if !fields.keys().all(|k| known.contains(&k.as_str())) {
        return None;
    }
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_result_may_come_without_content() {
        for (raw, structured) in [
            (
                json!({"structuredContent": {"n": 3}}),
                Some(json!({"n": 3})),
            ),
            (json!({}), None),
            (json!({"isError": true, "_meta": {"x": 1}}), None),
        ] {
            let r: ServerResult = serde_json::from_value(raw.clone()).unwrap();
            let got = match r {
                ServerResult::CallToolResult(r) => convert::<ToolResult>("t", r).ok(),
                other => contentless_tool_result(&other),
            }
            .unwrap_or_else(|| panic!("{raw} was not read as a tool result"));
            assert!(got.content.is_empty());
            assert_eq!(got.structured_content, structured);
        }
        // Something else entirely is not a tool result.
        let r: ServerResult = serde_json::from_value(json!({"tools": []})).unwrap();
        assert!(contentless_tool_result(&r).is_none());
    }
}
