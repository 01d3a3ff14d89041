import { describe, expect, it, vi } from "vitest";
import { MAX_IMAGES, checkImage, imageAttachments, readBase64 } from "./attachments";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const png = (name = "dot.png") => new File([bytes(PNG)], name, { type: "image/png" });
const setFiles = (input: HTMLInputElement, files: File[]) => {
  Object.defineProperty(input, "files", { value: files, configurable: true });
  input.dispatchEvent(new Event("change"));
};

describe("imageAttachments", () => {
  it("reads picked files as base64 and shows removable chips with thumbnails", async () => {
    const report = vi.fn();
    const a = imageAttachments(report);
    document.body.append(a.picker, a.chips);
    const input = a.picker.querySelector(".attach-image-input") as HTMLInputElement;
    expect(input.type).toBe("file");
    expect(input.accept).toBe("image/png,image/jpeg,image/gif,image/webp");
    expect(a.chips.hidden).toBe(true);
    setFiles(input, [png("a.png"), png("b.png")]);
    await vi.waitFor(() => expect(a.images()).toHaveLength(2));
    expect(a.images()[0]).toEqual({ mime_type: "image/png", data: PNG });
    const chips = a.chips.querySelectorAll(".attach-chip");
    expect(chips).toHaveLength(2);
    expect((chips[0].querySelector("img.attach-thumb") as HTMLImageElement).getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(chips[1].textContent).toContain("b.png");
    (chips[0].querySelector(".attach-remove") as HTMLButtonElement).click();
    expect(a.images()).toHaveLength(1);
    expect(a.chips.textContent).toContain("b.png");
    expect(report).toHaveBeenLastCalledWith(null);
    a.clear();
    expect(a.chips.hidden).toBe(true);
    a.picker.remove();
    a.chips.remove();
  });

  it("refuses other types, and more than eight images", async () => {
    const report = vi.fn();
    const a = imageAttachments(report);
    await a.addFiles([new File(["<svg onload=alert(1)/>"], "x.svg", { type: "image/svg+xml" })]);
    expect(a.images()).toHaveLength(0);
    expect(report).toHaveBeenLastCalledWith(expect.stringContaining("x.svg not attached"));
    await a.addFiles(Array.from({ length: MAX_IMAGES + 1 }, (_, i) => png(`${i}.png`)));
    expect(a.images()).toHaveLength(MAX_IMAGES);
    expect(report).toHaveBeenLastCalledWith(expect.stringContaining("at most 8 images"));
    expect(a.add({ mime_type: "image/png", data: PNG }, "extra")).toContain("at most 8");
  });

  it("checks images that come from elsewhere", () => {
    const a = imageAttachments(() => {});
    expect(a.add({ mime_type: "image/svg+xml", data: "PHN2Zy8+" }, "r")).toContain("not an image type");
    expect(a.add({ mime_type: "image/png", data: "%%%" }, "r")).toContain("not valid base64");
    expect(a.add({ mime_type: "IMAGE/PNG; x=y", data: `${PNG.slice(0, 20)}\n${PNG.slice(20)}` }, "r")).toBeNull();
    expect(a.images()).toEqual([{ mime_type: "image/png", data: PNG }]);
    expect(checkImage("text/html", "PGI+")).not.toBeNull();
  });

  it("restores images after a refused send, and can be disabled", () => {
    const a = imageAttachments(() => {});
    a.restore([{ mime_type: "image/png", data: PNG }]);
    expect(a.chips.querySelectorAll(".attach-chip")).toHaveLength(1);
    a.setDisabled(true);
    expect((a.picker.querySelector(".attach-image") as HTMLButtonElement).disabled).toBe(true);
  });

  it("readBase64 strips the data: prefix", async () => {
    expect(await readBase64(png())).toBe(PNG);
  });
});
