// The Chat page: conversations on the left (conversations.ts), the open conversation on the
// right with a provider/model picker, its usage and cost, and a composer with image and resource
// attachments and slash prompts. A turn (a new message, an edit of an earlier one, or a
// regenerated answer) streams over a Channel into the log; when it ends the conversation is
// re-read from the store. Tool calls the model asks for are answered in the approval dialog.
// An agent chosen in the composer runs the turn instead of the picked model; the runs of agents
// that worked for the conversation show as live trees above the log (features/runs).
import { Channel } from "@tauri-apps/api/core";
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { ChatEventDto, ChatEventDto_Deserialize, ConversationInfoDto, ProviderDto, TurnInputDto } from "../../ipc/bindings";
import { emptyState, h } from "../../app/dom";
import { setActionsBusy } from "./actions";
import type { ActionHandlers } from "./actions";
import { imageAttachments } from "./attachments";
import { conversationList } from "./conversations";
import { showUsage } from "./info";
import { LiveTurn, renderMessages, userBubble } from "./messages";
import { providersDialog } from "./providers";
import { fillModelPicker } from "./models";
import { resourcePicker } from "./resource-picker";
import { skillPicker } from "../skills";
import { slashPrompts } from "./slash";
import { redactionSwitch } from "./redaction-switch";
import { discoverySwitch } from "./discovery-switch";
import { agentPicker } from "../runs";
import { runPanel } from "../runs";
import "./chat.css";


