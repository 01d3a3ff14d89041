import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  catalog: vi.fn(), catalogCosts: vi.fn(), openServer: vi.fn(), setToolEnabled: vi.fn(), listen: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({
  commands: { catalog: m.catalog, catalogCosts: m.catalogCosts, openServer: m.openServer, setToolEnabled: m.setToolEnabled },
  events: { hostChanged: { listen: m.listen } },
}));

import { mountCatalog } from "./page";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 40; i++) await Promise.resolve(); };
const tool = { name: "list_roots", title: null, description: "Lists roots", input_schema: JSON.stringify({ type: "object" }),
  output_schema: null, hints: [], enabled: true, icon: null, findings: [], held: null };
const catalog = [{ server: "asker", tools: [tool], excluded: [] }];
const costs = (n: number) => ({
  models: [{ provider: "fake", model: "m1", method: "cl100k_base", estimate: false, context_window: 8192 }],
  servers: [{ server: "asker", enabled: true, running: true, last_known_ms: null, tools: [{ tool: "list_roots", tokens: [n] }], tokens: [n], offered_tokens: [n] }],
  offered_tokens: [n],
});

let fire: () => void;
/** The host announces a change; the page's debounced re-read runs and settles. */
const announce = async () => {
  vi.useFakeTimers();
  fire();
  vi.advanceTimersByTime(200);
  vi.useRealTimers();
  await flush();
};
beforeEach(() => {
  vi.clearAllMocks();
  vi.useRealTimers();
  m.listen.mockImplementation((cb: (e: { payload: { kind: string } }) => void) => {
    fire = () => cb({ payload: { kind: "catalog" } });
    return Promise.resolve(() => {});
  });
  m.catalog.mockImplementation(() => ok(catalog));
});

describe("the catalog page", () => {
  it("fills the cost in place: a late price never wipes what the run panel shows", async () => {
    // The first price is slow (the tokenizer loads); the person has already opened the tool.
    let price: ((v: unknown) => void) | null = null;
    m.catalogCosts.mockImplementationOnce(() => new Promise((r) => { price = r; }));
    const root = document.createElement("div");
    document.body.append(root);
    mountCatalog(root);
    await flush();
    // A second read overtakes the first: its answer (with a price) is drawn.
    m.catalogCosts.mockImplementationOnce(() => ok(costs(47)));
    await announce();
    (root.querySelector('.tool-row[data-tool="asker/list_roots"]') as HTMLElement).click();
    await flush();
    const pane = root.querySelector(".tool-detail") as HTMLElement;
    expect(pane.querySelector(".token-cost")?.textContent).toContain("47 tokens");
    const marker = document.createElement("span");
    marker.className = "kept";
    pane.querySelector(".run-panel")?.append(marker);
    // The stale first answer arrives last, with no price: nothing is redrawn from it.
    price!({ status: "ok", data: costs(99) });
    await flush();
    expect(root.querySelector(".tool-detail")).toBe(pane);
    expect(pane.querySelector(".token-cost")?.textContent).toContain("47 tokens");
    // A newer price changes only the cost line; the panel and what it shows stay.
    m.catalogCosts.mockImplementationOnce(() => ok(costs(52)));
    await announce();
    expect(root.querySelector(".tool-detail")).toBe(pane);
    expect(pane.querySelector(".run-panel .kept")).not.toBeNull();
    expect(pane.querySelector(".token-cost")?.textContent).toContain("52 tokens");
  });

  it("a server opened from the page starts without wiping the arguments typed meanwhile", async () => {
    // The server is not running: the catalog shows the tools it offered when it last ran.
    const echo = { ...tool, name: "echo", input_schema: JSON.stringify({ type: "object", properties: { text: { type: "string" } } }) };
    let running = false;
    m.catalog.mockImplementation(() => ok([{ server: "asker", tools: [echo], excluded: [], last_known_ms: running ? null : 1 }]));
    m.catalogCosts.mockImplementation(() => ok(costs(47)));
    m.openServer.mockImplementation(() => ok(null));
    const root = document.createElement("div");
    document.body.append(root);
    mountCatalog(root);
    await flush();
    (root.querySelector('.tool-row[data-tool="asker/echo"]') as HTMLElement).click();
    await flush();
    expect(m.openServer).toHaveBeenCalledWith("asker");
    const pane = root.querySelector(".tool-detail") as HTMLElement;
    expect(pane.querySelector(".last-known-note")?.textContent).toContain("not running");
    const input = pane.querySelector("#run-text") as HTMLInputElement;
    input.value = "typed while it starts";
    // It is up: the host announces it and the catalog is read again.
    running = true;
    await announce();
    expect(root.querySelector(".tool-detail")).toBe(pane);
    expect(pane.querySelector(".last-known-note")).toBeNull();
    expect((pane.querySelector("#run-text") as HTMLInputElement).value).toBe("typed while it starts");
  });

  it("a refresh landing between a row's press and its release does not lose the click", async () => {
    m.catalogCosts.mockImplementation(() => ok(costs(47)));
    const root = document.createElement("div");
    document.body.append(root);
    mountCatalog(root);
    await flush();
    const row = root.querySelector('.tool-row[data-tool="asker/list_roots"]') as HTMLElement;
    row.dispatchEvent(new MouseEvent("mousedown", { bubbles: true, button: 0 }));
    // The host announces a change: the catalog is read again while the button is down.
    await announce();
    // The row pressed is still the one in the page, so its release is a click on it.
    expect(row.isConnected).toBe(true);
    row.dispatchEvent(new MouseEvent("mouseup", { bubbles: true, button: 0 }));
    row.click();
    await new Promise((r) => setTimeout(r, 0));
    await flush();
    expect(root.querySelector(".tool-detail")).not.toBeNull();
    expect(root.querySelector('[role=option][aria-selected="true"] .tool-row')?.getAttribute("data-tool")).toBe("asker/list_roots");
  });
});
