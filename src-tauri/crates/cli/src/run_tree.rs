//! The run tree of agents as text (issue 15, points 4 and 5), one renderer for the two commands
//! that print it: `switchboard agent runs RUN` and `switchboard history show`. Each node is one
//! line (agent, provider/model, status and why, calls, tokens, cost, duration, task) indented
//! under the agent that delegated to it; under a tree stands the run's total, a lower bound
//! ("at least $x") when some model's price is unknown, since a sum that silently counts an
//! unpriced model as free would read as a bill it is not.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use switchboard_core::agents::{AgentRunNode, RunTotals};
use switchboard_core::host::Host;
use switchboard_core::ids::ConversationId;

use crate::output;

/// How many characters of a task a node's line shows.
const TASK_SHOWN: usize = 80;

/// A run as `--json` gives it: its nodes, its total and what each agent spent.
#[derive(Serialize)]
pub struct RunView<'a> {
    /// Every node, the root first.
    pub nodes: &'a [AgentRunNode],
    /// What the whole run spent.
    pub total: RunTotals,
    /// What each agent spent, agents by name.
    pub per_agent: Vec<AgentTotals>,
}

/// One agent's share of a run.
#[derive(Serialize)]
pub struct AgentTotals {
    /// The agent.
    pub agent: String,
    /// What its nodes spent.
    #[serde(flatten)]
    pub totals: RunTotals,
}

impl<'a> RunView<'a> {
    /// The view of one run's `nodes`.
    pub fn of(nodes: &'a [AgentRunNode]) -> Self {
        Self {
            nodes,
            total: RunTotals::of(nodes),
            per_agent: RunTotals::per_agent(nodes)
                .into_iter()
                .map(|(agent, totals)| AgentTotals { agent, totals })
                .collect(),
        }
    }
}

/// One line per node, children under their parent in the order they started. A node whose
/// parent is not among `tree` counts as a root, so no node is ever left out.
pub fn tree_lines(tree: &[AgentRunNode]) -> Vec<String> {
    let present: HashSet<&str> = tree.iter().map(|n| n.node.as_str()).collect();
    let mut children: HashMap<Option<&str>, Vec<&AgentRunNode>> = HashMap::new();
    for n in tree {
        let parent = n.parent.as_deref().filter(|p| present.contains(p));
        children.entry(parent).or_default().push(n);
    }
    let mut out = Vec::new();
    let mut stack: Vec<(&AgentRunNode, usize)> = children
        .get(&None)
        .map(|roots| roots.iter().rev().map(|n| (*n, 0)).collect())
        .unwrap_or_default();
    while let Some((n, depth)) = stack.pop() {
        out.push(format!("{}{}", "  ".repeat(depth), node_line(n)));
        if let Some(kids) = children.get(&Some(n.node.as_str())) {
            stack.extend(kids.iter().rev().map(|k| (*k, depth + 1)));
        }
    }
    out
}

/// One node: who, on what, how it ended, what it spent, how long it took, on which task.
fn node_line(n: &AgentRunNode) -> String {
    let took = n
        .ended_ms
        .map(|e| format!("{:.1} s", (e - n.started_ms) as f64 / 1000.0))
        .unwrap_or_else(|| "running".into());
    let cost = n
        .cost_usd
        .map_or_else(|| "$?".to_owned(), |c| format!("${c:.4}"));
    let why = n
        .reason
        .as_deref()
        .map(|r| format!(" ({})", output::inert(&one_line(r))))
        .unwrap_or_default();
    format!(
        "{} [{}/{}] {}{why}: {}, {}+{} tokens, {cost}, {took}: {}",
        output::inert(&n.agent),
        output::inert(&n.provider),
        output::inert(&n.model),
        n.status,
        output::count(n.tool_calls, "call", "calls"),
        n.usage_input,
        n.usage_output,
        output::inert(&one_line(&n.task))
    )
}

/// `text`'s first line, cut to [`TASK_SHOWN`] characters; "…" marks anything left out.
pub fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut shown: String = first.chars().take(TASK_SHOWN).collect();
    if shown.len() < text.trim_end().len() {
        shown.push('…');
    }
    shown
}

/// Dollars spent: exact to the list prices, a lower bound when some price is unknown.
pub fn cost(t: &RunTotals) -> String {
    match (t.cost_partial, t.cost_usd) {
        (false, c) => format!("${c:.4}"),
        (true, c) if c > 0.0 => format!("at least ${c:.4}"),
        (true, _) => "cost unknown".to_owned(),
    }
}

/// Calls, tokens and dollars of `t`, as the total and each agent's line say them.
fn spent(t: &RunTotals) -> String {
    format!(
        "{}, {}+{} tokens, {}",
        output::count(t.tool_calls, "call", "calls"),
        t.usage_input,
        t.usage_output,
        cost(t)
    )
}

/// The run's total line: agents, nodes, calls, tokens, cost.
pub fn total_line(tree: &[AgentRunNode]) -> String {
    let agents: HashSet<&str> = tree.iter().map(|n| n.agent.as_str()).collect();
    let t = RunTotals::of(tree);
    format!(
        "total: {}, {}, {}",
        output::count(agents.len(), "agent", "agents"),
        output::count(t.nodes, "node", "nodes"),
        spent(&t)
    )
}

