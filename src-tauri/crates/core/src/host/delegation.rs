//! Delegation as the host composes it (issue 15, point 2): a delegated task runs as a child
//! turn of the agents feature ([`crate::agents`]: its node, its tools, its budget) on the
//! provider `models` gives it, behind redaction's door, with progressive discovery when its
//! profile asks for it. The composition of those features stays here; the rules of delegation
//! (depth, children, cycles) are the agents feature's.

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Host, HostError, HostTools};
use crate::agent_data::AgentName;
use crate::agents::{open_task, Lineage, Live, Task, TaskOutcome};
use crate::chat::cap::Outputs;
use crate::chat::run_turn;
use crate::llm::{limits, Message};

impl Host {
    /// Runs `agent` on `task` below `lineage`: a turn of its own model with its scope and
    /// budget, on a transcript holding just the task. Boxed: a task may delegate, which runs
    /// this again.
    pub fn run_agent_task<'a>(
        &'a self,
        lineage: Lineage,
        agent: AgentName,
        task: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TaskOutcome, HostError>> {
        Box::pin(async move {
            let profile = self.agent(&agent).await?;
            let models = &self.inner.features.models;
            let (provider, view) = models.provider(&profile.provider).await?;
            let model = profile
                .model
                .clone()
                .or(view.model.clone())
                .ok_or_else(|| HostError::Provider {
                    name: profile.provider.to_string(),
                    reason: format!("agent {agent} names no model and the provider has no default"),
                })?;
            // As a chat turn does: servers that start when needed come up before the agent's
            // tools are read (a no-op where the host does not serve on demand, as in the CLI).
            self.start_for_turn().await?;
            let inner = HostTools::load(self, &lineage.conversation).await?;
            let price = limits::price(provider.profile_id(), &model);
            let Task {
                node,
                tools,
                mut cfg,
            } = open_task(self, &lineage, &profile, &task, &model, price, inner).await?;
            let mut transcript = vec![Message::user_text(&task)];
            let (tx, mut rx) = mpsc::unbounded_channel();
            // A child's requests are redacted like the conversation's (issue 16): it may run on
            // a cloud model even when its parent does not.
            let (provider, redaction) = self.inner.features.redaction.redacting(
                provider,
                &view,
                &lineage.conversation,
                &tx,
            );
            // An agent with progressive discovery on searches its scope and loads what it
            // needs (issue 16); a child starts with nothing loaded: its transcript is its task.
            let discovering = profile
                .discovery
                .then(|| crate::discovery::Discovering::new(&tools, &[]));
            if discovering.is_some() {
                cfg.system = cfg
                    .system
                    .map(|s| crate::discovery::with_discovery_prompt(&s));
            }
            let runner: &dyn crate::chat::ToolRunner = match &discovering {
                Some(d) => d,
                None => &tools,
            };
            let restoring = redaction
                .clone()
                .map(|r| crate::outbound::Restoring::new(runner, r));
            let runner: &dyn crate::chat::ToolRunner = match &restoring {
                Some(r) => r,
                None => runner,
            };
            // The node is kept up to date as the turn goes. The channel outlives the turn (the
            // redacting provider holds a sender), so the turn's end, not the channel's, ends it.
            let live = Live::new(
                &self.inner.features.agents,
                &lineage,
                Some(node.clone()),
                cfg.budget.price,
            );
            let mut outputs = Outputs::default();
            let turn = run_turn(
                provider.as_ref(),
                runner,
                &mut outputs,
                &cfg,
                &mut transcript,
                cancel,
                tx,
            );
            let (end, tally) = live.follow(turn, &mut rx).await;
            drop(restoring);
            drop(discovering);
            self.inner
                .features
                .redaction
                .audit_redaction(
                    redaction.as_ref(),
                    &lineage.conversation,
                    provider.profile_id(),
                )
                .await;
            self.inner
                .features
                .agents
                .close_task(&lineage, node, agent, end, &tally, &cfg.budget, &transcript)
                .await
        })
    }
}
