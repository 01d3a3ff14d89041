//! The client as seen from the fake server: what it declared at `initialize`, what it notified,
//! and the requests the server sends *to* it (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) while waiting for its answers.
//!
//! Why the waiting works the way it does: the server is synchronous, and the stdin loop is the
//! only reader, so a worker that sends a request must not read stdin itself. Instead it parks on
//! an `mpsc` channel registered under the request id; the reader thread, on seeing a response
//! (`result` or `error` and no `method`), hands it over with [`Peer::resolve`]. A channel rather
//! than a `Condvar` slot, because `recv_timeout` gives the timeout for free and the same channel
//! carries the cancellation wake-up ([`Peer::cancel_caller`]), so a worker never polls.
//!
//! Invariants:
//! - Request ids are strings `srv-1`, `srv-2`, ... so they cannot collide with the client's ids
//!   (a response's id is matched against the waiting map, never against client requests).
//! - A waiter leaves the map when it is answered or when its worker stops waiting; a late or
//!   unknown response is logged to stderr and dropped, never answered (responses get no reply).
//! - When the server gives up (cancelled or timed out) it tells the client with
//!   `notifications/cancelled`, as the spec asks of the side that abandons a request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::out::elog;
use super::server::{id_key, lock, CancelToken};

/// How long a worker waits for the client's answer before giving up.
pub const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// A JSON-RPC error the client answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

/// How waiting for the client ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    /// The client answered with a result (`Ok`) or a JSON-RPC error (`Err`).
    Answered(Result<Value, RpcError>),
    /// The tool call that sent the request was cancelled by the client.
    Cancelled,
    /// No answer within the timeout.
    TimedOut,
}

/// What the reader thread sends to a parked worker.
enum Wake {
    Answer(Result<Value, RpcError>),
    Cancelled,
}

/// A parked worker: the tool call it serves (for cancellation) and its wake-up channel.
struct Waiter {
    caller: String,
    tx: mpsc::Sender<Wake>,
}

/// Client-facing state. One instance lives in the server; every method is callable from any
/// thread and holds its locks only for map operations.
#[derive(Default)]
pub struct Peer {
    next_request: AtomicU64,
    next_elicitation: AtomicU64,
    waiting: Mutex<HashMap<String, Waiter>>,
    /// `params.capabilities` of the last `initialize` (null before it).
    capabilities: Mutex<Value>,
    roots_changed: AtomicU64,
}

/// Turns a response's `result`/`error` members into the answer a worker sees. A malformed error
/// (no numeric `code` or string `message`) still counts as an error, with what could be read.
pub fn answer_from(result: Option<Value>, error: Option<Value>) -> Result<Value, RpcError> {
    match error {
        Some(e) => Err(RpcError {
            code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: match e.get("message") {
                Some(Value::String(m)) => m.clone(),
                _ => e.to_string(),
            },
        }),
        None => Ok(result.unwrap_or(Value::Null)),
    }
}

impl Peer {
    /// Remembers the client's capabilities from `initialize` params.
    pub fn set_capabilities(&self, capabilities: Option<&Value>) {
        *lock(&self.capabilities) = capabilities.cloned().unwrap_or(Value::Null);
    }

    /// Whether the client declared `capabilities.<name>` (any non-null value, `{}` included).
    pub fn declared(&self, name: &str) -> bool {
        lock(&self.capabilities)
            .get(name)
            .is_some_and(|v| !v.is_null())
    }

    /// Counts one `notifications/roots/list_changed`.
    pub fn note_roots_changed(&self) {
        self.roots_changed.fetch_add(1, Ordering::SeqCst);
    }

    /// How many `notifications/roots/list_changed` the client has sent.
    pub fn roots_changed(&self) -> u64 {
        self.roots_changed.load(Ordering::SeqCst)
    }

    /// A fresh `elicitationId` for URL-mode elicitation, unique across processes too.
    pub fn fresh_elicitation_id(&self) -> String {
        let n = self.next_elicitation.fetch_add(1, Ordering::SeqCst) + 1;
        format!("fake-elicitation-{}-{n}", std::process::id())
    }

    /// Sends `method` to the client on behalf of the tool call `caller` and blocks until the
    /// client answers, the call is cancelled (`token`) or `timeout` passes. `send` writes one
    /// message to the client (normally [`super::out::Out::send`]; a closure so tests can capture it).
    pub fn request(
        &self,
        send: &dyn Fn(&Value),
        token: &CancelToken,
        caller: &str,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Waited {
        let n = self.next_request.fetch_add(1, Ordering::SeqCst) + 1;
        let key = format!("srv-{n}");
        let (tx, rx) = mpsc::channel();
        let waiter = Waiter {
            caller: caller.to_string(),
            tx,
        };
        lock(&self.waiting).insert(key.clone(), waiter);
        // Checked after registering: a cancel that lands before the insert tripped the token
        // first, one that lands after finds the waiter. Either way nothing is lost.
        if token.is_cancelled() {
            lock(&self.waiting).remove(&key);
            return Waited::Cancelled;
        }
        send(&json!({"jsonrpc": "2.0", "id": key, "method": method, "params": params}));
        let waited = match rx.recv_timeout(timeout) {
            Ok(Wake::Answer(answer)) => Waited::Answered(answer),
            // Disconnected cannot happen while the waiter (holding `tx`) is in the map.
            Ok(Wake::Cancelled) | Err(mpsc::RecvTimeoutError::Disconnected) => Waited::Cancelled,
            Err(mpsc::RecvTimeoutError::Timeout) => Waited::TimedOut,
        };
        lock(&self.waiting).remove(&key);
        let reason = match waited {
            Waited::Answered(_) => return waited,
            Waited::Cancelled => "the tool call was cancelled",
            Waited::TimedOut => "timed out waiting for the client",
        };
        send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": key, "reason": reason}}),
        );
        waited
    }

