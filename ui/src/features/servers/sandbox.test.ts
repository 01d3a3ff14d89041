import { afterEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  serverSandbox: vi.fn(),
  setServerSandbox: vi.fn(),
  sandboxFindings: vi.fn(),
  grantSandboxFinding: vi.fn(),
  sandboxCredentialStore: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m, events: { hostChanged: { listen: vi.fn() } } }));

import { grantLabel, sandboxBadge, sandboxFindings, sandboxPanel, withDomain, withoutDomain, withPath } from "./sandbox";

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const off = { enabled: false, read: [], write: [], deny: [], network: false, allow_domains: [], deny_domains: [], unmask: [] };

afterEach(() => {
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("sandboxBadge", () => {
  it("says whether a local server is sandboxed, and nothing for a remote one", () => {
    expect(sandboxBadge({ sandboxed: true })?.label).toBe("sandboxed");
    expect(sandboxBadge({ sandboxed: false })?.tone).toBe("warn");
    expect(sandboxBadge({ sandboxed: null })).toBeNull();
  });
});

describe("withPath", () => {
  it("adds a path once, and a grant switches the sandbox on", () => {
    const r = withPath(off, "read", " /data ");
    expect(r).toEqual({ ok: true, sandbox: { ...off, enabled: true, read: ["/data"] } });
    if (!r.ok) throw new Error("unreachable");
    expect(withPath(r.sandbox, "read", "/data/").ok).toBe(false);
    expect(withPath(off, "deny", "/x")).toEqual({ ok: true, sandbox: { ...off, deny: ["/x"] } });
    expect(withPath(off, "write", "  ").ok).toBe(false);
  });
});

describe("withDomain", () => {
  it("lists a domain once, in one list only, and allowing one switches the network on", () => {
    const r = withDomain(off, "allow_domains", " API.example.com. ");
    expect(r).toEqual({ ok: true, sandbox: { ...off, enabled: true, network: true, allow_domains: ["api.example.com"] } });
    if (!r.ok) throw new Error("unreachable");
    expect(withDomain(r.sandbox, "allow_domains", "api.example.com").ok).toBe(false);
    const d = withDomain(r.sandbox, "deny_domains", "api.example.com");
    expect(d).toEqual({ ok: true, sandbox: { ...r.sandbox, allow_domains: [], deny_domains: ["api.example.com"] } });
    expect(withDomain(off, "deny_domains", "x.test")).toEqual({ ok: true, sandbox: { ...off, deny_domains: ["x.test"] } });
    expect(withDomain(off, "allow_domains", " ").ok).toBe(false);
  });
});

describe("withoutDomain", () => {
  it("switches the network off when the last allowed domain goes, and only then", () => {
    const one = { ...off, enabled: true, network: true, allow_domains: ["a.test"] };
    expect(withoutDomain(one, "allow_domains", "a.test")).toEqual({ ...one, allow_domains: [], network: false });
    const two = { ...one, allow_domains: ["a.test", "b.test"] };
    expect(withoutDomain(two, "allow_domains", "a.test")).toEqual({ ...two, allow_domains: ["b.test"] });
    const denied = { ...one, deny_domains: ["x.test"] };
    expect(withoutDomain(denied, "allow_domains", "a.test").network).toBe(true);
    expect(withoutDomain(denied, "deny_domains", "x.test")).toEqual(one);
  });
});

describe("grantLabel", () => {
  it("names what would be granted, and offers nothing when the sandbox itself failed", () => {
    const f = (kind: "read" | "write" | "network" | "masked" | "unavailable", path: string | null = null) => ({ kind, path, message: "m", evidence: "e" });
    expect(grantLabel(f("read", "/home/ada/proj"))).toBe("Allow reading /home/ada/proj");
    expect(grantLabel(f("write", "/out"))).toBe("Allow writing /out");
    expect(grantLabel(f("network"))).toBe("Allow the network");
    // SP-13: a domain the proxy refused is offered as that domain only.
    expect(grantLabel(f("network", "api.example.com"))).toBe("Allow reaching api.example.com");
    expect(grantLabel(f("unavailable"))).toBeNull();
    // SP-12: a credential store named by a server's output is never offered.
    expect(grantLabel(f("masked", "/home/ada/.ssh"))).toBeNull();
  });
});

describe("sandboxFindings", () => {
  it("grants a finding by the kind and path it displayed, as text, and reports what happened", async () => {
    m.sandboxFindings.mockResolvedValue({
      status: "ok",
      data: [
        { kind: "read", path: "/home/ada/<b>x</b>", message: "kept from reading", evidence: "e" },
        { kind: "unavailable", path: null, message: "bwrap failed", evidence: "e" },
        { kind: "masked", path: "/home/ada/.ssh", message: "nothing is offered", evidence: "e" },
      ],
    });
    m.grantSandboxFinding.mockResolvedValue({ status: "ok", data: { sandbox: off, approval_kept: true } });
    const done = vi.fn();
    const el = sandboxFindings("fs", done);
    document.body.append(el);
    await flush();
    const buttons = el.querySelectorAll("button.grant-sandbox");
    expect(buttons.length).toBe(1);
    expect(el.querySelector("b")).toBeNull();
    (buttons[0] as HTMLButtonElement).click();
    await flush();
    expect(m.grantSandboxFinding).toHaveBeenCalledWith("fs", "read", "/home/ada/<b>x</b>");
    expect(done).toHaveBeenCalledWith(expect.stringContaining("restarts with it"));
  });
});

describe("sandboxPanel", () => {
  it("loads when opened and saves each change, showing what Rust stored", async () => {
    m.serverSandbox.mockResolvedValue({ status: "ok", data: off });
    m.sandboxCredentialStore.mockResolvedValue({ status: "ok", data: null });
    m.setServerSandbox.mockResolvedValue({
      status: "ok",
      data: { sandbox: { ...off, enabled: true, read: ["/home/ada/proj"] }, approval_kept: true },
    });
    const d = sandboxPanel("fs");
    document.body.append(d);
    expect(m.serverSandbox).not.toHaveBeenCalled();
    d.open = true;
    d.dispatchEvent(new Event("toggle"));
    await flush();
    const path = d.querySelector("input.sandbox-path") as HTMLInputElement;
    path.value = "~/proj";
    (d.querySelector("button.sandbox-add-read") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerSandbox).toHaveBeenCalledWith("fs", { ...off, enabled: true, read: ["~/proj"] });
    expect(d.querySelector(".sandbox-read")?.textContent).toContain("/home/ada/proj");
    expect((d.querySelector("input.sandbox-enabled") as HTMLInputElement).checked).toBe(true);
    expect(d.querySelector(".sandbox-status")?.textContent).toContain("stays approved");
  });

  /// SP-12: a typed credential store is saved only after its own confirmation, which says what
  /// it holds; cancelled, nothing is saved.
  it("asks separately before unmasking a credential store", async () => {
    m.serverSandbox.mockResolvedValue({ status: "ok", data: off });
    m.sandboxCredentialStore.mockResolvedValue({ status: "ok", data: "SSH keys" });
    m.setServerSandbox.mockResolvedValue({
      status: "ok",
      data: { sandbox: { ...off, enabled: true, read: ["/home/ada/.ssh"], unmask: ["/home/ada/.ssh"] }, approval_kept: false },
    });
    const d = sandboxPanel("fs");
    document.body.append(d);
    d.open = true;
    d.dispatchEvent(new Event("toggle"));
    await flush();
    const path = d.querySelector("input.sandbox-path") as HTMLInputElement;
    path.value = "~/.ssh";
    (d.querySelector("button.sandbox-add-read") as HTMLButtonElement).click();
    await flush();
    expect(m.sandboxCredentialStore).toHaveBeenCalledWith("~/.ssh");
    expect(m.setServerSandbox).not.toHaveBeenCalled();
    const ask = d.querySelector(".sandbox-unmask-confirm") as HTMLElement;
    expect(ask.hidden).toBe(false);
    expect(ask.textContent).toContain("SSH keys");
    (d.querySelector("button.sandbox-unmask-no") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerSandbox).not.toHaveBeenCalled();
    (d.querySelector("button.sandbox-add-read") as HTMLButtonElement).click();
    await flush();
    (d.querySelector("button.sandbox-unmask-yes") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerSandbox).toHaveBeenCalledWith("fs", { ...off, enabled: true, read: ["~/.ssh"], unmask: ["~/.ssh"] });
    expect(d.querySelector(".sandbox-unmask")?.textContent).toContain("/home/ada/.ssh");
    expect(d.querySelector(".sandbox-status")?.textContent).toContain("approve it");
  });

  /// SP-13: domains are typed into their own row, saved, shown as Rust stored them, and removed.
  it("allows, blocks and removes domains", async () => {
    m.serverSandbox.mockResolvedValue({ status: "ok", data: { ...off, enabled: true } });
    const stored = { ...off, enabled: true, network: true, allow_domains: ["api.example.com"] };
    m.setServerSandbox.mockResolvedValue({ status: "ok", data: { sandbox: stored, approval_kept: true } });
    const d = sandboxPanel("fs");
    document.body.append(d);
    d.open = true;
    d.dispatchEvent(new Event("toggle"));
    await flush();
    const domain = d.querySelector("input.sandbox-domain") as HTMLInputElement;
    domain.value = "api.example.com";
    (d.querySelector("button.sandbox-allow-domain") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerSandbox).toHaveBeenCalledWith("fs", stored);
    expect(d.querySelector(".sandbox-allow-domains")?.textContent).toContain("api.example.com");
    expect((d.querySelector("input.sandbox-network") as HTMLInputElement).checked).toBe(true);
    expect(domain.value).toBe("");
    m.setServerSandbox.mockResolvedValue({ status: "error", error: { code: "invalid", message: "bad! is not a domain" } });
    domain.value = "bad!";
    (d.querySelector("button.sandbox-deny-domain") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerSandbox).toHaveBeenLastCalledWith("fs", { ...stored, deny_domains: ["bad!"] });
    expect(d.querySelector(".sandbox-status")?.textContent).toContain("is not a domain");
    expect(domain.value).toBe("bad!");
    m.setServerSandbox.mockResolvedValue({ status: "ok", data: { sandbox: { ...stored, allow_domains: [] }, approval_kept: true } });
    (d.querySelector(".sandbox-allow-domains button.sandbox-remove") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerSandbox).toHaveBeenLastCalledWith("fs", { ...stored, allow_domains: [], network: false });
    expect(d.querySelector(".sandbox-allow-domains")).toBeNull();
  });
});
