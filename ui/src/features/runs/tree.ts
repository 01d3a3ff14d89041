// The run tree of agents (issue 15, point 4), drawn from the nodes the host stored: each agent
// working on a task under the agent that delegated it, with its model, calls, cost, duration and
// status, and the run's total under the tree. A running node's calls, tokens and cost are what
// it has spent so far (the host writes them as its turn goes). Pure rendering: panel.ts fetches
// and redraws.
// Every string here (tasks, agent names, reasons) is untrusted and goes in as text.
import { h } from "../../app/dom";
import type { AgentRunDto, AgentRunNodeDto, RunTotalsDto } from "../../ipc/bindings";
import { formatCost } from "../../app/format";

/** A node with the nodes it delegated to. */
export interface TreeNode {
  node: AgentRunNodeDto;
  children: TreeNode[];
}

/** Nests `nodes` under their parents, in the order given; a node whose parent is missing is a root. */
export function nest(nodes: AgentRunNodeDto[]): TreeNode[] {
  const byId = new Map<string, TreeNode>();
  for (const n of nodes) byId.set(n.node, { node: n, children: [] });
  const roots: TreeNode[] = [];
  for (const n of nodes) {
    const t = byId.get(n.node)!;
    const parent = n.parent ? byId.get(n.parent) : undefined;
    if (parent && parent !== t) parent.children.push(t);
    else roots.push(t);
  }
  return roots;
}

const count = (n: number | null | undefined) => Math.round(n ?? 0).toLocaleString("en-US");

/** "850 ms", "12.3 s", "4 min 05 s". */
export function formatDuration(ms: number): string {
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)} s`;
  const s = Math.round(v / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** How a status reads for a person. */
export function statusText(status: string): string {
  const known: Record<string, string> = {
    running: "running",
    done: "done",
    failed: "failed",
    cancelled: "cancelled",
    over_budget: "over budget",
    step_limit: "step limit",
    interrupted: "interrupted",
  };
  return known[status] ?? status;
}

const calls = (n: number) => `${count(n)} call${n === 1 ? "" : "s"}`;

function cost(c: number | null | undefined): string {
  return c === null || c === undefined ? "cost unknown" : `≈ ${formatCost(c)}`;
}

/** The total line under a run: tokens, cost, calls. */
export function totalText(t: RunTotalsDto): string {
  const usd = t.cost_usd ?? 0;
  const dollars = t.cost_partial ? (usd > 0 ? `≈ ${formatCost(usd)} + unknown` : "cost unknown") : `≈ ${formatCost(usd)}`;
  const agents = `${count(t.nodes)} agent run${t.nodes === 1 ? "" : "s"}`;
  return `Total: ${count(t.usage_input)} in · ${count(t.usage_output)} out · ${dollars} · ${calls(t.tool_calls)} · ${agents}`;
}

function nodeItem(t: TreeNode, now: number): HTMLElement {
  const n = t.node;
  const running = n.status === "running";
  const took = formatDuration((n.ended_ms ?? now) - (n.started_ms ?? now));
  const head = h("div", { class: "run-node-head" },
    h("strong", { class: "run-agent" }, n.agent),
    h("span", { class: `run-status run-status-${n.status}` }, running ? "running…" : statusText(n.status)),
    h("span", { class: "run-model hint" }, `${n.provider} / ${n.model}`),
    h("span", { class: "run-calls hint" }, calls(n.tool_calls)),
    h("span", { class: "run-cost hint", title: `${count(n.usage_input)} in · ${count(n.usage_output)} out` },
      running && n.cost_usd !== null && n.cost_usd !== undefined ? `${cost(n.cost_usd)} so far` : cost(n.cost_usd)),
    h("span", { class: "run-duration hint" }, running ? `${took} so far` : took),
  );
  const item = h("li", { class: `run-node${running ? " run-running" : ""}`, "data-agent": n.agent, "data-status": n.status, "data-node": n.node },
    head,
    h("p", { class: "run-task" }, n.task),
    n.reason ? h("p", { class: "run-reason hint" }, `Stopped: ${n.reason}`) : null,
  );
  if (running) item.setAttribute("aria-busy", "true");
  if (t.children.length > 0) item.append(h("ul", { class: "run-children" }, ...t.children.map((c) => nodeItem(c, now))));
  return item;
}

/** One run: its tree and its total. `now` times the nodes still running. */
export function renderRun(run: AgentRunDto, now: number = Date.now()): HTMLElement {
  const running = run.nodes.some((n) => n.status === "running");
  return h("section", { class: `run-tree${running ? " run-tree-running" : ""}`, "data-run": run.run },
    h("ul", { class: "run-roots" }, ...nest(run.nodes).map((t) => nodeItem(t, now))),
    h("p", { class: "run-total", title: perAgentTitle(run) }, totalText(run.total)),
  );
}

function perAgentTitle(run: AgentRunDto): string {
  return run.per_agent.map((a) => `${a.agent}: ${count(a.total.usage_input)} in · ${count(a.total.usage_output)} out · ${calls(a.total.tool_calls)}`).join("\n");
}
