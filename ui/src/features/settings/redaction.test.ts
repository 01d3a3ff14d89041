import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ getRedactionSettings: vi.fn(), saveRedactionSettings: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { badPattern, patternsOf, redactionSection } from "./redaction";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0)); };

describe("the redaction settings", () => {
  beforeEach(() => vi.resetAllMocks());

  it("take one pattern a line and refuse one that does not compile", () => {
    expect(patternsOf("a+\n\n  PROJECT-\\d+ \n")).toEqual(["a+", "PROJECT-\\d+"]);
    expect(badPattern(["ok", "(unclosed"])).toContain("(unclosed");
    expect(badPattern(["ok"])).toBeNull();
  });

  it("load, and save what is typed", async () => {
    m.getRedactionSettings.mockReturnValue(ok({ enabled: true, patterns: ["A-\\d+"] }));
    m.saveRedactionSettings.mockReturnValue(ok({ enabled: false, patterns: ["A-\\d+", "B-\\d+"] }));
    const s = redactionSection();
    await s.load();
    const box = s.el.querySelector<HTMLInputElement>(".settings-redaction-enabled")!;
    const text = s.el.querySelector<HTMLTextAreaElement>(".settings-redaction-patterns")!;
    expect(box.checked).toBe(true);
    expect(text.value).toBe("A-\\d+");
    box.checked = false;
    text.value = "A-\\d+\nB-\\d+";
    s.el.querySelector<HTMLButtonElement>(".settings-redaction-save")!.click();
    await flush();
    expect(m.saveRedactionSettings).toHaveBeenCalledWith({ enabled: false, patterns: ["A-\\d+", "B-\\d+"] });
    expect(s.el.querySelector(".settings-redaction-status")?.textContent).toBe("Saved.");
  });

  it("say why Rust refused, and send nothing for a pattern the browser cannot read", async () => {
    m.getRedactionSettings.mockReturnValue(ok({ enabled: true, patterns: [] }));
    m.saveRedactionSettings.mockReturnValue(Promise.resolve({ status: "error", error: { code: "invalid", message: "redaction pattern \"x{99999999}\": too big" } }));
    const s = redactionSection();
    await s.load();
    const text = s.el.querySelector<HTMLTextAreaElement>(".settings-redaction-patterns")!;
    const save = s.el.querySelector<HTMLButtonElement>(".settings-redaction-save")!;
    text.value = "(unclosed";
    save.click();
    await flush();
    expect(m.saveRedactionSettings).not.toHaveBeenCalled();
    expect(s.el.querySelector(".settings-redaction-status")?.textContent).toContain("Not saved: the pattern (unclosed");
    text.value = "x{99999999}";
    save.click();
    await flush();
    expect(s.el.querySelector(".settings-redaction-status")?.textContent).toContain("too big");
  });
});
