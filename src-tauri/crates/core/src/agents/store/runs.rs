//! The run tree of agents (issue 15, point 4; migration 0016): a row per agent working on a
//! task, started when its turn starts and finished when it ends, so the app and `switchboard
//! agent runs` can show who did what, on which model, at what cost, live while it runs.

use serde::Serialize;

use crate::clock::now_ms;
use crate::ids::RunId;
use crate::store::{Store, StoreError};

pub use live::{AgentRunProgress, NODE_TASK, NODE_TURN};

/// A node starting: who works on what, for whom.
#[derive(Clone, Debug, PartialEq)]
pub struct NewAgentRun {
    /// This node's id.
    pub node: String,
    /// The run (the tree) it belongs to.
    pub run: RunId,
    /// The node that delegated to it; `None` for the root.
    pub parent: Option<String>,
    /// The conversation its calls belong to.
    pub conversation: String,
    /// The agent.
    pub agent: String,
    /// The task it was given.
    pub task: String,
    /// Its provider.
    pub provider: String,
    /// Its model.
    pub model: String,
    /// [`NODE_TURN`] (an agent answering in a conversation: its model calls are stored as the
    /// conversation's messages) or [`NODE_TASK`] (a task: its calls are stored only here).
    pub kind: &'static str,
}

/// How a node ended and what it spent.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentRunEnd {
    /// `done`, `failed`, `cancelled`, `over_budget` or `step_limit`.
    pub status: &'static str,
    /// Why, for anything but `done`.
    pub reason: Option<String>,
    /// Input tokens of its own model calls.
    pub usage_input: u64,
    /// Output tokens.
    pub usage_output: u64,
    /// Estimated dollars; `None` when its model's price is unknown.
    pub cost_usd: Option<f64>,
    /// Tool calls its model asked for (delegations and state tools included).
    pub tool_calls: u32,
}

/// One node of a run tree, as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentRunNode {
    /// Its id.
    pub node: String,
    /// The run.
    pub run: String,
    /// The node that delegated to it.
    pub parent: Option<String>,
    /// The conversation.
    pub conversation: String,
    /// The agent.
    pub agent: String,
    /// Its task.
    pub task: String,
    /// Its provider.
    pub provider: String,
    /// Its model.
    pub model: String,
    /// `running` until it ends.
    pub status: String,
    /// Why it stopped, when not `done`.
    pub reason: Option<String>,
    /// Input tokens.
    pub usage_input: u64,
    /// Output tokens.
    pub usage_output: u64,
    /// Estimated dollars.
    pub cost_usd: Option<f64>,
    /// Tool calls.
    pub tool_calls: u32,
    /// Started, ms since the epoch.
    pub started_ms: i64,
    /// Ended; `None` while running.
    pub ended_ms: Option<i64>,
}

/// What a run (or any set of nodes) spent in all: the total the app and the CLI show under a
/// tree, and the same per agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunTotals {
    /// Nodes counted.
    pub nodes: u32,
    /// Input tokens.
    pub usage_input: u64,
    /// Output tokens.
    pub usage_output: u64,
    /// Estimated dollars of the nodes whose price is known.
    pub cost_usd: f64,
    /// Whether some node's price is unknown (the dollars are then a lower bound).
    pub cost_partial: bool,
    /// Tool calls.
    pub tool_calls: u32,
}

impl RunTotals {
    /// The totals of `nodes`.
    pub fn of<'a>(nodes: impl IntoIterator<Item = &'a AgentRunNode>) -> Self {
        let mut t = Self::default();
        for n in nodes {
            t.nodes += 1;
            t.usage_input += n.usage_input;
            t.usage_output += n.usage_output;
            match n.cost_usd {
                Some(c) => t.cost_usd += c,
                None => t.cost_partial = true,
            }
            t.tool_calls = t.tool_calls.saturating_add(n.tool_calls);
        }
        t
    }

    /// The totals per agent, agents by name.
    pub fn per_agent(nodes: &[AgentRunNode]) -> Vec<(String, Self)> {
        let mut agents: Vec<&str> = nodes.iter().map(|n| n.agent.as_str()).collect();
        agents.sort_unstable();
        agents.dedup();
        agents
            .into_iter()
            .map(|a| {
                (
                    a.to_owned(),
                    Self::of(nodes.iter().filter(|n| n.agent == a)),
                )
            })
            .collect()
    }
}

type NodeRow = (
    String,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    Option<f64>,
    i64,
    i64,
    Option<i64>,
);

fn node(r: NodeRow) -> AgentRunNode {
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    AgentRunNode {
        node: r.0,
        run: r.1,
        parent: r.2,
        conversation: r.3,
        agent: r.4,
        task: r.5,
        provider: r.6,
        model: r.7,
        status: r.8,
        reason: r.9,
        usage_input: count(r.10),
        usage_output: count(r.11),
        cost_usd: r.12,
        tool_calls: u32::try_from(r.13).unwrap_or(0),
        started_ms: r.14,
        ended_ms: r.15,
    }
}

