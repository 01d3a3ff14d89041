import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  serverContext: vi.fn(),
  readResource: vi.fn(),
  getPrompt: vi.fn(),
  completePromptArgument: vi.fn(),
  listen: vi.fn(),
  unlisten: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({
  commands: {
    serverContext: m.serverContext,
    readResource: m.readResource,
    getPrompt: m.getPrompt,
    completePromptArgument: m.completePromptArgument,
  },
  events: { hostChanged: { listen: m.listen } },
}));

import { mountResources } from "./resources";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const fail = (message: string) => Promise.resolve({ status: "error" as const, error: { code: "internal", message } });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };

const res = (uri: string, name: string, extra: Record<string, unknown> = {}) =>
  ({ uri, name, title: null, description: null, mime_type: null, size: null, ...extra });
const tpl = (uri_template: string, name: string) => ({ uri_template, name, title: null, description: null, mime_type: null });
const ctx = (server: string, resources: unknown[], templates: unknown[] = []) => ({ server, completions: false, resources, templates, prompts: [] });

const data = [
  ctx("alpha", [
    res("test://static/1", "one", { title: "Resource One", mime_type: "text/plain", size: 2048, description: "the first" }),
    res("test://static/2", "two"),
  ], [tpl("test://dynamic/{id}", "by id")]),
  ctx("beta", [res("file:///notes.md", "notes")]),
];

let root: HTMLElement;
let unmount: () => void;
let hostChanged: (ev: { payload: { kind: string; server: string | null } }) => void;

async function mount(contexts: unknown) {
  m.serverContext.mockImplementation(() => ok(contexts));
  unmount = mountResources(root);
  await flush();
}

const titles = () => Array.from(root.querySelectorAll(".ctx-resource h3")).map((e) => e.textContent);
const type = (input: HTMLInputElement | HTMLSelectElement, value: string, ev = "input") => {
  input.value = value;
  input.dispatchEvent(new Event(ev));
};

beforeEach(() => {
  vi.clearAllMocks();
  m.listen.mockImplementation((cb) => { hostChanged = cb; return Promise.resolve(m.unlisten); });
  root = document.createElement("main");
  document.body.replaceChildren(root);
});
afterEach(() => {
  unmount?.();
  vi.useRealTimers();
});