    /// Hands a client response to the worker waiting for `id`. Unknown ids are logged.
    pub fn resolve(&self, id: Option<&Value>, answer: Result<Value, RpcError>) {
        let key = id.map(id_key).unwrap_or_else(|| "null".to_string());
        match lock(&self.waiting).remove(&key) {
            Some(waiter) => {
                let _ = waiter.tx.send(Wake::Answer(answer));
            }
            None => elog!("response to unknown request id {key} dropped"),
        }
    }

    /// Wakes every worker waiting on behalf of the (cancelled) tool call `caller`.
    pub fn cancel_caller(&self, caller: &str) {
        for waiter in lock(&self.waiting).values() {
            if waiter.caller == caller {
                let _ = waiter.tx.send(Wake::Cancelled);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn answers_from_responses() {
        assert_eq!(
            answer_from(Some(json!({"a": 1})), None),
            Ok(json!({"a": 1}))
        );
        assert_eq!(answer_from(None, None), Ok(Value::Null));
        let err = json!({"code": -1, "message": "User rejected"});
        assert_eq!(
            answer_from(Some(json!({})), Some(err)),
            Err(RpcError {
                code: -1,
                message: "User rejected".into()
            })
        );
        let odd = answer_from(None, Some(json!("boom"))).unwrap_err();
        assert_eq!((odd.code, odd.message.as_str()), (0, "\"boom\""));
    }

    #[test]
    fn capabilities_are_declared_by_presence() {
        let peer = Peer::default();
        assert!(!peer.declared("sampling"));
        peer.set_capabilities(Some(&json!({"sampling": {}, "roots": null})));
        assert!(peer.declared("sampling"));
        assert!(!peer.declared("roots"));
        assert!(!peer.declared("elicitation"));
    }

    type Sent = Arc<Mutex<Vec<Value>>>;

    /// Parks a worker on `request` as tool call `7`; what it sends lands in `sent`.
    fn park(
        peer: &Arc<Peer>,
        token: &Arc<CancelToken>,
        sent: &Sent,
        timeout: Duration,
    ) -> std::thread::JoinHandle<Waited> {
        let (peer, token, sent) = (Arc::clone(peer), Arc::clone(token), Arc::clone(sent));
        std::thread::spawn(move || {
            let send = |msg: &Value| lock(&sent).push(msg.clone());
            peer.request(&send, &token, "7", "roots/list", json!({}), timeout)
        })
    }

    fn wait_for_waiter(peer: &Peer) -> String {
        for _ in 0..500 {
            if let Some(key) = lock(&peer.waiting).keys().next() {
                return key.clone();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        panic!("no waiter registered");
    }

    #[test]
    fn resolve_cancel_and_timeout() {
        let peer = Arc::new(Peer::default());
        let token = Arc::new(CancelToken::default());
        let sent: Sent = Arc::default();
        let long = Duration::from_secs(30);

        let worker = park(&peer, &token, &sent, long);
        assert_eq!(wait_for_waiter(&peer), "srv-1");
        peer.resolve(Some(&json!("srv-1")), Ok(json!({"roots": []})));
        assert_eq!(
            worker.join().unwrap(),
            Waited::Answered(Ok(json!({"roots": []})))
        );
        assert_eq!(
            lock(&sent).as_slice(),
            [json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list", "params": {}})]
        );

        let worker = park(&peer, &token, &sent, long);
        assert_eq!(wait_for_waiter(&peer), "srv-2");
        peer.cancel_caller("other");
        peer.cancel_caller("7");
        assert_eq!(worker.join().unwrap(), Waited::Cancelled);
        let last = lock(&sent).last().cloned().unwrap();
        assert_eq!(last["method"], "notifications/cancelled");
        assert_eq!(last["params"]["requestId"], "srv-2");

        let worker = park(&peer, &token, &sent, Duration::from_millis(20));
        assert_eq!(worker.join().unwrap(), Waited::TimedOut);
        assert!(lock(&peer.waiting).is_empty());

        // Cancelled before the request went out: nothing is sent at all.
        token.cancel();
        let before = lock(&sent).len();
        let worker = park(&peer, &token, &sent, long);
        assert_eq!(worker.join().unwrap(), Waited::Cancelled);
        assert_eq!(lock(&sent).len(), before);
    }
}
