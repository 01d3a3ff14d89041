//! `switchboard agent runs [RUN]`: the newest delegation runs, or one run as a tree (issue 15,
//! point 4): each agent with its task, model, status, calls, tokens, cost and duration, indented
//! under the agent that delegated to it.

use std::collections::HashMap;

use switchboard_core::host::Host;
use switchboard_core::store::AgentRunNode;

use crate::{output, Ctx};

/// How many runs `agent runs` lists.
const RUNS_LISTED: u32 = 50;

/// Lists the newest runs' roots, or prints `run`'s tree.
pub async fn runs(ctx: &Ctx, host: &Host, run: Option<String>) -> anyhow::Result<()> {
    let Some(run) = run else {
        let roots = host.agent_runs(RUNS_LISTED).await?;
        if ctx.json {
            return output::json(&roots);
        }
        if roots.is_empty() {
            errln!("no agent runs yet");
        }
        for r in &roots {
            outln!(
                "{}\t{}\t{}\t{}",
                r.run,
                r.agent,
                r.status,
                output::inert(first_line(&r.task))
            );
        }
        return Ok(());
    };
    let tree = host.agent_run_tree(&Host::run_id(&run)?).await?;
    if ctx.json {
        return output::json(&tree);
    }
    if tree.is_empty() {
        errln!("no agent ran in {run}");
    }
    for line in render(&tree) {
        outln!("{line}");
    }
    let cost: f64 = tree.iter().filter_map(|n| n.cost_usd).sum();
    let complete = tree.iter().all(|n| n.cost_usd.is_some());
    let tokens: u64 = tree.iter().map(|n| n.usage_input + n.usage_output).sum();
    outln!(
        "total: {} agents, {} tokens, ${cost:.4}{}",
        tree.len(),
        tokens,
        if complete {
            ""
        } else {
            " (some prices unknown)"
        }
    );
    Ok(())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// One line per node, children under their parent in the order they started.
pub fn render(tree: &[AgentRunNode]) -> Vec<String> {
    let mut children: HashMap<Option<&str>, Vec<&AgentRunNode>> = HashMap::new();
    for n in tree {
        children.entry(n.parent.as_deref()).or_default().push(n);
    }
    let mut out = Vec::new();
    let mut stack: Vec<(&AgentRunNode, usize)> = children
        .get(&None)
        .map(|roots| roots.iter().rev().map(|n| (*n, 0)).collect())
        .unwrap_or_default();
    while let Some((n, depth)) = stack.pop() {
        out.push(format!("{}{}", "  ".repeat(depth), line(n)));
        if let Some(kids) = children.get(&Some(n.node.as_str())) {
            stack.extend(kids.iter().rev().map(|k| (*k, depth + 1)));
        }
    }
    out
}

fn line(n: &AgentRunNode) -> String {
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
        .map(|r| format!(" ({})", output::inert(r)))
        .unwrap_or_default();
    format!(
        "{} [{}/{}] {}{why}: {} calls, {}+{} tokens, {cost}, {took}: {}",
        n.agent,
        n.provider,
        n.model,
        n.status,
        n.tool_calls,
        n.usage_input,
        n.usage_output,
        output::inert(first_line(&n.task))
    )
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
        ];
        let lines = render(&tree);
        let names: Vec<&str> = lines
            .iter()
            .map(|l| l.split(" [").next().unwrap_or(""))
            .collect();
        assert_eq!(names, ["planner", "  coder", "    helper", "  writer"]);
        assert!(
            lines[0].contains("[p/m] done: 0 calls, 1+2 tokens, $?, 1.5 s: t"),
            "{}",
            lines[0]
        );
    }
}
