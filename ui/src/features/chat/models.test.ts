import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  listProviders: vi.fn(),
  providerKinds: vi.fn(),
  addProvider: vi.fn(),
  setProviderKey: vi.fn(),
  removeProvider: vi.fn(),
  detectLocalModels: vi.fn(),
  listProviderModels: vi.fn(),
  setModelToolMode: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { providersDialog } from "./providers";
import { fillModelPicker, modelOptions } from "./models";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const model = (id: string, tools: "native" | "none" | "unknown", prompt_tools = false) =>
  ({ id, display_name: null, tools, tools_source: tools === "unknown" ? "none" : "runtime", prompt_tools });

describe("models in the providers dialog", () => {
  let stored: { name: string; kind: string; base_url: string | null; model: string | null }[];
  let prompt: Set<string>;
  beforeEach(() => {
    stored = [];
    prompt = new Set();
    Object.values(m).forEach((f) => f.mockReset());
    m.providerKinds.mockResolvedValue([{ id: "ollama", name: "Ollama", needs_base_url: false, key_required: false, models: [] }]);
    m.listProviders.mockImplementation(() => ok(stored.map((s) => ({ ...s, kind_name: "Ollama", key_set: false, key_required: false, models: [], context_window: null }))));
    m.addProvider.mockImplementation((name: string, kind: string, base_url: string | null, mdl: string | null) => {
      stored.push({ name, kind, base_url, model: mdl });
      return ok(null);
    });
    m.detectLocalModels.mockImplementation(() => ok([{ kind: "ollama", name: "Ollama", base_url: "http://127.0.0.1:5555/v1",
      models: [model("gemma2:2b", "none"), model("llama3.1:8b", "native")] }]));
    m.listProviderModels.mockImplementation((name: string) => ok({ name, error: null,
      models: [model("gemma2:2b", "none", prompt.has("gemma2:2b")), model("llama3.1:8b", "native"), model("<b>x</b>", "unknown")] }));
    m.setModelToolMode.mockImplementation((_n: string, id: string, on: boolean) => {
      if (on) prompt.add(id); else prompt.delete(id);
      return ok(null);
    });
  });

  it("offers a detected runtime and adds it with its base URL and a model with native tools", async () => {
    stored.push({ name: "ollama", kind: "ollama", base_url: null, model: null });
    const d = providersDialog(() => {});
    document.body.append(d);
    await flush();
    const section = d.querySelector(".pv-detected") as HTMLElement;
    expect(section.hidden).toBe(false);
    expect(section.textContent).toContain("1 with native tools");
    expect(section.querySelector("[data-model='gemma2:2b'] .pv-tools")?.textContent).toBe("no native tools");
    (section.querySelector(".pv-add-detected") as HTMLButtonElement).click();
    await flush();
    // "ollama" is taken: the new one gets a free name.
    expect(m.addProvider).toHaveBeenCalledWith("ollama-2", "ollama", "http://127.0.0.1:5555/v1", "llama3.1:8b", null);
    d.remove();
  });

  it("hides the section when nothing runs here", async () => {
    m.detectLocalModels.mockImplementation(() => ok([]));
    const d = providersDialog(() => {});
    document.body.append(d);
    await flush();
    expect((d.querySelector(".pv-detected") as HTMLElement).hidden).toBe(true);
    d.remove();
  });

  it("lists a provider's models with tool support and switches prompt-based tools for one without", async () => {
    stored.push({ name: "local", kind: "ollama", base_url: "http://127.0.0.1:5555/v1", model: "gemma2:2b" });
    const d = providersDialog(() => {});
    document.body.append(d);
    await flush();
    const details = d.querySelector(".pv-models") as HTMLDetailsElement;
    expect(m.listProviderModels).not.toHaveBeenCalled();
    details.open = true;
    details.dispatchEvent(new Event("toggle"));
    await flush();
    const gemma = details.querySelector("[data-model='gemma2:2b']")!;
    expect(gemma.querySelector(".pv-tools")?.textContent).toBe("no native tools");
    expect(details.querySelector("[data-model='llama3.1:8b'] .pv-prompt-tools")).toBeNull();
    // A hostile id stays text.
    expect(details.querySelector("b")).toBeNull();
    const box = gemma.querySelector(".pv-prompt-tools") as HTMLInputElement;
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(m.setModelToolMode).toHaveBeenCalledWith("local", "gemma2:2b", true);
    expect(details.querySelector("[data-model='gemma2:2b'] .pv-tools")?.textContent).toBe("prompt-based tools");
    d.remove();
  });

  it("fills a model picker and keeps known ids when the vendor list fails", async () => {
    const list = document.createElement("datalist");
    expect(await fillModelPicker(list, "local")).toBeNull();
    expect([...list.options].map((o) => o.value)).toEqual(["gemma2:2b", "llama3.1:8b", "<b>x</b>"]);
    expect(list.options[1].label).toBe("native tools");
    m.listProviderModels.mockImplementation((name: string) => ok({ name, models: [], error: "the key was refused (HTTP 401)" }));
    expect(await fillModelPicker(list, "work", ["gpt-4.1"])).toBe("the key was refused (HTTP 401)");
    expect([...list.options].map((o) => o.value)).toEqual(["gpt-4.1"]);
    // A listed provider is not asked again at once; a late answer for an older pick is dropped.
    const calls = m.listProviderModels.mock.calls.length;
    await fillModelPicker(list, "local");
    expect(m.listProviderModels.mock.calls.length).toBe(calls);
    let release: (v: unknown) => void = () => {};
    m.listProviderModels.mockImplementation((name: string) => new Promise((res) => { release = res; }).then(() => ({ status: "ok", data: { name, models: [model("slow", "none")], error: null } })));
    const slow = fillModelPicker(list, "other");
    await fillModelPicker(list, "local");
    release(null);
    await slow;
    expect([...list.options].map((o) => o.value)).toEqual(["gemma2:2b", "llama3.1:8b", "<b>x</b>"]);
    expect(modelOptions([model("a", "unknown")])[0].label).toBe("tool support unknown");
  });
});
