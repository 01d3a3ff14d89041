import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  policyRules: vi.fn(), removePolicyRule: vi.fn(), resetGrants: vi.fn(), exportPolicy: vi.fn(), importPolicy: vi.fn(),
  listServers: vi.fn(), serverTags: vi.fn(), setServerTags: vi.fn(), listen: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => {
  const { listen, ...commands } = m;
  return { commands, events: { hostChanged: { listen } } };
});

import { mountPolicy } from "./page";
import { grantLabel } from "./rules";
import { nextTags } from "./tags";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const fail = (message: string) => Promise.resolve({ status: "error" as const, error: { code: "invalid", message } });
const flush = async () => { for (let i = 0; i < 40; i++) await Promise.resolve(); };
const rule = (id: string, extra: Record<string, unknown> = {}) => ({
  id, effect: "deny", server: "fs", on: "tool", tool: "delete_*", conditions: ['{"path":{"glob":"/etc/**"}}'], limit: null,
  note: "never touch /etc", grant: false, conversation: null, ...extra,
});

let rules: ReturnType<typeof rule>[];
let toml: string;
let tags: Record<string, string[]>;
let root: HTMLElement;
let unmount: () => void;
const q = <T extends HTMLElement = HTMLElement>(sel: string) => root.querySelector(sel) as T;
const ids = () => Array.from(root.querySelectorAll<HTMLElement>(".rule-row")).map((r) => r.dataset.id);
const confirmYes = () => (document.querySelector(".policy-confirm .policy-confirm-yes") as HTMLButtonElement).click();

beforeEach(async () => {
  vi.clearAllMocks();
  rules = [
    rule("r1"),
    rule("g1", { effect: "allow", tool: "read_file", conditions: [], note: null, grant: true }),
    rule("g2", { effect: "allow", tool: "search", conditions: [], note: null, grant: true, conversation: "c-9", limit: "at most 5 per hour" }),
  ];
  toml = '[[rule]]\nid = "r1"\neffect = "deny"\n';
  tags = { fs: ["private-data", "custom"], "web search": [] };
  m.policyRules.mockImplementation(() => ok([...rules]));
  m.removePolicyRule.mockImplementation((id: string) => ((rules = rules.filter((r) => r.id !== id)), ok(null)));
  m.resetGrants.mockImplementation(() => {
    const n = rules.filter((r) => r.grant).length;
    rules = rules.filter((r) => !r.grant);
    return ok(n);
  });
  m.exportPolicy.mockImplementation(() => ok(toml));
  m.importPolicy.mockImplementation((t: string) => (t.includes("oops") ? fail("TOML parse error at line 2, column 5: <b>expected</b> `=`") : ((toml = t), ok(2))));
  m.listServers.mockImplementation(() => ok(Object.keys(tags).map((name) => ({ name }))));
  m.serverTags.mockImplementation((s: string) => ok(tags[s] ?? []));
  m.setServerTags.mockImplementation((s: string, t: string[]) => ((tags[s] = t), ok(null)));
  m.listen.mockResolvedValue(() => {});
  root = document.createElement("main");
  document.body.replaceChildren(root);
  unmount = mountPolicy(root);
  await flush();
});
afterEach(() => unmount());

