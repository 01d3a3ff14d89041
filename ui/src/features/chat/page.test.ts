import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  listProviders: vi.fn(),
  providerKinds: vi.fn(),
  addProvider: vi.fn(),
  setProviderKey: vi.fn(),
  removeProvider: vi.fn(),
  listConversations: vi.fn(),
  loadConversation: vi.fn(),
  renameConversation: vi.fn(),
  deleteConversation: vi.fn(),
  searchConversations: vi.fn(),
  sendMessage: vi.fn(),
  openRun: vi.fn(),
  cancelRun: vi.fn(),
  conversationInfo: vi.fn(),
  forkConversation: vi.fn(),
  serverContext: vi.fn(),
  readResource: vi.fn(),
  getPrompt: vi.fn(),
  getSettings: vi.fn(),
  listProviderModels: vi.fn(),
  listAgents: vi.fn(),
  conversationAgentRuns: vi.fn(),
}));
const ev = vi.hoisted(() => ({ listen: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m, events: { hostChanged: { listen: ev.listen } } }));
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage: (ev: unknown) => void = () => {};
  },
}));

import { mountChat } from "./page";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const noInfo = { summaries: [], input_tokens: null, output_tokens: null, cost_usd: null, cost_complete: true, by_model: [] };
const provider = { name: "work", kind: "openai", kind_name: "OpenAI", base_url: null, model: "gpt-4.1", key_set: true, key_required: true, models: ["gpt-4.1"] };

let root: HTMLElement;
let unmount: () => void;
let finish: (r: unknown) => void;
let channel: { onmessage: (ev: unknown) => void };

beforeEach(async () => {
  Object.values(m).forEach((f) => f.mockReset());
  m.listProviders.mockImplementation(() => ok([provider]));
  m.getSettings.mockImplementation(() => ok({ settings: { default_provider: null, default_model: null } }));
  m.listConversations.mockImplementation(() => ok([]));
  m.loadConversation.mockImplementation(() => ok([]));
  let runs = 0;
  m.openRun.mockImplementation(() => Promise.resolve(`run-${String(++runs).padStart(32, "0")}`));
  m.cancelRun.mockResolvedValue(true);
  m.conversationInfo.mockImplementation(() => ok(noInfo));
  m.listAgents.mockImplementation(() => ok([]));
  m.conversationAgentRuns.mockImplementation(() => ok([]));
  ev.listen.mockImplementation(() => Promise.resolve(() => {}));
  m.sendMessage.mockImplementation((_run: string, _c: unknown, _p: string, _m: unknown, _t: unknown, _a: unknown, _agent: unknown, _discovery: unknown, ch: typeof channel) => {
    channel = ch;
    return new Promise((r) => (finish = r));
  });
  root = document.createElement("div");
  document.body.append(root);
  unmount = mountChat(root);
  await flush();
});
afterEach(() => {
  unmount();
  root.remove();
});

async function sendText(text: string) {
  const input = root.querySelector(".chat-input") as HTMLTextAreaElement;
  input.value = text;
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  await flush();
}

