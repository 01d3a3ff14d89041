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

import { COMPLETE_DELAY, mountPrompts } from "./prompts";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const fail = (message: string) => Promise.resolve({ status: "error" as const, error: { code: "internal", message } });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };

const arg = (name: string, required: boolean, description: string | null = null) => ({ name, required, description });
const prompt = (name: string, args: unknown[], extra: Record<string, unknown> = {}) =>
  ({ name, title: null, description: null, arguments: args, ...extra });
const ctx = (server: string, prompts: unknown[], completions = false) => ({ server, completions, resources: [], templates: [], prompts });

const data = [
  ctx("alpha", [
    prompt("review", [arg("code", true, "The code to review"), arg("style", false)], { title: "Code review", description: "Reviews code" }),
    prompt("simple", []),
  ], true),
  ctx("beta", [prompt("greet", [arg("name", false)])]),
];

let root: HTMLElement;
let unmount: () => void;

async function mount(contexts: unknown) {
  m.serverContext.mockImplementation(() => ok(contexts));
  unmount = mountPrompts(root);
  await flush();
}

const titles = () => Array.from(root.querySelectorAll(".ctx-prompt h3")).map((e) => e.textContent);
const card = (title: string) => Array.from(root.querySelectorAll<HTMLElement>(".ctx-prompt")).find((c) => c.querySelector("h3")?.textContent === title)!;
const openCard = (title: string) => {
  const c = card(title);
  c.querySelector<HTMLButtonElement>("button.open")!.click();
  return c;
};
const input = (c: HTMLElement, label: string) => {
  const l = Array.from(c.querySelectorAll("label")).find((x) => x.firstChild?.textContent === label)!;
  return c.querySelector<HTMLInputElement>(`#${l.htmlFor}`)!;
};
const type = (el: HTMLInputElement | HTMLSelectElement, value: string, ev = "input") => {
  el.value = value;
  el.dispatchEvent(new Event(ev));
};

beforeEach(() => {
  vi.clearAllMocks();
  m.listen.mockImplementation(() => Promise.resolve(m.unlisten));
  root = document.createElement("main");
  document.body.replaceChildren(root);
});
afterEach(() => {
  unmount?.();
  vi.useRealTimers();
});

