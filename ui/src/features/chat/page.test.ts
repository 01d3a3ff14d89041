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
  cancelChat: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m, events: {} }));
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage: (ev: unknown) => void = () => {};
  },
}));

import { mountChat } from "./page";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const provider = { name: "work", kind: "openai", kind_name: "OpenAI", base_url: null, model: "gpt-4.1", key_set: true, key_required: true, models: ["gpt-4.1"] };

let root: HTMLElement;
let unmount: () => void;
let finish: (r: unknown) => void;
let channel: { onmessage: (ev: unknown) => void };

beforeEach(async () => {
  Object.values(m).forEach((f) => f.mockReset());
  m.listProviders.mockImplementation(() => ok([provider]));
  m.listConversations.mockImplementation(() => ok([]));
  m.loadConversation.mockImplementation(() => ok([]));
  m.cancelChat.mockResolvedValue(true);
  m.sendMessage.mockImplementation((_run: string, _c: unknown, _p: string, _m: unknown, _t: string, ch: typeof channel) => {
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
  it("sends on Enter with the picked provider and model, and streams deltas into one bubble", async () => {
    await sendText("hello <b>there</b>");
    expect(m.sendMessage).toHaveBeenCalledTimes(1);
    const [runId, conv, prov, model, text] = m.sendMessage.mock.calls[0];
    expect([conv, prov, model, text]).toEqual([null, "work", "gpt-4.1", "hello <b>there</b>"]);
    expect(runId).toMatch(/^chat-/);
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
    channel.onmessage({ event: "tool_running", call_id: "c1" });
    expect(card().dataset.status).toBe("running");
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
    expect(m.cancelChat).toHaveBeenCalledWith(m.sendMessage.mock.calls[0][0]);
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
