// The Pipelines page (issue 15, point 6): every stored pipeline (newest version), one chosen
// with its steps and what flows where as Rust checked them against the catalogs (or why it
// would not run), a form for its inputs, and Run. A run is approved as a whole in the approval
// dialog (Rust asks, as for every request) before its first step; the outcome shows each
// step's status and structured result. Past runs are listed with Replay (same version, same
// inputs, asked about again). Definitions and results come from files and servers: everything
// goes in as text through h().
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { PipelineDto, PipelineRunDto_Serialize as Run } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** An input's value: JSON unless its schema says string (or it does not parse as JSON). */
export function inputValue(schemaJson: string, text: string): unknown {
  let isString = false;
  try {
    isString = (JSON.parse(schemaJson) as { type?: unknown }).type === "string";
  } catch {
    isString = false;
  }
  if (isString) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function runView(r: Run): HTMLElement {
  return h("section", { class: "pipeline-run", "data-run": r.id, "data-status": r.status },
    h("p", { class: "pipeline-run-status" }, `Run ${r.id} of ${r.name} v${r.version}: ${r.status}`),
    r.error ? h("p", { class: "error" }, r.error) : null,
    h("ol", { class: "pipeline-run-steps" }, ...r.steps.map((s) =>
      h("li", { class: "pipeline-run-step", "data-status": s.status },
        h("code", {}, s.tool), ` (${s.step_id}) ${s.status}`,
        s.structured ? h("pre", { class: "pipeline-structured" }, s.structured) : null,
        s.error ? h("p", { class: "error" }, s.error) : null))));
}

export function mountPipelines(root: HTMLElement): () => void {
  let disposed = false;
  const list = h("ul", { class: "pipeline-list" });
  const detail = h("section", { class: "pipeline-detail", "aria-live": "polite" });
  const runs = h("ul", { class: "pipeline-runs" });
  const error = h("p", { class: "error pipelines-error", role: "alert", hidden: true });
  const say = (m: string | null) => {
    error.hidden = m === null;
    error.textContent = m ?? "";
  };

  const loadRuns = async () => {
    const r = await attempt(ipc.pipelineRuns(null));
    if (disposed) return;
    if (r instanceof IpcFailure) return say(r.message);
    runs.replaceChildren(...r.map((run) => {
      const again = h("button", { type: "button", class: "pipeline-replay" }, "Replay");
      again.addEventListener("click", () => void go(() => ipc.openRun().then((id) => attempt(ipc.replayPipelineRun(id, run.id)))));
      return h("li", { class: "pipeline-past", "data-status": run.status },
        `${run.name} v${run.version} ${run.inputs}: ${run.status} `, again);
    }));
  };

  const outcome = h("div", { class: "pipeline-outcome" });
  const go = async (start: () => Promise<Awaited<ReturnType<typeof ipc.runPipeline>> | IpcFailure>) => {
    say(null);
    outcome.replaceChildren(h("p", { class: "hint pipeline-running" }, "Waiting for approval, then running…"));
    const r = await start();
    if (disposed) return;
    if (r instanceof IpcFailure) {
      outcome.replaceChildren();
      say(r.message);
    } else {
      outcome.replaceChildren(runView(r));
    }
    await loadRuns();
  };

  const show = async (name: string) => {
    const r = await attempt(ipc.showPipeline(name, null));
    if (disposed) return;
    if (r instanceof IpcFailure) return say(r.message);
    const p: PipelineDto = r;
    const fields = p.inputs.map(([n, schema]) => {
      const input = h("input", { class: "pipeline-input", autocomplete: "off", spellcheck: "false", "data-input": n });
      return { n, schema, input, label: h("label", { class: "pipeline-field" }, h("span", {}, n), input, h("code", { class: "hint" }, schema)) };
    });
    const run = h("button", { type: "button", class: "primary pipeline-run-button" }, "Run");
    // Not disabled by problems: a stopped server's tools may be unknown until the run starts
    // it, and Rust checks the whole pipeline again before asking anyway.
    run.addEventListener("click", () => {
      const inputs: Record<string, unknown> = {};
      for (const f of fields) inputs[f.n] = inputValue(f.schema, f.input.value);
      void go(() => ipc.openRun().then((id) => attempt(ipc.runPipeline(id, p.name, p.version, JSON.stringify(inputs)))));
    });
    detail.replaceChildren(
      h("h2", {}, `${p.name} v${p.version}`),
      h("p", {}, p.description),
      h("h3", {}, "Steps"),
      h("ol", { class: "pipeline-detail-steps" }, ...p.steps.map(([id, tool]) => h("li", {}, h("code", {}, tool), ` (${id})`))),
      p.problems.length > 0
        ? h("div", { class: "error pipeline-problems" }, h("p", {}, "It would not run now:"),
          h("ul", {}, ...p.problems.map((m) => h("li", {}, m))))
        : h("div", {}, h("h3", {}, "What flows where"),
          h("ul", { class: "pipeline-detail-flows" }, ...p.flows.map((f) => h("li", {}, h("code", {}, f))))),
      ...fields.map((f) => f.label),
      h("div", { class: "actions" }, run),
      outcome,
    );
  };

  const load = async () => {
    const r = await attempt(ipc.listPipelines());
    if (disposed) return;
    if (r instanceof IpcFailure) return say(r.message);
    list.replaceChildren(...r.map((p) => {
      const open = h("button", { type: "button", class: "pipeline-open", "data-pipeline": p.name }, `${p.name} v${p.version}`);
      open.addEventListener("click", () => void show(p.name));
      return h("li", {}, open, p.description ? ` ${p.description}` : "");
    }));
    if (r.length === 0) list.replaceChildren(h("li", { class: "hint" }, "No pipelines yet: add one with `switchboard pipeline add FILE`."));
    await loadRuns();
  };

  root.replaceChildren(h("main", { class: "pipelines-page" },
    h("h1", {}, "Pipelines"), error, list, detail, h("h2", {}, "Past runs"), runs));
  void load();
  return () => {
    disposed = true;
  };
}
