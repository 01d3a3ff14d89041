// The composer's agent picker (issue 15): "No agent" sends to the provider and model chosen
// above, as always; an agent profile runs the turn instead, with its own provider, model, system
// prompt, tool scope and budget, and may delegate to other agents (the run tree shows them).
// While an agent is chosen the provider and model pickers do not apply, and the hint says so.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { AgentDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

export interface AgentPicker {
  /** The select and its hint. */
  el: HTMLElement;
  /** The chosen agent's name; null for "No agent". */
  value(): string | null;
  /** Re-reads the profiles, keeping the choice while it still exists. */
  reload(): Promise<void>;
  setDisabled(disabled: boolean): void;
}

/** What the hint says for `agent` (null: nothing to say). */
export function agentHint(agent: AgentDto | undefined): string | null {
  if (!agent) return null;
  const model = agent.model ? `${agent.provider} / ${agent.model}` : `${agent.provider} (its default model)`;
  return `Agent ${agent.name} answers on ${model}; the provider and model pickers do not apply. It may delegate to other agents.`;
}

/** `changed` runs when the choice changes (also when a reload drops a removed agent). */
export function agentPicker(changed: (agent: string | null) => void): AgentPicker {
  const select = h("select", { class: "chat-agent", "aria-label": "Agent" }, h("option", { value: "" }, "No agent"));
  const hint = h("p", { class: "chat-agent-hint hint", hidden: true });
  let agents: AgentDto[] = [];
  const show = () => {
    const text = agentHint(agents.find((a) => a.name === select.value));
    hint.hidden = text === null;
    hint.textContent = text ?? "";
  };
  let last = "";
  // `input` and `change` both come with a person's pick; the second finds nothing new.
  const picked = () => {
    show();
    if (select.value === last) return;
    last = select.value;
    changed(select.value || null);
  };
  select.addEventListener("change", picked);
  select.addEventListener("input", picked);

  async function reload() {
    let r: Awaited<ReturnType<typeof ipc.listAgents>> | IpcFailure;
    try {
      r = await attempt(ipc.listAgents());
    } catch {
      return;
    }
    if (r instanceof IpcFailure) return;
    const same = r.length === agents.length && r.every((a, i) => a.name === agents[i]?.name);
    agents = r;
    // Unchanged names: the options stay as they are (an open list is not redrawn under the mouse).
    if (same && select.options.length === agents.length + 1) return show();
    const keep = select.value;
    select.replaceChildren(h("option", { value: "" }, "No agent"), ...agents.map((a) => h("option", { value: a.name, title: a.description }, a.name)));
    select.value = agents.some((a) => a.name === keep) ? keep : "";
    show();
    if (select.value !== keep) {
      last = select.value;
      changed(select.value || null);
    }
  }
  // The Agents page may have changed the profiles since: the list is read again on opening.
  select.addEventListener("focus", () => void reload());

  return {
    el: h("div", { class: "chat-agent-pick" }, select, hint),
    value: () => select.value || null,
    reload,
    setDisabled: (d) => (select.disabled = d),
  };
}