describe("chat page", () => {
  it("stays busy until the stored transcript is drawn again, so no click lands on messages about to be replaced", async () => {
    await sendText("hello");
    let loaded: ((v: unknown) => void) | null = null;
    m.loadConversation.mockImplementation(() => new Promise((r) => { loaded = r; }));
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect(m.loadConversation).toHaveBeenCalledWith("c-1");
    const stop = root.querySelector(".chat-stop") as HTMLElement;
    expect(stop.hidden).toBe(false);
    expect((root.querySelector(".chat-input") as HTMLTextAreaElement).disabled).toBe(true);
    loaded!({ status: "ok", data: [
      { id: "1", role: "user", status: "complete", error: null, model: null, parts: [{ type: "text", text: "hello" }] },
      { id: "2", role: "assistant", status: "complete", error: null, model: "gpt-4.1", parts: [{ type: "text", text: "Hi" }] },
    ] });
    await flush();
    expect(stop.hidden).toBe(true);
    expect((root.querySelector(".chat-input") as HTMLTextAreaElement).disabled).toBe(false);
    expect((root.querySelector(".msg-regenerate") as HTMLButtonElement).disabled).toBe(false);
  });

  it("starts on the default provider and model of the Settings page", async () => {
    unmount();
    root.remove();
    const home = { ...provider, name: "home", model: "llama3", models: ["llama3"] };
    m.listProviders.mockImplementation(() => ok([provider, home]));
    m.getSettings.mockImplementation(() => ok({ settings: { default_provider: "home", default_model: "qwen3" } }));
    root = document.createElement("div");
    document.body.append(root);
    unmount = mountChat(root);
    await flush();
    expect(root.querySelector<HTMLSelectElement>(".chat-provider")?.value).toBe("home");
    expect(root.querySelector<HTMLInputElement>(".chat-model")?.value).toBe("qwen3");
  });

  it("sends on Enter with the picked provider and model, and streams deltas into one bubble", async () => {
    await sendText("hello <b>there</b>");
    expect(m.sendMessage).toHaveBeenCalledTimes(1);
    const [runId, conv, prov, model, input] = m.sendMessage.mock.calls[0];
    expect([conv, prov, model, input]).toEqual([null, "work", "gpt-4.1", { kind: "message", text: "hello <b>there</b>", images: [] }]);
    // A new chat sends its "Find tools" choice (unticked here); a conversation keeps its own.
    expect(m.sendMessage.mock.calls[0][7]).toBe(false);
    expect(runId).toMatch(/^run-[0-9]{32}$/);
    expect((root.querySelector(".chat-input") as HTMLTextAreaElement).disabled).toBe(true);
    expect(root.querySelector(".msg-user")?.textContent).toBe("hello <b>there</b>");
    expect(root.querySelector("b")).toBeNull();
    channel.onmessage({ event: "text_delta", text: "Hel" });
    channel.onmessage({ event: "text_delta", text: "lo **world**" });
    await wait(70);
    const bubbles = root.querySelectorAll(".msg-assistant");
    expect(bubbles).toHaveLength(1);
    expect(bubbles[0].textContent).toBe("Hello world");
    expect(bubbles[0].querySelector("strong")?.textContent).toBe("world");
    m.loadConversation.mockImplementation(() => ok([
      { id: "1", role: "user", status: "complete", error: null, model: null, parts: [{ type: "text", text: "hello" }] },
      { id: "2", role: "assistant", status: "complete", error: null, model: "gpt-4.1", parts: [{ type: "text", text: "Hello world" }] },
    ]));
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect(m.loadConversation).toHaveBeenCalledWith("c-1");
    expect((root.querySelector(".chat-input") as HTMLTextAreaElement).disabled).toBe(false);
    expect(root.querySelectorAll(".msg-assistant")).toHaveLength(1);
  });

  it("moves a tool card from proposed to running to done", async () => {
    await sendText("list files");
    channel.onmessage({ event: "tool_call_proposed", call_id: "c1", name: "fs__list", server: "fs", tool: "list", arguments: '{\n  "path": "/tmp"\n}' });
    const card = () => root.querySelector(".tool-card") as HTMLElement;
    expect(card().dataset.status).toBe("proposed");
    expect(card().textContent).toContain("Waiting for approval");
    expect(card().querySelector(".tc-args pre")?.textContent).toContain('"path": "/tmp"');
    channel.onmessage({ event: "tool_running", call_id: "c1", edited_arguments: null });
    expect(card().dataset.status).toBe("running");
    expect(card().querySelector(".tool-edited")?.hasAttribute("hidden")).toBe(true);
    channel.onmessage({ event: "tool_progress", call_id: "c1", progress: { progress: 1, total: 2, message: "half" } });
    expect(card().querySelector("progress")).not.toBeNull();
    channel.onmessage({ event: "tool_result", call_id: "c1", is_error: false, text: "<img src=x onerror=alert(1)>a.txt", duration_ms: 42 });
    expect(card().dataset.status).toBe("done");
    expect(card().textContent).toContain("42 ms");
    expect(card().textContent).toContain("a.txt");
    expect(card().querySelector("img")).toBeNull();
    expect(card().querySelector("progress")).toBeNull();
  });

  it("shows a failure, and an error result marks the card", async () => {
    await sendText("hi");
    channel.onmessage({ event: "tool_call_proposed", call_id: "c1", name: "x", server: null, tool: null, arguments: "{}" });
    channel.onmessage({ event: "tool_result", call_id: "c1", is_error: true, text: "denied by the user", duration_ms: 0 });
    expect((root.querySelector(".tool-card") as HTMLElement).dataset.status).toBe("error");
    channel.onmessage({ event: "failed", error: "provider work: 401 <script>x</script>" });
    const note = root.querySelector(".msg-note.error");
    expect(note?.textContent).toContain("401 <script>x</script>");
    expect(root.querySelector("script")).toBeNull();
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect(root.querySelector(".chat-error")?.textContent).toContain("401 <script>x</script>");
  });

  it("renders a stored conversation: tool cards get their results, a failed answer says why", async () => {
    m.listConversations.mockImplementation(() => ok([
      { id: "old", title: "Older", updated_ms: 1, preview: null },
      { id: "new", title: "Newer <i>x</i>", updated_ms: 2, preview: "last words" },
    ]));
    m.loadConversation.mockImplementation(() => ok([
      { id: "1", role: "user", status: "complete", error: null, model: null, parts: [{ type: "text", text: "read it" }] },
      { id: "2", role: "assistant", status: "complete", error: null, model: "m", parts: [{ type: "text", text: "Sure" }, { type: "tool_call", id: "t1", name: "fs__read", arguments: "{}" }] },
      { id: "3", role: "user", status: "complete", error: null, model: null, parts: [{ type: "tool_result", call_id: "t1", is_error: false, text: "contents" }] },
      { id: "4", role: "assistant", status: "failed", error: "rate limited", model: "m", parts: [] },
    ]));
    unmount();
    unmount = mountChat(root);
    await flush();
    const titles = Array.from(root.querySelectorAll(".conv-title")).map((t) => t.textContent);
    expect(titles).toEqual(["Newer <i>x</i>", "Older"]);
    (root.querySelector(".conv-open") as HTMLButtonElement).click();
    await flush();
    expect(m.loadConversation).toHaveBeenCalledWith("new");
    const card = root.querySelector(".tool-card") as HTMLElement;
    expect(card.dataset.status).toBe("done");
    expect(card.textContent).toContain("contents");
    expect(root.querySelector(".msg-note.error")?.textContent).toBe("Failed: rate limited");
    expect(root.querySelectorAll(".msg-user")).toHaveLength(1);
  });

  it("Stop cancels the running turn by its id", async () => {
    await sendText("long one");
    const stop = root.querySelector(".chat-stop") as HTMLButtonElement;
    expect(stop.hidden).toBe(false);
    stop.click();
    // The run id Rust minted is the one the turn runs under and the one Stop cancels.
    expect(m.sendMessage.mock.calls[0][0]).toBe(await m.openRun.mock.results[0].value);
    expect(m.cancelRun).toHaveBeenCalledWith(m.sendMessage.mock.calls[0][0]);
    channel.onmessage({ event: "cancelled" });
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect(stop.hidden).toBe(true);
  });

  it("an error from the command is shown and the text is kept", async () => {
    m.sendMessage.mockImplementation(() => ok(undefined).then(() => ({ status: "error", error: { code: "invalid", message: "provider work: no key" } })));
    await sendText("keep me");
    expect(root.querySelector(".chat-error")?.textContent).toBe("provider work: no key");
    expect((root.querySelector(".chat-input") as HTMLTextAreaElement).value).toBe("keep me");
  });

  it("without a provider, explains and offers to add one", async () => {
    unmount();
    m.listProviders.mockImplementation(() => ok([]));
    unmount = mountChat(root);
    await flush();
    expect(root.textContent).toContain("No model provider yet");
    expect(Array.from(root.querySelectorAll("button")).some((b) => b.textContent === "Add a provider")).toBe(true);
  });
});

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const msg = (id: string, role: string, parts: unknown[], extra: Record<string, unknown> = {}) =>
  ({ id, role, status: "complete", error: null, model: role === "user" ? null : "m", parts, ...extra });
