// Helpers shared by the approval dialog and the batch review: argument parsing, and the text
// that says who asks, why, and what the guard warns about. Everything here is untrusted text and
// goes in through h() as text nodes.
import type { ApprovalDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { restoredList, splitReason } from "./restored";

/** Parses edited arguments: they must be one JSON object, as the tool's input is. */
export function parseArguments(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; why: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, why: `the arguments are not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, why: "the arguments must be a JSON object ({ … })" };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The same JSON value, whatever the whitespace; unparsable text compares as text. */
export function sameArguments(edited: Record<string, unknown>, original: string): boolean {
  const o = parseArguments(original);
  return o.ok && JSON.stringify(o.value) === JSON.stringify(edited);
}

/** The arguments pretty-printed in full (as received when they do not parse). */
export function prettyArguments(text: string): string {
  const p = parseArguments(text);
  return p.ok ? JSON.stringify(p.value, null, 2) : text;
}

type Asker = Pick<ApprovalDto, "origin" | "conversation" | "agent" | "for_agent"> & Partial<Pick<ApprovalDto, "app" | "server">>;

/** The MCP App that asks, in words ("the app ui://x/view.html of server weather"). */
function appAsks(req: Asker): string {
  return `the app ${req.app ?? "(unnamed)"} of server ${req.server ?? "(unknown)"}`;
}

/** Which agent asks and on whose behalf ("Agent researcher asks, for agent planner", "Agent
 *  planner asks, for you"); null when no agent asks (the plain model, or the person). */
export function agentAsks(req: Omit<Asker, "conversation">): string | null {
  if (req.origin !== "model" || !req.agent) return null;
  return `Agent ${req.agent} asks, for ${req.for_agent ? `agent ${req.for_agent}` : "you"}`;
}

/** Who asks, as one sentence. */
export function whoAsks(req: Asker): string {
  const where = req.conversation ? ` in conversation ${req.conversation}` : "";
  // An app acts as itself (AP-10): what you allowed yourself or the model does not cover it.
  if (req.origin === "app") {
    const who = appAsks(req);
    return `${who.charAt(0).toUpperCase()}${who.slice(1)} asks to run this${where}. It acts on its own: grants you gave the model or your own runs do not cover it.`;
  }
  if (req.origin !== "model") return "You asked to run this tool. Check the arguments before it runs.";
  const agent = agentAsks(req);
  return agent ? `${agent}, to run this${where}.` : `The model asks to run this${where}.`;
}

/** Who asks, short, for a line in a list ("asked by agent researcher for agent planner in
 *  conversation c-1"). */
export function askedBy(req: Asker): string {
  const where = req.conversation ? ` in conversation ${req.conversation}` : "";
  if (req.origin === "app") return `asked by ${appAsks(req)}${where}`;
  if (req.origin !== "model") return "asked by you (run by hand)";
  if (!req.agent) return `asked by the model${where}`;
  return `asked by agent ${req.agent} for ${req.for_agent ? `agent ${req.for_agent}` : "you"}${where}`;
}

/** "Asked because: …" (small), or nothing when the policy gave no reason. */
export function reasonLine(req: Pick<ApprovalDto, "reason"> & { arguments?: string }): HTMLElement | null {
  const { reason: r, restored } = splitReason(req.reason ?? "");
  const line = r === "" ? null : h("p", { class: "approval-reason-text hint" }, `Asked because: ${r}`);
  if (restored.length === 0) return line;
  // Placeholders the model wrote were put back: say which, next to the real values.
  return h("div", { class: "approval-why" }, line, restoredList(restored, req.arguments));
}

/** The guard's warning, prominent; `alert` makes screen readers announce it at once. */
export function warningBox(req: Pick<ApprovalDto, "warning">, alert = true): HTMLElement | null {
  const w = req.warning ?? null;
  if (w === null || w.trim() === "") return null;
  return h("div", { class: "approval-warning", ...(alert ? { role: "alert" } : {}) }, h("strong", {}, "Warning: "), w);
}

/** The server's claims about the tool, which are never trusted. */
export function hintsLine(req: Pick<ApprovalDto, "hints">): HTMLElement | null {
  return req.hints.length > 0
    ? h("p", { class: "hint" }, `The server describes it as: ${req.hints.join(", ")}. That is its claim, not a guarantee.`)
    : null;
}

/** Error text from anything thrown. */
export const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
