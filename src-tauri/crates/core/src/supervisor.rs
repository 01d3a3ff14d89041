//! One supervisor task per server (RL-05, RL-06, RL-07).
//!
//! The task owns the server's [`Connection`] and is the only place that changes the server's
//! lifecycle. Everyone else holds a [`ServerHandle`]: a cheap clone that reads the published
//! status, catalog and current connection (`watch` channels) and sends commands. Requests do not
//! go through the task: callers clone the `Arc<Connection>` out of the watch and await on it, so
//! a slow call never blocks the supervisor or other calls.
//!
//! Lifecycle: `Starting` -> `Running`; on an unexpected end -> `Backoff` (0.5 s doubling to 30 s,
//! ±20 % jitter) -> `Starting` ...; five ends within two minutes trip the crash-loop breaker ->
//! `Failed` with the stderr tail, until a manual restart. A launch that cannot work without the
//! user (untrusted or changed launch spec, executable not found) does not retry at all.
//! The last catalog is kept while the server restarts, so a brief crash does not make its tools
//! vanish from the UI.

pub mod activity;

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use tracing::Instrument;

use crate::catalog::{Catalog, CatalogSnapshot};
use crate::escape::ServerText;
use crate::events::HostEvent;
use crate::ids::ServerId;
use crate::mcp::connection::{ConnectOptions, Connection, Endpoint, Lifecycle, ServerSignal};
use crate::mcp::requests::ServerRequests;
use crate::mcp::McpError;
use crate::schema::ArgValidator;
use crate::server_logs::ServerLogs;

// The status types live in the leaf `status`, which `events` shares; re-exported here so the
// shells' paths stay.
pub use crate::status::{Reason, ServerStatus};

/// Why a launch could not produce an endpoint.
#[derive(Debug, Clone)]
pub enum LaunchError {
    /// The user must approve the launch spec first. No retry.
    NeedsTrust(String),
    /// It cannot work until the configuration or the machine changes. No retry.
    Fatal(String),
    /// It may work on a later attempt.
    Transient(String),
}

/// Produces a fresh endpoint for each start: re-resolves the executable, re-checks trust and
/// reads secrets, so a change on disk is seen at the next restart (SP-03).
pub type Launcher = Arc<
    dyn Fn() -> Pin<Box<dyn Future<Output = Result<Endpoint, LaunchError>> + Send>> + Send + Sync,
>;

/// Tunables; tests shorten them.
#[derive(Clone, Debug)]
pub struct SupervisorConfig {
    /// The first backoff delay.
    pub backoff_initial: Duration,
    /// The longest backoff delay.
    pub backoff_max: Duration,
    /// Ends within `crash_window` that trip the breaker.
    pub crash_limit: usize,
    /// The window for counting ends.
    pub crash_window: Duration,
    /// How long to wait after a `list_changed` before refreshing, to coalesce storms.
    pub debounce: Duration,
    /// Handshake limit.
    pub init_timeout: Duration,
    /// Per-request limit.
    pub request_timeout: Duration,
    /// A start that fails before the server has ever run is not retried: the server goes
    /// straight to `Failed` with its stderr tail. One-shot commands set this, so a server that
    /// crashes at start costs one try, not five tries and their backoff.
    pub one_try: bool,
    /// How long each phase of stopping a local server waits (after the end of its input,
    /// after SIGTERM) before the next, harder step.
    pub stop_grace: Duration,
    /// The shortest re-fetch interval a list's caching hint (`ttlMs`) can ask of us: a server
    /// saying "1 ms" must not turn into polling.
    pub min_list_ttl: Duration,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self {
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            crash_limit: 5,
            crash_window: Duration::from_secs(120),
            debounce: Duration::from_millis(250),
            init_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            one_try: false,
            stop_grace: crate::server_process::STOP_GRACE,
            min_list_ttl: Duration::from_secs(10),
        }
    }
}

