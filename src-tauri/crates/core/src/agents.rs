//! Agents (issue 15; issue 26: a feature of its own, out of `host`): agent profiles, the run
//! tree of agents working on tasks, a run's shared state, the tools an agent sees (its scope,
//! tightenings, state tools, delegation and hand-over) and the rules of delegation.
//!
//! [`Agents`] owns the feature's tables (`agent_profiles`, `agent_runs`, `run_state`,
//! `run_notes`, through [`store`]) and gets narrow handles from the host: the store (those
//! tables only), the audit [`Recorder`] and the host's event channel (to announce
//! [`HostEvent::AgentsChanged`] and [`HostEvent::AgentRunChanged`]).
//!
//! What the feature needs of the host is two small traits, both implemented in
//! `host/agents.rs`:
//! - [`AgentHost`]: whether a provider is configured (a profile names one), and running a
//!   delegated task, which composes other features (models, redaction, discovery) and so stays
//!   in the host;
//! - [`BaseTools`]: the host's tools of a conversation, which an agent's [`AgentTools`] cut to
//!   its scope; every call still goes through the governed seam.
//!
//! Shells reach the feature through `host.agents()` and the host's one-line methods
//! (`host.list_agents()`, `host.state_get(..)`, ...).

mod delegation;
mod hand_over;
mod profiles;
mod runs;
mod state;
pub mod store;
mod tools;

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

pub use delegation::{
    open_task, Lineage, Tally, Task, TaskOutcome, DELEGATE_TOOL, MAX_CHILDREN, MAX_DEPTH,
};
pub use hand_over::{
    supervise, HandOver, HandOverSlot, Seat, Supervised, HAND_OVER_TOOL, MAX_HAND_OVERS, TAKE_OVER,
};
pub use profiles::AgentImportReport;
pub use runs::{Live, EVERY};
pub use state::{is_state_tool, state_tool_specs, StateAuthor, STATE_TOOLS};
pub use store::profiles::AgentsImported;
pub use store::runs::{
    AgentRunEnd, AgentRunNode, AgentRunProgress, NewAgentRun, RunTotals, NODE_TASK, NODE_TURN,
};
pub use store::state::{
    check_key, RunStateError, StateEntry, StateKey, StateLimits, StateNote, LIMITS as STATE_LIMITS,
    PERSON,
};
pub use tools::{AgentTools, AsAgent, BaseTools, HandOn};

use crate::agent_data::AgentName;
use crate::approval::audit::Recorder;
use crate::error::HostError;
use crate::events::HostEvent;
use crate::ids::ProviderName;
use crate::store::Store;

/// What the agents feature needs of the host: only these, never the host itself.
#[async_trait::async_trait]
pub trait AgentHost: Send + Sync {
    /// The feature the host holds (an agent's tools reach its run state and audit through it).
    fn agents(&self) -> &Agents;

    /// Whether a provider of that name is configured (a profile must name one).
    async fn provider_exists(&self, name: &ProviderName) -> Result<bool, HostError>;

    /// Runs `agent` on `task` below `lineage` (a delegated task): a turn of its own model with
    /// its scope and budget. The host composes it: the provider comes from `models`, requests
    /// go through redaction's door, the tools may be discovered.
    fn run_task(
        &self,
        lineage: Lineage,
        agent: AgentName,
        task: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<TaskOutcome, HostError>>;
}

/// The agents feature: profiles, run trees, run state.
#[derive(Clone)]
pub struct Agents {
    store: Store,
    audit: Arc<dyn Recorder>,
    events: broadcast::Sender<HostEvent>,
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agents").finish_non_exhaustive()
    }
}

impl Agents {
    /// The feature over the host's handles.
    pub(crate) fn new(
        store: Store,
        audit: Arc<dyn Recorder>,
        events: broadcast::Sender<HostEvent>,
    ) -> Self {
        Self {
            store,
            audit,
            events,
        }
    }
}
