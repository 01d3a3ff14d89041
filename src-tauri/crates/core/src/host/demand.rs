//! Servers start when they are needed (issue 14). Peers that start every configured server at
//! launch pay for it in child processes and start-up time; here an enabled server starts when
//! something needs its tools:
//! - a call ([`Host::run_tool`] starts it and waits for it to settle);
//! - a chat turn, which offers the tools of every enabled server ([`Host::start_for_turn`]);
//! - the catalog opened on it ([`Host::ensure_started`], from the shell).
//!
//! A server the person marks "always on" starts with the app ([`Host::start_always_on`]). Any
//! other stops after [`Host::set_idle_stop`] of no use ([`Host::serve_on_demand`]); a call in
//! flight is use. Until a server starts, the catalog shows the tools it offered when it last ran,
//! marked as last known ([`super::ServerCatalog::last_known_ms`]); they are never offered to a
//! model or called, since what runs may have changed (TD-02 still judges the live catalog).
//!
//! The CLI keeps its behaviour per invocation: each command starts what it uses and stops it at
//! the end, so it neither reads "always on" nor runs the idle stop.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;

use super::{Host, HostError};
use crate::approval::audit::ConfigChange;
use crate::events::HostEvent;
use crate::ids::ServerId;
use crate::supervisor::ServerHandle;

/// The idle time after which a server not kept always on stops, unless the settings say
/// otherwise.
pub const DEFAULT_IDLE_STOP: Duration =
    Duration::from_secs(crate::settings::DEFAULT_IDLE_STOP_SECS);
/// The longest a chat turn waits for the servers it starts.
const TURN_WAIT: Duration = Duration::from_secs(15);

/// The host's part: whether it serves on demand (the app) and the idle time (seconds; 0
/// never stops).
#[derive(Debug)]
pub(super) struct Demand {
    on: AtomicBool,
    idle_stop_secs: AtomicU64,
    /// Wakes the idle stop when the idle time changes.
    changed: std::sync::Arc<tokio::sync::Notify>,
}

impl Default for Demand {
    fn default() -> Self {
        Self {
            on: AtomicBool::new(false),
            idle_stop_secs: AtomicU64::new(DEFAULT_IDLE_STOP.as_secs()),
            changed: std::sync::Arc::default(),
        }
    }
}

impl Host {
    /// Keeps a server running whenever the app runs, or lets it start when needed. Turning it
    /// on starts it (when enabled); turning it off leaves it to the idle stop.
    pub async fn set_always_on(&self, id: &ServerId, on: bool) -> Result<(), HostError> {
        let spec = self.server(id).await?;
        self.inner.store.set_always_on(id, on).await?;
        self.audit_config(
            ConfigChange::ServerUpdated,
            Some(id),
            json!({ "always_on": on }),
        )
        .await;
        let _ = self.inner.events.send(HostEvent::ServersChanged);
        if on && spec.enabled && self.handle(id).is_none() {
            self.start_server(id).await?;
        }
        Ok(())
    }

    /// The servers kept always on.
    pub async fn always_on(&self) -> Result<Vec<ServerId>, HostError> {
        Ok(self.inner.store.always_on().await?)
    }

    /// Starts the enabled servers kept always on, without waiting for any (the app's launch).
    pub async fn start_always_on(&self) -> Result<Vec<ServerHandle>, HostError> {
        let keep = self.always_on().await?;
        let mut out = Vec::new();
        for spec in self.inner.store.list_servers().await? {
            if spec.enabled && keep.contains(&spec.id) {
                out.push(self.start_server(&spec.id).await?);
            }
        }
        Ok(out)
    }

    /// The running server, started first when it is not; waits (up to its start-up time) for
    /// it to settle. A server already supervised is returned as it is, whatever its state.
    pub async fn ensure_started(&self, id: &ServerId) -> Result<ServerHandle, HostError> {
        if let Some(h) = self.handle(id) {
            h.activity().touch();
            return Ok(h);
        }
        let spec = self.server(id).await?;
        let h = self.start_server(id).await?;
        h.activity().touch();
        h.wait_settled(spec.timeouts.init()).await;
        Ok(h)
    }