enum Command {
    /// Start afresh; the sender is answered once the new attempt has begun.
    Restart(oneshot::Sender<()>),
    Stop(oneshot::Sender<()>),
}

/// A handle to a supervised server. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ServerHandle {
    id: ServerId,
    status: watch::Receiver<ServerStatus>,
    conn: watch::Receiver<Option<Arc<Connection>>>,
    catalog: watch::Receiver<CatalogSnapshot>,
    commands: mpsc::Sender<Command>,
    logs: ServerLogs,
    activity: Arc<self::activity::Activity>,
}

impl ServerHandle {
    /// When it was last used, and whether a call is in flight.
    pub fn activity(&self) -> &Arc<self::activity::Activity> {
        &self.activity
    }

    /// The server.
    pub fn id(&self) -> &ServerId {
        &self.id
    }

    /// Its current status.
    pub fn status(&self) -> ServerStatus {
        self.status.borrow().clone()
    }

    /// A receiver that sees every status change.
    pub fn watch_status(&self) -> watch::Receiver<ServerStatus> {
        self.status.clone()
    }

    /// The last catalog listed (kept while restarting).
    pub fn catalog(&self) -> CatalogSnapshot {
        self.catalog.borrow().clone()
    }

    /// A receiver that sees every catalog change.
    pub fn watch_catalog(&self) -> watch::Receiver<CatalogSnapshot> {
        self.catalog.clone()
    }

    /// Its logs.
    pub fn logs(&self) -> &ServerLogs {
        &self.logs
    }

    /// The live connection, or why there is none.
    pub(crate) fn connection(&self) -> Result<Arc<Connection>, McpError> {
        match &*self.conn.borrow() {
            Some(c) if !c.is_closed() => Ok(c.clone()),
            // The supervisor has not processed the end yet; say what is really happening.
            Some(_) => Err(McpError::NotRunning {
                server: self.id.clone(),
                status: "its connection just closed; it is restarting".into(),
            }),
            None => Err(McpError::NotRunning {
                server: self.id.clone(),
                status: self.status().to_string(),
            }),
        }
    }

    /// Waits until the server is running, or has settled in a state that will not become
    /// running on its own (needs trust, failed, stopped), or `timeout` passes.
    pub async fn wait_settled(&self, timeout: Duration) -> ServerStatus {
        let mut rx = self.status.clone();
        let settle = async {
            loop {
                let s = rx.borrow_and_update().clone();
                match s {
                    ServerStatus::Running { .. }
                    | ServerStatus::NeedsTrust { .. }
                    | ServerStatus::Failed { .. }
                    | ServerStatus::Stopped => return s,
                    _ => {}
                }
                if rx.changed().await.is_err() {
                    return self.status();
                }
            }
        };
        tokio::time::timeout(timeout, settle)
            .await
            .unwrap_or_else(|_| self.status())
    }

