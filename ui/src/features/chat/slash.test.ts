import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ serverContext: vi.fn(), getPrompt: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { promptText, slashPrompts } from "./slash";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const arg = (name: string, required: boolean) => ({ name, required, description: null });
const prompt = (name: string, args: unknown[], extra: Record<string, unknown> = {}) => ({ name, title: null, description: null, arguments: args, ...extra });
const ctx = (server: string, prompts: unknown[]) => ({ server, completions: false, resources: [], templates: [], prompts });
const text = (t: string) => ({ role: "user", content: { type: "text" as const, text: t } });

let input: HTMLTextAreaElement;
let slash: ReturnType<typeof slashPrompts>;
const type = async (v: string) => {
  input.value = v;
  input.dispatchEvent(new Event("input"));
  await flush();
};
const key = (k: string) => {
  const ev = new KeyboardEvent("keydown", { key: k, cancelable: true });
  return { handled: slash.onKey(ev), prevented: ev.defaultPrevented };
};
const names = () => Array.from(slash.el.querySelectorAll(".slash-item .slash-name")).map((e) => e.textContent);

beforeEach(() => {
  Object.values(m).forEach((f) => f.mockReset());
  m.serverContext.mockImplementation(() => ok([
    ctx("alpha", [prompt("review", [arg("code", true), arg("style", false)], { description: "Reviews <b>code</b>" }), prompt("simple", [])]),
    ctx("beta", [prompt("greet", [arg("name", false)])]),
  ]));
  input = document.createElement("textarea");
  slash = slashPrompts(input);
  document.body.append(slash.el, input);
});
afterEach(() => document.body.replaceChildren());

describe("slashPrompts", () => {
  it("opens on a leading slash, filters by what follows, and closes on Escape", async () => {
    expect(slash.el.hidden).toBe(true);
    await type("/");
    expect(slash.el.hidden).toBe(false);
    expect(names()).toEqual(["/review", "/simple", "/greet"]);
    expect(slash.el.querySelector("b")).toBeNull();
    expect(slash.el.querySelector(".slash-item")?.getAttribute("aria-selected")).toBe("true");
    await type("/gr");
    expect(names()).toEqual(["/greet"]);
    await type("/zzz");
    expect(slash.el.textContent).toContain("No prompt matches");
    await type("/");
    expect(key("Escape")).toEqual({ handled: true, prevented: true });
    expect(slash.el.hidden).toBe(true);
    await type("hello /x");
    expect(slash.el.hidden).toBe(true);
    expect(key("Enter").handled).toBe(false);
  });

  it("arrow keys move the choice; a prompt without arguments is inserted at once, not sent", async () => {
    m.getPrompt.mockImplementation(() => ok({ description: null, messages: [text("Say hi."), { role: "user", content: { type: "image", data: "AAAA", mime_type: "image/png" } }, text("Twice.")] }));
    await type("/");
    key("ArrowDown");
    expect(slash.el.querySelectorAll(".slash-item")[1].getAttribute("aria-selected")).toBe("true");
    expect(input.getAttribute("aria-activedescendant")).toBe(slash.el.querySelectorAll(".slash-item")[1].id);
    expect(key("Enter")).toEqual({ handled: true, prevented: true });
    await flush();
    expect(m.getPrompt).toHaveBeenCalledWith("alpha", "simple", {}, "");
    expect(input.value).toBe("Say hi.\n\nTwice.");
    expect(slash.el.textContent).toContain("1 non-text part was left out");
  });

  it("asks for arguments, with required marks, then inserts the prompt's text", async () => {
    m.getPrompt.mockImplementation(() => ok({ description: null, messages: [text("Review this: x = 1")] }));
    await type("/rev");
    (slash.el.querySelector(".slash-item") as HTMLElement).click();
    const form = slash.el.querySelector(".slash-form") as HTMLFormElement;
    const fields = Array.from(form.querySelectorAll<HTMLInputElement>(".slash-arg"));
    expect(fields.map((f) => f.dataset.name)).toEqual(["code", "style"]);
    expect(form.querySelector(`label[for="${fields[0].id}"]`)?.textContent).toBe("code *");
    expect(fields[0].getAttribute("aria-required")).toBe("true");
    expect(document.activeElement).toBe(fields[0]);
    const insert = form.querySelector(".slash-insert") as HTMLButtonElement;
    expect(insert.disabled).toBe(true);
    fields[0].value = "x = 1";
    fields[0].dispatchEvent(new Event("input"));
    expect(insert.disabled).toBe(false);
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    expect(m.getPrompt).toHaveBeenCalledWith("alpha", "review", { code: "x = 1" }, "");
    expect(input.value).toBe("Review this: x = 1");
    expect(slash.el.hidden).toBe(true);
  });

  it("shows the server's error in the form and keeps it", async () => {
    m.getPrompt.mockImplementation(() => Promise.resolve({ status: "error", error: { code: "server", message: "prompt failed" } }));
    await type("/greet");
    key("Enter");
    const form = slash.el.querySelector(".slash-form") as HTMLFormElement;
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await flush();
    expect(form.querySelector(".slash-error")?.textContent).toBe("prompt failed");
    expect(input.value).toBe("/greet");
    expect(key("Escape").handled).toBe(true);
    expect(slash.el.hidden).toBe(true);
  });

  it("says when no running server has prompts", async () => {
    m.serverContext.mockImplementation(() => ok([]));
    await type("/");
    expect(slash.el.textContent).toContain("No running server offers prompts");
  });

  it("promptText joins text and counts what it leaves out", () => {
    expect(promptText({ description: null, messages: [text("a"), { role: "assistant", content: { type: "resource", uri: "u", mime_type: null, text: "b", blob: null } }] }))
      .toEqual({ text: "a\n\nb", skipped: 0 });
  });
});
