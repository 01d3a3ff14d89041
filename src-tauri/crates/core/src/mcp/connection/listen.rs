//! Change notifications on a stateless session (protocol 2026-07-28). Without a session there is
//! no standalone stream for a server to announce that its tools, resources or prompts changed;
//! the client opens a `subscriptions/listen` request naming what it wants to hear, and the
//! server answers with notifications on it for as long as it stays open.
//!
//! We listen for the list changes the server's capabilities advertise and turn each into the
//! same [`ServerSignal`] an older session's notification gives, so the supervisor refreshes the
//! catalog the same way for both generations. A subscription that ends while the session lives
//! is opened again, paced by [`Pacer`] so a server that keeps closing it cannot make us spin; a
//! server that refuses the method is left alone.

use std::time::Duration;

use tokio::time::Instant;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::RoleClient;
use rmcp::Peer;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::{Pacer, ServerSignal};
use crate::status::Reason;

/// The first and the longest pause before opening an ended subscription again.
const RELISTEN_FLOOR: Duration = Duration::from_millis(500);
const RELISTEN_MAX: Duration = Duration::from_secs(60);

/// What to listen for: the list changes `capabilities` (the server's, as JSON) advertise.
pub(super) fn wanted(capabilities: &Value) -> Option<SubscriptionFilter> {
    let says = |kind: &str| {
        capabilities
            .pointer(&format!("/{kind}/listChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let mut filter = SubscriptionFilter::builder();
    let mut any = false;
    if says("tools") {
        filter = filter.tools_list_changed();
        any = true;
    }
    if says("resources") {
        filter = filter.resources_list_changed();
        any = true;
    }
    if says("prompts") {
        filter = filter.prompts_list_changed();
        any = true;
    }
    any.then(|| filter.build())
}

/// Listens for `filter` until the session ends (`closed` holds a reason).
pub(super) fn spawn(
    peer: Peer<RoleClient>,
    filter: SubscriptionFilter,
    signals: mpsc::Sender<ServerSignal>,
    mut closed: watch::Receiver<Option<Reason>>,
) {
    tokio::spawn(async move {
        let pacer = Pacer::new(RELISTEN_FLOOR, RELISTEN_MAX);
        loop {
            let wait = pacer.next_wait(Instant::now());
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = ended(&mut closed) => return,
            }
            let opened = tokio::select! {
                r = peer.listen(filter.clone()) => r,
                () = ended(&mut closed) => return,
            };
            let mut subscription = match opened {
                Ok(s) => s,
                Err(e) => {
                    if refused_for_good(&e) {
                        tracing::debug!(error = %e, "the server does not offer subscriptions/listen");
                        return;
                    }
                    tracing::debug!(error = %e, "subscriptions/listen failed; trying again");
                    continue;
                }
            };
            loop {
                let next = tokio::select! {
                    n = subscription.next() => n,
                    () = ended(&mut closed) => {
                        let _ = subscription.cancel().await;
                        return;
                    }
                };
                let signal = match next {
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                        ServerSignal::ToolsChanged
                    }
                    Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => {
                        ServerSignal::ResourcesChanged
                    }
                    Ok(Some(ServerNotification::PromptListChangedNotification(_))) => {
                        ServerSignal::PromptsChanged
                    }
                    Ok(Some(_)) => continue,
                    // Ended (by the server, or the stream broke): open it again, paced.
                    Ok(None) | Err(_) => break,
                };
                pacer.progress();
                if signals.send(signal).await.is_err() {
                    return;
                }
            }
        }
    });
}

/// Resolves when the session has ended (the watch's guard is not held across an await).
async fn ended(closed: &mut watch::Receiver<Option<Reason>>) {
    let _ = closed.wait_for(Option::is_some).await;
}

/// A JSON-RPC error that will not change on retry (unknown method, bad parameters).
fn refused_for_good(e: &rmcp::service::ServiceError) -> bool {
    matches!(e, rmcp::service::ServiceError::McpError(d)
        if d.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND
            || d.code == rmcp::model::ErrorCode::INVALID_PARAMS)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn we_listen_for_what_the_server_advertises_and_nothing_else() {
        let f = wanted(&json!({"tools": {"listChanged": true}, "prompts": {}})).unwrap();
        assert_eq!(f.tools_list_changed, Some(true));
        assert_eq!(f.prompts_list_changed, None);
        assert_eq!(f.resources_list_changed, None);
        assert!(wanted(&json!({"tools": {}})).is_none());
        assert!(wanted(&Value::Null).is_none());
    }
}