    /// Asks for a fresh start now (also clears a tripped breaker or a backoff wait). Returns
    /// once the new attempt has begun, so a following [`ServerHandle::wait_settled`] sees its
    /// outcome rather than the old state.
    pub async fn restart(&self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Restart(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Stops the server and waits until its process tree is gone.
    pub async fn stop(&self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Stop(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}

struct Supervisor {
    id: ServerId,
    launcher: Launcher,
    config: SupervisorConfig,
    status: watch::Sender<ServerStatus>,
    conn: watch::Sender<Option<Arc<Connection>>>,
    catalog: watch::Sender<CatalogSnapshot>,
    commands: mpsc::Receiver<Command>,
    events: broadcast::Sender<HostEvent>,
    logs: ServerLogs,
    ends: VecDeque<Instant>,
    attempt: u32,
    restart_ack: Option<oneshot::Sender<()>>,
    /// Whether any start has reached `Running` (see [`SupervisorConfig::one_try`]).
    ever_running: bool,
    /// Answers the server's own requests on every connection; `None` declares no capabilities.
    requests: Option<Arc<dyn ServerRequests>>,
    /// How sessions start: the probe with fallback, until a server answers the probe with
    /// nonsense; then `initialize` alone for as long as this supervisor runs.
    lifecycle: Lifecycle,
}

/// Starts supervising a server: the task begins connecting at once.
pub fn spawn(
    id: ServerId,
    launcher: Launcher,
    config: SupervisorConfig,
    logs: ServerLogs,
    events: broadcast::Sender<HostEvent>,
    last_catalog: Option<CatalogSnapshot>,
    requests: Option<Arc<dyn ServerRequests>>,
) -> ServerHandle {
    let (status_tx, status) = watch::channel(ServerStatus::Starting { attempt: 1 });
    let (conn_tx, conn) = watch::channel(None);
    let (catalog_tx, catalog) = watch::channel(last_catalog.unwrap_or_default());
    let (cmd_tx, commands) = mpsc::channel(8);
    let sup = Supervisor {
        id: id.clone(),
        launcher,
        config,
        status: status_tx,
        conn: conn_tx,
        catalog: catalog_tx,
        commands,
        events,
        logs: logs.clone(),
        ends: VecDeque::new(),
        attempt: 0,
        restart_ack: None,
        ever_running: false,
        requests,
        lifecycle: Lifecycle::Auto,
    };
    let span = tracing::info_span!("server", server = %id);
    tokio::spawn(sup.run().instrument(span));
    ServerHandle {
        id,
        status,
        conn,
        catalog,
        commands: cmd_tx,
        logs,
        activity: Arc::default(),
    }
}

/// What ended a phase of the supervisor loop.
enum Next {
    /// Start again after a backoff.
    Retry(Reason),
    /// Start again now.
    RestartNow,
    /// Wait for the user.
    Park,
    /// Leave the loop.
    Exit,
}

impl Supervisor {
    fn set_status(&self, s: ServerStatus) {
        tracing::info!(status = %ServerText(&s.to_string()), "server status");
        let _ = self.events.send(HostEvent::ServerStatus {
            server: self.id.clone(),
            status: s.clone(),
        });
        self.status.send_replace(s);
    }

    async fn run(mut self) {
        let mut next = self.start().await;
        loop {
            next = match next {
                Next::Exit => break,
                Next::RestartNow => {
                    self.ends.clear();
                    self.attempt = 0;
                    self.start().await
                }
                Next::Retry(why) => self.backoff(why).await,
                Next::Park => {
                    let cmd = self.commands.recv().await;
                    self.on_command_while_down(cmd)
                }
            };
        }
        self.logs.persist();
    }

    async fn start(&mut self) -> Next {
        self.attempt += 1;
        self.set_status(ServerStatus::Starting {
            attempt: self.attempt,
        });
        if let Some(ack) = self.restart_ack.take() {
            let _ = ack.send(());
        }
        let endpoint = match (self.launcher)().await {
            Ok(e) => e,
            Err(LaunchError::NeedsTrust(detail)) => {
                self.set_status(ServerStatus::NeedsTrust {
                    reason: Reason::NeedsApproval { detail },
                });
                return Next::Park;
            }
            Err(LaunchError::Fatal(detail)) => {
                self.logs.note(&format!("could not start: {detail}"));
                self.set_status(ServerStatus::Failed {
                    reason: Reason::CannotStart { detail },
                    stderr_tail: self.logs.stderr_tail(20),
                });
                return Next::Park;
            }
            Err(LaunchError::Transient(detail)) => {
                return self.not_started(Reason::CannotStart { detail }).await
            }
        };
        let (sig_tx, mut signals) = mpsc::channel(64);
        let connect = Connection::connect(
            endpoint,
            self.logs.clone(),
            ConnectOptions {
                init_timeout: self.config.init_timeout,
                request_timeout: self.config.request_timeout,
                signals: sig_tx,
                requests: self.requests.clone(),
                lifecycle: self.lifecycle,
            },
        );
        // A stop or restart during the handshake wins over waiting for it.
        let conn = tokio::select! {
            r = connect => r,
            cmd = self.commands.recv() => return self.on_command_while_down(cmd),
        };
        let conn = match conn {
            Ok(c) => Arc::new(c),
            // A local server that answered the `server/discover` probe with something else
            // cannot be asked again in the same process: the next one starts with `initialize`.
            Err(McpError::Protocol(why)) if self.lifecycle == Lifecycle::Auto => {
                self.logs.note(&format!(
                    "the server did not answer server/discover as a 2026-07-28 server ({why}); \
                     starting it again with initialize"
                ));
                self.lifecycle = Lifecycle::Initialize;
                return Next::RestartNow;
            }
            Err(e) => return self.not_started(e.reason()).await,
        };
        if let Err(e) = self.refresh(&conn, true, true, true).await {
            // A server that cannot even list its tools is as good as down.
            conn.shutdown().await;
            return self
                .not_started(Reason::CatalogFailed {
                    detail: e.to_string(),
                })
                .await;
        }
        self.conn.send_replace(Some(conn.clone()));
        self.logs.persist_peer(conn.info());
        self.publish_running(&conn).await;
        self.attempt = 0;
        self.ever_running = true;
        self.serve(conn, &mut signals).await
    }

    /// A start failed before the server ran: retry, or under `one_try` (if it never ran) give
    /// up at once with the stderr tail.
    async fn not_started(&mut self, why: Reason) -> Next {
        if !self.config.one_try || self.ever_running {
            return Next::Retry(why);
        }
        // The stderr drain may still be reading a dying process's last lines.
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.logs.note(&format!("could not start: {why}"));
        self.set_status(ServerStatus::Failed {
            reason: Reason::DidNotStart {
                last: Box::new(why),
            },
            stderr_tail: self.logs.stderr_tail(20),
        });
        self.logs.persist();
        Next::Park
    }

    fn on_command_while_down(&mut self, cmd: Option<Command>) -> Next {
        match cmd {
            Some(Command::Restart(ack)) => {
                self.restart_ack = Some(ack);
                Next::RestartNow
            }
            Some(Command::Stop(ack)) => {
                self.set_status(ServerStatus::Stopped);
                let _ = ack.send(());
                Next::Park
            }
            None => Next::Exit,
        }
    }

    async fn publish_running(&self, conn: &Connection) {
        self.set_status(ServerStatus::Running {
            pid: conn.pid().await,
            peer: conn.info().clone(),
            tools: self.catalog.borrow().tools.len(),
        });
    }

    /// Runs while connected: debounced catalog refreshes, notifications, commands, and the end.
    async fn serve(
        &mut self,
        conn: Arc<Connection>,
        signals: &mut mpsc::Receiver<ServerSignal>,
    ) -> Next {
        let mut due: Option<Instant> = None;
        let (mut tools, mut resources, mut prompts) = (false, false, false);
        let mut stale = stale_lists(&conn, self.config.min_list_ttl);
        loop {
            let sleep_until = due.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            let stale_at = stale.map_or(sleep_until, |(at, _)| at);
            tokio::select! {
                why = conn.closed() => {
                    self.conn.send_replace(None);
                    let exit = conn.shutdown().await;
                    let why = why.with_exit(exit.clone());
                    let exit = exit.map(|e| format!("; the process {e}")).unwrap_or_default();
                    self.logs.note(&format!("server ended: {why}{exit}"));
                    self.logs.persist();
                    return Next::Retry(why);
                }
                cmd = self.commands.recv() => {
                    self.conn.send_replace(None);
                    conn.shutdown().await;
                    self.logs.persist();
                    return self.on_command_while_down(cmd);
                }
                Some(sig) = signals.recv() => match sig {
                    ServerSignal::ToolsChanged => { tools = true; due.get_or_insert(Instant::now() + self.config.debounce); }
                    ServerSignal::ResourcesChanged => { resources = true; due.get_or_insert(Instant::now() + self.config.debounce); }
                    ServerSignal::PromptsChanged => { prompts = true; due.get_or_insert(Instant::now() + self.config.debounce); }
                    ServerSignal::Log { level, logger, data } => {
                        // Redacted like the trace: a server logging its own token must not
                        // put it on screen (SE-06).
                        let message = self.logs.redact(&match &data {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        });
                        let _ = self.events.send(HostEvent::ServerLog {
                            server: self.id.clone(), level, logger, message,
                        });
                    }
                },
                // A list whose caching hint ran out is fetched again (2026-07-28 `ttlMs`).
                _ = tokio::time::sleep_until(stale_at), if stale.is_some() => {
                    if let Some((_, (t, r, p))) = stale.take() {
                        tools |= t;
                        resources |= r;
                        prompts |= p;
                    }
                    due.get_or_insert(Instant::now());
                }
                _ = tokio::time::sleep_until(sleep_until), if due.is_some() => {
                    due = None;
                    let (t, r, p) = (std::mem::take(&mut tools), std::mem::take(&mut resources), std::mem::take(&mut prompts));
                    if let Err(e) = self.refresh(&conn, t, r, p).await {
                        self.logs.note(&format!("refreshing the catalog after list_changed failed: {e}"));
                    }
                    stale = stale_lists(&conn, self.config.min_list_ttl);
                    self.publish_running(&conn).await;
                }
            }
        }
    }

    /// Re-lists the parts of the catalog that changed. The new catalog is published whole.
    async fn refresh(
        &self,
        conn: &Connection,
        tools: bool,
        resources: bool,
        prompts: bool,
    ) -> Result<(), McpError> {
        let caps = conn.info().capabilities;
        let mut next: Catalog = (*self.catalog.borrow().clone()).clone();
        next.instructions = conn.instructions().map(str::to_owned);
        if tools {
            let listed = if caps.tools {
                conn.list_tools().await?
            } else {
                Vec::new()
            };
            next.tools = Vec::with_capacity(listed.len());
            next.excluded_tools.clear();
            next.validators.0.clear();
            for t in listed {
                // TD-04: an oversize definition is left out, with the reason shown like a
                // schema that does not compile.
                if let Some(f) = crate::hygiene::oversize(&t).first() {
                    let why = f.describe();
                    tracing::warn!(tool = %ServerText(&t.name), error = %ServerText(&why), "tool excluded");
                    self.logs
                        .note(&format!("tool {:?} excluded: {why}", t.name));
                    next.excluded_tools.push((t.name, why));
                    continue;
                }
                match ArgValidator::compile(&t.input_schema) {
                    Ok(v) => {
                        next.validators.0.insert(t.name.clone(), v);
                        next.tools.push(t);
                    }
                    Err(e) => {
                        tracing::warn!(
                            tool = %ServerText(&t.name),
                            error = %ServerText(&e.to_string()),
                            "tool excluded"
                        );
                        self.logs.note(&format!("tool {:?} excluded: {e}", t.name));
                        next.excluded_tools.push((t.name, e.to_string()));
                    }
                }
            }
        }
        if resources {
            if caps.resources {
                next.resources = conn.list_resources().await?;
                // Templates are optional even for servers with resources.
                next.resource_templates = conn.list_resource_templates().await.unwrap_or_default();
            } else {
                next.resources.clear();
                next.resource_templates.clear();
            }
        }
        if prompts {
            next.prompts = if caps.prompts {
                conn.list_prompts().await?
            } else {
                Vec::new()
            };
        }
        self.catalog.send_replace(Arc::new(next));
        let _ = self.events.send(HostEvent::CatalogChanged {
            server: self.id.clone(),
        });
        Ok(())
    }

    /// After an unexpected end: trip the breaker or wait and retry.
    async fn backoff(&mut self, why: Reason) -> Next {
        let now = Instant::now();
        self.ends.push_back(now);
        while self
            .ends
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.config.crash_window)
        {
            self.ends.pop_front();
        }
        tracing::warn!(error = %why, kind = why.kind(), attempt = self.attempt, "server ended");
        // Credentials or an approval: retrying cannot help until the person acts.
        if why.needs_person() {
            self.set_status(ServerStatus::Failed {
                reason: why,
                stderr_tail: self.logs.stderr_tail(20),
            });
            self.logs.persist();
            return Next::Park;
        }
        if self.ends.len() >= self.config.crash_limit {
            self.set_status(ServerStatus::Failed {
                reason: Reason::CrashLoop {
                    ends: self.ends.len() as u32,
                    window_secs: self.config.crash_window.as_secs(),
                    last: Box::new(why),
                },
                stderr_tail: self.logs.stderr_tail(20),
            });
            self.logs.persist();
            return Next::Park;
        }
        let delay = backoff_delay(&self.config, self.attempt);
        self.set_status(ServerStatus::Backoff {
            attempt: self.attempt,
            retry_at_ms: crate::clock::now_ms() + delay.as_millis() as i64,
            last_error: why,
        });
        tokio::select! {
            _ = tokio::time::sleep(delay) => self.start().await,
            cmd = self.commands.recv() => self.on_command_while_down(cmd),
        }
    }
}

/// Exponential backoff with ±20 % jitter: initial * 2^(attempt-1), capped.
pub fn backoff_delay(config: &SupervisorConfig, attempt: u32) -> Duration {
    let exp = config
        .backoff_initial
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let base = exp.min(config.backoff_max);
    let jitter = rand::rng().random_range(0.8..1.2);
    base.mul_f64(jitter).min(config.backoff_max)
}

/// When the soonest list with a caching hint goes stale, and which lists go stale then
/// (tools, resources, prompts). Lists without a hint, or with `ttlMs: 0`, are fetched again only
/// when the server announces a change.
fn stale_lists(conn: &Connection, floor: Duration) -> Option<(Instant, (bool, bool, bool))> {
    let ttl = |method| conn.list_ttl(method).filter(|t| !t.is_zero());
    let lists = [
        ttl("tools/list"),
        [ttl("resources/list"), ttl("resources/templates/list")]
            .into_iter()
            .flatten()
            .min(),
        ttl("prompts/list"),
    ];
    let soonest = (*lists.iter().flatten().min()?).max(floor);
    let due = |t: &Option<Duration>| t.is_some_and(|t| t.max(floor) <= soonest);
    Some((
        Instant::now() + soonest,
        (due(&lists[0]), due(&lists[1]), due(&lists[2])),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::PeerInfo;

    #[test]
    fn a_running_status_counts_its_tools_in_words_that_agree() {
        let running = |tools| ServerStatus::Running {
            pid: None,
            peer: PeerInfo {
                protocol_version: "2025-11-25".into(),
                server_name: "s".into(),
                server_version: "1".into(),
                capabilities: Default::default(),
            },
            tools,
        };
        assert_eq!(
            running(1).to_string(),
            "running, 1 tool, protocol 2025-11-25"
        );
        assert_eq!(
            running(0).to_string(),
            "running, 0 tools, protocol 2025-11-25"
        );
        assert_eq!(
            running(17).to_string(),
            "running, 17 tools, protocol 2025-11-25"
        );
    }

    #[test]
    fn backoff_grows_and_caps() {
        let c = SupervisorConfig::default();
        let d1 = backoff_delay(&c, 1);
        assert!(
            d1 >= Duration::from_millis(400) && d1 <= Duration::from_millis(600),
            "{d1:?}"
        );
        let d3 = backoff_delay(&c, 3);
        assert!(
            d3 >= Duration::from_millis(1600) && d3 <= Duration::from_millis(2400),
            "{d3:?}"
        );
        for a in [10, 20, 40, 1000] {
            assert!(backoff_delay(&c, a) <= c.backoff_max);
        }
    }
}