const stored = [
  msg("1", "user", [{ type: "text", text: "first question" }, { type: "image", mime_type: "image/png", data: PNG }]),
  msg("2", "assistant", [{ type: "text", text: "first **answer**" }, { type: "tool_call", id: "t1", name: "fs__read", arguments: "{}" }]),
  msg("3", "user", [{ type: "tool_result", call_id: "t1", is_error: false, text: "contents" }]),
  msg("4", "assistant", [{ type: "text", text: "read it" }]),
  msg("5", "user", [{ type: "text", text: "second question" }]),
  msg("6", "assistant", [{ type: "text", text: "second answer" }]),
];

async function openStored(messages: unknown[] = stored, info: unknown = noInfo) {
  m.listConversations.mockImplementation(() => ok([{ id: "c-1", title: "One", updated_ms: 1, preview: null }]));
  m.loadConversation.mockImplementation(() => ok(messages));
  m.conversationInfo.mockImplementation(() => ok(info));
  unmount();
  unmount = mountChat(root);
  await flush();
  (root.querySelector(".conv-open") as HTMLButtonElement).click();
  await flush();
}
const block = (id: string) => root.querySelector(`.msg-block[data-id="${id}"]`) as HTMLElement;
const buttons = (id: string) => Array.from(block(id).querySelectorAll(".msg-actions button")).map((b) => b.className);

