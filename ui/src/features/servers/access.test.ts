import { afterEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({
  serverRoots: vi.fn(),
  setServerRoots: vi.fn(),
  resultReview: vi.fn(),
  setResultReview: vi.fn(),
}));
vi.mock("../../ipc/bindings", () => ({ commands: m, events: { hostChanged: { listen: vi.fn() } } }));

import { accessPanel, withFolder } from "./access";

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const root = (path: string) => ({ uri: `file://${path}/`, name: path.split("/").pop() ?? null, path });

afterEach(() => {
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("withFolder", () => {
  it("adds a typed folder once", () => {
    expect(withFolder(["/a"], " /b ")).toEqual({ ok: true, folders: ["/a", "/b"] });
    expect(withFolder(["/a"], "/a/").ok).toBe(false);
    expect(withFolder([], "  ").ok).toBe(false);
  });
});

describe("accessPanel", () => {
  const open = async () => {
    const d = accessPanel("fs");
    document.body.append(d);
    d.open = true;
    d.dispatchEvent(new Event("toggle"));
    await flush();
    return d;
  };

  it("loads nothing until opened, then shows the folders and the review setting", async () => {
    m.serverRoots.mockResolvedValue({ status: "ok", data: [root("/home/ada/<b>notes</b>")] });
    m.resultReview.mockResolvedValue({ status: "ok", data: "always" });
    const closed = accessPanel("fs");
    document.body.append(closed);
    await flush();
    expect(m.serverRoots).not.toHaveBeenCalled();
    const d = await open();
    expect(m.serverRoots).toHaveBeenCalledWith("fs");
    expect(d.querySelector(".root-path")?.textContent).toBe("/home/ada/<b>notes</b>");
    expect(d.querySelector(".root-path b")).toBeNull();
    expect((d.querySelector(".result-review") as HTMLSelectElement).value).toBe("always");
  });

  it("adds and removes folders, showing what Rust stored, and its refusals", async () => {
    m.serverRoots.mockResolvedValue({ status: "ok", data: [root("/a")] });
    m.resultReview.mockResolvedValue({ status: "ok", data: "default" });
    m.setServerRoots
      .mockResolvedValueOnce({ status: "error", error: { code: "invalid", message: "/nope is not an existing folder" } })
      .mockResolvedValueOnce({ status: "ok", data: [root("/a"), root("/real/b")] })
      .mockResolvedValueOnce({ status: "ok", data: [root("/real/b")] });
    const d = await open();
    const input = d.querySelector(".root-add-path") as HTMLInputElement;
    input.value = "/nope";
    (d.querySelector(".root-add") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerRoots).toHaveBeenLastCalledWith("fs", ["/a", "/nope"]);
    expect(d.querySelector(".roots-status")?.textContent).toBe("/nope is not an existing folder");
    expect(input.value).toBe("/nope");
    input.value = "/b";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await flush();
    expect(m.setServerRoots).toHaveBeenLastCalledWith("fs", ["/a", "/b"]);
    expect(Array.from(d.querySelectorAll(".root-path")).map((p) => p.textContent)).toEqual(["/a", "/real/b"]);
    expect(input.value).toBe("");
    (d.querySelector(".root-remove") as HTMLButtonElement).click();
    await flush();
    expect(m.setServerRoots).toHaveBeenLastCalledWith("fs", ["/real/b"]);
    expect(d.querySelectorAll(".root-item").length).toBe(1);
  });

  it("saves the review setting when it changes", async () => {
    m.serverRoots.mockResolvedValue({ status: "ok", data: [] });
    m.resultReview.mockResolvedValue({ status: "ok", data: "default" });
    m.setResultReview.mockResolvedValue({ status: "ok", data: null });
    const d = await open();
    expect(d.querySelector(".roots-empty")).not.toBeNull();
    const sel = d.querySelector(".result-review") as HTMLSelectElement;
    sel.value = "never";
    sel.dispatchEvent(new Event("change"));
    await flush();
    expect(m.setResultReview).toHaveBeenCalledWith("fs", "never");
    expect(d.querySelector(".review-status")?.textContent).toBe("Saved.");
  });
});