    /// Serves on demand, as the app does: chat turns start the servers they offer and idle
    /// servers stop after the idle time of the person's settings (a background task for as
    /// long as the host lives). A host that does not (the CLI) starts what each command asks
    /// for.
    pub fn serve_on_demand(&self) {
        self.set_idle_stop(Duration::from_secs(self.settings().settings.idle_stop_secs));
        if !self.inner.servers.demand.on.swap(true, Ordering::AcqRel) {
            self.spawn_idle_stop();
        }
    }

    /// Starts every enabled server that is not running, for a chat turn that offers their
    /// tools, and waits (at most [`TURN_WAIT`]) for them to settle. One that does not come up
    /// in time is left out of this turn and keeps starting. Only when serving on demand.
    pub async fn start_for_turn(&self) -> Result<(), HostError> {
        if !self.inner.servers.demand.on.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut started = Vec::new();
        for spec in self.inner.store.list_servers().await? {
            match self.handle(&spec.id) {
                Some(h) => h.activity().touch(),
                None if spec.enabled => started.push(self.start_server(&spec.id).await?),
                None => {}
            }
        }
        futures::future::join_all(started.iter().map(|h| {
            h.activity().touch();
            h.wait_settled(TURN_WAIT)
        }))
        .await;
        Ok(())
    }

    /// Sets how long a server that is not always on may sit unused before it stops; zero keeps
    /// servers running.
    pub fn set_idle_stop(&self, idle: Duration) {
        self.inner
            .servers
            .demand
            .idle_stop_secs
            .store(idle.as_secs(), Ordering::Relaxed);
        self.inner.servers.demand.changed.notify_waiters();
    }

    /// The idle time now in force.
    pub fn idle_stop(&self) -> Duration {
        Duration::from_secs(
            self.inner
                .servers
                .demand
                .idle_stop_secs
                .load(Ordering::Relaxed),
        )
    }

    /// Stops, once, every running server that is not always on and has been idle for the idle
    /// time. Returns the servers stopped.
    pub async fn stop_idle(&self) -> Result<Vec<ServerId>, HostError> {
        let idle = self.idle_stop();
        if idle.is_zero() {
            return Ok(Vec::new());
        }
        let keep = self.always_on().await?;
        let quiet: Vec<ServerId> = self
            .inner
            .servers()
            .values()
            .filter(|h| !keep.contains(h.id()))
            .filter(|h| h.activity().idle_for().is_some_and(|d| d >= idle))
            .map(|h| h.id().clone())
            .collect();
        for id in &quiet {
            tracing::info!(server = %id, idle_secs = idle.as_secs(), "stopping an idle server");
            self.stop_server(id).await?;
        }
        Ok(quiet)
    }

    /// Runs [`Host::stop_idle`] in the background, checking a few times per idle period, for
    /// as long as the host lives.
    fn spawn_idle_stop(&self) {
        let inner = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                let Some(host) = inner.upgrade().map(|inner| Host { inner }) else {
                    break;
                };
                let idle = host.idle_stop();
                let tick = if idle.is_zero() {
                    Duration::from_secs(30)
                } else {
                    (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30))
                };
                if let Err(e) = host.stop_idle().await {
                    tracing::warn!(error = %e, "could not stop idle servers");
                }
                let changed = host.inner.servers.demand.changed.clone();
                drop(host);
                tokio::select! {
                    () = tokio::time::sleep(tick) => {}
                    () = changed.notified() => {}
                }
            }
        });
    }

    /// Keeps the tools a running server offers, for the catalog to show once it stops.
    pub(super) async fn remember_tools(&self, id: &ServerId, tools: &[crate::catalog::ToolInfo]) {
        let now = crate::clock::now_ms();
        if let Err(e) = self.inner.store.save_last_tools(id, tools, now).await {
            tracing::warn!(server = %id, error = %e, "could not keep the server's tool list");
        }
    }
}
