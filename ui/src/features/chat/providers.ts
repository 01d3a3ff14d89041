// The "Providers" dialog: the configured model providers with "key set / not set", a form to
// add one, and remove. An API key is sent once with set_provider_key and then cleared from the
// form; no command ever returns it, so it is never shown again (SE-05). Local runtimes found on
// this machine are offered above the list, and each provider's models (with native tool
// support and the prompt-based tool switch) open under its row (./models.ts).
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { ProviderDto, ProviderKindDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { modal } from "../../app/modal";
import { detectedRuntimes, providerModels } from "./models";

function providerRow(p: ProviderDto, onChange: () => void, fail: (m: string) => void): HTMLElement {
  const key = h("input", { type: "password", class: "pv-key", placeholder: p.key_set ? "replace the key" : "API key", autocomplete: "off", "aria-label": `API key for ${p.name}` });
  const saveKey = h("button", { type: "button" }, "Set key");
  saveKey.addEventListener("click", async () => {
    const value = key.value;
    key.value = "";
    if (value.trim() === "") return;
    const r = await attempt(ipc.setProviderKey(p.name, value));
    if (r instanceof IpcFailure) fail(r.message);
    onChange();
  });
  const remove = h("button", { type: "button", class: "danger" }, "Remove");
  remove.addEventListener("click", async () => {
    if (remove.dataset.confirm !== "1") {
      remove.dataset.confirm = "1";
      remove.textContent = "Remove?";
      return;
    }
    const r = await attempt(ipc.removeProvider(p.name));
    if (r instanceof IpcFailure) fail(r.message);
    onChange();
  });
  const keyState = p.key_set ? "key set" : p.key_required ? "key not set" : "no key needed";
  return h("li", { class: "pv-row", "data-name": p.name },
    h("div", {}, h("strong", {}, p.name), " ", h("span", { class: "hint" }, `${p.kind_name}${p.model ? ` · ${p.model}` : ""}`),
      p.context_window ? h("span", { class: "hint pv-context" }, ` · context ${p.context_window.toLocaleString("en-US")} tokens`) : null,
      " ", h("span", { class: `badge ${p.key_set ? "ok" : p.key_required ? "warn" : "idle"} pv-key-state` }, keyState)),
    p.base_url ? h("div", { class: "hint" }, p.base_url) : null,
    h("div", { class: "pv-actions" }, key, saveKey, remove),
    providerModels(p, fail),
  );
}

/** A context window as typed: empty is null (the model's default), else a positive integer. */
export function parseContextWindow(text: string): { ok: true; value: number | null } | { ok: false } {
  const t = text.trim().replace(/[,_\s]/g, "");
  if (t === "") return { ok: true, value: null };
  if (!/^\d{1,12}$/.test(t) || Number(t) <= 0) return { ok: false };
  return { ok: true, value: Number(t) };
}

/** Opens the dialog; `onChange` runs after every change (so the picker re-reads the list). */
export function providersDialog(onChange: () => void): HTMLDialogElement {
  const list = h("ul", { class: "pv-list" });
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const fail = (m: string) => {
    failure.hidden = false;
    failure.textContent = m;
  };
  const kind = h("select", { name: "kind", "aria-label": "Kind" });
  const name = h("input", { name: "name", placeholder: "work", autocomplete: "off" });
  const baseUrl = h("input", { name: "base_url", placeholder: "(the vendor's default)", autocomplete: "off" });
  const model = h("input", { name: "model", list: "pv-models", autocomplete: "off" });
  const models = h("datalist", { id: "pv-models" });
  const key = h("input", { name: "key", type: "password", autocomplete: "off", placeholder: "stored in the OS keyring" });
  const contextWindow = h("input", { name: "context_window", type: "number", min: "1", step: "1", inputmode: "numeric", autocomplete: "off", placeholder: "(the model's default)" });
  let kinds: ProviderKindDto[] = [];
  let names: string[] = [];
  const pickKind = () => {
    const k = kinds.find((x) => x.id === kind.value);
    if (!k) return;
    baseUrl.placeholder = k.needs_base_url ? "required, e.g. http://127.0.0.1:11434/v1" : "(the vendor's default)";
    key.placeholder = k.key_required ? "required; stored in the OS keyring" : "optional";
    models.replaceChildren(...k.models.map((m) => h("option", { value: m })));
    if (model.value === "" && k.models[0]) model.value = k.models[0];
    if (name.value === "") name.value = k.id;
  };
  kind.addEventListener("change", () => {
    model.value = "";
    pickKind();
  });
  const refresh = async () => {
    const r = await attempt(ipc.listProviders());
    if (r instanceof IpcFailure) return fail(r.message);
    names = r.map((p) => p.name);
    list.replaceChildren(...(r.length === 0 ? [h("li", { class: "hint" }, "No provider yet: add one below.")] : r.map((p) => providerRow(p, changed, fail))));
  };
  const changed = () => {
    onChange();
    void refresh();
  };
  const form = h("form", { class: "pv-form" },
    h("h3", {}, "Add a provider"),
    h("label", {}, "Kind", kind),
    h("label", {}, "Name", name),
    h("label", {}, "Base URL", baseUrl),
    h("label", {}, "Default model", model), models,
    h("label", {}, "Context window (tokens, optional)", contextWindow),
    h("label", {}, "API key", key),
    h("div", { class: "actions" }, h("button", { class: "primary", type: "submit" }, "Add provider")),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    failure.hidden = true;
    // A number field reports letters as an empty value; badInput tells them apart.
    const ctx = contextWindow.validity?.badInput ? { ok: false as const } : parseContextWindow(contextWindow.value);
    if (!ctx.ok) {
      fail("The context window must be a whole number of tokens above 0, or empty for the model's default.");
      contextWindow.focus();
      return;
    }
    const secret = key.value;
    key.value = "";
    const n = name.value.trim();
    const r = await attempt(ipc.addProvider(n, kind.value, baseUrl.value.trim() || null, model.value.trim() || null, ctx.value));
    if (r instanceof IpcFailure) return fail(r.message);
    if (secret.trim() !== "") {
      const k = await attempt(ipc.setProviderKey(n, secret));
      if (k instanceof IpcFailure) fail(k.message);
    }
    name.value = "";
    baseUrl.value = "";
    model.value = "";
    contextWindow.value = "";
    pickKind();
    changed();
  });
  const { dialog, close } = modal("add-dialog providers-dialog", "Model providers", [
    h("h2", {}, "Model providers"),
    detectedRuntimes(() => names, fail, changed),
    list,
    form,
    failure,
    h("div", { class: "actions" }, h("button", { type: "button", onclick: () => close() }, "Close")),
  ]);
  void Promise.resolve(ipc.providerKinds()).then((ks) => {
    kinds = ks;
    kind.replaceChildren(...ks.map((k) => h("option", { value: k.id }, k.name)));
    pickKind();
  });
  void refresh();
  return dialog;
}
