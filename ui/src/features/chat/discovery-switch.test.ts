import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  conversationDiscovery: vi.fn(),
  setConversationDiscovery: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { describeDiscovery, discoverySwitch } from "./discovery-switch";
import { h } from "../../app/dom";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0)); };

function setup(conversation: string | null) {
  const log = h("div", { class: "chat-log" });
  let current = conversation;
  const sw = discoverySwitch({ log, conversation: () => current });
  return { log, sw, open: (id: string | null) => (current = id) };
}

describe("the discovery switch", () => {
  beforeEach(() => {
    vi.resetAllMocks();
    m.setConversationDiscovery.mockReturnValue(ok(null));
  });

  it("can be ticked for a new chat and says on or off for a conversation", () => {
    expect(describeDiscovery(false, null)).toMatchObject({ hidden: false, enabled: true, checked: false });
    expect(describeDiscovery(true, null)).toMatchObject({ text: "Find tools: on", checked: true });
    expect(describeDiscovery(true, "c1")).toMatchObject({ text: "Find tools: on", checked: true, enabled: true, hidden: false });
    expect(describeDiscovery(false, "c1")).toMatchObject({ text: "Find tools", checked: false, enabled: true });
    expect(describeDiscovery(null, "c1")).toMatchObject({ text: "Find tools: unknown", enabled: false });
  });

  it("switches the conversation on and reads the state again", async () => {
    m.conversationDiscovery.mockReturnValueOnce(ok(false)).mockReturnValueOnce(ok(true));
    const { sw } = setup("c1");
    await flush();
    const box = sw.el.querySelector<HTMLInputElement>(".chat-discovery-toggle")!;
    expect(box.checked).toBe(false);
    expect(box.disabled).toBe(false);
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(m.setConversationDiscovery).toHaveBeenCalledWith("c1", true);
    expect(box.checked).toBe(true);
    expect(sw.el.textContent).toContain("Find tools: on");
  });

  it("says so when the switch cannot be saved, and asks nothing for a new chat", async () => {
    m.conversationDiscovery.mockReturnValue(ok(false));
    m.setConversationDiscovery.mockReturnValue(Promise.resolve({ status: "error" as const, error: { message: "no" } }));
    const { sw } = setup("c1");
    await flush();
    const box = sw.el.querySelector<HTMLInputElement>(".chat-discovery-toggle")!;
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(sw.el.textContent).toContain("could not be saved");
    expect(sw.el.classList.contains("error")).toBe(true);

    vi.resetAllMocks();
    const fresh = setup(null);
    await flush();
    expect(fresh.sw.el.hidden).toBe(false);
    expect(m.conversationDiscovery).not.toHaveBeenCalled();
  });

  it("keeps a new chat's choice for its first message, and forgets it once the chat exists", async () => {
    const { log, sw, open } = setup(null);
    await flush();
    expect(sw.pending()).toBe(false);
    const box = sw.el.querySelector<HTMLInputElement>(".chat-discovery-toggle")!;
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(m.setConversationDiscovery).not.toHaveBeenCalled();
    expect(sw.pending()).toBe(true);
    expect(sw.el.textContent).toContain("Find tools: on");
    // The first message made the conversation (sent with discovery on): it keeps its own setting.
    m.conversationDiscovery.mockReturnValue(ok(true));
    open("c9");
    log.replaceChildren(h("div", {}, "message"));
    await flush();
    expect(sw.pending()).toBeNull();
    expect(m.conversationDiscovery).toHaveBeenLastCalledWith("c9");
    // A new chat again starts unticked.
    open(null);
    log.replaceChildren();
    await flush();
    expect(sw.pending()).toBe(false);
    expect(box.checked).toBe(false);
  });

  it("reads again when another conversation is opened", async () => {
    m.conversationDiscovery.mockReturnValueOnce(ok(false)).mockReturnValueOnce(ok(true));
    const { log, sw, open } = setup("c1");
    await flush();
    open("c2");
    log.replaceChildren(h("div", {}, "message"));
    await flush();
    expect(m.conversationDiscovery).toHaveBeenLastCalledWith("c2");
    expect(sw.el.textContent).toContain("Find tools: on");
  });
});