/// What each agent of the run spent, agents by name, under a heading.
pub fn per_agent_lines(tree: &[AgentRunNode]) -> Vec<String> {
    let mut out = vec!["per agent:".to_owned()];
    for (agent, t) in RunTotals::per_agent(tree) {
        out.push(format!(
            "  {}: {}, {}",
            output::inert(&agent),
            output::count(t.nodes, "node", "nodes"),
            spent(&t)
        ));
    }
    out
}

/// The runs among `nodes` (of one conversation), each with its nodes, in the order the runs
/// started.
pub fn runs_of(nodes: &[AgentRunNode]) -> Vec<(&str, Vec<AgentRunNode>)> {
    let mut runs: Vec<(&str, Vec<AgentRunNode>)> = Vec::new();
    for n in nodes {
        match runs.iter_mut().find(|(run, _)| *run == n.run) {
            Some((_, members)) => members.push(n.clone()),
            None => runs.push((n.run.as_str(), vec![n.clone()])),
        }
    }
    runs
}

/// The agent runs that worked for a conversation, as `history show` prints them under its
/// messages: each run's tree and total, indented under the run's id. Nothing when none ran.
pub fn conversation_lines(nodes: &[AgentRunNode]) -> Vec<String> {
    let runs = runs_of(nodes);
    if runs.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "agent runs ({}):",
        output::count(runs.len(), "run", "runs")
    )];
    for (run, tree) in runs {
        out.push(format!("  run {run}"));
        out.extend(tree_lines(&tree).into_iter().map(|l| format!("    {l}")));
        out.push(format!("    {}", total_line(&tree)));
    }
    out
}

/// Prints the agent runs of conversation `id` (nothing when none ran).
pub async fn print_conversation_runs(host: &Host, id: &ConversationId) -> anyhow::Result<()> {
    for line in conversation_lines(&host.conversation_agent_runs(id).await?) {
        outln!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(node: &str, parent: Option<&str>, agent: &str) -> AgentRunNode {
        AgentRunNode {
            node: node.into(),
            run: "run".into(),
            parent: parent.map(Into::into),
            conversation: "c".into(),
            agent: agent.into(),
            task: "t".into(),
            provider: "p".into(),
            model: "m".into(),
            status: "done".into(),
            reason: None,
            usage_input: 1,
            usage_output: 2,
            cost_usd: None,
            tool_calls: 0,
            started_ms: 0,
            ended_ms: Some(1500),
        }
    }

    #[test]
    fn children_are_indented_under_their_parent_in_start_order() {
        let tree = [
            n("a", None, "planner"),
            n("b", Some("a"), "coder"),
            n("c", Some("a"), "writer"),
            n("d", Some("b"), "helper"),
            n("e", Some("gone"), "orphan"),
        ];
        let lines = tree_lines(&tree);
        let names: Vec<&str> = lines
            .iter()
            .map(|l| l.split(" [").next().unwrap_or(""))
            .collect();
        assert_eq!(
            names,
            ["planner", "  coder", "    helper", "  writer", "orphan"]
        );
        assert!(
            lines[0].contains("[p/m] done: 0 calls, 1+2 tokens, $?, 1.5 s: t"),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn a_total_with_an_unknown_price_is_a_lower_bound() {
        let mut a = n("a", None, "planner");
        a.cost_usd = Some(0.5);
        a.tool_calls = 1;
        let mut b = n("b", Some("a"), "coder");
        b.status = "over_budget".into();
        b.reason = Some("its budget of 1 tool calls is spent\nmore".into());
        let tree = [a.clone(), b.clone(), n("c", Some("a"), "coder")];
        assert_eq!(
            total_line(&tree),
            "total: 2 agents, 3 nodes, 1 call, 3+6 tokens, at least $0.5000"
        );
        assert!(tree_lines(&tree)[1].contains("over_budget (its budget of 1 tool calls is spent…)"));
        assert_eq!(
            per_agent_lines(&tree),
            [
                "per agent:",
                "  coder: 2 nodes, 0 calls, 2+4 tokens, cost unknown",
                "  planner: 1 node, 1 call, 1+2 tokens, $0.5000",
            ]
        );
        b.cost_usd = Some(0.25);
        assert_eq!(cost(&RunTotals::of([&a, &b])), "$0.7500");
    }

    #[test]
    fn a_conversation_shows_each_run_with_its_total_and_nothing_without_runs() {
        assert!(conversation_lines(&[]).is_empty());
        let mut other = n("x", None, "solo");
        other.run = "run2".into();
        let nodes = [n("a", None, "planner"), other, n("b", Some("a"), "coder")];
        let lines = conversation_lines(&nodes);
        assert_eq!(lines[0], "agent runs (2 runs):");
        assert_eq!(lines[1], "  run run");
        assert!(lines[2].starts_with("    planner [p/m]"), "{lines:?}");
        assert!(lines[3].starts_with("      coder [p/m]"), "{lines:?}");
        assert!(
            lines[4].starts_with("    total: 2 agents, 2 nodes"),
            "{lines:?}"
        );
        assert_eq!(lines[5], "  run run2");
        assert!(lines[6].starts_with("    solo [p/m]"), "{lines:?}");
        assert!(
            lines[7].starts_with("    total: 1 agent, 1 node"),
            "{lines:?}"
        );
        assert_eq!(lines.len(), 8);
    }

    #[test]
    fn a_long_or_multiline_task_is_cut_to_one_line() {
        assert_eq!(one_line("short"), "short");
        assert_eq!(one_line("first\nsecond"), "first…");
        let long = "x".repeat(200);
        assert_eq!(one_line(&long).chars().count(), TASK_SHOWN + 1);
    }
}
