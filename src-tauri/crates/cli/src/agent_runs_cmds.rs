//! `switchboard agent runs [RUN]`: the newest delegation runs with what each cost in all, or one
//! run as a tree (issue 15, points 4 and 5): each agent with its task, model, status, calls,
//! tokens, cost and duration, indented under the agent that delegated to it, then the run's
//! total and what each agent spent. The tree is drawn by [`crate::run_tree`], which `history
//! show` shares.

use serde::Serialize;
use switchboard_core::agents::{AgentRunNode, RunTotals};
use switchboard_core::host::Host;

use crate::run_tree::{self, RunView};
use crate::{output, Ctx};

/// How many runs `agent runs` lists.
const RUNS_LISTED: u32 = 50;

/// A listed run: its root node and what the whole tree spent.
#[derive(Serialize)]
struct ListedRun {
    #[serde(flatten)]
    root: AgentRunNode,
    total: RunTotals,
}

/// Lists the newest runs' roots with their totals, or prints `run`'s tree.
pub async fn runs(ctx: &Ctx, host: &Host, run: Option<String>) -> anyhow::Result<()> {
    let Some(run) = run else {
        let mut listed = Vec::new();
        for root in host.agent_runs(RUNS_LISTED).await? {
            let tree = host.agent_run_tree(&Host::run_id(&root.run)?).await?;
            let total = RunTotals::of(&tree);
            listed.push(ListedRun { root, total });
        }
        if ctx.json {
            return output::json(&listed);
        }
        if listed.is_empty() {
            errln!("no agent runs yet");
        }
        for r in &listed {
            outln!(
                "{}\t{}\t{}\t{}\t{}",
                r.root.run,
                r.root.agent,
                r.root.status,
                run_tree::cost(&r.total),
                output::inert(&run_tree::one_line(&r.root.task))
            );
        }
        return Ok(());
    };
    let tree = host.agent_run_tree(&Host::run_id(&run)?).await?;
    if ctx.json {
        return output::json(&RunView::of(&tree));
    }
    if tree.is_empty() {
        errln!("no agent ran in {run}");
        return Ok(());
    }
    for line in run_tree::tree_lines(&tree) {
        outln!("{line}");
    }
    outln!("{}", run_tree::total_line(&tree));
    for line in run_tree::per_agent_lines(&tree) {
        outln!("{line}");
    }
    Ok(())
}
