import { describe, expect, it, vi } from "vitest";
import { confirmDialog, doctorDialog, sampleServer, trustDialog } from "./page";
import { validate } from "./validate";

describe("trustDialog", () => {
  const view = {
    name: "fs",
    lines: [
      ["executable", "/usr/bin/npx"] as [string, string],
      ["arg[0]", "<script>alert(1)</script>"] as [string, string],
      ["arg[1]", "x".repeat(5000)] as [string, string],
    ],
    warnings: ["npx -y installs and runs a package version that is not pinned"],
    fingerprint: "abc123",
    state: "not_approved" as const,
    remote: false,
    fields: [],
    bind_options: [],
  };

  it("shows every line untruncated and as text, with warnings", () => {
    const d = trustDialog(view, () => {});
    expect(d.querySelector("script")).toBeNull();
    expect(d.textContent).toContain("<script>alert(1)</script>");
    expect(d.textContent).toContain("x".repeat(5000));
    expect(d.querySelector(".warnings")?.textContent).toContain("not pinned");
  });

  it("approves exactly the fingerprint shown, and only on the allow button", () => {
    const approve = vi.fn();
    const d = trustDialog(view, approve);
    document.body.append(d);
    const [deny, allow] = Array.from(d.querySelectorAll("button"));
    expect(deny.textContent).toBe("Don't allow");
    deny.click();
    expect(approve).not.toHaveBeenCalled();
    allow.click();
    expect(approve).toHaveBeenCalledWith("abc123", []);
  });

  it("shows env values and the binding of each secret, never a value", () => {
    const d = trustDialog({
      ...view,
      lines: [
        ["executable", "/usr/bin/node"],
        ["env LD_PRELOAD", "/tmp/evil.so"],
        ["env GITHUB_TOKEN", "this server's secret GITHUB_TOKEN (value not shown)"],
      ],
      warnings: ["sets LD_PRELOAD, which changes what the runtime loads or runs before the server itself"],
      fields: [{ field: "GITHUB_TOKEN", bound: null }],
    }, () => {});
    const text = d.querySelector(".plan")?.textContent ?? "";
    expect(text).toContain("env LD_PRELOAD/tmp/evil.so");
    expect(text).toContain("this server's secret GITHUB_TOKEN (value not shown)");
    expect(d.querySelector(".warnings")?.textContent).toContain("LD_PRELOAD");
  });

  it("asks about a remote server's URL and headers, and connects only on allow", () => {
    const approve = vi.fn();
    const d = trustDialog({
      ...view,
      remote: true,
      lines: [["url", "https://mcp.example.com/mcp"], ["header Authorization", "this server's secret Authorization (value not shown)"]],
      warnings: [],
    }, approve);
    document.body.append(d);
    expect(d.querySelector("h2")?.textContent).toBe("Allow fs to connect like this?");
    expect(d.textContent).toContain("Nothing is sent before you allow it");
    expect(d.textContent).toContain("header Authorization");
    const allow = Array.from(d.querySelectorAll("button")).find((b) => b.textContent === "Allow and connect");
    allow?.click();
    expect(approve).toHaveBeenCalledWith("abc123", []);
  });

  it("binds a field only when chosen, shows the new view, and approves its fingerprint", async () => {
    const approve = vi.fn();
    const rebind = vi.fn(async () => ({
      ...view,
      remote: true,
      lines: [["url", "https://x/mcp"], ["header Authorization", "the API key of provider openai, bound by you (value not shown)"]] as [string, string][],
      warnings: ["Authorization is the API key of provider openai, bound by you, a secret that is not this server's own"],
      fingerprint: "bound-fp",
      fields: [{ field: "Authorization", bound: "provider:openai" }],
      bind_options: ["provider:openai"],
    }));
    const d = trustDialog({ ...view, remote: true, fields: [{ field: "Authorization", bound: null }], bind_options: ["provider:openai", "server:gh/token"] }, approve, rebind);
    document.body.append(d);
    const select = d.querySelector<HTMLSelectElement>("select.bind");
    expect(select?.value).toBe("");
    select!.value = "provider:openai";
    select!.dispatchEvent(new Event("change"));
    await vi.waitFor(() => expect(d.querySelector(".plan")?.textContent).toContain("API key of provider openai"));
    expect(rebind).toHaveBeenCalledWith([{ field: "Authorization", to: "provider:openai" }]);
    expect(d.querySelector(".warnings")?.textContent).toContain("not this server's own");
    Array.from(d.querySelectorAll("button")).find((b) => b.textContent === "Allow and connect")?.click();
    expect(approve).toHaveBeenCalledWith("bound-fp", [{ field: "Authorization", to: "provider:openai" }]);
  });

  it("treats Escape (cancel) as no", () => {
    const approve = vi.fn();
    const d = trustDialog(view, approve);
    document.body.append(d);
    d.dispatchEvent(new Event("cancel"));
    expect(approve).not.toHaveBeenCalled();
    expect(document.body.contains(d)).toBe(false);
  });
});

describe("doctorDialog", () => {
  it("lists each check with its verdict and the stderr as text", () => {
    const d = doctorDialog({
      name: "x",
      plan: [["executable", "/bin/x"]],
      checks: [
        { name: "executable", level: "ok", detail: "/bin/x" },
        { name: "handshake", level: "fail", detail: "it exited early" },
      ],
      stderr_tail: ["<b>boom</b>"],
    });
    expect(d.querySelectorAll(".check").length).toBe(2);
    expect(d.querySelector(".check.fail")?.textContent).toContain("[FAIL] handshake");
    expect(d.querySelector(".stderr b")).toBeNull();
    expect(d.querySelector(".stderr")?.textContent).toBe("<b>boom</b>");
  });
});

describe("confirmDialog", () => {
  it("does nothing unless confirmed", () => {
    const yes = vi.fn();
    const d = confirmDialog("Remove x?", "gone", "Remove", yes);
    document.body.append(d);
    const [cancel, confirm] = Array.from(d.querySelectorAll("button"));
    cancel.click();
    expect(yes).not.toHaveBeenCalled();
    confirm.click();
    expect(yes).toHaveBeenCalledTimes(1);
  });
});

describe("sampleServer", () => {
  it("is a valid, pinned stdio server", () => {
    const s = sampleServer();
    expect(validate(s)).toEqual({});
    expect(s.kind === "stdio" && s.args.some((a) => /@modelcontextprotocol\/server-everything@\d/.test(a))).toBe(true);
  });
});
