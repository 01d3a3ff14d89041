import { describe, expect, it, vi } from "vitest";
import { linkDialog, refusedDialog } from "./dialog";

const proposal = {
  name: "everything-2",
  renamed_from: "everything",
  remote: false,
  lines: [
    ["executable", "/usr/bin/npx"] as [string, string],
    ["arg[0]", "'; rm -rf ~'"] as [string, string],
    ["arg[1]", "<img src=x onerror=alert(1)>"] as [string, string],
  ],
  warnings: ["npx -y installs and runs a package version that is not pinned"],
  fingerprint: "fp1",
  asked: ["GITHUB_TOKEN"],
};

describe("linkDialog", () => {
  it("shows every line as text, the rename and the asked field", () => {
    const d = linkDialog(proposal, vi.fn(), () => {});
    expect(d.querySelector("img")).toBeNull();
    expect(d.textContent).toContain("<img src=x onerror=alert(1)>");
    expect(d.textContent).toContain("'; rm -rf ~'");
    expect(d.querySelector(".link-renamed")?.textContent).toContain("everything-2");
    expect(d.querySelector<HTMLInputElement>(".link-secret")?.type).toBe("password");
  });

  it("adds nothing on Don't add, and approves the fingerprint shown with the typed value", async () => {
    const approve = vi.fn(async () => null);
    const done = vi.fn();
    const d = linkDialog(proposal, approve, done);
    document.body.append(d);
    d.querySelector<HTMLButtonElement>(".link-cancel")?.click();
    expect(approve).not.toHaveBeenCalled();
    expect(done).toHaveBeenCalledTimes(1);
    expect(d.isConnected).toBe(false);

    const d2 = linkDialog(proposal, approve, done);
    document.body.append(d2);
    d2.querySelector<HTMLInputElement>(".link-secret")!.value = "typed";
    d2.querySelector<HTMLButtonElement>(".link-approve")?.click();
    await vi.waitFor(() => expect(done).toHaveBeenCalledTimes(2));
    expect(approve).toHaveBeenCalledWith("fp1", [{ field: "GITHUB_TOKEN", value: "typed" }]);
  });

  it("keeps the dialog open with the reason when the host refuses", async () => {
    const d = linkDialog(proposal, async () => "what would run changed", vi.fn());
    document.body.append(d);
    d.querySelector<HTMLButtonElement>(".link-approve")?.click();
    await vi.waitFor(() => expect(d.querySelector(".error")?.textContent).toBe("what would run changed"));
    expect(d.isConnected).toBe(true);
  });
});

describe("refusedDialog", () => {
  it("says why and offers nothing to approve", () => {
    const d = refusedDialog("the link carries a value for \"TOKEN\" that looks like a secret", () => {});
    expect(d.textContent).toContain("looks like a secret");
    expect(d.querySelector(".link-approve")).toBeNull();
  });
});