describe("chat page: message actions", () => {
  it("gives each shown message its id and the right actions", async () => {
    await openStored();
    expect(Array.from(root.querySelectorAll(".msg-block")).map((b) => (b as HTMLElement).dataset.id)).toEqual(["1", "2", "4", "5", "6"]);
    expect(buttons("1")).toEqual(["msg-edit", "msg-fork", "msg-copy"]);
    expect(buttons("2")).toEqual(["msg-fork", "msg-copy"]);
    expect(buttons("5")).toEqual(["msg-edit", "msg-fork", "msg-copy"]);
    expect(buttons("6")).toEqual(["msg-regenerate", "msg-fork", "msg-copy"]);
    expect(block("1").querySelector(".msg-actions")?.getAttribute("role")).toBe("toolbar");
  });

  it("shows a person's image as a data: URL of an allowed type only", async () => {
    await openStored([
      msg("1", "user", [
        { type: "text", text: "look" },
        { type: "image", mime_type: "image/png", data: PNG },
        { type: "image", mime_type: "image/svg+xml", data: "PHN2Zy8+" },
        { type: "image", mime_type: "image/png", data: "not base64!" },
      ]),
      msg("2", "assistant", [{ type: "image", mime_type: "image/gif", data: "R0lGODlhAQABAAAAACw=" }]),
    ]);
    const imgs = Array.from(root.querySelectorAll(".chat-log img")) as HTMLImageElement[];
    expect(imgs.map((i) => i.getAttribute("src")?.slice(0, 22))).toEqual(["data:image/png;base64,", "data:image/gif;base64,"]);
    expect(block("1").textContent).toContain("image/svg+xml is not a displayed image type");
    expect(block("1").textContent).toContain("not valid base64");
  });

  it("edits a message inline, sends kind edit, and reloads the conversation", async () => {
    await openStored();
    (block("5").querySelector(".msg-edit") as HTMLButtonElement).click();
    const field = block("5").querySelector(".msg-edit-input") as HTMLTextAreaElement;
    expect(field.value).toBe("second question");
    expect(document.activeElement).toBe(field);
    field.value = "second question, <i>better</i>";
    (block("5").querySelector(".msg-edit-save") as HTMLButtonElement).click();
    await flush();
    expect(m.sendMessage).toHaveBeenCalledTimes(1);
    const [, conv, , , input] = m.sendMessage.mock.calls[0];
    expect(conv).toBe("c-1");
    expect(input).toEqual({ kind: "edit", message: "5", text: "second question, <i>better</i>" });
    expect(block("6")).toBeNull();
    expect(block("5").querySelector(".msg-user")?.textContent).toBe("second question, <i>better</i>");
    expect(root.querySelector(".chat-log i")).toBeNull();
    expect((block("1").querySelector(".msg-fork") as HTMLButtonElement).disabled).toBe(true);
    expect((block("1").querySelector(".msg-copy") as HTMLButtonElement).disabled).toBe(false);
    channel.onmessage({ event: "text_delta", text: "new answer" });
    m.loadConversation.mockClear();
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect(m.loadConversation).toHaveBeenCalledWith("c-1");
    expect((block("1").querySelector(".msg-fork") as HTMLButtonElement).disabled).toBe(false);
  });

  it("Cancel and Escape leave the message as it was", async () => {
    await openStored();
    (block("1").querySelector(".msg-edit") as HTMLButtonElement).click();
    expect(block("1").querySelector(".msg-editor")?.textContent).toContain("images are not kept");
    (block("1").querySelector(".msg-edit-cancel") as HTMLButtonElement).click();
    expect(block("1").querySelector(".msg-editor")).toBeNull();
    expect((block("1").querySelector(".msg-user") as HTMLElement).hidden).toBe(false);
    (block("5").querySelector(".msg-edit") as HTMLButtonElement).click();
    block("5").querySelector(".msg-edit-input")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(block("5").querySelector(".msg-editor")).toBeNull();
    expect(m.sendMessage).not.toHaveBeenCalled();
  });

  it("regenerates the last answer", async () => {
    await openStored();
    (block("6").querySelector(".msg-regenerate") as HTMLButtonElement).click();
    await flush();
    expect(m.sendMessage.mock.calls[0][1]).toBe("c-1");
    expect(m.sendMessage.mock.calls[0][4]).toEqual({ kind: "regenerate" });
    expect(block("6")).toBeNull();
    expect(block("5")).not.toBeNull();
    finish({ status: "ok", data: "c-1" });
    await flush();
  });

  it("a refused edit shows the error and re-reads what the store holds", async () => {
    await openStored();
    m.sendMessage.mockImplementation(() => ok(undefined).then(() => ({ status: "error", error: { code: "invalid", message: "that is not a message id" } })));
    (block("5").querySelector(".msg-edit") as HTMLButtonElement).click();
    (block("5").querySelector(".msg-edit-save") as HTMLButtonElement).click();
    await flush();
    expect(root.querySelector(".chat-error")?.textContent).toBe("that is not a message id");
    expect(block("6")).not.toBeNull();
  });

  it("forks from a message, then opens the copy and refreshes the list", async () => {
    await openStored();
    m.forkConversation.mockImplementation(() => ok("c-2"));
    m.listConversations.mockClear();
    m.loadConversation.mockClear();
    (block("2").querySelector(".msg-fork") as HTMLButtonElement).click();
    await flush();
    expect(m.forkConversation).toHaveBeenCalledWith("c-1", "2", null);
    expect(m.listConversations).toHaveBeenCalled();
    expect(m.loadConversation).toHaveBeenCalledWith("c-2");
  });

  it("copies a message's text", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    await openStored();
    (block("2").querySelector(".msg-copy") as HTMLButtonElement).click();
    await flush();
    expect(writeText).toHaveBeenCalledWith("first **answer**");
    expect(block("2").querySelector(".msg-copy")?.textContent).toBe("Copied");
  });
});

