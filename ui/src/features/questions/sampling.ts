// A server's sampling request (AP-08): the prompt it wants a model to complete, shown and editable
// before any model is called, with the provider and model the person picks. The server gets no
// other context (its `includeContext` is shown, never honoured) and no tools. Once the model has
// answered, the response is shown again, editable, before it goes back to the server.
import type {
  ProviderDto_Serialize as ProviderDto,
  QuestionKindDto_Serialize as QuestionKind,
  SamplingPromptDto_Deserialize as PromptOut,
} from "../../ipc/bindings";
import { h } from "../../app/dom";

export type SamplingQuestion = Extract<QuestionKind, { kind: "sampling" }>;
export type ResponseQuestion = Extract<QuestionKind, { kind: "sampling_response" }>;

/** The most tokens Switchboard lets a server have generated (the core's cap). */
export const MAX_TOKENS = 8192;

let ids = 0;

/** A labelled textarea holding `text`. */
function textArea(cls: string, label: string, text: string, rows = 3): { wrap: HTMLElement; area: HTMLTextAreaElement } {
  const id = `${cls}-${++ids}`;
  const area = h("textarea", { id, class: cls, rows: String(Math.min(Math.max(text.split("\n").length + 1, rows), 16)), spellcheck: "false" });
  area.value = text;
  return { wrap: h("div", { class: "sampling-field" }, h("label", { for: id, class: "sampling-label" }, label), area), area };
}

/** "N tokens" as typed: an integer from 1 to MAX_TOKENS, or why not. */
export function parseMaxTokens(text: string): { ok: true; value: number } | { ok: false; why: string } {
  const t = text.trim();
  if (!/^\d{1,6}$/.test(t)) return { ok: false, why: `max tokens must be a whole number from 1 to ${MAX_TOKENS}` };
  const n = Number(t);
  if (n < 1 || n > MAX_TOKENS) return { ok: false, why: `max tokens must be from 1 to ${MAX_TOKENS}` };
  return { ok: true, value: n };
}

export interface SamplingChoice {
  prompt: PromptOut;
  provider: string;
  model: string | null;
}

export interface SamplingBody {
  parts: HTMLElement[];
  /** Fills the provider choice once the list is known. */
  setProviders(list: ProviderDto[]): void;
  /** What to run, or why it cannot run yet. */
  value(): { ok: true; value: SamplingChoice } | { ok: false; why: string };
}

/** The editable prompt, the context note, the model hints and the model choice. */
export function samplingBody(q: SamplingQuestion): SamplingBody {
  const p = q.prompt;
  const system = textArea("sampling-system", "System prompt (from the server)", p.system_prompt ?? "", 2);
  const messages = p.messages.map((m, i) => {
    const f = textArea("sampling-message", `Message ${i + 1} · ${m.role === "user" ? "user" : "assistant"}`, m.text);
    f.area.dataset.index = String(i);
    f.area.dataset.role = m.role;
    return f;
  });
  const provider = h("select", { class: "sampling-provider", "aria-label": "Provider" }, h("option", { value: "" }, "Loading providers…"));
  provider.disabled = true;
  const modelList = h("datalist", { id: `sampling-models-${++ids}` });
  const model = h("input", { class: "sampling-model", list: modelList.id, autocomplete: "off", "aria-label": "Model (empty: the provider's default)" });
  const maxTokens = h("input", { class: "sampling-max-tokens", type: "number", min: "1", max: String(MAX_TOKENS), step: "1", "aria-label": "Max tokens" });
  maxTokens.value = String(p.max_tokens);
  const noProvider = h("p", { class: "sampling-no-provider error", hidden: true },
    "No model provider is set up. Add one on the Chat page (Providers…), then answer this request.");
  let providers: ProviderDto[] = [];
  const syncModels = () => {
    const chosen = providers.find((x) => x.name === provider.value);
    model.placeholder = chosen?.model ? `${chosen.model} (the provider's default)` : "model id";
    modelList.replaceChildren(...(chosen?.models ?? []).map((m) => h("option", { value: m })));
  };
  provider.addEventListener("change", syncModels);
  const context = p.context_requested
    ? h("p", { class: "sampling-context approval-warning", role: "note" },
      h("strong", {}, "Context: "),
      `The server asked to include context (${p.context_requested}). Switchboard never includes it: only the messages below are sent, with no conversation and nothing from other servers.`)
    : h("p", { class: "sampling-context hint" }, "Only the messages below are sent: no conversation, nothing from other servers, no tools.");
  const hints = p.model_hints.length > 0
    ? h("p", { class: "sampling-hints hint" }, `The server would like: ${p.model_hints.join(", ")}. That is a wish; you choose the model.`)
    : null;
  const temperature = p.temperature !== null && p.temperature !== undefined
    ? h("span", { class: "sampling-temperature hint" }, `temperature ${p.temperature}`)
    : null;
  const parts: (HTMLElement | null)[] = [
    context,
    system.wrap,
    ...messages.map((m) => m.wrap),
    hints,
    h("div", { class: "sampling-choice" },
      h("label", {}, "Provider ", provider),
      h("label", {}, "Model ", model, modelList),
      h("label", {}, "Max tokens ", maxTokens),
      temperature,
    ),
    noProvider,
    h("p", { class: "hint" }, "No model is called until you press Run. You will see the answer before it goes back to the server."),
  ];
  return {
    parts: parts.filter((x): x is HTMLElement => x !== null),
    setProviders(list) {
      providers = list;
      const keep = provider.value;
      provider.replaceChildren(...list.map((x) => h("option", { value: x.name }, `${x.name} (${x.kind_name})`)));
      provider.disabled = list.length === 0;
      noProvider.hidden = list.length > 0;
      if (list.some((x) => x.name === keep)) provider.value = keep;
      syncModels();
    },
    value() {
      const tokens = parseMaxTokens(maxTokens.value);
      if (!tokens.ok) return tokens;
      if (provider.value === "") return { ok: false, why: "choose a provider" };
      const edited = messages.map((m, i) => ({ role: p.messages[i]?.role ?? "user", text: m.area.value }));
      if (edited.every((m) => m.text.trim() === "")) return { ok: false, why: "the prompt is empty" };
      return {
        ok: true,
        value: {
          prompt: {
            system_prompt: system.area.value.trim() === "" ? null : system.area.value,
            messages: edited,
            max_tokens: tokens.value,
            temperature: p.temperature ?? null,
            model_hints: p.model_hints,
            context_requested: p.context_requested ?? null,
          },
          provider: provider.value,
          model: model.value.trim() === "" ? null : model.value.trim(),
        },
      };
    },
  };
}

/** The model's answer, editable, before it goes back to the server. */
export function responseBody(q: ResponseQuestion): { parts: HTMLElement[]; text(): string } {
  const f = textArea("sampling-response", `The answer of ${q.model} (${q.provider}), as it would go back to the server`, q.text, 6);
  return {
    parts: [
      f.wrap,
      h("p", { class: "hint" }, "Edit it if you like. Send gives the server exactly this text; Deny tells it you withheld the answer."),
    ],
    text: () => f.area.value,
  };
}
