// The server card's cost line (issue 16): what each server's tools add to every turn, from one
// `catalog_costs` read for the whole page, refreshed when the host says something changed; a
// server that never ran says its cost is known after its first start. The trust and review
// dialogs opened from the page say the cost before the person decides.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  listServers: vi.fn(), credentials: vi.fn(), catalogCosts: vi.fn(), trustView: vi.fn(), pinReview: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({
  commands: m,
  events: { hostChanged: { listen: vi.fn(() => Promise.resolve(() => {})) } },
}));

import { mountServers } from "./page";

const flush = async () => { for (let i = 0; i < 30; i++) await Promise.resolve(); };
const status = { kind: "stopped", detail: "", tools: null, retry_at_ms: null, stderr_tail: [], reason: null, cap_bytes: null, protocol: null };
const row = (name: string, trust = "trusted", review = 0) => ({
  name, transport: "stdio", summary: "/bin/true", enabled: true, trust, status, missing_secrets: [], review,
  sandboxed: false, allow_insecure: false, always_on: false,
});
const model = { provider: "oa", model: "gpt-4o", method: "o200k_base", estimate: false, context_window: 128000 };
const priced = (fs: number) => ({
  status: "ok",
  data: {
    models: [model],
    servers: [
      { server: "fs", enabled: true, running: false, last_known_ms: 1_700_000_000_000, known: true,
        tools: [{ tool: "read", offered: true, tokens: [fs] }, { tool: "held", offered: false, tokens: [500] }],
        tokens: [fs + 500], offered_tokens: [fs] },
      { server: "fresh", enabled: true, running: false, last_known_ms: null, known: false, tools: [], tokens: [0], offered_tokens: [0] },
    ],
    offered_tokens: [fs],
  },
});
const cost = (name: string) => root.querySelector(`.server[data-name="${name}"] .server-cost`)?.textContent;