describe("chat page: usage and summaries", () => {
  const info = {
    summaries: [{ through: "3", messages: 3, text: "They asked **twice**. <script>x</script>", model: "m" }],
    input_tokens: 12345, output_tokens: 678, cost_usd: 0.0312, cost_complete: true,
    by_model: [{ provider: "work", model: "gpt-4.1", input_tokens: 12345, output_tokens: 678, cost_usd: 0.0312 }],
  };

  it("shows tokens and cost in the header, per model in its title", async () => {
    await openStored(stored, info);
    const usage = root.querySelector(".chat-usage") as HTMLElement;
    expect(usage.hidden).toBe(false);
    expect(usage.textContent).toBe("12,345 in · 678 out · ≈ $0.03");
    expect(usage.title).toContain("work / gpt-4.1: 12,345 in · 678 out · ≈ $0.03");
  });

  it("says when part of the cost is unknown", async () => {
    await openStored(stored, { ...info, cost_complete: false, by_model: [...info.by_model, { provider: "local", model: "llama", input_tokens: 5, output_tokens: 5, cost_usd: null }] });
    const usage = root.querySelector(".chat-usage") as HTMLElement;
    expect(usage.textContent).toBe("12,345 in · 678 out · ≈ $0.03 + unknown");
    expect(usage.title).toContain("local / llama: 5 in · 5 out · price unknown");
    await openStored(stored, { ...info, cost_usd: 0, cost_complete: false });
    expect(root.querySelector(".chat-usage")?.textContent).toBe("12,345 in · 678 out · cost unknown");
  });

  it("refreshes after a turn and hides for a new chat", async () => {
    await openStored(stored, info);
    m.conversationInfo.mockClear();
    m.conversationInfo.mockImplementation(() => ok({ ...info, input_tokens: 20000 }));
    await sendText("more");
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect(m.conversationInfo).toHaveBeenCalledWith("c-1");
    expect(root.querySelector(".chat-usage")?.textContent).toContain("20,000 in");
    (root.querySelector(".new-chat") as HTMLButtonElement).click();
    expect((root.querySelector(".chat-usage") as HTMLElement).hidden).toBe(true);
  });

  it("puts a summary right after the message it runs through", async () => {
    await openStored(stored, info);
    const log = root.querySelector(".chat-log") as HTMLElement;
    const kids = Array.from(log.children) as HTMLElement[];
    const at = kids.findIndex((k) => k.classList.contains("chat-summary"));
    expect(kids[at - 1].dataset.id).toBe("2");
    const summary = kids[at] as HTMLDetailsElement;
    expect(summary.tagName).toBe("DETAILS");
    expect(summary.open).toBe(false);
    expect(summary.querySelector("summary")?.textContent).toBe("Summary of 3 earlier messages (sent to the model instead of them)");
    expect(summary.querySelector("strong")?.textContent).toBe("twice");
    expect(summary.querySelector("script")).toBeNull();
  });

  it("shows a summary made during a turn above the new message", async () => {
    await openStored();
    await sendText("next");
    channel.onmessage({ event: "compacted", summary: "Earlier: files were read.", messages: 6 });
    const log = root.querySelector(".chat-log") as HTMLElement;
    const live = log.querySelector(".chat-summary") as HTMLElement;
    expect(live.textContent).toContain("Summary of 6 earlier messages");
    expect(live.nextElementSibling?.textContent).toBe("next");
    finish({ status: "ok", data: "c-1" });
    await flush();
  });

  it("marks a tool call that ran with edited arguments", async () => {
    await sendText("go");
    channel.onmessage({ event: "tool_call_proposed", call_id: "c1", name: "x", server: "fs", tool: "write", arguments: '{"a": 1}' });
    channel.onmessage({ event: "tool_running", call_id: "c1", edited_arguments: '{\n  "a": 2\n}' });
    const edited = root.querySelector(".tool-card .tool-edited") as HTMLElement;
    expect(edited.hidden).toBe(false);
    expect(edited.textContent).toContain("Run with your edited arguments");
    expect(edited.querySelector("pre")?.textContent).toBe('{\n  "a": 2\n}');
  });
});

