//! The run tree as the feature keeps it (issue 15, point 4): a node per agent working on a
//! task, opened when its turn starts, kept up to date while it runs and closed when it ends,
//! each change announced as [`HostEvent::AgentRunChanged`]. A delegated task's node is a
//! [`NODE_TASK`]: its model calls are stored nowhere else, so a conversation's cost adds them
//! to its messages'; a conversation turn's node ([`Agents::start_node`]) is a [`NODE_TURN`],
//! already counted through the messages.

mod live;

pub use live::{Live, EVERY};

use super::delegation::{Lineage, Tally};
use super::{AgentRunEnd, AgentRunNode, Agents, NewAgentRun, NODE_TURN};
use crate::agent_data::AgentProfile;
use crate::chat::{TurnBudget, TurnEnd};
use crate::error::HostError;
use crate::events::HostEvent;
use crate::ids::{ConversationId, RunId};

#[cfg(doc)]
use super::NODE_TASK;

impl Agents {
    /// Opens the node of `profile` answering in the conversation below `lineage` (the person's
    /// message `task`, with `model`; a [`NODE_TURN`]) and announces it.
    pub async fn start_node(
        &self,
        lineage: &Lineage,
        profile: &AgentProfile,
        task: &str,
        model: &str,
    ) -> Result<String, HostError> {
        self.open_node(lineage, profile, task, model, NODE_TURN)
            .await
    }

    /// Opens `profile`'s node of `kind` below `lineage` (working on `task` with `model`) and
    /// announces it.
    pub(crate) async fn open_node(
        &self,
        lineage: &Lineage,
        profile: &AgentProfile,
        task: &str,
        model: &str,
        kind: &'static str,
    ) -> Result<String, HostError> {
        let node = format!("node-{}", hex::encode(rand::random::<[u8; 8]>()));
        self.store
            .start_agent_run(&NewAgentRun {
                node: node.clone(),
                run: lineage.run.clone(),
                parent: lineage.parent_node.clone(),
                conversation: lineage.conversation.to_string(),
                agent: profile.name.to_string(),
                task: task.to_owned(),
                provider: profile.provider.to_string(),
                model: model.to_owned(),
                kind,
            })
            .await?;
        self.run_changed(&lineage.run, &lineage.conversation);
        Ok(node)
    }

    /// Closes `node` (of `lineage`'s run) with how its turn ended and what it spent.
    pub async fn finish_node(
        &self,
        lineage: &Lineage,
        node: &str,
        end: &TurnEnd,
        tally: &Tally,
        budget: &TurnBudget,
    ) -> Result<(), HostError> {
        let (status, reason) = match end {
            TurnEnd::Done(_) => ("done", None),
            TurnEnd::Failed(e) => ("failed", Some(e.clone())),
            TurnEnd::Cancelled => ("cancelled", None),
            TurnEnd::BudgetExceeded(why) => ("over_budget", Some(why.clone())),
            TurnEnd::StepLimit => ("step_limit", None),
        };
        let usage = &tally.usage;
        let cost_usd = budget
            .price
            .map(|p| p.cost(usage.input_tokens, usage.output_tokens));
        self.store
            .finish_agent_run(
                node,
                &AgentRunEnd {
                    status,
                    reason,
                    usage_input: usage.input_tokens,
                    usage_output: usage.output_tokens,
                    cost_usd,
                    tool_calls: tally.calls,
                },
            )
            .await?;
        self.run_changed(&lineage.run, &lineage.conversation);
        Ok(())
    }

    /// Tells the shells a node of `run` (working for `conversation`) started, progressed or
    /// ended.
    pub(crate) fn run_changed(&self, run: &RunId, conversation: &ConversationId) {
        let _ = self.events.send(HostEvent::AgentRunChanged {
            run: run.to_string(),
            conversation: conversation.clone(),
        });
    }

    /// Every node of every run that worked for `conversation` (runs and their nodes in the
    /// order they started).
    pub async fn conversation_runs(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<AgentRunNode>, HostError> {
        Ok(self
            .store
            .agent_runs_of_conversation(conversation.as_str())
            .await?)
    }

    /// The task nodes that worked for `conversation`: what it spent beyond its messages.
    pub async fn task_runs(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<AgentRunNode>, HostError> {
        Ok(self
            .store
            .task_runs_of_conversation(conversation.as_str())
            .await?)
    }

    /// Every node of a run tree, in the order they started (the root first).
    pub async fn run_tree(&self, run: &RunId) -> Result<Vec<AgentRunNode>, HostError> {
        Ok(self.store.agent_run_tree(run).await?)
    }

    /// The newest runs' roots, newest first.
    pub async fn run_roots(&self, limit: u32) -> Result<Vec<AgentRunNode>, HostError> {
        Ok(self.store.agent_run_roots(limit).await?)
    }

    /// Marks the nodes a previous process left running as interrupted; returns how many.
    pub(crate) async fn mark_interrupted(&self) -> Result<u64, HostError> {
        Ok(self.store.mark_agent_runs_interrupted().await?)
    }
}