let root: HTMLElement;
let unmount: () => void;
beforeEach(() => {
  root = document.createElement("main");
  document.body.append(root);
  m.listServers.mockResolvedValue({ status: "ok", data: [row("fs", "trusted", 1), row("fresh", "not_approved")] });
  m.credentials.mockResolvedValue({ status: "ok", data: { store: "memory", providers: [], servers: [] } });
  m.catalogCosts.mockResolvedValue(priced(12800));
});
afterEach(() => {
  unmount?.();
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("the server card's cost line", () => {
  it("shows each server's tokens per model from one read for the whole page", async () => {
    unmount = mountServers(root);
    await flush();
    expect(cost("fs")).toBe("Tools: 12,800 tokens for oa:gpt-4o (10.0% of its context)");
    expect(cost("fresh")).toBe("Tools: cost known after its first start");
    expect(m.catalogCosts).toHaveBeenCalledTimes(1);
  });

  it("fills a late price in place: the card and its buttons are not swapped under a click", async () => {
    let price: ((v: unknown) => void) | null = null;
    m.catalogCosts.mockImplementationOnce(() => new Promise((r) => { price = r; }));
    unmount = mountServers(root);
    await flush();
    const card = root.querySelector('.server[data-name="fs"]');
    const button = card?.querySelector("button");
    expect(button).not.toBeNull();
    price!(priced(3200));
    await flush();
    expect(cost("fs")).toBe("Tools: 3,200 tokens for oa:gpt-4o (2.5% of its context)");
    expect(root.querySelector('.server[data-name="fs"]')).toBe(card);
    expect(card?.querySelector("button")).toBe(button);
  });

  it("draws the last price read at once on the next visit, so no card grows under the pointer", async () => {
    unmount = mountServers(root);
    await flush();
    unmount();
    // The next visit's read is slow: the cards are drawn with what the last one said.
    m.catalogCosts.mockImplementationOnce(() => new Promise(() => {}));
    root.replaceChildren();
    unmount = mountServers(root);
    await flush();
    expect(cost("fs")).toBe("Tools: 12,800 tokens for oa:gpt-4o (10.0% of its context)");
    expect(cost("fresh")).toBe("Tools: cost known after its first start");
  });

  it("follows a change the host announces", async () => {
    unmount = mountServers(root);
    await flush();
    m.catalogCosts.mockResolvedValue(priced(6400));
    const listen = (await import("../../ipc/bindings")).events.hostChanged.listen as unknown as ReturnType<typeof vi.fn>;
    vi.useFakeTimers();
    (listen.mock.calls[0][0] as () => void)();
    vi.advanceTimersByTime(150);
    vi.useRealTimers();
    await flush();
    expect(cost("fs")).toBe("Tools: 6,400 tokens for oa:gpt-4o (5.0% of its context)");
    expect(m.catalogCosts).toHaveBeenCalledTimes(2);
  });

  it("holds a card's rebuild while its button is pressed, so the click is not lost", async () => {
    unmount = mountServers(root);
    await flush();
    const approve = () => [...root.querySelectorAll<HTMLButtonElement>('.server[data-name="fresh"] button')]
      .find((b) => b.textContent === "Review and approve…")!;
    const pressed = approve();
    pressed.dispatchEvent(new MouseEvent("mousedown", { bubbles: true, button: 0 }));
    // The server's status changes while the button is down: its card would be rebuilt.
    m.listServers.mockResolvedValue({ status: "ok", data: [row("fs", "trusted", 1), { ...row("fresh", "not_approved"), enabled: false }] });
    const listen = (await import("../../ipc/bindings")).events.hostChanged.listen as unknown as ReturnType<typeof vi.fn>;
    vi.useFakeTimers();
    (listen.mock.calls[0][0] as () => void)();
    vi.advanceTimersByTime(150);
    vi.useRealTimers();
    await flush();
    expect(pressed.isConnected).toBe(true);
    pressed.dispatchEvent(new MouseEvent("mouseup", { bubbles: true, button: 0 }));
    await new Promise((r) => setTimeout(r, 0));
    await flush();
    // Released: the new state is drawn.
    expect(pressed.isConnected).toBe(false);
    expect(approve()).toBeDefined();
  });

  it("leaves the cards alone when the costs cannot be read", async () => {
    m.catalogCosts.mockResolvedValue({ status: "error", error: { message: "no" } });
    unmount = mountServers(root);
    await flush();
    expect(root.querySelector('.server[data-name="fs"]')).not.toBeNull();
    expect(root.querySelector(".server-cost")).toBeNull();
  });

  it("says in the approval dialog that a never-run server's cost is unknown until it starts", async () => {
    m.trustView.mockResolvedValue({ status: "ok", data: {
      name: "fresh", remote: false, lines: [["executable", "/bin/true"]], warnings: [], fingerprint: "fp",
      state: "not_approved", fields: [], bind_options: [],
    } });
    unmount = mountServers(root);
    await flush();
    const approve = [...root.querySelectorAll<HTMLButtonElement>('.server[data-name="fresh"] button')]
      .find((b) => b.textContent === "Review and approve…")!;
    approve.click();
    await flush();
    const note = root.querySelector(".trust-dialog .enable-cost");
    expect(note?.hasAttribute("hidden")).toBe(false);
    expect(note?.textContent).toContain("unknown until it starts");
  });

  it("says in the review what approving the held tools adds", async () => {
    m.pinReview.mockResolvedValue({ status: "ok", data: {
      server: "fs", surface: "s", live: false, instructions_changed: false, first_pin_cap: 200,
      changes: [{ kind: "tool", name: "held", key: "held", status: "added", fields: [], findings: [] }],
    } });
    unmount = mountServers(root);
    await flush();
    root.querySelector<HTMLButtonElement>('.server[data-name="fs"] .review-badge')!.click();
    await flush();
    expect(root.querySelector(".pin-review-dialog .held-cost")?.textContent)
      .toBe("Approving this tool adds 500 tokens for oa:gpt-4o (0.4% of its context) to every turn.");
  });
});