export function mountChat(root: HTMLElement): () => void {
  let stopped = false;
  let providers: ProviderDto[] = [];
  let current: string | null = null;
  let running: string | null = null;

  const newChat = h("button", { type: "button", class: "primary new-chat" }, "New chat");
  const providerSel = h("select", { class: "chat-provider", "aria-label": "Provider" });
  const model = h("input", { class: "chat-model", list: "chat-models", placeholder: "model", "aria-label": "Model", autocomplete: "off" });
  const models = h("datalist", { id: "chat-models" });
  const manage = h("button", { type: "button", class: "chat-providers" }, "Providers…");
  const usage = h("span", { class: "chat-usage hint", hidden: true, "aria-label": "Tokens and estimated cost of this conversation" });
  const log = h("div", { class: "chat-log", "aria-live": "polite" });
  const input = h("textarea", { class: "chat-input", rows: "3", placeholder: "Message (Enter sends, Shift+Enter for a new line, / for prompts)", "aria-label": "Message" });
  // Disabled until the providers are known: a send before that would have no model to go to.
  const sendBtn = h("button", { type: "submit", class: "primary chat-send", disabled: true }, "Send");
  const stopBtn = h("button", { type: "button", class: "danger chat-stop", hidden: true }, "Stop");
  const failure = h("p", { class: "error chat-error", role: "alert", hidden: true });
  const notice = h("p", { class: "chat-notice hint", role: "status", hidden: true });

  const fail = (m: string | null) => {
    failure.hidden = m === null;
    failure.textContent = m ?? "";
  };
  const note = (m: string | null) => {
    notice.hidden = m === null;
    notice.textContent = m ?? "";
  };
  const attach = imageAttachments(note);
  const runs = runPanel();
  let busy = false;
  // An agent brings its own provider and model: the pickers above do not apply while one is chosen.
  const agentPick = agentPicker((agent) => {
    providerSel.disabled = busy || agent !== null;
    model.disabled = agent !== null;
  });
  // The servers the message being written carries something from (attached resources, slash
  // prompts): sent with it, so the trifecta guard counts them for the conversation.
  const sources = new Set<string>();
  const into = { conversation: () => current ?? "", from: (server: string) => void sources.add(server) };
  const attachResource = resourcePicker({ text: () => input.value, setText: (t) => (input.value = t), addImage: (img, name) => attach.add(img, name), ...into }, note);
  const attachSkill = skillPicker({ text: () => input.value, setText: (t) => (input.value = t), ...into }, note);
  const slash = slashPrompts(input, into);
  const composer = h("form", { class: "composer" },
    h("div", { class: "composer-main" }, slash.el, attach.chips, input,
      h("div", { class: "composer-tools" }, attach.picker, attachResource, attachSkill, agentPick.el)),
    h("div", { class: "composer-actions" }, sendBtn, stopBtn));

  const conversations = conversationList({
    current: () => current,
    open: (id) => void openConversation(id),
    deleted: (id) => {
      if (current !== id) return;
      current = null;
      showUsage(usage, null);
      runs.show(null);
      showEmpty();
    },
    fail,
  });
  const openProviders = () => document.body.append(providersDialog(() => void loadProviders()));
  manage.addEventListener("click", openProviders);

  const setBusy = (on: boolean) => {
    busy = on;
    input.disabled = busy;
    sendBtn.hidden = busy;
    stopBtn.hidden = !busy;
    providerSel.disabled = busy || agentPick.value() !== null;
    agentPick.setDisabled(busy);
    attach.setDisabled(busy);
    attachResource.disabled = busy;
    if (busy) slash.close();
    log.classList.toggle("chat-busy", busy);
    setActionsBusy(log, busy);
  };

  const pickProvider = () => {
    const p = providers.find((x) => x.name === providerSel.value);
    models.replaceChildren(...(p?.models ?? []).map((m) => h("option", { value: m })));
    model.value = p?.model ?? "";
    if (p) void fillModelPicker(models, p.name, p.models);
  };
  providerSel.addEventListener("change", pickProvider);

  const showEmpty = () => {
    if (providers.length === 0) {
      const add = h("button", { type: "button", class: "primary", onclick: openProviders }, "Add a provider");
      log.replaceChildren(emptyState("No model provider yet", "Chat needs a model: add a provider (OpenAI, Anthropic, a local Ollama…) with its API key."), h("div", { class: "chat-center" }, add));
    } else {
      log.replaceChildren(emptyState("Start a conversation", "Ask anything. The model can use the tools of your running servers; you approve each call."));
    }
  };

  /** The Settings page's default provider and model; none when they cannot be read. */
  async function settingsDefaults(): Promise<{ default_provider?: string | null; default_model?: string | null } | null> {
    try {
      const st = await attempt(ipc.getSettings());
      return st instanceof IpcFailure ? null : st.settings;
    } catch {
      return null;
    }
  }

  async function loadProviders() {
    const r = await attempt(ipc.listProviders());
    if (stopped) return;
    if (r instanceof IpcFailure) return fail(r.message);
    providers = r;
    sendBtn.disabled = false;
    const keep = providerSel.value;
    providerSel.replaceChildren(...providers.map((p) => h("option", { value: p.name }, `${p.name}${p.key_set || !p.key_required ? "" : " (no key)"}`)));
    if (providers.some((p) => p.name === keep)) providerSel.value = keep;
    else {
      // The default provider and model of the Settings page, when they still exist.
      const d = await settingsDefaults();
      if (stopped) return;
      if (d?.default_provider && providers.some((p) => p.name === d.default_provider)) providerSel.value = d.default_provider;
      pickProvider();
      if (d?.default_model && (!d.default_provider || providerSel.value === d.default_provider)) model.value = d.default_model;
    }
    if (current === null && running === null) showEmpty();
  }

  /** Usage and summaries; a failure here only hides the usage line. */
  async function conversationInfo(id: string): Promise<ConversationInfoDto | null> {
    try {
      const r = await attempt(ipc.conversationInfo(id));
      return r instanceof IpcFailure ? null : r;
    } catch {
      return null;
    }
  }

  const actions: ActionHandlers = {
    edit: (id, text, block) => {
      while (block.nextSibling) block.nextSibling.remove();
      void runTurn({ kind: "edit", message: id, text }, null);
    },
    regenerate: (block) => {
      const users = log.querySelectorAll<HTMLElement>('.msg-block[data-role="user"]');
      const from = users[users.length - 1] ?? null;
      if (from) while (from.nextSibling) from.nextSibling.remove();
      else block.remove();
      void runTurn({ kind: "regenerate" }, null);
    },
    fork: (id) => void fork(id),
  };

  async function fork(at: string) {
    if (running !== null || current === null) return;
    fail(null);
    const r = await attempt(ipc.forkConversation(current, at, null));
    if (stopped) return;
    if (r instanceof IpcFailure) return fail(r.message);
    current = r;
    await conversations.reload();
    await openConversation(r);
  }

  async function openConversation(id: string) {
    if (running !== null) return;
    current = id;
    fail(null);
    conversations.mark(id);
    runs.show(id);
    const [r, info] = await Promise.all([attempt(ipc.loadConversation(id)), conversationInfo(id)]);
    if (stopped || current !== id) return;
    if (r instanceof IpcFailure) return fail(r.message);
    renderMessages(log, r, { summaries: info?.summaries ?? [], actions, conversation: id });
    showUsage(usage, info);
    log.scrollTop = log.scrollHeight;
  }

  newChat.addEventListener("click", () => {
    if (running !== null) return;
    current = null;
    fail(null);
    conversations.mark(null);
    showUsage(usage, null);
    runs.show(null);
    showEmpty();
    input.focus();
  });

  const canRun = () => {
    if (running !== null) return false;
    if (providers.length > 0 && providerSel.value !== "") return true;
    openProviders();
    return false;
  };

  /** Runs one turn; `before` is the person's new message, if any. Returns whether it went. */
  async function runTurn(turnInput: TurnInputDto, before: HTMLElement | null): Promise<boolean> {
    if (!canRun()) return false;
    fail(null);
    note(null);
    const runId = await ipc.openRun();
    running = runId;
    // A new chat has no id yet: its tree follows the first conversation a run of agents reports.
    if (current === null) runs.expectNew();
    setBusy(true);
    const turn = new LiveTurn(log, 50, before, { conversation: current, agent: agentPick.value() });
    const channel = new Channel<ChatEventDto_Deserialize>();
    channel.onmessage = (ev: ChatEventDto) => {
      if (!stopped) turn.handle(ev);
      log.scrollTop = log.scrollHeight;
    };
    const attached = turnInput.kind === "regenerate" ? [] : Array.from(sources);
    const r = await attempt(ipc.sendMessage(runId, current, providerSel.value, model.value.trim() || null, turnInput, attached, agentPick.value(), current === null ? discovery.pending() : null, channel));
    if (!(r instanceof IpcFailure)) sources.clear();
    running = null;
    if (stopped) return false;
    turn.render();
    // The page stays busy until the stored transcript is drawn again: a click in between
    // (Regenerate, Edit, Fork) would act on messages about to be replaced, and the re-render
    // would then wipe the turn it started.
    try {
      if (r instanceof IpcFailure) {
        // Show what the store holds (an edit or a regenerate took messages off the view), then why.
        if (current !== null) await openConversation(current);
        fail(r.message);
        return false;
      }
      current = r;
      await conversations.reload();
      await openConversation(r);
      if (turn.failedWith !== null && failure.hidden) fail(turn.failedWith);
    } finally {
      if (!stopped) setBusy(false);
    }
    input.focus();
    return true;
  }

  async function send() {
    const text = input.value;
    const images = attach.images();
    if ((text.trim() === "" && images.length === 0) || !canRun()) return;
    if (current === null) log.replaceChildren();
    const bubble = h("div", { class: "msg-block", "data-role": "user" }, userBubble(text, images));
    log.append(bubble);
    input.value = "";
    attach.clear();
    const went = await runTurn({ kind: "message", text, images }, bubble);
    // Refused (no key, bad input…): the text and images are kept for another try.
    if (!went && !stopped && input.value === "") {
      input.value = text;
      attach.restore(images);
    }
  }
  composer.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void send();
  });
  input.addEventListener("keydown", (ev) => {
    if (slash.onKey(ev)) return;
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      void send();
    }
  });
  input.addEventListener("paste", (ev) => {
    const files = Array.from(ev.clipboardData?.files ?? []).filter((f) => f.type.startsWith("image/"));
    if (files.length === 0) return;
    ev.preventDefault();
    void attach.addFiles(files);
  });
  stopBtn.addEventListener("click", () => {
    if (running !== null) void ipc.cancelRun(running);
  });

  const discovery = discoverySwitch({ log, conversation: () => current });
  root.replaceChildren(h("section", { class: "chat" },
    h("aside", { class: "chat-side" }, newChat, conversations.search, conversations.list),
    h("div", { class: "chat-main" },
      h("div", { class: "chat-top" }, providerSel, model, models, usage, redactionSwitch({ log, conversation: () => current, provider: providerSel }).el, discovery.el, manage),
      runs.el, log, failure, notice, composer),
  ));
  void loadProviders();
  void agentPick.reload();
  void conversations.reload();
  return () => {
    stopped = true;
    conversations.stop();
    runs.stop();
    slash.close();
    if (running !== null) void ipc.cancelRun(running);
  };
}