describe("mountResources", () => {
  it("lists every resource with its details, and the templates with one input per variable", async () => {
    await mount(data);
    expect(root.querySelector("h1")?.textContent).toBe("Resources");
    expect(titles()).toEqual(["Resource One", "two", "notes"]);
    const first = root.querySelector(".ctx-resource")!;
    expect(first.querySelector(".ctx-uri")?.textContent).toBe("test://static/1");
    expect(first.querySelector(".ctx-meta")?.textContent).toBe("text/plain · 2.0 KB");
    expect(first.querySelector(".description")?.textContent).toBe("the first");
    expect(first.querySelector("button.read")?.textContent).toBe("Read");
    const t = root.querySelector(".ctx-template")!;
    expect(t.querySelector(".ctx-uri")?.textContent).toBe("test://dynamic/{id}");
    const inputs = t.querySelectorAll("input");
    expect(inputs.length).toBe(1);
    expect(t.querySelector(`label[for="${inputs[0].id}"]`)?.textContent).toBe("id");
    expect(m.readResource).not.toHaveBeenCalled();
  });

  it("filters by search and by server", async () => {
    await mount(data);
    const search = root.querySelector<HTMLInputElement>(".resource-search")!;
    const which = root.querySelector<HTMLSelectElement>(".resource-server")!;
    expect(Array.from(which.options).map((o) => o.value)).toEqual(["", "alpha", "beta"]);
    type(search, "NOTES");
    expect(titles()).toEqual(["notes"]);
    expect(root.querySelectorAll(".ctx-template").length).toBe(0);
    type(search, "");
    type(which, "alpha", "change");
    expect(titles()).toEqual(["Resource One", "two"]);
    expect(root.querySelectorAll(".ctx-template").length).toBe(1);
    type(search, "zzz");
    expect(root.querySelector(".empty")?.textContent).toContain("Nothing matches");
  });

  it("reads a resource only on click, from its server, and shows the text", async () => {
    await mount(data);
    m.readResource.mockImplementation(() => ok([{ type: "text", text: "hello from notes" }]));
    const viewer = root.querySelector<HTMLElement>(".resource-viewer")!;
    expect(viewer.hidden).toBe(true);
    root.querySelectorAll<HTMLButtonElement>(".ctx-resource button.read")[2].click();
    await flush();
    expect(m.readResource).toHaveBeenCalledTimes(1);
    expect(m.readResource).toHaveBeenCalledWith("beta", "file:///notes.md", null);
    expect(viewer.hidden).toBe(false);
    expect(viewer.querySelector("h2")?.textContent).toBe("file:///notes.md");
    expect(viewer.querySelector(".rv-text")?.textContent).toBe("hello from notes");
  });

  it("opens a resource link in the viewer from the same server", async () => {
    await mount(data);
    m.readResource.mockImplementationOnce(() => ok([{ type: "resource_link", uri: "test://static/2", name: "two", mime_type: null }]));
    m.readResource.mockImplementationOnce(() => ok([{ type: "text", text: "second" }]));
    root.querySelector<HTMLButtonElement>(".ctx-resource button.read")!.click();
    await flush();
    root.querySelector<HTMLButtonElement>(".resource-viewer .rv-open")!.click();
    await flush();
    expect(m.readResource).toHaveBeenLastCalledWith("alpha", "test://static/2", null);
    expect(root.querySelector(".resource-viewer .rv-text")?.textContent).toBe("second");
  });

  it("percent-encodes template values containing / and ?", async () => {
    await mount(data);
    m.readResource.mockImplementation(() => ok([]));
    const t = root.querySelector(".ctx-template")!;
    type(t.querySelector("input")!, "a/b?c=d");
    expect(t.querySelector(".ctx-expanded")?.textContent).toBe("test://dynamic/a%2Fb%3Fc%3Dd");
    t.querySelector<HTMLButtonElement>("button.read")!.click();
    await flush();
    expect(m.readResource).toHaveBeenCalledWith("alpha", "test://dynamic/a%2Fb%3Fc%3Dd", null);
    expect(root.querySelector(".resource-viewer")?.textContent).toContain("The resource has no contents.");
  });

  it("keeps typed template values when the search re-renders", async () => {
    await mount(data);
    type(root.querySelector<HTMLInputElement>(".ctx-template input")!, "42");
    type(root.querySelector<HTMLInputElement>(".resource-search")!, "dynamic");
    expect(root.querySelector<HTMLInputElement>(".ctx-template input")!.value).toBe("42");
    expect(root.querySelector(".ctx-template .ctx-expanded")?.textContent).toBe("test://dynamic/42");
  });

  it("shows server strings as text, never as markup", async () => {
    const evil = "<img src=x onerror=alert(1)>";
    await mount([ctx(evil, [res(evil, evil, { description: evil, mime_type: evil })], [tpl(`x://{${evil}}`, evil)])]);
    m.readResource.mockImplementation(() => ok([{ type: "text", text: evil }]));
    root.querySelector<HTMLButtonElement>(".ctx-resource button.read")!.click();
    await flush();
    expect(m.readResource).toHaveBeenCalledWith(evil, evil, null);
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelector(".ctx-resource .tool-server-name")?.textContent).toBe(evil);
    expect(root.querySelector(".resource-server option:nth-child(2)")?.textContent).toBe(evil);
    expect(root.querySelector(".resource-viewer .rv-text")?.textContent).toBe(evil);
  });

  it("shows a read error as text in an alert", async () => {
    await mount(data);
    m.readResource.mockImplementation(() => fail("resource <b>not</b> found"));
    root.querySelector<HTMLButtonElement>(".ctx-resource button.read")!.click();
    await flush();
    const alert = root.querySelector(".resource-viewer [role=alert]");
    expect(alert?.textContent).toBe("resource <b>not</b> found");
    expect(alert?.querySelector("b")).toBeNull();
  });

  it("shows a failed refresh in an alert", async () => {
    m.serverContext.mockImplementation(() => fail("host is gone"));
    unmount = mountResources(root);
    await flush();
    const alert = root.querySelector<HTMLElement>("[role=alert]")!;
    expect(alert.hidden).toBe(false);
    expect(alert.textContent).toBe("host is gone");
  });

  it("has an empty state for no servers and for servers without resources", async () => {
    await mount([]);
    expect(root.querySelector(".empty")?.textContent).toContain("Approve a server on the Servers page");
    unmount();
    await mount([ctx("alpha", [])]);
    expect(root.querySelector(".empty")?.textContent).toContain("offer no resources");
    expect(root.querySelectorAll(".ctx-resource").length).toBe(0);
  });

  it("refreshes on catalog/status/servers changes, debounced, and not on approvals", async () => {
    vi.useFakeTimers();
    await mount([]);
    expect(m.serverContext).toHaveBeenCalledTimes(1);
    m.serverContext.mockImplementation(() => ok(data));
    hostChanged({ payload: { kind: "approvals", server: null } });
    await vi.advanceTimersByTimeAsync(500);
    expect(m.serverContext).toHaveBeenCalledTimes(1);
    hostChanged({ payload: { kind: "catalog", server: "alpha" } });
    hostChanged({ payload: { kind: "status", server: "beta" } });
    await vi.advanceTimersByTimeAsync(100);
    expect(m.serverContext).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(m.serverContext).toHaveBeenCalledTimes(2);
    expect(titles()).toEqual(["Resource One", "two", "notes"]);
    unmount();
    await flush();
    expect(m.unlisten).toHaveBeenCalledTimes(1);
  });
});
