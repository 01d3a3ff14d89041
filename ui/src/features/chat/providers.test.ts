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

import { parseContextWindow, providersDialog } from "./providers";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const KEY = "sk-dialogCANARY-0123456789";
const kinds = [
  { id: "openai", name: "OpenAI", needs_base_url: false, key_required: true, models: ["gpt-4.1"] },
  { id: "ollama", name: "Ollama", needs_base_url: false, key_required: false, models: [] },
];

describe("providersDialog", () => {
  let stored: { name: string; kind: string; model: string | null; key_set: boolean; context_window?: number | null }[];
  beforeEach(() => {
    stored = [];
    Object.values(m).forEach((f) => f.mockReset());
    m.providerKinds.mockResolvedValue(kinds);
    m.listProviders.mockImplementation(() => ok(stored.map((s) => ({ context_window: null, ...s, kind_name: "OpenAI", base_url: null, key_required: true, models: [] }))));
    m.addProvider.mockImplementation((name: string, kind: string, _b: unknown, model: string | null, context_window: number | null) => {
      stored.push({ name, kind, model, key_set: false, context_window });
      return ok(null);
    });
    m.setProviderKey.mockImplementation((name: string) => {
      stored.forEach((s) => { if (s.name === name) s.key_set = true; });
      return ok(null);
    });
    m.removeProvider.mockImplementation(() => ok(null));
    m.detectLocalModels.mockImplementation(() => ok([]));
  });

  it("sends the key once and never puts it back into the DOM", async () => {
    const onChange = vi.fn();
    const d = providersDialog(onChange);
    document.body.append(d);
    await flush();
    expect((d.querySelector("[name=kind]") as HTMLSelectElement).value).toBe("openai");
    expect((d.querySelector("[name=model]") as HTMLInputElement).value).toBe("gpt-4.1");
    (d.querySelector("[name=name]") as HTMLInputElement).value = "work";
    (d.querySelector("[name=key]") as HTMLInputElement).value = KEY;
    d.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    expect(m.addProvider).toHaveBeenCalledWith("work", "openai", null, "gpt-4.1", null);
    expect(m.setProviderKey).toHaveBeenCalledTimes(1);
    expect(m.setProviderKey).toHaveBeenCalledWith("work", KEY);
    expect(onChange).toHaveBeenCalled();
    expect(d.querySelector(".pv-row .pv-key-state")?.textContent).toBe("key set");
    expect(new XMLSerializer().serializeToString(document.body)).not.toContain(KEY);
    const values = Array.from(document.querySelectorAll("input")).map((i) => i.value);
    expect(values.join("|")).not.toContain(KEY);
    d.remove();
  });

  it("remove asks once more, then removes", async () => {
    stored.push({ name: "old", kind: "openai", model: null, key_set: false });
    const d = providersDialog(() => {});
    document.body.append(d);
    await flush();
    expect(d.querySelector(".pv-key-state")?.textContent).toBe("key not set");
    const remove = Array.from(d.querySelectorAll(".pv-row button")).find((b) => b.textContent === "Remove") as HTMLButtonElement;
    remove.click();
    expect(m.removeProvider).not.toHaveBeenCalled();
    remove.click();
    await flush();
    expect(m.removeProvider).toHaveBeenCalledWith("old");
    d.remove();
  });

  it("sends an optional context window and shows it on the list", async () => {
    const d = providersDialog(() => {});
    document.body.append(d);
    await flush();
    const field = d.querySelector("[name=context_window]") as HTMLInputElement;
    expect(field.type).toBe("number");
    (d.querySelector("[name=name]") as HTMLInputElement).value = "big";
    field.value = "0";
    d.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    expect(m.addProvider).not.toHaveBeenCalled();
    expect(d.querySelector(".error")?.textContent).toContain("whole number");
    field.value = "200000";
    d.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    expect(m.addProvider).toHaveBeenCalledWith("big", "openai", null, "gpt-4.1", 200000);
    expect(d.querySelector(".pv-row .pv-context")?.textContent).toContain("200,000 tokens");
    expect(field.value).toBe("");
    d.remove();
  });
});

describe("parseContextWindow", () => {
  it("takes empty or a positive integer", () => {
    expect(parseContextWindow("")).toEqual({ ok: true, value: null });
    expect(parseContextWindow(" 128000 ")).toEqual({ ok: true, value: 128000 });
    expect(parseContextWindow("128,000")).toEqual({ ok: true, value: 128000 });
    for (const bad of ["0", "-5", "1.5", "1e6", "abc", "99999999999999"]) expect(parseContextWindow(bad).ok).toBe(false);
  });
});
