//! A node's spend while it runs, and the nodes whose spend a conversation's messages do not
//! hold (issue 15, points 4 and 5; migration 0020).
//!
//! Progress is written over a running node only (`WHERE status = 'running'`): a late write
//! racing the node's end can never turn a finished node back, or replace its final numbers
//! with older ones.

use super::{node, AgentRunNode, NodeRow};
use crate::store::{Store, StoreError};

/// A node answering the person in a conversation: its model calls are the conversation's
/// stored messages (the root of a message's run, or an agent the conversation was handed to).
pub const NODE_TURN: &str = "turn";
/// A node working on a task (delegated to it, or started directly): its model calls are
/// stored only in its row.
pub const NODE_TASK: &str = "task";

/// What a running node has spent so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AgentRunProgress {
    /// Input tokens of its own model calls so far.
    pub usage_input: u64,
    /// Output tokens so far.
    pub usage_output: u64,
    /// Estimated dollars so far; `None` when its model's price is unknown.
    pub cost_usd: Option<f64>,
    /// Tool calls its model asked for so far.
    pub tool_calls: u32,
}

impl Store {
    /// Writes what running `node` has spent so far; returns whether it was still running (a
    /// finished node is left as it is).
    pub async fn agent_run_progress(
        &self,
        node: &str,
        p: &AgentRunProgress,
    ) -> Result<bool, StoreError> {
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let done = sqlx::query(
            "UPDATE agent_runs SET usage_input = ?, usage_output = ?, cost_usd = ?,
             tool_calls = ? WHERE node = ? AND status = 'running'",
        )
        .bind(as_i64(p.usage_input))
        .bind(as_i64(p.usage_output))
        .bind(p.cost_usd)
        .bind(i64::from(p.tool_calls))
        .bind(node)
        .execute(self.writer())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The task nodes ([`NODE_TASK`]) that worked for `conversation`, in the order they
    /// started: what it spent beyond its stored messages.
    pub async fn task_runs_of_conversation(
        &self,
        conversation: &str,
    ) -> Result<Vec<AgentRunNode>, StoreError> {
        let rows: Vec<NodeRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM agent_runs WHERE conversation = ? AND kind = 'task' ORDER BY started_ms, rowid"
        ))
        .bind(conversation)
        .fetch_all(self.reader())
        .await?;
        Ok(rows.into_iter().map(node).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AgentRunEnd, NewAgentRun};
    use super::*;
    use crate::ids::RunId;

    #[tokio::test]
    async fn progress_shows_on_a_running_node_only_and_tasks_are_told_from_turns() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
        let run = RunId::random();
        let new = |node: &str, parent: Option<&str>, kind| NewAgentRun {
            node: node.into(),
            run: run.clone(),
            parent: parent.map(Into::into),
            conversation: "c".into(),
            agent: node.into(),
            task: "t".into(),
            provider: "p".into(),
            model: "m".into(),
            kind,
        };
        store
            .start_agent_run(&new("root", None, NODE_TURN))
            .await
            .unwrap();
        store
            .start_agent_run(&new("kid", Some("root"), NODE_TASK))
            .await
            .unwrap();
        let so_far = AgentRunProgress {
            usage_input: 7,
            usage_output: 3,
            cost_usd: Some(0.5),
            tool_calls: 1,
        };
        assert!(store.agent_run_progress("kid", &so_far).await.unwrap());
        let tree = store.agent_run_tree(&run).await.unwrap();
        assert_eq!(tree[1].status, "running");
        assert_eq!((tree[1].usage_input, tree[1].tool_calls), (7, 1));
        assert_eq!(tree[1].cost_usd, Some(0.5));

        let end = AgentRunEnd {
            status: "done",
            reason: None,
            usage_input: 10,
            usage_output: 5,
            cost_usd: Some(0.75),
            tool_calls: 2,
        };
        store.finish_agent_run("kid", &end).await.unwrap();
        // A late progress write does not undo the end.
        assert!(!store.agent_run_progress("kid", &so_far).await.unwrap());
        let tasks = store.task_runs_of_conversation("c").await.unwrap();
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        assert_eq!(
            (tasks[0].node.as_str(), tasks[0].status.as_str()),
            ("kid", "done")
        );
        assert_eq!((tasks[0].usage_input, tasks[0].tool_calls), (10, 2));
        assert!(store
            .task_runs_of_conversation("x")
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn rows_from_before_0020_are_told_apart_by_the_upgrade() {
        use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let old = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                SqliteConnectOptions::new()
                    .filename(&path)
                    .create_if_missing(true),
            )
            .await
            .unwrap();
        crate::store::MIGRATOR.run_to(19, &old).await.unwrap();
        // A message's root, a hand-over below it (same task: the person's message), a task it
        // delegated, one delegated from the hand-over, and a hand-over of the hand-over.
        for (node, parent, task) in [
            ("root", None, "the message"),
            ("handed", Some("root"), "the message"),
            ("kid", Some("root"), "a sub-task"),
            ("grandkid", Some("handed"), "another"),
            ("handed2", Some("handed"), "the message"),
        ] {
            sqlx::query(
                "INSERT INTO agent_runs (node, run, parent, conversation, agent, task, provider,
                 model, status, started_ms) VALUES (?, 'r', ?, 'c', 'a', ?, 'p', 'm', 'done', 1)",
            )
            .bind(node)
            .bind(parent)
            .bind(task)
            .execute(&old)
            .await
            .unwrap();
        }
        old.close().await;
        let store = Store::open(&path).await.unwrap();
        let tasks: Vec<String> = store
            .task_runs_of_conversation("c")
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.node)
            .collect();
        assert_eq!(tasks, ["kid", "grandkid"]);
    }
}
