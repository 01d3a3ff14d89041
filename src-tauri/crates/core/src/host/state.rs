//! The host's own state, in three parts with one owner each, so `Inner` reads as what the
//! composition root holds: the store, the secret store, the event channel, the audit writer,
//! these three parts and the features (issue 26), grouped in one field.
//!
//! - [`HostEnv`]: the machine as the [`HostBuilder`](super::HostBuilder) described it (PATHs,
//!   login shell, environment, supervisor tunables, browser, whether MCP Apps render). Nothing
//!   below the host reads these from the process.
//! - [`ServerState`]: server control: the started servers' handles, per-server switched-off
//!   tools, sign-in authorizers, and when idle servers stop.
//! - [`SeamState`]: the governed seam's: call ids, pins, pending approvals and questions, the
//!   rate gates for server requests, the policy lock, flows (AP-04), MCP App frames and runs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::{app_calls, demand, pins, requests, runs};
use crate::approval::questions::PendingQuestions;
use crate::approval::PendingApprovals;
use crate::config::launch::SearchPath;
use crate::ids::{ConversationId, ServerId};
use crate::oauth::Authorizer;
use crate::supervisor::{ServerHandle, SupervisorConfig};

/// The machine as the builder described it.
pub(super) struct HostEnv {
    /// The host's PATH and the login shell's, probed once when first needed.
    pub(super) search: OnceCell<SearchPath>,
    /// The host's PATH alone (no probe), tried first by `trust::resolve`.
    pub(super) host_search: SearchPath,
    /// The shell `search` is probed with (`None`: `$SHELL`).
    pub(super) login_shell: Option<PathBuf>,
    /// Supervisor tunables.
    pub(super) supervisor: SupervisorConfig,
    /// The environment stdio children may inherit allowlisted variables from.
    pub(super) host_env: Vec<(String, String)>,
    /// The program that opens URLs, when not the system browser.
    pub(super) browser: Option<PathBuf>,
    /// Whether servers are told this host renders MCP Apps ([`super::HostBuilder::apps`]).
    pub(super) apps: bool,
}

/// Server control's state.
#[derive(Default)]
pub(super) struct ServerState {
    /// One handle per started server; the guard is never held across an `.await`.
    pub(super) handles: Mutex<BTreeMap<ServerId, ServerHandle>>,
    /// The tools the person switched off, per server.
    pub(super) disabled: Mutex<HashMap<ServerId, Arc<HashSet<String>>>>,
    /// Each signed-in server's authorizer, shared by its connections (one refresh at a time).
    pub(super) signins: Mutex<HashMap<ServerId, Authorizer>>,
    /// When idle servers stop (servers start when needed).
    pub(super) demand: demand::Demand,
}

/// The governed seam's state.
pub(super) struct SeamState {
    /// The next call id the seam mints.
    pub(super) next_call: AtomicU64,
    /// Each server's catalog assessed against its pin (TD-02), by catalog snapshot.
    pub(super) pins: pins::PinGate,
    /// Requests waiting for the person's answer.
    pub(super) approvals: PendingApprovals,
    /// What servers ask the person, and results held for review.
    pub(super) questions: PendingQuestions,
    /// Sampling requests run per server (AP-08 rate limit).
    pub(super) sampling: requests::RequestGate,
    /// Elicitations per server: a few waiting at once, a limit per hour (RL-12).
    pub(super) elicitations: requests::RequestGate,
    /// Held while a call is decided and, when a rule allows it, counted.
    pub(super) policy_lock: tokio::sync::Mutex<()>,
    /// What each conversation's finished calls brought in this run (AP-04), ahead of the store.
    pub(super) flows: Mutex<HashMap<ConversationId, crate::approval::Flow>>,
    /// The MCP App frames shells opened, and the app each holds (AP-10).
    pub(super) app_frames: app_calls::AppFrames,
    /// Runs a shell can stop, by the ids the host minted.
    pub(super) runs: runs::Runs,
}

impl SeamState {
    /// A seam with nothing pending, announcing approvals and questions on `events`.
    pub(super) fn new(events: &tokio::sync::broadcast::Sender<crate::events::HostEvent>) -> Self {
        Self {
            next_call: AtomicU64::new(1),
            pins: pins::PinGate::default(),
            approvals: PendingApprovals::new(events.clone()),
            questions: PendingQuestions::new(events.clone()),
            sampling: requests::RequestGate::sampling(),
            elicitations: requests::RequestGate::elicitation(),
            policy_lock: tokio::sync::Mutex::new(()),
            flows: Mutex::default(),
            app_frames: app_calls::AppFrames::default(),
            runs: runs::Runs::default(),
        }
    }
}

/// The features the host composes (issue 26): each owns its state and its store tables, and
/// reaches the host only through the narrow handles it was given.
pub(super) struct Features {
    /// Metrics (`crate::metrics`): the seam records each request there.
    pub(super) metrics: Arc<crate::metrics::Metrics>,
    /// Models (`crate::models`): providers, their keys and models.
    pub(super) models: crate::models::Models,
    /// Redaction (`crate::redaction`): settings, doors, each turn's record.
    pub(super) redaction: crate::redaction::Redaction,
    /// Skills (`crate::skills`): the person's approvals of servers' skills.
    pub(super) skills: crate::skills::Skills,
    /// Pipelines (`crate::pipelines`): stored definitions and their runs.
    pub(super) pipelines: crate::pipelines::Pipelines,
    /// Agents (`crate::agents`): profiles, run trees, run state.
    pub(super) agents: crate::agents::Agents,
    /// Progressive discovery (`crate::discovery`): the per-conversation switch.
    pub(super) discovery: crate::discovery::Discovery,
}
