import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ serverContext: vi.fn(), readResource: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({ commands: m }));

import { attachContents, fenced, resourcePicker } from "./resource-picker";
import type { ResourceTarget } from "./resource-picker";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const res = (uri: string, name: string) => ({ uri, name, title: null, description: null, mime_type: null, size: null });
const ctx = (server: string, resources: unknown[]) => ({ server, completions: false, resources, templates: [], prompts: [] });

function target(initial = "") {
  let text = initial;
  const images: { mime_type: string; data: string }[] = [];
  const sources: string[] = [];
  const t: ResourceTarget = {
    text: () => text,
    setText: (v) => (text = v),
    addImage: (img) => (img.mime_type === "image/png" ? (images.push(img), null) : "refused type"),
    conversation: () => "c-1",
    from: (server) => void sources.push(server),
  };
  return { t, images, sources, text: () => text };
}

describe("attachContents", () => {
  it("appends text as a fenced block headed by the URI", () => {
    const x = target("Please look:");
    const r = attachContents("file:///a.md", [{ type: "resource", uri: "file:///a.md", mime_type: "text/markdown", text: "# A\n```js\nx\n```\n", blob: null }], x.t);
    expect(r).toEqual({ attached: 1, refused: [] });
    expect(x.text()).toBe("Please look:\n\nAttached resource file:///a.md:\n````\n# A\n```js\nx\n```\n````");
  });

  it("turns allowed images into attachments and refuses other binaries", () => {
    const x = target();
    const r = attachContents("test://b", [
      { type: "resource", uri: "test://b", mime_type: "image/png", text: null, blob: PNG },
      { type: "resource", uri: "test://b", mime_type: "application/zip", text: null, blob: "UEsDBA==" },
      { type: "image", mime_type: "image/svg+xml", data: "PHN2Zy8+" },
    ], x.t);
    expect(r.attached).toBe(1);
    expect(x.images).toEqual([{ mime_type: "image/png", data: PNG }]);
    expect(r.refused).toHaveLength(2);
    expect(r.refused[0]).toContain("application/zip contents cannot be attached");
    expect(r.refused[1]).toBe("refused type");
    expect(x.text()).toBe("");
  });

  it("refuses text that would make the message too long", () => {
    const x = target();
    const r = attachContents("big", [{ type: "text", text: "x".repeat(600 * 1024) }], x.t);
    expect(r.attached).toBe(0);
    expect(r.refused[0]).toContain("too long");
  });

  it("fences around backticks", () => {
    expect(fenced("u", "a")).toBe("Attached resource u:\n```\na\n```");
  });
});

describe("resourcePicker", () => {
  beforeEach(() => {
    Object.values(m).forEach((f) => f.mockReset());
    m.serverContext.mockImplementation(() => ok([ctx("alpha", [res("test://one", "one"), res("test://two", "two <b>2</b>")]), ctx("beta", [res("file:///notes.md", "notes")])]));
  });
  afterEach(() => document.body.replaceChildren());

  it("lists the resources of running servers, filters them, and attaches the chosen one", async () => {
    const x = target();
    const report = vi.fn();
    const btn = resourcePicker(x.t, report);
    document.body.append(btn);
    btn.click();
    await flush();
    const picker = document.querySelector(".resource-picker") as HTMLElement;
    expect(picker.querySelectorAll(".resource-option")).toHaveLength(3);
    expect(picker.querySelector("b")).toBeNull();
    const filter = picker.querySelector(".resource-filter") as HTMLInputElement;
    filter.value = "NOTES";
    filter.dispatchEvent(new Event("input"));
    const opts = picker.querySelectorAll<HTMLButtonElement>(".resource-option");
    expect(opts).toHaveLength(1);
    expect(m.readResource).not.toHaveBeenCalled();
    m.readResource.mockImplementation(() => ok([{ type: "resource", uri: "file:///notes.md", mime_type: "text/markdown", text: "hello", blob: null }]));
    opts[0].click();
    await flush();
    // Read for the conversation being written, and the server noted as the message's source.
    expect(m.readResource).toHaveBeenCalledWith("beta", "file:///notes.md", "c-1");
    expect(x.sources).toEqual(["beta"]);
    expect(x.text()).toBe("Attached resource file:///notes.md:\n```\nhello\n```");
    expect(document.querySelector(".resource-picker")).toBeNull();
    expect(report).toHaveBeenLastCalledWith(null);
  });

  it("keeps the picker open with the reason when nothing could be attached", async () => {
    const x = target();
    const btn = resourcePicker(x.t, () => {});
    btn.click();
    await flush();
    m.readResource.mockImplementation(() => ok([{ type: "resource", uri: "test://one", mime_type: "application/octet-stream", text: null, blob: "AAAA" }]));
    document.querySelector<HTMLButtonElement>(".resource-option")!.click();
    await flush();
    const status = document.querySelector(".resource-picker .resource-picker-status") as HTMLElement;
    expect(status.classList.contains("error")).toBe(true);
    expect(status.textContent).toContain("cannot be attached");
    m.readResource.mockImplementation(() => Promise.resolve({ status: "error", error: { code: "server", message: "read failed" } }));
    document.querySelector<HTMLButtonElement>(".resource-option")!.click();
    await flush();
    expect(status.textContent).toBe("read failed");
    expect(x.text()).toBe("");
    // Nothing attached: no server is named as a source.
    expect(x.sources).toEqual([]);
  });

  it("says when no server offers resources", async () => {
    m.serverContext.mockImplementation(() => ok([]));
    resourcePicker(target().t, () => {}).click();
    await flush();
    expect(document.querySelector(".resource-picker-status")?.textContent).toContain("offer no resources");
  });
});
