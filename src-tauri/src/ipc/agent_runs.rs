//! The run trees of agents (issue 15, point 4) for the chat view: every run that worked for a
//! conversation, each with its nodes (who worked on what, on which model, at what cost, how it
//! ended) and its total. The window redraws on `HostChanged { kind: agent_runs }`, so the tree
//! is live while it runs. Grouping and totals are the core's (`RunTotals`); this only converts.
//! Counts travel as JSON numbers (`f64`): TypeScript has no 64-bit integers, and no token count
//! or timestamp comes near 2^53.

use serde::Serialize;
use specta::Type;
use switchboard_core::agents::{AgentRunNode, RunTotals};
use switchboard_core::host::Host;
use tauri::State;

use super::conversations::conversation_id;
use super::{logged, IpcError};

/// One agent working on one task.
#[derive(Clone, Debug, PartialEq, Serialize, Type)]
pub struct AgentRunNodeDto {
    /// Its id.
    pub node: String,
    /// The node that delegated to it; `null` for the run's root.
    pub parent: Option<String>,
    /// The agent.
    pub agent: String,
    /// The task it was given.
    pub task: String,
    /// Its provider.
    pub provider: String,
    /// Its model.
    pub model: String,
    /// `running`, `done`, `failed`, `cancelled`, `over_budget`, `step_limit` or `interrupted`.
    pub status: String,
    /// Why it stopped, when not `done`.
    pub reason: Option<String>,
    /// Input tokens of its own model calls.
    pub usage_input: f64,
    /// Output tokens.
    pub usage_output: f64,
    /// Estimated dollars; `null` when its model's price is unknown.
    pub cost_usd: Option<f64>,
    /// Tool calls its model asked for.
    pub tool_calls: u32,
    /// Started, ms since the epoch.
    pub started_ms: f64,
    /// Ended; `null` while running.
    pub ended_ms: Option<f64>,
}

impl From<AgentRunNode> for AgentRunNodeDto {
    fn from(n: AgentRunNode) -> Self {
        Self {
            node: n.node,
            parent: n.parent,
            agent: n.agent,
            task: n.task,
            provider: n.provider,
            model: n.model,
            status: n.status,
            reason: n.reason,
            usage_input: n.usage_input as f64,
            usage_output: n.usage_output as f64,
            cost_usd: n.cost_usd,
            tool_calls: n.tool_calls,
            started_ms: n.started_ms as f64,
            ended_ms: n.ended_ms.map(|m| m as f64),
        }
    }
}

/// What a run (or one agent in it) spent in all.
#[derive(Clone, Debug, PartialEq, Serialize, Type)]
pub struct RunTotalsDto {
    /// Nodes counted.
    pub nodes: u32,
    /// Input tokens.
    pub usage_input: f64,
    /// Output tokens.
    pub usage_output: f64,
    /// Estimated dollars of the nodes whose price is known.
    pub cost_usd: f64,
    /// Some node's price is unknown: the dollars are a lower bound.
    pub cost_partial: bool,
    /// Tool calls.
    pub tool_calls: u32,
}

impl From<RunTotals> for RunTotalsDto {
    fn from(t: RunTotals) -> Self {
        Self {
            nodes: t.nodes,
            usage_input: t.usage_input as f64,
            usage_output: t.usage_output as f64,
            cost_usd: t.cost_usd,
            cost_partial: t.cost_partial,
            tool_calls: t.tool_calls,
        }
    }
}

/// One agent's share of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Type)]
pub struct AgentTotalsDto {
    /// The agent.
    pub agent: String,
    /// What its nodes spent.
    pub total: RunTotalsDto,
}

/// One run tree: its nodes in the order they started (the root first), and its totals.
#[derive(Clone, Debug, PartialEq, Serialize, Type)]
pub struct AgentRunDto {
    /// The run's id.
    pub run: String,
    /// Its nodes.
    pub nodes: Vec<AgentRunNodeDto>,
    /// What the whole run spent.
    pub total: RunTotalsDto,
    /// The same per agent, agents by name.
    pub per_agent: Vec<AgentTotalsDto>,
}

/// Groups nodes by run, keeping the order runs and nodes started in.
pub fn group_runs(nodes: Vec<AgentRunNode>) -> Vec<AgentRunDto> {
    let mut runs: Vec<(String, Vec<AgentRunNode>)> = Vec::new();
    for n in nodes {
        match runs.iter_mut().find(|(run, _)| *run == n.run) {
            Some((_, list)) => list.push(n),
            None => runs.push((n.run.clone(), vec![n])),
        }
    }
    runs.into_iter()
        .map(|(run, nodes)| AgentRunDto {
            total: RunTotals::of(&nodes).into(),
            per_agent: RunTotals::per_agent(&nodes)
                .into_iter()
                .map(|(agent, t)| AgentTotalsDto {
                    agent,
                    total: t.into(),
                })
                .collect(),
            run,
            nodes: nodes.into_iter().map(Into::into).collect(),
        })
        .collect()
}

/// Every run of agents that worked for `conversation`, oldest first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(conversation = %logged(&conversation)))]
pub async fn conversation_agent_runs(
    host: State<'_, Host>,
    conversation: String,
) -> Result<Vec<AgentRunDto>, IpcError> {
    let id = conversation_id(&conversation)?;
    Ok(group_runs(host.conversation_agent_runs(&id).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(
        id: &str,
        run: &str,
        parent: Option<&str>,
        agent: &str,
        cost: Option<f64>,
    ) -> AgentRunNode {
        AgentRunNode {
            node: id.into(),
            run: run.into(),
            parent: parent.map(Into::into),
            conversation: "c".into(),
            agent: agent.into(),
            task: format!("task of {id}"),
            provider: "p".into(),
            model: "m".into(),
            status: "done".into(),
            reason: None,
            usage_input: 10,
            usage_output: 5,
            cost_usd: cost,
            tool_calls: 2,
            started_ms: 1,
            ended_ms: Some(2),
        }
    }

    #[test]
    fn nodes_are_grouped_by_run_in_order_with_totals_per_run_and_agent() {
        let runs = group_runs(vec![
            node("a", "r1", None, "planner", Some(0.5)),
            node("b", "r2", None, "planner", Some(1.0)),
            node("c", "r1", Some("a"), "worker", None),
            node("d", "r1", Some("a"), "worker", Some(0.25)),
        ]);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].run, "r1");
        let ids: Vec<&str> = runs[0].nodes.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(ids, ["a", "c", "d"]);
        assert_eq!(runs[0].total.nodes, 3);
        assert_eq!(runs[0].total.tool_calls, 6);
        assert_eq!(runs[0].total.usage_input, 30.0);
        assert_eq!(runs[0].total.cost_usd, 0.75);
        assert!(runs[0].total.cost_partial);
        assert_eq!(runs[0].per_agent.len(), 2);
        assert_eq!(runs[0].per_agent[1].agent, "worker");
        assert_eq!(runs[0].per_agent[1].total.nodes, 2);
        assert_eq!(runs[1].nodes.len(), 1);
        assert!(!runs[1].total.cost_partial);
    }
}
