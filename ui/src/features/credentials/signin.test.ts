import { describe, expect, it, vi } from "vitest";

vi.mock("../../ipc/bindings", () => ({ commands: {} }));

import { signInDialog, STEPS } from "./signin";
import type { SignInDeps } from "./signin";

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const TICKET = "run-0123456789abcdef0123456789abcdef";

type Ev = Parameters<Parameters<SignInDeps["start"]>[2]>[0];

/** A sign-in whose events and end the test drives. */
function driven() {
  let emit: (e: Ev) => void = () => {};
  type Outcome = Awaited<ReturnType<SignInDeps["start"]>>;
  let end: (r: Outcome) => void = () => {};
  const deps: SignInDeps = {
    start: vi.fn((_s: string, _c: string | null, onEvent: (e: Ev) => void) => {
      emit = onEvent;
      return new Promise<Outcome>((resolve) => { end = resolve; });
    }),
    answer: vi.fn(async () => true),
  };
  return { deps, emit: (e: Ev) => emit(e), end: (r: Parameters<typeof end>[0]) => end(r) };
}

const step = (s: string, state: string, detail: string | null = null, code: string | null = null) =>
  ({ kind: "step", step: s, state, detail, code }) as Ev;
const row = (d: HTMLElement, s: string) => d.querySelector<HTMLElement>(`.signin-step[data-step="${s}"]`)!;

describe("signInDialog", () => {
  it("draws every step, shows the domain before the browser, and continues only on Continue", async () => {
    const t = driven();
    const done = vi.fn();
    const d = signInDialog("remote", done, { deps: t.deps });
    document.body.append(d);
    expect(d.querySelectorAll(".signin-step").length).toBe(STEPS.length);
    t.emit({ kind: "started", ticket: TICKET });
    t.emit(step("discovery", "started"));
    expect(row(d, "discovery").dataset.state).toBe("started");
    t.emit(step("discovery", "done", "found the server's protected resource metadata"));
    expect(row(d, "discovery").textContent).toContain("protected resource metadata");
    t.emit({ kind: "confirm", ticket: TICKET, domain: "example.com", host: "login.example.com", warnings: ["the address is punycode"] });
    const confirm = d.querySelector<HTMLElement>(".signin-confirm")!;
    expect(confirm.hidden).toBe(false);
    expect(d.querySelector(".signin-domain")?.textContent).toBe("example.com");
    expect(confirm.textContent).toContain("login.example.com");
    expect(confirm.textContent).toContain("punycode");
    expect(t.deps.answer).not.toHaveBeenCalled();
    d.querySelector<HTMLButtonElement>(".signin-continue")!.click();
    expect(t.deps.answer).toHaveBeenCalledWith(TICKET, true);
    expect(confirm.hidden).toBe(true);
    for (const s of ["browser", "token", "first_call"]) t.emit(step(s, "done", `${s} ok`));
    t.end({ status: "ok", data: { issuer: "https://auth.example.com", scopes: [], expires_at_ms: null, refreshable: true } });
    await flush();
    expect(d.querySelector(".signin-outcome")?.textContent).toBe("Signed in at https://auth.example.com.");
    expect(done).toHaveBeenCalledWith(true);
  });

  it("cancels on Cancel, and a failed step keeps its words and its code", async () => {
    const t = driven();
    const done = vi.fn();
    const d = signInDialog("remote", done, { deps: t.deps });
    document.body.append(d);
    t.emit({ kind: "started", ticket: TICKET });
    t.emit({ kind: "confirm", ticket: TICKET, domain: "example.com", host: "example.com", warnings: [] });
    d.querySelector<HTMLButtonElement>(".signin-cancel")!.click();
    expect(t.deps.answer).toHaveBeenCalledWith(TICKET, false);
    t.emit(step("browser", "failed", "sign-in cancelled: you stopped it", "cancelled"));
    t.end({ status: "error", error: { code: "cancelled", message: "sign-in cancelled: you stopped it" } });
    await flush();
    expect(row(d, "browser").dataset.state).toBe("failed");
    expect(row(d, "browser").dataset.code).toBe("cancelled");
    expect(d.querySelector<HTMLElement>(".signin-outcome")!.dataset.code).toBe("cancelled");
    expect(done).toHaveBeenCalledWith(false);
  });

  it("marks a step still running as failed when the sign-in ends with an error", async () => {
    const t = driven();
    const d = signInDialog("remote", () => {}, { deps: t.deps });
    t.emit(step("metadata", "started"));
    t.end({ status: "error", error: { code: "auth_required", message: "the authorization server does not advertise PKCE with S256" } });
    await flush();
    expect(row(d, "metadata").dataset.state).toBe("failed");
    expect(row(d, "metadata").textContent).toContain("PKCE");
  });

  it("shows server-sent words as text, never markup", () => {
    const t = driven();
    const d = signInDialog("remote", () => {}, { deps: t.deps });
    t.emit(step("discovery", "failed", "<img src=x onerror=alert(1)>", "discovery_failed"));
    expect(d.querySelector("img")).toBeNull();
    expect(row(d, "discovery").dataset.code).toBe("discovery_failed");
  });
});
