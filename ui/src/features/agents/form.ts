// The Agents page's form logic, apart from the DOM so it can be tested: a profile as the form's
// text fields (lists one entry per line or comma-separated, budgets as numbers typed) and back,
// with a first clear sentence before Rust is asked (Rust checks everything again and has the
// last word: names, patterns, the provider, the delegates).
import type { AgentDto_Deserialize as AgentDto } from "../../ipc/bindings";

/** Whom the agent may delegate to. */
export type Delegation = "any" | "none" | "some";

/** The raw field values of the form. */
export interface AgentForm {
  name: string;
  description: string;
  provider: string;
  model: string;
  system: string;
  servers: string;
  tools: string;
  ask: string;
  deny: string;
  delegation: Delegation;
  delegates: string;
  /** Progressive discovery: it searches its tools and loads what it needs. */
  discovery: boolean;
  maxTokens: string;
  maxCost: string;
  maxCalls: string;
  maxTime: string;
}

/** A list typed one per line or comma-separated, without blanks. */
export function splitList(text: string): string[] {
  return text.split(/[\n,]/).map((s) => s.trim()).filter((s) => s !== "");
}

const num = (n: number | null | undefined) => (n === null || n === undefined ? "" : String(n));

/** The form's fields for a stored profile (or an empty form for a new one). */
export function toForm(a: AgentDto | null): AgentForm {
  return {
    name: a?.name ?? "",
    description: a?.description ?? "",
    provider: a?.provider ?? "",
    model: a?.model ?? "",
    system: a?.system ?? "",
    servers: (a?.servers ?? []).join("\n"),
    tools: (a?.tools ?? []).join("\n"),
    ask: (a?.ask ?? []).join("\n"),
    deny: (a?.deny ?? []).join("\n"),
    delegation: !a || a.delegates === null || a.delegates === undefined ? "any" : a.delegates.length === 0 ? "none" : "some",
    delegates: (a?.delegates ?? []).join("\n"),
    discovery: a?.discovery ?? false,
    maxTokens: num(a?.max_tokens),
    maxCost: num(a?.max_cost_usd),
    maxCalls: num(a?.max_tool_calls),
    maxTime: num(a?.max_wall_secs),
  };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; why: string };

/** A budget field: blank = no limit; else a number of 0 or more (whole unless `money`). */
export function limit(what: string, text: string, money = false): Parsed<number | null> {
  const t = text.trim();
  if (t === "") return { ok: true, value: null };
  const n = Number(t);
  if (!Number.isFinite(n) || n < 0 || (!money && !Number.isInteger(n))) {
    return { ok: false, why: `The ${what} must be ${money ? "a number of dollars" : "a whole number"}, 0 or more (or blank for no limit).` };
  }
  return { ok: true, value: n };
}

/** The profile to save, or the first reason not to. */
export function toAgent(f: AgentForm): { ok: true; agent: AgentDto } | { ok: false; why: string } {
  const name = f.name.trim();
  if (!/^[a-z0-9_-]{1,64}$/.test(name)) {
    return { ok: false, why: "The name must be 1 to 64 lowercase letters, digits, '-' or '_'." };
  }
  if (f.provider.trim() === "") return { ok: false, why: "Choose the provider the agent runs on." };
  const budgets = [
    limit("token budget", f.maxTokens),
    limit("cost budget", f.maxCost, true),
    limit("tool call budget", f.maxCalls),
    limit("time budget", f.maxTime),
  ];
  for (const b of budgets) if (!b.ok) return b;
  const [tokens, cost, calls, time] = budgets.map((b) => (b.ok ? b.value : null));
  const delegates = f.delegation === "any" ? null : f.delegation === "none" ? [] : splitList(f.delegates);
  if (f.delegation === "some" && delegates?.length === 0) {
    return { ok: false, why: "Name the agents it may delegate to, or choose \"nobody\"." };
  }
  return {
    ok: true,
    agent: {
      name,
      description: f.description.trim(),
      provider: f.provider.trim(),
      model: f.model.trim() || null,
      system: f.system.trim() === "" ? null : f.system,
      servers: splitList(f.servers),
      tools: splitList(f.tools),
      ask: splitList(f.ask),
      deny: splitList(f.deny),
      delegates,
      discovery: f.discovery,
      max_tokens: tokens,
      max_cost_usd: cost,
      max_tool_calls: calls,
      max_wall_secs: time,
    },
  };
}

/** One line about what the agent may see, for the list. */
export function scopeSummary(a: Pick<AgentDto, "servers" | "tools">): string {
  if (a.servers.length === 0) return "no tools";
  const servers = a.servers.includes("*") ? "every server" : a.servers.join(", ");
  return a.tools.length === 0 ? `all tools of ${servers}` : `${a.tools.join(", ")} (of ${servers})`;
}

/** One line about its limits, for the list. */
export function budgetSummary(a: Pick<AgentDto, "max_tokens" | "max_cost_usd" | "max_tool_calls" | "max_wall_secs">): string {
  const parts: string[] = [];
  if (a.max_tokens != null) parts.push(`${a.max_tokens} tokens`);
  if (a.max_cost_usd != null) parts.push(`$${a.max_cost_usd.toFixed(2)}`);
  if (a.max_tool_calls != null) parts.push(`${a.max_tool_calls} calls`);
  if (a.max_wall_secs != null) parts.push(`${a.max_wall_secs} s`);
  return parts.length === 0 ? "no limits" : parts.join(", ");
}
