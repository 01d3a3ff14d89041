//! The reader task of the legacy transport: it owns the event stream, forwards messages,
//! fails the waiting requests when the stream drops, and reopens it (paced, with our
//! handshake replayed on the new session), or ends the session on a fatal reason.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures::StreamExt;
use rmcp::model::ServerJsonRpcMessage;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::stream::{endpoint, open, too_large, Events, OpenError};
use super::transport::{lock, Post, Shared};
use crate::mcp::connection::http::{Pacer, RECONNECT_FLOOR, RECONNECT_MAX};
use crate::mcp::connection::wire::refused_answer;
use crate::mcp::connection::CloseReason;
use crate::mcp::McpError;
use crate::server_logs::Direction;
use crate::status::Reason;

/// How pumping a stream ended.
enum End {
    /// Our side is gone (the session ended).
    Gone,
    /// The stream dropped; reconnect.
    Dropped(String),
    /// End the session with this reason.
    Fatal(Reason),
    /// The answer that was awaited came.
    Answered,
}

/// Forwards the stream's messages until it ends, or until the answer to `awaited` comes.
async fn pump(
    shared: &Shared,
    events: &mut Events,
    tx: &mpsc::Sender<ServerJsonRpcMessage>,
    pacer: &Pacer,
    awaited: Option<&str>,
) -> End {
    while let Some(item) = events.next().await {
        let sse = match item {
            Ok(sse) => sse,
            Err(e) if too_large(&e) => {
                return End::Fatal(Reason::MessageTooLarge {
                    cap: shared.cap as u64,
                })
            }
            Err(e) => return End::Dropped(e.to_string()),
        };
        match sse.event.as_deref() {
            None | Some("message") => {}
            Some(other) => {
                let kind: String = other.chars().take(40).collect();
                shared
                    .logs
                    .note(&format!("skipped an SSE event of kind {kind:?}"));
                continue;
            }
        }
        let Some(data) = sse.data.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        let id = crate::mcp::recover::response_id(data.as_bytes()).map(|v| v.to_string());
        match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
            Ok(msg) => {
                pacer.progress();
                if let Some(id) = &id {
                    if awaited == Some(id.as_str()) {
                        return End::Answered;
                    }
                    lock(&shared.pending).remove(id);
                }
                shared.logs.record(Direction::In, &data);
                if tx.send(msg).await.is_err() {
                    return End::Gone;
                }
            }
            Err(e) => {
                let shown: String = data.chars().take(200).collect();
                shared.logs.note(&format!(
                    "skipped an SSE event that is not a JSON-RPC message ({e}): {shown}"
                ));
                // The request it answered fails now, not at its timeout.
                if let Some(refusal) = refused_answer(data.as_bytes(), &e) {
                    if let Some(id) = &id {
                        lock(&shared.pending).remove(id);
                    }
                    if tx.send(refusal).await.is_err() {
                        return End::Gone;
                    }
                }
            }
        }
    }
    End::Dropped("the server ended it".into())
}

/// The reader task: pumps the stream, reconnects when it drops, ends the session on a fatal
/// reason (recorded first, then the channel closes).
pub(super) async fn read(
    shared: Arc<Shared>,
    mut events: Events,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    reason: CloseReason,
    stop: CancellationToken,
) {
    let pacer = Pacer::new(RECONNECT_FLOOR, RECONNECT_MAX);
    // The first GET has been made.
    pacer.next_wait(Instant::now());
    let fatal = |why: Reason| {
        shared.logs.note(&format!("the SSE session ends: {why}"));
        shared.post.send_replace(Post::Closed);
        lock(&reason).get_or_insert(why);
    };
    loop {
        let end = tokio::select! {
            _ = stop.cancelled() => End::Gone,
            end = pump(&shared, &mut events, &tx, &pacer, None) => end,
        };
        let detail = match end {
            End::Gone | End::Answered => break,
            End::Fatal(why) => return fatal(why),
            End::Dropped(detail) => detail,
        };
        shared.post.send_replace(Post::Waiting);
        shared
            .logs
            .note(&format!("the SSE stream dropped ({detail}); reconnecting"));
        shared.fail_pending(&tx, &detail).await;
        events = loop {
            let wait = pacer.next_wait(Instant::now());
            let again = tokio::select! {
                _ = stop.cancelled() => None,
                _ = tx.closed() => None,
                r = async {
                    tokio::time::sleep(wait).await;
                    reconnect(&shared, &tx, &pacer).await
                } => Some(r),
            };
            match again {
                None => {
                    shared.post.send_replace(Post::Closed);
                    return;
                }
                Some(Ok(events)) => break events,
                Some(Err(End::Fatal(why))) => return fatal(why),
                Some(Err(End::Dropped(detail))) => shared
                    .logs
                    .note(&format!("reconnecting the SSE stream failed: {detail}")),
                Some(Err(_)) => {
                    shared.post.send_replace(Post::Closed);
                    return;
                }
            }
        };
        shared.logs.note("the SSE stream is back");
    }
    shared.post.send_replace(Post::Closed);
}

/// Opens a new stream, reads its endpoint, and replays our handshake on the new session.
async fn reconnect(
    shared: &Shared,
    tx: &mpsc::Sender<ServerJsonRpcMessage>,
    pacer: &Pacer,
) -> Result<Events, End> {
    let deadline = Instant::now() + shared.wait;
    let mut events = open(
        &shared.client,
        &shared.sse,
        &shared.headers,
        shared.cap,
        shared.wait,
    )
    .await
    .map_err(|e| match e {
        OpenError::NotLegacy(detail) => End::Dropped(detail),
        OpenError::Refused(McpError::AuthRequired(c)) => End::Fatal(Reason::AuthRequired(c)),
        OpenError::Refused(other) => End::Fatal(Reason::Other {
            detail: other.to_string(),
        }),
    })?;
    let url = endpoint(&mut events, &shared.sse, deadline, shared.wait)
        .await
        .map_err(|e| match e {
            McpError::Disconnected(why @ Reason::MessageTooLarge { .. }) => End::Fatal(why),
            McpError::Protocol(detail) => End::Fatal(Reason::Other { detail }),
            other => End::Dropped(other.to_string()),
        })?;
    let init = lock(&shared.init).clone();
    if let Some(params) = init {
        let n = shared.reconnects.fetch_add(1, Ordering::Relaxed) + 1;
        let id = Value::from(format!("switchboard-reconnect-{n}"));
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        let dropped = |e: std::io::Error| End::Dropped(format!("replaying the handshake: {e}"));
        shared
            .post_to(&url, request.to_string())
            .await
            .map_err(dropped)?;
        let awaited = id.to_string();
        let answered = tokio::time::timeout(
            shared.wait,
            pump(shared, &mut events, tx, pacer, Some(&awaited)),
        )
        .await;
        match answered {
            Ok(End::Answered) => {}
            Ok(End::Dropped(d)) => return Err(End::Dropped(d)),
            Ok(other) => return Err(other),
            Err(_) => return Err(End::Dropped("the replayed handshake got no answer".into())),
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        shared
            .post_to(&url, initialized.to_string())
            .await
            .map_err(dropped)?;
    }
    shared.post.send_replace(Post::Ready(url));
    Ok(events)
}