/// The columns of a node, in `NodeRow`'s order (a macro: sqlx takes only static SQL text).
macro_rules! columns {
    () => {
        "node, run, parent, conversation, agent, task, provider, model, status, reason, \
         usage_input, usage_output, cost_usd, tool_calls, started_ms, ended_ms"
    };
}

// After the macro: the progress and per-kind queries use it.
mod live;

impl Store {
    /// Records a node that starts now (status `running`).
    pub async fn start_agent_run(&self, n: &NewAgentRun) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO agent_runs (node, run, parent, conversation, agent, task, provider,
             model, kind, status, started_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
        )
        .bind(&n.node)
        .bind(n.run.as_str())
        .bind(&n.parent)
        .bind(&n.conversation)
        .bind(&n.agent)
        .bind(&n.task)
        .bind(&n.provider)
        .bind(&n.model)
        .bind(n.kind)
        .bind(now_ms())
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Finishes a node with how it ended and what it spent.
    pub async fn finish_agent_run(&self, node: &str, end: &AgentRunEnd) -> Result<(), StoreError> {
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        sqlx::query(
            "UPDATE agent_runs SET status = ?, reason = ?, usage_input = ?, usage_output = ?,
             cost_usd = ?, tool_calls = ?, ended_ms = ? WHERE node = ?",
        )
        .bind(end.status)
        .bind(&end.reason)
        .bind(as_i64(end.usage_input))
        .bind(as_i64(end.usage_output))
        .bind(end.cost_usd)
        .bind(i64::from(end.tool_calls))
        .bind(now_ms())
        .bind(node)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Marks the nodes a previous process left `running` as `interrupted` (it died with them);
    /// returns how many. Call once at start, in the process that runs agents.
    pub async fn mark_agent_runs_interrupted(&self) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "UPDATE agent_runs SET status = 'interrupted',
             reason = 'Switchboard stopped while it ran', ended_ms = ?
             WHERE status = 'running'",
        )
        .bind(now_ms())
        .execute(self.writer())
        .await?;
        Ok(done.rows_affected())
    }

    /// Every node of `run`, in the order they started.
    pub async fn agent_run_tree(&self, run: &RunId) -> Result<Vec<AgentRunNode>, StoreError> {
        let rows: Vec<NodeRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM agent_runs WHERE run = ? ORDER BY started_ms, rowid"
        ))
        .bind(run.as_str())
        .fetch_all(self.reader())
        .await?;
        Ok(rows.into_iter().map(node).collect())
    }

    /// Every node of every run working for `conversation`, runs in the order they started,
    /// nodes of one run in the order they started.
    pub async fn agent_runs_of_conversation(
        &self,
        conversation: &str,
    ) -> Result<Vec<AgentRunNode>, StoreError> {
        let rows: Vec<NodeRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM agent_runs WHERE conversation = ? ORDER BY started_ms, rowid"
        ))
        .bind(conversation)
        .fetch_all(self.reader())
        .await?;
        Ok(rows.into_iter().map(node).collect())
    }

    /// The newest runs' roots (at most `limit`), newest first.
    pub async fn agent_run_roots(&self, limit: u32) -> Result<Vec<AgentRunNode>, StoreError> {
        let rows: Vec<NodeRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM agent_runs WHERE parent IS NULL ORDER BY started_ms DESC, rowid DESC LIMIT ?"
        ))
        .bind(i64::from(limit))
        .fetch_all(self.reader())
        .await?;
        Ok(rows.into_iter().map(node).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_node_is_started_finished_listed_and_cut_off_ones_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        let run = RunId::random();
        let new = |node: &str, parent: Option<&str>| NewAgentRun {
            node: node.into(),
            run: run.clone(),
            parent: parent.map(Into::into),
            conversation: "c".into(),
            agent: node.into(),
            task: "t".into(),
            provider: "p".into(),
            model: "m".into(),
            kind: NODE_TASK,
        };
        store.start_agent_run(&new("root", None)).await.unwrap();
        store
            .start_agent_run(&new("kid", Some("root")))
            .await
            .unwrap();
        let end = AgentRunEnd {
            status: "done",
            reason: None,
            usage_input: 10,
            usage_output: 5,
            cost_usd: Some(0.25),
            tool_calls: 2,
        };
        store.finish_agent_run("kid", &end).await.unwrap();
        let tree = store.agent_run_tree(&run).await.unwrap();
        assert_eq!(tree.len(), 2);
        assert_eq!(
            (tree[0].status.as_str(), tree[1].status.as_str()),
            ("running", "done")
        );
        assert_eq!((tree[1].usage_input, tree[1].tool_calls), (10, 2));
        assert_eq!(tree[1].cost_usd, Some(0.25));
        assert_eq!(store.agent_run_roots(5).await.unwrap()[0].node, "root");
        // A running node is unfinished work for the sweep to find (host::runners).
        assert!(store.has_unfinished().await.unwrap());
        assert_eq!(store.mark_agent_runs_interrupted().await.unwrap(), 1);
        let tree = store.agent_run_tree(&run).await.unwrap();
        assert_eq!(tree[0].status, "interrupted");
        assert!(tree[0].ended_ms.is_some());
        assert!(!store.has_unfinished().await.unwrap());
    }
}
