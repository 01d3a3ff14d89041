// The run trees of the open conversation, live: read with `conversation_agent_runs` when the
// conversation opens, and again whenever the host says a node of one of its runs started or
// ended (`HostChanged { kind: agent_runs, conversation }`). A new chat has no id until its first
// turn ends, so while one runs the panel follows the first conversation a run reports
// (`expectNew`). Running nodes show their time so far, redrawn each second from what was read.
import { events } from "../../ipc/bindings";
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { AgentRunDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { renderRun } from "./tree";
import "./runs.css";

export interface RunPanel {
  /** The panel (hidden while the conversation has no runs of agents). */
  el: HTMLElement;
  /** Shows the runs of `conversation` (none: hides the panel). */
  show(conversation: string | null): void;
  /** A turn of a new chat started: follow the first conversation a run of agents reports. */
  expectNew(): void;
  /** Stops listening. */
  stop(): void;
}

export function runPanel(delayMs = 100): RunPanel {
  const list = h("div", { class: "run-list" });
  const error = h("p", { class: "error run-error", role: "alert", hidden: true });
  const summary = h("summary", {}, "Agents at work");
  const el = h("details", { class: "run-panel", open: true, hidden: true, "aria-label": "Runs of agents in this conversation" }, summary, error, list);
  let conversation: string | null = null;
  let adopting = false;
  let runs: AgentRunDto[] = [];
  let seq = 0;
  let pending: number | undefined;
  let ticker: number | undefined;
  let stopped = false;

  const draw = () => {
    el.hidden = runs.length === 0 && error.hidden;
    const running = runs.some((r) => r.nodes.some((n) => n.status === "running"));
    summary.textContent = running ? "Agents at work (running)" : `Agents at work (${runs.length} run${runs.length === 1 ? "" : "s"})`;
    // Newest run first: the one that just started is the one a person looks for.
    list.replaceChildren(...runs.slice().reverse().map((r) => renderRun(r)));
    if (running && ticker === undefined) ticker = window.setInterval(draw, 1000);
    if (!running && ticker !== undefined) {
      window.clearInterval(ticker);
      ticker = undefined;
    }
  };

  async function load() {
    const id = conversation;
    const mine = ++seq;
    if (id === null) {
      runs = [];
      error.hidden = true;
      return draw();
    }
    const r = await attempt(ipc.conversationAgentRuns(id));
    if (stopped || mine !== seq) return;
    error.hidden = !(r instanceof IpcFailure);
    error.textContent = r instanceof IpcFailure ? `The runs of agents could not be read: ${r.message}` : "";
    if (!(r instanceof IpcFailure)) runs = r as AgentRunDto[];
    draw();
  }

  const unlisten = events.hostChanged.listen((ev) => {
    if (stopped || ev.payload.kind !== "agent_runs") return;
    const about = ev.payload.conversation ?? null;
    if (about === null) {
      // Missed events (a lagged listener): re-read whatever is shown.
      if (conversation === null) return;
    } else if (about !== conversation) {
      if (!(adopting && conversation === null)) return;
      conversation = about;
      adopting = false;
    }
    if (pending !== undefined) return;
    pending = window.setTimeout(() => {
      pending = undefined;
      if (!stopped) void load();
    }, delayMs);
  });

  return {
    el,
    show(id) {
      adopting = false;
      if (id !== conversation) runs = [];
      conversation = id;
      void load();
    },
    expectNew() {
      adopting = true;
    },
    stop() {
      stopped = true;
      window.clearTimeout(pending);
      window.clearInterval(ticker);
      void unlisten.then((f) => f());
    },
  };
}
