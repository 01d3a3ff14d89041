//! The wrappers one seat of a turn runs through (the plain model's, or one agent's between
//! hand-overs), composed in one place: [`Host::seat`] wraps the provider and owns the runners,
//! [`Seated::runner`] stacks the runners that borrow them.
//!
//! Outside in, the provider is redaction's door (what leaves for a cloud model is redacted,
//! compaction's summary request too; issue 16). The runner is: restoring (the model's
//! placeholders put back in its calls, issue 16) over discovery (a search over the catalog and
//! the tools loaded instead of every tool, issue 16) over the agent's tools (scope, tightenings,
//! delegation and hand-over, issue 15) over the host's tools (every call through
//! `Host::run_tool`). Each layer is there only when it applies.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::super::HostTools;
use super::super::{Host, HostError};
use crate::agent_data::AgentProfile;
use crate::agents::{supervise, HandOver, Lineage, Seat, Supervised};
use crate::chat::{ChatEvent, ToolRunner};
use crate::ids::{ConversationId, ProviderName};
use crate::llm::Provider;
use crate::models::ProviderView;
use crate::outbound::{Restoring, Session};

/// The provider that answers a seat: its name, the model, the client and its view.
pub(in crate::host) struct Answering {
    pub(in crate::host) name: ProviderName,
    pub(in crate::host) model: String,
    pub(in crate::host) provider: Box<dyn Provider>,
    pub(in crate::host) view: ProviderView,
}

/// Where a seat sits in the turn: who answers, under which run-tree node, after whom.
pub(super) struct Place<'a> {
    /// The agent answering; `None` for the plain model.
    pub(super) agent: Option<&'a AgentProfile>,
    /// The message's run (with the node that handed over as `parent_node`, if one did).
    pub(super) lineage: &'a Lineage,
    /// The hand-over that gave this agent the turn.
    pub(super) from: Option<&'a HandOver>,
    /// Hand-overs so far in this turn.
    pub(super) hand_overs: usize,
}

/// A seat's provider behind its door and the runners it owns.
pub(super) struct Seated {
    pub(super) name: ProviderName,
    pub(super) model: String,
    /// The provider behind redaction's door, when redaction applies.
    pub(super) provider: Box<dyn Provider>,
    pub(super) view: ProviderView,
    /// The redaction session of this seat, when redaction applies.
    pub(super) redaction: Option<Arc<Session>>,
    /// The host's tools of the conversation.
    tools: Arc<HostTools>,
    /// The agent's turn, when an agent answers.
    pub(super) supervised: Option<Supervised>,
}

/// A seat's runner, every wrapper that applies stacked.
pub(super) struct Layers<'a> {
    pub(super) runner: Box<dyn ToolRunner + 'a>,
    /// Whether progressive discovery is one of the layers (the system prompt says so).
    pub(super) discovers: bool,
}

impl Host {
    /// Wraps `answering`'s provider and loads the runners the seat at `place` owns.
    pub(super) async fn seat(
        &self,
        answering: Answering,
        place: &Place<'_>,
        conversation: &ConversationId,
        task: &str,
        events: &mpsc::UnboundedSender<ChatEvent>,
    ) -> Result<Seated, HostError> {
        let Answering {
            name,
            model,
            provider,
            view,
        } = answering;
        let (provider, redaction) =
            self.inner
                .features
                .redaction
                .redacting(provider, &view, conversation, events);
        let tools = HostTools::load(self, conversation).await?;
        let supervised = match place.agent {
            Some(p) => Some(
                supervise(
                    self,
                    p,
                    Seat {
                        lineage: place.lineage,
                        task,
                        model: &model,
                        profile_id: provider.profile_id(),
                        from: place.from,
                        hand_overs: place.hand_overs,
                    },
                    tools.clone(),
                )
                .await?,
            ),
            None => None,
        };
        Ok(Seated {
            name,
            model,
            provider,
            view,
            redaction,
            tools,
            supervised,
        })
    }
}

impl Seated {
    /// The runners stacked over the agent's tools, or the host's without an agent.
    pub(super) async fn runner<'a>(
        &'a self,
        host: &Host,
        conversation: &ConversationId,
        agent: Option<&AgentProfile>,
    ) -> Result<Layers<'a>, HostError> {
        let base: &'a dyn ToolRunner = match &self.supervised {
            Some(s) => &s.tools,
            None => self.tools.as_ref(),
        };
        let mut runner: Box<dyn ToolRunner + 'a> = Box::new(base);
        let discovering = host.discovering(conversation, agent, base).await?;
        let discovers = discovering.is_some();
        if let Some(d) = discovering {
            runner = Box::new(d);
        }
        if let Some(r) = self.redaction.clone() {
            runner = Box::new(Restoring::new(runner, r));
        }
        Ok(Layers { runner, discovers })
    }
}
