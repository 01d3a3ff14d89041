import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  redactionState: vi.fn(),
  turnRedactions: vi.fn(),
  setConversationRedaction: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { describeState, redactionSwitch } from "./redaction-switch";
import { placeTurnRedactions } from "./messages";
import { h } from "../../app/dom";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0)); };
const state = (over: Partial<{ enabled: boolean; on_for_conversation: boolean; local: boolean; profile: string | null }> = {}) => {
  const s = { enabled: true, on_for_conversation: true, local: false, profile: "openai", ...over };
  return { ...s, applies: s.enabled && s.on_for_conversation && !s.local };
};
const turn = (message_id: string, provider = "openai") => ({
  message_id, provider,
  counts: [{ kind: "email", count: 2, label: "2 e-mail addresses" }, { kind: "api_key", count: 1, label: "1 API key" }],
});

/** A transcript as the page renders it: one block per message. */
const render = (log: HTMLElement, ids: string[]) =>
  log.replaceChildren(...ids.map((id) => h("div", { class: "msg-block", "data-id": id }, `message ${id}`)));

function setup(conversation: string | null) {
  const log = h("div", { class: "chat-log" });
  const provider = h("select", {}, h("option", { value: "cloud" }, "cloud"), h("option", { value: "lo" }, "lo"));
  let current = conversation;
  const sw = redactionSwitch({ log, conversation: () => current, provider });
  return { log, provider, sw, open: (id: string | null) => (current = id) };
}

describe("the redaction switch", () => {
  beforeEach(() => {
    vi.resetAllMocks();
    m.turnRedactions.mockReturnValue(ok([]));
    m.setConversationRedaction.mockReturnValue(ok(null));
  });

  it("says on, off, off in Settings and not needed for a local model", () => {
    expect(describeState(state(), "c1")).toMatchObject({ text: "Redaction: on", checked: true, enabled: true });
    expect(describeState(state({ on_for_conversation: false }), "c1")).toMatchObject({ text: "Redaction: off for this conversation", checked: false, enabled: true });
    expect(describeState(state({ enabled: false }), "c1")).toMatchObject({ text: "Redaction: off in Settings", enabled: false });
    expect(describeState(state({ local: true, profile: "ollama" }), "c1")).toMatchObject({ text: "Redaction: not needed (local model)", checked: false, enabled: false });
    // A new chat: on, nothing to switch yet.
    expect(describeState(state(), null)).toMatchObject({ text: "Redaction: on", enabled: false });
  });

  it("switches the conversation off and reads the state again", async () => {
    m.redactionState.mockReturnValueOnce(ok(state())).mockReturnValueOnce(ok(state({ on_for_conversation: false })));
    const { sw } = setup("c1");
    await flush();
    const box = sw.el.querySelector<HTMLInputElement>(".chat-redaction-toggle")!;
    expect(box.checked).toBe(true);
    expect(box.disabled).toBe(false);
    box.checked = false;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(m.setConversationRedaction).toHaveBeenCalledWith("c1", false);
    expect(m.redactionState).toHaveBeenLastCalledWith("c1", "cloud");
    expect(sw.el.textContent).toBe("Redaction: off for this conversation");
    expect(sw.el.dataset.state).toBe("off");
  });

  it("asks again for the provider picked, and a local one needs none", async () => {
    m.redactionState.mockReturnValueOnce(ok(state())).mockReturnValueOnce(ok(state({ local: true, profile: "ollama" })));
    const { sw, provider } = setup("c1");
    await flush();
    provider.value = "lo";
    provider.dispatchEvent(new Event("change"));
    await flush();
    expect(m.redactionState).toHaveBeenLastCalledWith("c1", "lo");
    expect(sw.el.textContent).toBe("Redaction: not needed (local model)");
    expect(sw.el.querySelector<HTMLInputElement>("input")!.disabled).toBe(true);
  });

  it("says so when the switch cannot be saved", async () => {
    m.redactionState.mockReturnValue(ok(state()));
    m.setConversationRedaction.mockReturnValue(Promise.resolve({ status: "error", error: { code: "internal", message: "disk full" } }));
    const { sw } = setup("c1");
    await flush();
    const box = sw.el.querySelector<HTMLInputElement>("input")!;
    box.checked = false;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(sw.el.classList.contains("error")).toBe(true);
    expect(sw.el.textContent).toContain("could not be saved");
  });
});

describe("the notices of what each turn had redacted", () => {
  beforeEach(() => {
    vi.resetAllMocks();
    m.redactionState.mockReturnValue(ok(state()));
  });

  it("stand after the message that started each turn, with counts and an explanation", () => {
    const log = h("div");
    render(log, ["1", "2", "3", "4"]);
    const placed = placeTurnRedactions(log, [turn("1"), turn("3", "anthropic"), turn("99")]);
    expect(placed).toHaveLength(2);
    const kids = Array.from(log.children);
    expect(kids[1]?.textContent).toBe("Redacted before sending to OpenAI: 2 e-mail addresses, 1 API key");
    expect(kids[4]?.textContent).toBe("Redacted before sending to Anthropic: 2 e-mail addresses, 1 API key");
    expect((kids[1] as HTMLElement).title).toContain("placeholders such as [REDACTED_EMAIL_1]");
    expect((kids[1] as HTMLElement).title).toContain("the model never saw the values. Its answer gets them back here");
    expect((kids[1] as HTMLElement).title).toContain("Only the kinds and counts of what was redacted are recorded");
    // Placed again: replaced, not doubled.
    placeTurnRedactions(log, [turn("1")]);
    expect(log.querySelectorAll(".chat-redacted-turn")).toHaveLength(1);
  });

  it("come back when the page renders the conversation again (reopened, or after a turn)", async () => {
    m.turnRedactions.mockReturnValue(ok([turn("2")]));
    const { log, open } = setup(null);
    await flush();
    expect(m.turnRedactions).not.toHaveBeenCalled();
    open("c7");
    render(log, ["1", "2"]);
    await flush();
    expect(m.turnRedactions).toHaveBeenCalledWith("c7");
    expect(log.querySelector(".msg-block[data-id='2'] + .chat-redacted-turn")?.textContent).toContain("2 e-mail addresses");
    // Streaming appends to the log: nothing is read again.
    const calls = m.turnRedactions.mock.calls.length;
    log.append(h("div", { class: "msg-block" }, "live"));
    await flush();
    expect(m.turnRedactions.mock.calls.length).toBe(calls);
    // The page renders the stored conversation again: the notice is put back.
    render(log, ["1", "2", "3"]);
    expect(log.querySelector(".chat-redacted-turn")).toBeNull();
    await flush();
    expect(log.querySelectorAll(".chat-redacted-turn")).toHaveLength(1);
    expect(log.querySelector(".msg-block[data-id='2'] + .chat-redacted-turn")).not.toBeNull();
  });
});
