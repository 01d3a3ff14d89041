// Token cost of tool definitions (issue 16, point 1): a line under a tool in the catalog's detail
// pane, a total per server, the line on each server card, and what approving or enabling a
// server adds to every turn, said before the person decides. The numbers come from the host
// (`catalog_costs`, one call per page): exact for OpenAI models, marked "≈" where they are an
// estimate. A server that never ran has no known cost; nothing is started to find it out
// (an unapproved server never runs), so it says so instead of showing a zero.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { CatalogCostsDto, CostModelDto, ServerCostDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

function label(m: CostModelDto, n: number): string {
  return `${m.estimate ? "≈" : ""}${n.toLocaleString("en-US")} tokens for ${m.provider}:${m.model}`;
}

/** What one tool costs for each configured model, or null when nothing is priced. */
export function toolCost(costs: CatalogCostsDto | null, server: string, tool: string): HTMLElement | null {
  if (!costs || costs.models.length === 0) return null;
  const t = costs.servers.find((s) => s.server === server)?.tools.find((x) => x.tool === tool);
  if (!t) return null;
  return h("p", { class: "token-cost", title: costs.models.map((m) => `${m.provider}:${m.model}: ${m.method}`).join("\n") },
    "Definition: ", costs.models.map((m, i) => label(m, t.tokens[i] ?? 0)).join(" · "));
}

/** What a whole server's tools cost, for its first priced model, or "" when nothing is priced. */
export function serverCost(costs: CatalogCostsDto | null, server: string): string {
  const m = costs?.models[0];
  const s = costs?.servers.find((x) => x.server === server);
  if (!m || !s || s.tools.length === 0) return "";
  return label(m, s.tokens[0] ?? 0);
}

/** The next turn's definitions as a share of the first model's window. */
export function turnCost(costs: CatalogCostsDto | null): string {
  const m = costs?.models[0];
  if (!m || !costs) return "";
  const n = costs.offered_tokens[0] ?? 0;
  const pct = m.context_window > 0 ? (n * 100) / m.context_window : 0;
  return `${label(m, n)} per turn (${pct.toFixed(1)}% of its context)`;
}

/** The catalog's costs, or null when they cannot be read: the cost is information, never a
 * reason for a page or a dialog to fail. */
export async function loadCosts(): Promise<CatalogCostsDto | null> {
  try {
    const r = await attempt(ipc.catalogCosts());
    return r instanceof IpcFailure ? null : r;
  } catch {
    return null;
  }
}

function pct(m: CostModelDto, n: number): string {
  return m.context_window > 0 ? `${((n * 100) / m.context_window).toFixed(1)}%` : "?%";
}

/** "≈N tokens for p:m (P% of its context)" for each model, joined. */
function perModel(costs: CatalogCostsDto, tokens: (number | null)[]): string {
  return costs.models.map((m, i) => {
    const n = tokens[i] ?? 0;
    return `${label(m, n)} (${pct(m, n)} of its context)`;
  }).join(" · ");
}

function find(costs: CatalogCostsDto | null, server: string): ServerCostDto | undefined {
  return costs?.servers.find((x) => x.server === server) as ServerCostDto | undefined;
}

/** The server card's cost line: what its tools add to each turn (the offered ones when it is
 * enabled, all of them, as enabling would add, when not); null when nothing is priced. */
export function cardCost(costs: CatalogCostsDto | null, server: string): { text: string; title: string } | null {
  const s = find(costs, server);
  if (!costs || !s) return null;
  if (!s.known) {
    return { text: "Tools: cost known after its first start", title: "It never ran, so it has not listed its tools. Once it runs, its tools' definitions are added to every turn." };
  }
  const from = s.running ? "Priced from its live catalog" : `Priced from the tools it listed ${new Date(s.last_known_ms ?? 0).toLocaleString()}`;
  const methods = costs.models.map((m) => `${m.provider}:${m.model}: ${m.method}`).join("\n");
  if (costs.models.length === 0) {
    return { text: `Tools: ${s.tools.length} (add a model to see what they cost)`, title: from };
  }
  const text = `Tools: ${perModel(costs, s.enabled ? s.offered_tokens : s.tokens)}${s.enabled ? "" : " once enabled"}`;
  return { text, title: `${from}\n${methods}` };
}

/** What approving or enabling `server` adds to every turn, said in the dialog before the
 * person decides; null when the costs could not be read. */
export function enableCostNote(costs: CatalogCostsDto | null, server: string): string | null {
  if (!costs) return null;
  const s = find(costs, server);
  if (!s || !s.known) {
    return "What its tools cost is unknown until it starts: it has never run, and nothing runs before you allow it. Once it runs, it adds its tools' definitions to every turn (its card and the Tools page then show how many tokens).";
  }
  const n = `${s.tools.length} ${s.tools.length === 1 ? "tool" : "tools"}`;
  if (costs.models.length === 0) return `It lists ${n}; add a model to see what their definitions cost per turn.`;
  return `Its ${n} ${s.tools.length === 1 ? "adds" : "add"} ${perModel(costs, s.tokens)} to every turn while it is enabled.`;
}

/** What approving the held `tools` of `server` adds to every turn; null when none of them is
 * priced. */
export function heldCost(costs: CatalogCostsDto | null, server: string, tools: string[]): string | null {
  const s = find(costs, server);
  if (!costs || !s || costs.models.length === 0) return null;
  const held = s.tools.filter((t) => tools.includes(t.tool));
  if (held.length === 0) return null;
  const sums = costs.models.map((_, i) => held.reduce((n, t) => n + (t.tokens[i] ?? 0), 0));
  return `Approving ${held.length === 1 ? "this tool" : `these ${held.length} tools`} adds ${perModel(costs, sums)} to every turn.`;
}

/** The registry's entries list no tools, so an entry's cost cannot be known before it runs. */
export const REGISTRY_COST_NOTE =
  "The registry does not list a server's tools, so what their definitions cost is unknown until it first runs. Once approved and running, it adds them to every turn; its card and the Tools page then show how many tokens.";

/** `cardCost` as the card's paragraph, or null. */
export function cardCostLine(costs: CatalogCostsDto | null, server: string): HTMLElement | null {
  const c = cardCost(costs, server);
  return c ? h("p", { class: "token-cost server-cost", title: c.title }, c.text) : null;
}
