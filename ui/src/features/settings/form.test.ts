import { describe, expect, it } from "vitest";
import { minutesToSecs, registryProblem, secsToMinutes, toSettings } from "./form";
import { applyTheme, currentTheme } from "./theme";

describe("idle time", () => {
  it("reads minutes, 0 meaning never", () => {
    expect(minutesToSecs("10")).toEqual({ ok: true, secs: 600 });
    expect(minutesToSecs(" 0 ")).toEqual({ ok: true, secs: 0 });
    expect(minutesToSecs("1.5")).toEqual({ ok: true, secs: 90 });
    expect(minutesToSecs("0.5")).toEqual({ ok: true, secs: 30 });
  });
  it("refuses what the core would refuse, with a sentence", () => {
    for (const bad of ["", "-1", "abc", "0.1", "20000"]) {
      const r = minutesToSecs(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.why.length).toBeGreaterThan(10);
    }
  });
  it("shows seconds as minutes", () => {
    expect(secsToMinutes(600)).toBe("10");
    expect(secsToMinutes(90)).toBe("1.5");
    expect(secsToMinutes(0)).toBe("0");
  });
});

describe("registry URL", () => {
  it("wants http(s) without credentials", () => {
    expect(registryProblem("https://registry.modelcontextprotocol.io")).toBeNull();
    expect(registryProblem("http://127.0.0.1:8080/")).toBeNull();
    expect(registryProblem("ftp://x")).toMatch(/https/);
    expect(registryProblem("registry")).toMatch(/full URL/);
    expect(registryProblem("https://a:b@x.example")).toMatch(/user name/);
  });
});

describe("toSettings", () => {
  const base = { theme: "dark" as const, provider: " ", model: "m1 ", registry: "https://r.example", logLevel: "debug" as const, idleMinutes: "5", warnPercent: "40" };
  it("builds the settings Rust saves", () => {
    expect(toSettings(base)).toEqual({
      ok: true,
      settings: { theme: "dark", default_provider: null, default_model: "m1", registry_url: "https://r.example", log_level: "debug", idle_stop_secs: 300, tools_warn_percent: 40 },
    });
  });
  it("stops at the first problem", () => {
    expect(toSettings({ ...base, idleMinutes: "x" }).ok).toBe(false);
    expect(toSettings({ ...base, registry: "nope" }).ok).toBe(false);
  });
  it("keeps the tools warning a whole percent 0-100 (a save never drops it back to the default)", () => {
    for (const bad of ["", "x", "-1", "101", "2.5"]) expect(toSettings({ ...base, warnPercent: bad }).ok).toBe(false);
    const never = toSettings({ ...base, warnPercent: "0" });
    expect(never.ok && never.settings.tools_warn_percent).toBe(0);
  });
});

describe("theme", () => {
  it("pins light or dark and lets system follow the desktop", () => {
    const root = document.createElement("html");
    applyTheme("dark", root);
    expect(root.dataset.theme).toBe("dark");
    expect(currentTheme(root)).toBe("dark");
    applyTheme("system", root);
    expect(root.hasAttribute("data-theme")).toBe(false);
    expect(currentTheme(root)).toBe("system");
  });
});
