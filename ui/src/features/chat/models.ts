// Model lists from the core: the local runtimes found on this machine (offered as "add as
// provider"), each provider's models with whether they call tools natively, and the switch
// that sends a model without native tools through the prompt-based tool mode. Model ids come
// from a server, so they go in as text only (the dom builder never parses markup). Lists load
// after the dialog is on screen and never hold it up; a failed list says why and the model
// field still takes free text.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { DetectedRuntimeDto, ModelDto, ProviderDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import "./models.css";

/** What is known of a model's native tool calling, for a person. */
export function toolsLabel(m: ModelDto): string {
  if (m.prompt_tools) return "prompt-based tools";
  if (m.tools === "native") return "native tools";
  if (m.tools === "none") return "no native tools";
  return "tool support unknown";
}

function toolsBadge(m: ModelDto): HTMLElement {
  const cls = m.prompt_tools || m.tools === "native" ? "ok" : m.tools === "none" ? "warn" : "idle";
  const title = m.tools_source === "runtime" ? "as the runtime reports it" : m.tools_source === "family" ? "known for this model family" : "the vendor does not say";
  return h("span", { class: `badge ${cls} pv-tools`, "data-tools": m.tools, title }, toolsLabel(m));
}

/** Datalist options for a model picker: the id as value, tool support as its label. */
export function modelOptions(models: ModelDto[]): HTMLOptionElement[] {
  return models.map((m) => h("option", { value: m.id, label: `${m.display_name ? `${m.display_name} · ` : ""}${toolsLabel(m)}` }));
}

/** Lists fetched for pickers, by provider, so switching back and forth does not ask again. */
const cache = new Map<string, { at: number; models: ModelDto[] }>();
const CACHE_MS = 5 * 60 * 1000;
/** The latest fill asked of each picker: an older answer arriving late is dropped. */
const latest = new WeakMap<HTMLDataListElement, number>();
let fills = 0;

/** Forgets provider `name`'s cached list (after a change to it). */
export function forgetModels(name: string): void {
  cache.delete(name);
}

/** Fills `datalist` with provider `name`'s models from its vendor, after `fallback` ids it
 * shows at once; returns why the list failed, or null. Free text stays allowed: this only
 * suggests. */
export async function fillModelPicker(datalist: HTMLDataListElement, name: string, fallback: string[] = []): Promise<string | null> {
  const me = ++fills;
  latest.set(datalist, me);
  let models: ModelDto[] = [];
  let error: string | null = null;
  const hit = cache.get(name);
  if (hit && Date.now() - hit.at < CACHE_MS) {
    models = hit.models;
  } else {
    try {
      const r = await attempt(ipc.listProviderModels(name));
      if (r instanceof IpcFailure) error = r.message;
      else {
        models = r.models;
        error = r.error;
        if (error === null) cache.set(name, { at: Date.now(), models });
      }
    } catch (e) {
      error = String(e);
    }
  }
  if (latest.get(datalist) !== me) return error;
  const extra = fallback.filter((id) => !models.some((m) => m.id === id)).map((id) => h("option", { value: id }));
  datalist.replaceChildren(...modelOptions(models), ...extra);
  return error;
}

function modelItem(provider: string, m: ModelDto, fail: (msg: string) => void, reload: () => void): HTMLElement {
  const row = h("li", { class: "pv-model", "data-model": m.id }, h("code", {}, m.id), toolsBadge(m));
  // Offered where the model has no native tools (or nobody knows), and shown wherever it is on.
  if (m.tools !== "native" || m.prompt_tools) {
    const box = h("input", { type: "checkbox", class: "pv-prompt-tools", "aria-label": `Prompt-based tools for ${m.id}` });
    box.checked = m.prompt_tools;
    box.addEventListener("change", async () => {
      box.disabled = true;
      const r = await attempt(ipc.setModelToolMode(provider, m.id, box.checked));
      if (r instanceof IpcFailure) fail(r.message);
      forgetModels(provider);
      reload();
    });
    row.append(h("label", { title: "Describe the tools in the system prompt and read calls from the answer" }, box, "Prompt-based tools"));
  }
  return row;
}

/** A collapsed "Models" section of a provider row; listed from the vendor when opened. */
export function providerModels(p: ProviderDto, fail: (msg: string) => void): HTMLElement {
  const list = h("ul", {});
  const status = h("p", { class: "hint pv-models-status" });
  const details = h("details", { class: "pv-models" }, h("summary", {}, "Models"), status, list);
  let loaded = false;
  const load = async () => {
    status.hidden = false;
    status.textContent = "Asking the vendor…";
    const r = await attempt(ipc.listProviderModels(p.name));
    if (r instanceof IpcFailure) {
      status.textContent = r.message;
      return;
    }
    const { models, error } = r;
    status.textContent = error ? `Cannot list the models: ${error}` : models.length === 0 ? "No models listed." : "";
    status.hidden = status.textContent === "";
    list.replaceChildren(...models.map((m) => modelItem(p.name, m, fail, () => void load())));
  };
  details.addEventListener("toggle", () => {
    if (details.open && !loaded) {
      loaded = true;
      void load();
    }
  });
  return details;
}

function freeName(kind: string, taken: string[]): string {
  if (!taken.includes(kind)) return kind;
  for (let i = 2; ; i++) if (!taken.includes(`${kind}-${i}`)) return `${kind}-${i}`;
}

function runtimeItem(rt: DetectedRuntimeDto, taken: () => string[], fail: (m: string) => void, added: () => void): HTMLElement {
  const native = rt.models.filter((m) => m.tools === "native").length;
  const add = h("button", { type: "button", class: "primary pv-add-detected" }, "Add as provider");
  add.addEventListener("click", async () => {
    add.disabled = true;
    const first = rt.models.find((m) => m.tools === "native") ?? rt.models[0];
    const r = await attempt(ipc.addProvider(freeName(rt.kind, taken()), rt.kind, rt.base_url, first?.id ?? null, null));
    if (r instanceof IpcFailure) {
      add.disabled = false;
      return fail(r.message);
    }
    add.textContent = "Added";
    added();
  });
  return h("li", { class: "pv-runtime", "data-kind": rt.kind },
    h("div", {}, h("strong", {}, rt.name), " ", h("span", { class: "hint" }, `${rt.base_url} · ${rt.models.length} model${rt.models.length === 1 ? "" : "s"}, ${native} with native tools`), " ", add),
    h("ul", {}, ...rt.models.map((m) => h("li", { class: "pv-model", "data-model": m.id }, h("code", {}, m.id), toolsBadge(m)))));
}

/** "Found on this computer": the local runtimes that answered, each with "Add as provider".
 * Hidden while looking and when none answered. */
export function detectedRuntimes(taken: () => string[], fail: (m: string) => void, added: () => void): HTMLElement {
  const list = h("ul", {});
  const section = h("section", { class: "pv-detected", hidden: true }, h("h3", {}, "Found on this computer"), list);
  void Promise.resolve(attempt(ipc.detectLocalModels())).then((r) => {
    if (!r || r instanceof IpcFailure || r.length === 0) return;
    list.replaceChildren(...r.map((rt) => runtimeItem(rt, taken, fail, added)));
    section.hidden = false;
  });
  return section;
}
