// Token cost of tool definitions (issue 16, point 1): a line under a tool in the catalog's detail
// pane, and a total per server. The numbers come from the host (`catalog_costs`): exact for
// OpenAI models, marked "≈" where they are an estimate.
import type { CatalogCostsDto, CostModelDto } from "../../ipc/bindings";
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