describe("policy page", () => {
  it("explains precedence and that annotations relax nothing unless trusted", () => {
    const intro = q(".policy-intro").textContent ?? "";
    expect(intro).toMatch(/deny over ask over allow/);
    expect(intro).toMatch(/no rule matches asks/);
    expect(intro).toMatch(/relax nothing unless .*trusted/);
  });

  it("lists rules and grants as text, grants marked by scope", () => {
    expect(ids()).toEqual(["r1", "g1", "g2"]);
    const r1 = q('.rule-row[data-id="r1"]');
    expect(r1.querySelector(".rule-target")?.textContent).toBe("fs › delete_*");
    expect(r1.querySelector(".rule-conditions")?.textContent).toBe('{"path":{"glob":"/etc/**"}}');
    expect(r1.querySelector(".rule-note")?.textContent).toBe("never touch /etc");
    expect(r1.querySelector(".rule-remove")?.textContent).toBe("Remove");
    expect(q('.rule-row[data-id="g1"] .rule-grant').textContent).toBe("grant: always");
    expect(q('.rule-row[data-id="g2"] .rule-grant').textContent).toBe("grant: this conversation");
    expect(q('.rule-row[data-id="g2"] .rule-limit').textContent).toBe("at most 5 per hour");
    expect(q('.rule-row[data-id="g2"] .rule-remove').textContent).toBe("Revoke");
    expect(grantLabel({ grant: false, conversation: null })).toBeNull();
  });

  it("removes a rule only after confirmation, then reloads the table and the file", async () => {
    q('.rule-row[data-id="r1"] .rule-remove').click();
    expect(m.removePolicyRule).not.toHaveBeenCalled();
    (document.querySelector(".policy-confirm .policy-confirm-no") as HTMLButtonElement).click();
    expect(document.querySelector(".policy-confirm")).toBeNull();
    q('.rule-row[data-id="r1"] .rule-remove').click();
    confirmYes();
    await flush();
    expect(m.removePolicyRule).toHaveBeenCalledWith("r1");
    expect(ids()).toEqual(["g1", "g2"]);
    expect(m.exportPolicy).toHaveBeenCalledTimes(2);
  });

  it("resets all grants after confirmation", async () => {
    q(".grants-reset").click();
    expect(m.resetGrants).not.toHaveBeenCalled();
    confirmYes();
    await flush();
    expect(ids()).toEqual(["r1"]);
    expect(q(".rules-status").textContent).toBe("2 grants revoked.");
    expect(q<HTMLButtonElement>(".grants-reset").disabled).toBe(true);
  });

  it("shows a removal failure as text", async () => {
    m.removePolicyRule.mockImplementationOnce(() => fail("no rule <i>r1</i>"));
    q('.rule-row[data-id="r1"] .rule-remove').click();
    confirmYes();
    await flush();
    expect(q(".rules-error").textContent).toBe("no rule <i>r1</i>");
    expect(q(".rules-error").querySelector("i")).toBeNull();
  });

  it("fills the editor from export_policy and saves with import_policy", async () => {
    const editor = q<HTMLTextAreaElement>(".policy-editor");
    expect(editor.value).toBe(toml);
    editor.value = '[[rule]]\nid = "r1"\n\n[[rule]]\nid = "r2"\n';
    editor.dispatchEvent(new Event("input"));
    rules = [rule("r1"), rule("r2"), rules[1]!];
    q(".policy-save").click();
    await flush();
    expect(m.importPolicy).toHaveBeenCalledWith('[[rule]]\nid = "r1"\n\n[[rule]]\nid = "r2"\n');
    expect(q(".policy-status").textContent).toBe("2 rules saved; grants kept.");
    expect(q(".policy-error").hidden).toBe(true);
    expect(ids()).toEqual(["r1", "r2", "g1"]);
  });

  it("shows Rust's error on a bad file, as text, and changes nothing", async () => {
    const editor = q<HTMLTextAreaElement>(".policy-editor");
    editor.value = "[[rule]]\noops";
    editor.dispatchEvent(new Event("input"));
    const calls = m.policyRules.mock.calls.length;
    q(".policy-save").click();
    await flush();
    const err = q(".policy-error");
    expect(err.hidden).toBe(false);
    expect(err.textContent).toBe("TOML parse error at line 2, column 5: <b>expected</b> `=`");
    expect(err.querySelector("b")).toBeNull();
    expect(q(".policy-status").hidden).toBe(true);
    expect(editor.value).toBe("[[rule]]\noops");
    expect(m.policyRules.mock.calls.length).toBe(calls);
    expect(ids()).toEqual(["r1", "g1", "g2"]);
  });

  it("shows four explained tag checkboxes per server and saves a change at once, keeping unknown tags", async () => {
    const fs = q('.server-tags[data-server="fs"]');
    expect(fs.querySelector("legend")?.textContent).toBe("fs");
    const boxes = Array.from(fs.querySelectorAll<HTMLInputElement>("input.server-tag"));
    expect(boxes.map((b) => b.dataset.tag)).toEqual(["trusted", "private-data", "untrusted-content", "external"]);
    expect(boxes.map((b) => b.checked)).toEqual([false, true, false, false]);
    expect(fs.textContent).toMatch(/read-only claims/);
    expect(fs.textContent).toMatch(/lethal trifecta/);
    const trusted = fs.querySelector('input[data-tag="trusted"]') as HTMLInputElement;
    trusted.checked = true;
    trusted.dispatchEvent(new Event("change"));
    await flush();
    expect(m.setServerTags).toHaveBeenLastCalledWith("fs", ["trusted", "private-data", "custom"]);
    expect(fs.querySelector(".tags-status")?.textContent).toBe("Saved.");
    expect(q('.server-tags[data-server="web search"]')).not.toBeNull();
  });

  it("undoes a tag change Rust refused", async () => {
    m.setServerTags.mockImplementationOnce(() => fail("unknown server"));
    const box = q<HTMLInputElement>('.server-tags[data-server="web search"] input[data-tag="external"]');
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(box.checked).toBe(false);
    expect(q('.server-tags[data-server="web search"] .tags-status').textContent).toBe("unknown server");
  });

  it("orders the known tags and keeps the unknown ones", () => {
    expect(nextTags(new Set(["external", "trusted"]), ["x", "trusted"])).toEqual(["trusted", "external", "x"]);
  });
});
