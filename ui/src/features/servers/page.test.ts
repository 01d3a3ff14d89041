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
    expect(approve).toHaveBeenCalledWith("abc123");
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
