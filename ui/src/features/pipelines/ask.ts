// What the approval dialog shows for a pipeline (issue 15, point 6): it is approved as a whole,
// so the dialog lists its version, every step (its tool) and every line of what flows where,
// as Rust computed them (`Plan::lines`). Everything here is text from the definition and the
// servers' catalogs: it goes in through h() as text nodes only. The steps that will still ask
// when they run (Rust's policy preview: a step that may write, one a rule asks about) are
// marked, with why, so nobody approves a run believing it will go through alone.
import type { ApprovalDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

type Whole = {
  version: unknown;
  steps: { id: string; tool: string }[];
  flows: string[];
  /** Why each step that will ask again does, by position from 1; null from an older host. */
  asks: Map<number, string> | null;
};

/** The pipeline's arguments as Rust sent them, or null when they are not a pipeline's. */
export function parseWhole(text: string): Whole | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  if (!Array.isArray(o.steps) || !Array.isArray(o.flows)) return null;
  const steps = o.steps.map((s) => {
    const r = (typeof s === "object" && s !== null ? s : {}) as Record<string, unknown>;
    return { id: String(r.id ?? ""), tool: String(r.tool ?? "") };
  });
  const asks = Array.isArray(o.asks_again)
    ? new Map(o.asks_again.map((a) => {
      const r = (typeof a === "object" && a !== null ? a : {}) as Record<string, unknown>;
      return [Number(r.step), String(r.why ?? "")] as const;
    }))
    : null;
  return { version: o.version, steps, flows: o.flows.map(String), asks };
}

/** The steps and flows of a pipeline request; null for any other request. */
export function pipelineAsk(req: Pick<ApprovalDto, "kind" | "tool" | "arguments">): HTMLElement | null {
  if (req.kind !== "pipeline") return null;
  const whole = parseWhole(req.arguments);
  if (!whole) return null;
  return h("section", { class: "approval-pipeline", "aria-label": "Pipeline steps" },
    h("p", { class: "pipeline-version" }, `${req.tool}, version ${String(whole.version)}: ${whole.steps.length} steps, approved as a whole. ${asksLine(whole.asks)}`),
    h("h3", {}, "Steps"),
    h("ol", { class: "pipeline-steps" }, ...whole.steps.map((s, i) => {
      const why = whole.asks?.get(i + 1);
      return h("li", { class: "pipeline-step" }, h("code", {}, s.tool), ` (${s.id})`,
        why === undefined ? null : h("span", { class: "hint-badge asks-again", title: why }, `asks again: ${why}`));
    })),
    h("h3", {}, "What flows where"),
    h("ul", { class: "pipeline-flows" }, ...whole.flows.map((f) => h("li", { class: "pipeline-flow" }, h("code", {}, f)))),
  );
}

/** What the version line says about questions during the run. */
function asksLine(asks: Map<number, string> | null): string {
  if (asks === null) return "A step that writes still asks.";
  if (asks.size === 0) return "No step is expected to ask again.";
  return asks.size === 1 ? "One step will ask again when it runs (marked)." : `${asks.size} steps will ask again when they run (marked).`;
}