describe("mountPrompts", () => {
  it("lists prompts and opens a form with one labelled input per argument", async () => {
    await mount(data);
    expect(root.querySelector("h1")?.textContent).toBe("Prompts");
    expect(titles()).toEqual(["Code review", "simple", "greet"]);
    const c = card("Code review");
    expect(c.querySelector(".description")?.textContent).toBe("Reviews code");
    expect(c.querySelector("form")).toBeNull();
    const toggle = c.querySelector<HTMLButtonElement>("button.open")!;
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    toggle.click();
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    const labels = Array.from(c.querySelectorAll("label")).map((l) => l.textContent);
    expect(labels).toEqual(["code (required)", "style"]);
    const code = input(c, "code");
    expect(code.getAttribute("aria-required")).toBe("true");
    expect(document.getElementById(code.getAttribute("aria-describedby")!)?.textContent).toBe("The code to review");
    toggle.click();
    expect(c.querySelector("form")).toBeNull();
  });

  it("filters by search and by server", async () => {
    await mount(data);
    const search = root.querySelector<HTMLInputElement>(".prompt-search")!;
    const which = root.querySelector<HTMLSelectElement>(".prompt-server")!;
    type(search, "REVIEWS");
    expect(titles()).toEqual(["Code review"]);
    type(search, "");
    type(which, "beta", "change");
    expect(titles()).toEqual(["greet"]);
    type(search, "review");
    expect(root.querySelector(".empty")?.textContent).toContain("Nothing matches");
  });

  it("disables Get prompt until required arguments are filled, then sends only filled ones", async () => {
    await mount(data);
    m.getPrompt.mockImplementation(() => ok({
      description: "A review",
      messages: [
        { role: "user", content: { type: "text", text: "Please review x = 1" } },
        { role: "assistant", content: { type: "text", text: "Looks fine" } },
      ],
    }));
    const c = openCard("Code review");
    const get = c.querySelector<HTMLButtonElement>("button.get-prompt")!;
    expect(get.disabled).toBe(true);
    type(input(c, "code"), "   ");
    expect(get.disabled).toBe(true);
    type(input(c, "code"), "x = 1");
    expect(get.disabled).toBe(false);
    get.click();
    await flush();
    expect(m.getPrompt).toHaveBeenCalledWith("alpha", "review", { code: "x = 1" }, null);
    expect(c.querySelector(".ctx-prompt-description")?.textContent).toBe("A review");
    const msgs = Array.from(c.querySelectorAll(".ctx-message"));
    expect(msgs.map((x) => x.querySelector(".ctx-role")?.textContent)).toEqual(["user", "assistant"]);
    expect(msgs.map((x) => x.className)).toEqual(["ctx-message role-user", "ctx-message role-assistant"]);
    expect(msgs[1].querySelector(".rv-text")?.textContent).toBe("Looks fine");
  });

  it("keeps an open form, its values and result across a search re-render", async () => {
    await mount(data);
    const c = openCard("Code review");
    type(input(c, "style"), "terse");
    type(root.querySelector<HTMLInputElement>(".prompt-search")!, "code");
    expect(input(card("Code review"), "style").value).toBe("terse");
  });

  it("shows a getPrompt error as text in an alert", async () => {
    await mount(data);
    m.getPrompt.mockImplementation(() => fail("missing <i>argument</i>"));
    const c = openCard("simple");
    c.querySelector<HTMLButtonElement>("button.get-prompt")!.click();
    await flush();
    expect(m.getPrompt).toHaveBeenCalledWith("alpha", "simple", {}, null);
    const alert = c.querySelector("[role=alert]");
    expect(alert?.textContent).toBe("missing <i>argument</i>");
    expect(alert?.querySelector("i")).toBeNull();
  });

  it("completes argument values after a pause, ignoring stale answers", async () => {
    vi.useFakeTimers();
    await mount(data);
    let answerFirst: (v: unknown) => void = () => {};
    m.completePromptArgument
      .mockImplementationOnce(() => new Promise((r) => { answerFirst = r; }))
      .mockImplementationOnce(() => ok(["python", "pascal"]));
    const c = openCard("Code review");
    const code = input(c, "code");
    type(code, "p");
    await vi.advanceTimersByTimeAsync(COMPLETE_DELAY - 50);
    expect(m.completePromptArgument).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(50);
    expect(m.completePromptArgument).toHaveBeenCalledWith("alpha", "review", "code", "p");
    type(code, "py");
    type(code, "pa");
    await vi.advanceTimersByTimeAsync(COMPLETE_DELAY);
    expect(m.completePromptArgument).toHaveBeenCalledTimes(2);
    expect(m.completePromptArgument).toHaveBeenLastCalledWith("alpha", "review", "code", "pa");
    const list = document.getElementById(code.getAttribute("list")!)!;
    expect(list.tagName).toBe("DATALIST");
    expect(Array.from(list.querySelectorAll("option")).map((o) => o.value)).toEqual(["python", "pascal"]);
    answerFirst({ status: "ok", data: ["stale"] });
    await flush();
    expect(Array.from(list.querySelectorAll("option")).map((o) => o.value)).toEqual(["python", "pascal"]);
  });

  it("does not complete for servers without completion", async () => {
    vi.useFakeTimers();
    await mount(data);
    const c = openCard("greet");
    const name = input(c, "name");
    expect(name.hasAttribute("list")).toBe(false);
    type(name, "bo");
    await vi.advanceTimersByTimeAsync(1000);
    expect(m.completePromptArgument).not.toHaveBeenCalled();
  });

  it("uses counter ids, and shows hostile server strings as text", async () => {
    const evil = "<img src=x onerror=alert(1)>";
    await mount([ctx(evil, [prompt(evil, [arg(evil, true, evil)], { description: evil })], true)]);
    const c = root.querySelector<HTMLElement>(".ctx-prompt")!;
    c.querySelector<HTMLButtonElement>("button.open")!.click();
    const field = c.querySelector<HTMLInputElement>("input.ctx-arg")!;
    expect(field.id).toMatch(/^ctx-arg-\d+$/);
    expect(field.getAttribute("list")).toMatch(/^ctx-arg-\d+-values$/);
    expect(root.querySelector("img")).toBeNull();
    expect(c.querySelector(".tool-server-name")?.textContent).toBe(evil);
    expect(c.querySelector(".ctx-help")?.textContent).toBe(evil);
    m.getPrompt.mockImplementation(() => ok({ description: null, messages: [{ role: evil, content: { type: "text", text: evil } }] }));
    type(field, "v");
    c.querySelector<HTMLButtonElement>("button.get-prompt")!.click();
    await flush();
    expect(m.getPrompt).toHaveBeenCalledWith(evil, evil, { [evil]: "v" }, null);
    expect(c.querySelector(".ctx-message")?.className).toBe("ctx-message role-user");
    expect(c.querySelector(".ctx-role")?.textContent).toBe(evil);
    expect(root.querySelector("img")).toBeNull();
  });

  it("has an empty state for no servers and for servers without prompts", async () => {
    await mount([]);
    expect(root.querySelector(".empty")?.textContent).toContain("Approve a server on the Servers page");
    unmount();
    await mount([ctx("alpha", [])]);
    expect(root.querySelector(".empty")?.textContent).toContain("offer no prompts");
  });

  it("holds a redraw while a card's button is pressed, so the click is not lost", async () => {
    let announce: (e: { payload: { kind: string } }) => void = () => {};
    m.listen.mockImplementation((cb: typeof announce) => {
      announce = cb;
      return Promise.resolve(m.unlisten);
    });
    await mount(data);
    const toggle = card("Code review").querySelector<HTMLButtonElement>("button.open")!;
    toggle.dispatchEvent(new MouseEvent("mousedown", { bubbles: true, button: 0 }));
    // A server changes while the button is down: the prompts are read again.
    vi.useFakeTimers();
    announce({ payload: { kind: "catalog" } });
    vi.advanceTimersByTime(200);
    vi.useRealTimers();
    await flush();
    expect(m.serverContext).toHaveBeenCalledTimes(2);
    expect(toggle.isConnected).toBe(true);
    toggle.dispatchEvent(new MouseEvent("mouseup", { bubbles: true, button: 0 }));
    toggle.click();
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    // The held redraw runs after the click, and the card it draws is open.
    await new Promise((r) => setTimeout(r, 0));
    expect(toggle.isConnected).toBe(false);
    expect(card("Code review").querySelector("form")).not.toBeNull();
  });

  it("shows a failed refresh in an alert", async () => {
    m.serverContext.mockImplementation(() => fail("host is gone"));
    unmount = mountPrompts(root);
    await flush();
    const alert = root.querySelector<HTMLElement>("[role=alert]")!;
    expect(alert.hidden).toBe(false);
    expect(alert.textContent).toBe("host is gone");
  });
});
