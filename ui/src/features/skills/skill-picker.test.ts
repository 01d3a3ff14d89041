import { afterEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ listSkills: vi.fn(), approveSkill: vi.fn(), readSkill: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { attachSkill, skillBlock, skillPicker, skillsSection } from "./skill-picker";
import type { SkillTarget } from "./skill-picker";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const skill = (state: string, extra: Record<string, unknown> = {}) => ({
  server: "docs", uri: "skill://pdf-tools/SKILL.md", name: "pdf-tools", description: "Fill PDF forms", state,
  fingerprint: `fp-${state}`, files: [{ uri: "skill://pdf-tools/SKILL.md", size: 10, digest: "sha256:00" }],
  dynamic: false, invalid: null, changes: [], ...extra,
});

function target(initial = "") {
  let text = initial;
  const sources: string[] = [];
  const t: SkillTarget = { text: () => text, setText: (v) => (text = v), conversation: () => "c-1", from: (s) => void sources.push(s) };
  return { t, sources, text: () => text };
}

afterEach(() => {
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("attachSkill", () => {
  it("appends the skill as a fenced block no backticks inside can close", () => {
    const x = target("Use this:");
    expect(attachSkill("pdf-tools", "skill://pdf-tools/SKILL.md", "a ``` b\n", x.t)).toBeNull();
    expect(x.text()).toBe("Use this:\n\nAttached skill pdf-tools (skill://pdf-tools/SKILL.md):\n````\na ``` b\n````");
    expect(skillBlock("n", "u", "x")).toBe("Attached skill n (u):\n```\nx\n```");
  });

  it("refuses a skill that would push the message past 512 KB", () => {
    const x = target();
    expect(attachSkill("big", "u", "x".repeat(600 * 1024), x.t)).toContain("too long");
    expect(x.text()).toBe("");
  });
});

describe("skillPicker", () => {
  it("lists without reading, approves the fingerprint shown, then attaches the verified text", async () => {
    m.listSkills.mockReturnValueOnce(ok([{ server: "docs", skills: [skill("changed", { changes: ["file changed: x"] })], error: null }]))
      .mockReturnValueOnce(ok([{ server: "docs", skills: [skill("approved")], error: null }]));
    m.approveSkill.mockReturnValue(ok(skill("approved")));
    m.readSkill.mockReturnValue(ok({ uri: "skill://pdf-tools/SKILL.md", text: "---\nname: pdf-tools\n---\nBody\n" }));
    const x = target();
    const button = skillPicker(x.t, () => {});
    document.body.append(button);
    button.click();
    await flush();
    const dialog = document.querySelector(".skill-picker") as HTMLElement;
    expect(dialog.querySelector(".skill-changes")?.textContent).toContain("file changed: x");
    expect(dialog.querySelector(".skill-attach")).toBeNull();
    expect(m.readSkill).not.toHaveBeenCalled();
    (dialog.querySelector(".skill-approve") as HTMLButtonElement).click();
    await flush();
    expect(m.approveSkill).toHaveBeenCalledWith("docs", "pdf-tools", "fp-changed");
    (dialog.querySelector(".skill-attach") as HTMLButtonElement).click();
    await flush();
    expect(m.readSkill).toHaveBeenCalledWith("docs", "pdf-tools", "c-1");
    expect(x.text()).toContain("Attached skill pdf-tools (skill://pdf-tools/SKILL.md):");
    expect(x.text()).toContain("Body");
    expect(x.sources).toEqual(["docs"]);
    expect(document.querySelector(".skill-picker")).toBeNull();
  });

  it("shows a refused read and keeps the dialog open", async () => {
    m.listSkills.mockReturnValue(ok([{ server: "docs", skills: [skill("approved")], error: null }]));
    m.readSkill.mockReturnValue(Promise.resolve({ status: "error", error: { code: "server", message: "digest mismatch" } }));
    const x = target();
    const button = skillPicker(x.t, () => {});
    button.click();
    await flush();
    (document.querySelector(".skill-attach") as HTMLButtonElement).click();
    await flush();
    expect(document.querySelector(".skill-picker-status")?.textContent).toBe("digest mismatch");
    expect(x.text()).toBe("");
  });
});

describe("skillsSection", () => {
  it("shows an invalid skill without actions and says when there are none", async () => {
    m.listSkills.mockReturnValue(ok([{ server: "docs", skills: [skill("new", { invalid: "bad name" })], error: null }]));
    const s = skillsSection();
    await flush();
    expect(s.querySelector(".skill-row")?.textContent).toContain("bad name");
    expect(s.querySelector(".skill-approve")).toBeNull();
    m.listSkills.mockReturnValue(ok([]));
    const empty = skillsSection();
    await flush();
    expect(empty.querySelector(".skills-status")?.textContent).toContain("no skills");
  });
});