describe("chat page: composer", () => {
  it("sends attached images with the text, shows them in the bubble, and clears them", async () => {
    const input = root.querySelector(".attach-image-input") as HTMLInputElement;
    const file = new File([Uint8Array.from(atob(PNG), (c) => c.charCodeAt(0))], "dot.png", { type: "image/png" });
    Object.defineProperty(input, "files", { value: [file], configurable: true });
    input.dispatchEvent(new Event("change"));
    await vi.waitFor(() => expect(root.querySelectorAll(".attach-chip")).toHaveLength(1));
    await sendText("");
    expect(m.sendMessage).toHaveBeenCalledTimes(1);
    expect(m.sendMessage.mock.calls[0][4]).toEqual({ kind: "message", text: "", images: [{ mime_type: "image/png", data: PNG }] });
    expect(root.querySelector(".chat-log .msg-user img")?.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(root.querySelectorAll(".attach-chip")).toHaveLength(0);
    expect((root.querySelector(".attach-image") as HTMLButtonElement).disabled).toBe(true);
    expect((root.querySelector(".attach-resource") as HTMLButtonElement).disabled).toBe(true);
    finish({ status: "ok", data: "c-1" });
    await flush();
    expect((root.querySelector(".attach-image") as HTMLButtonElement).disabled).toBe(false);
  });

  it("Enter picks a slash prompt instead of sending", async () => {
    m.serverContext.mockImplementation(() => ok([{ server: "alpha", completions: false, resources: [], templates: [], prompts: [{ name: "hi", title: null, description: null, arguments: [] }] }]));
    m.getPrompt.mockImplementation(() => ok({ description: null, messages: [{ role: "user", content: { type: "text", text: "Hello there" } }] }));
    const input = root.querySelector(".chat-input") as HTMLTextAreaElement;
    input.value = "/h";
    input.dispatchEvent(new Event("input"));
    await flush();
    expect(root.querySelectorAll(".slash-list .slash-item")).toHaveLength(1);
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    await flush();
    expect(m.sendMessage).not.toHaveBeenCalled();
    expect(input.value).toBe("Hello there");
    // Expanded for a conversation not started yet.
    expect(m.getPrompt.mock.calls[0][3]).toBe("");
    await sendText("Hello there");
    expect(m.sendMessage.mock.calls[0][4]).toEqual({ kind: "message", text: "Hello there", images: [] });
    // The message names the server the prompt came from, for the trifecta guard.
    expect(m.sendMessage.mock.calls[0][5]).toEqual(["alpha"]);
    finish({ status: "ok", data: "c-1" });
    await flush();
    // Sent: the next message carries nothing from any server.
    await sendText("and then");
    expect(m.sendMessage.mock.calls[1][5]).toEqual([]);
    // The conversation exists now: it keeps its own "Find tools" setting.
    expect(m.sendMessage.mock.calls[1][7]).toBeNull();
  });

  it("sends with the chosen agent, says the provider pickers do not apply, and shows the conversation's runs", async () => {
    unmount();
    root.remove();
    m.listAgents.mockImplementation(() => ok([{ name: "planner", description: "", provider: "oa", model: "gpt-x", system: null, servers: [], tools: [], ask: [], deny: [], delegates: null, max_tokens: null, max_cost_usd: null, max_tool_calls: null, max_wall_secs: null }]));
    const node = { node: "n1", parent: null, agent: "planner", task: "Plan", provider: "oa", model: "gpt-x", status: "done", reason: null, usage_input: 1, usage_output: 1, cost_usd: null, tool_calls: 0, started_ms: 0, ended_ms: 5 };
    m.conversationAgentRuns.mockImplementation(() => ok([{ run: "run-a", nodes: [node], per_agent: [], total: { nodes: 1, usage_input: 1, usage_output: 1, cost_usd: 0, cost_partial: true, tool_calls: 0 } }]));
    root = document.createElement("div");
    document.body.append(root);
    unmount = mountChat(root);
    await flush();
    const pick = root.querySelector<HTMLSelectElement>(".chat-agent")!;
    const provider = root.querySelector<HTMLSelectElement>(".chat-provider")!;
    expect(provider.disabled).toBe(false);
    pick.value = "planner";
    pick.dispatchEvent(new Event("change"));
    expect(provider.disabled).toBe(true);
    expect(root.querySelector<HTMLInputElement>(".chat-model")!.disabled).toBe(true);
    expect(root.querySelector(".chat-agent-hint")?.textContent).toContain("the provider and model pickers do not apply");
    await sendText("plan it");
    expect(m.sendMessage.mock.calls[0][6]).toBe("planner");
    expect(pick.disabled).toBe(true);
    finish({ status: "ok", data: "c-9" });
    await flush();
    expect(m.conversationAgentRuns).toHaveBeenCalledWith("c-9");
    expect(root.querySelector('.run-panel:not([hidden]) .run-node[data-agent="planner"]')).not.toBeNull();
    expect(pick.disabled).toBe(false);
    expect(provider.disabled).toBe(true);
    pick.value = "";
    pick.dispatchEvent(new Event("change"));
    expect(provider.disabled).toBe(false);
    await sendText("plain");
    expect(m.sendMessage.mock.calls[1][6]).toBeNull();
  });
});
