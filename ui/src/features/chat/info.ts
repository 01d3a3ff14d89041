// What a conversation costs and what was compacted: the usage line of the chat header ("12,345
// in · 678 out · ≈ $0.03", per model in its tooltip) and the collapsible summary blocks that
// stand in for older messages. Costs are estimates at list price; an unknown price is said so,
// never shown as zero. Summaries are model text and go through the safe Markdown renderer.
import { h } from "../../app/dom";
import type { ConversationInfoDto, ModelUsageDto } from "../../ipc/bindings";
import { renderMarkdown } from "./markdown";
import { formatCost } from "../../app/format";

export { formatCost };

const count = (n: number | null | undefined) => Math.round(n ?? 0).toLocaleString("en-US");

function costPart(cost: number | null | undefined, complete: boolean): string {
  const c = cost ?? 0;
  if (complete) return `≈ ${formatCost(c)}`;
  return c > 0 ? `≈ ${formatCost(c)} + unknown` : "cost unknown";
}

function modelLine(u: ModelUsageDto): string {
  const who = [u.provider, u.model].filter((x): x is string => !!x).join(" / ") || "unknown model";
  const cost = u.cost_usd === null || u.cost_usd === undefined ? "price unknown" : `≈ ${formatCost(u.cost_usd)}`;
  return `${who}: ${count(u.input_tokens)} in · ${count(u.output_tokens)} out · ${cost}`;
}

/** The usage line and its tooltip; null when nothing was used yet. */
export function usageLine(info: ConversationInfoDto): { text: string; title: string } | null {
  const used = (info.input_tokens ?? 0) > 0 || (info.output_tokens ?? 0) > 0 || info.by_model.length > 0;
  if (!used) return null;
  const text = `${count(info.input_tokens)} in · ${count(info.output_tokens)} out · ${costPart(info.cost_usd, info.cost_complete)}`;
  const lines = info.by_model.map(modelLine);
  if (!info.cost_complete) lines.push("Some models have no known price; the cost counts only the others.");
  lines.push("Estimated at list prices.");
  return { text, title: lines.join("\n") };
}

/** Shows `info` in the usage element (hidden when there is nothing to say). */
export function showUsage(el: HTMLElement, info: ConversationInfoDto | null): void {
  const line = info ? usageLine(info) : null;
  el.hidden = line === null;
  el.textContent = line?.text ?? "";
  if (line) el.title = line.title;
  else el.removeAttribute("title");
}

/** A collapsed block with the summary the model reads instead of `messages` older messages. */
export function summaryBlock(messages: number, text: string, model?: string | null): HTMLElement {
  const n = Math.max(0, Math.round(messages));
  return h("details", { class: "chat-summary" },
    h("summary", {}, `Summary of ${count(n)} earlier message${n === 1 ? "" : "s"} (sent to the model instead of them)`),
    h("div", { class: "chat-summary-body md" }, renderMarkdown(text)),
    model ? h("p", { class: "hint chat-summary-model" }, `Written by ${model}.`) : null,
  );
}
