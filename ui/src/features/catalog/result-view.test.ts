import { describe, expect, it, vi } from "vitest";
import { MAX_BASE64, TEXT_CAP, renderContent, renderProgress, renderToolResult } from "./result-view";
import type { ContentDto } from "./result-view";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const hostile = "<script>alert(1)</script><img src=x onerror=alert(1)><a href=javascript:alert(1)>x</a>";

describe("text", () => {
  it("stays text, whatever it contains", () => {
    const el = renderContent({ type: "text", text: hostile });
    expect(el.querySelector("script, img, a")).toBeNull();
    expect(el.querySelector("pre")?.textContent).toBe(hostile);
  });

  it("pretty-prints JSON objects and arrays, with a way back to the raw text", () => {
    const raw = '{"a":1,"b":["<b>x</b>"]}';
    const el = renderContent({ type: "text", text: raw });
    expect(el.querySelector("pre.rv-json")?.textContent).toBe(JSON.stringify(JSON.parse(raw), null, 2));
    expect(el.querySelector("b")).toBeNull();
    const toggle = el.querySelector<HTMLButtonElement>(".rv-toggle")!;
    toggle.click();
    expect(el.querySelector("pre")?.textContent).toBe(raw);
    expect(toggle.getAttribute("aria-pressed")).toBe("false");
    toggle.click();
    expect(el.querySelector("pre.rv-json")).not.toBeNull();
  });

  it("leaves scalars and broken JSON as they are", () => {
    for (const text of ["42", '"str"', "{not json", "[1,"]) {
      const el = renderContent({ type: "text", text });
      expect(el.querySelector(".rv-json")).toBeNull();
      expect(el.querySelector("pre")?.textContent).toBe(text);
    }
  });

  it("caps huge texts and shows all on request", () => {
    const text = "a".repeat(TEXT_CAP) + "TAIL" + "b".repeat(1000);
    const el = renderContent({ type: "text", text });
    const pre = el.querySelector("pre")!;
    expect(pre.textContent!.length).toBe(200_000);
    expect(el.textContent).toMatch(/showing the first 200,000 of 201,004 characters/i);
    expect(el.textContent).not.toContain("TAIL");
    el.querySelector<HTMLButtonElement>(".rv-show-all")!.click();
    expect(pre.textContent).toBe(text);
    expect(el.querySelector(".rv-show-all")).toBeNull();
    expect(el.textContent).not.toMatch(/showing the first/i);
  });
});

describe("images", () => {
  const img = (data: string, mime_type: string) => renderContent({ type: "image", data, mime_type });

  it("shows allowed raster types as data: images with alt text", () => {
    for (const mime of ["image/png", "image/jpeg", "image/gif", "image/webp"]) {
      const i = img(PNG, mime).querySelector("img")!;
      expect(i.getAttribute("src")).toBe(`data:${mime};base64,${PNG}`);
      expect(i.getAttribute("alt")).toMatch(/^Image \(/);
    }
  });

  it("strips whitespace from the base64", () => {
    const wrapped = PNG.slice(0, 20) + "\n  " + PNG.slice(20);
    expect(img(wrapped, "image/png").querySelector("img")?.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
  });

  it("never makes an <img> of SVG, bad base64, empty or oversized data", () => {
    const cases: [string, string, RegExp][] = [
      [btoa("<svg onload=alert(1)></svg>"), "image/svg+xml", /image\/svg\+xml is not a displayed image type/],
      ['AAAA"><script>', "image/png", /not valid base64/],
      ["AAAA;base64,x", "image/png", /not valid base64/],
      ["", "image/png", /empty/],
      ["A".repeat(MAX_BASE64 + 4), "image/png", /too large/],
    ];
    for (const [data, mime, why] of cases) {
      const el = img(data, mime);
      expect(el.querySelector("img, script, svg")).toBeNull();
      expect(el.querySelector(".rv-placeholder")?.textContent).toMatch(why);
    }
  });
});

describe("audio", () => {
  it("plays allowed types and shows the type and size", () => {
    const el = renderContent({ type: "audio", data: "AAAA", mime_type: "audio/wav" });
    const a = el.querySelector("audio")!;
    expect(a.hasAttribute("controls")).toBe(true);
    expect(a.getAttribute("src")).toBe("data:audio/wav;base64,AAAA");
    expect(el.textContent).toContain("audio/wav, 3 bytes");
  });

  it("refuses other types and bad base64", () => {
    for (const [data, mime_type] of [["AAAA", "audio/x-evil"], ["AA!A", "audio/ogg"], ["AAAA", "text/html"]]) {
      const el = renderContent({ type: "audio", data, mime_type });
      expect(el.querySelector("audio")).toBeNull();
      expect(el.querySelector(".rv-placeholder")?.textContent).toMatch(/Audio not shown/);
    }
  });
});

describe("resource links", () => {
  const link: ContentDto = { type: "resource_link", uri: "javascript:alert(1)", name: "<b>readme</b>", mime_type: "text/plain" };

  it("shows name, uri and type as text, never as a link", () => {
    const el = renderContent(link);
    expect(el.querySelector("a, b")).toBeNull();
    expect(el.querySelector(".rv-name")?.textContent).toBe("<b>readme</b>");
    expect(el.querySelector(".rv-uri")?.textContent).toBe("javascript:alert(1)");
    expect(el.querySelector(".rv-mime")?.textContent).toBe("text/plain");
    expect(el.querySelector("button")).toBeNull();
  });

  it("offers Open only with a hook, and calls it with the uri", () => {
    const open = vi.fn();
    const el = renderContent(link, { onOpenResource: open });
    el.querySelector<HTMLButtonElement>(".rv-open")!.click();
    expect(open).toHaveBeenCalledWith("javascript:alert(1)");
    expect(renderContent({ ...link, mime_type: null }).querySelector(".rv-mime")?.textContent).toBe("type not given");
  });
});

describe("embedded resources", () => {
  const res = (mime_type: string | null, text: string | null, blob: string | null): ContentDto => ({ type: "resource", uri: "file:///x", mime_type, text, blob });

  it("shows uri, type and text as text", () => {
    const el = renderContent(res("text/html", hostile, null));
    expect(el.querySelector(".rv-uri")?.textContent).toBe("file:///x");
    expect(el.querySelector(".rv-mime")?.textContent).toBe("text/html");
    expect(el.querySelector("script, img, a")).toBeNull();
    expect(el.querySelector("pre")?.textContent).toBe(hostile);
  });

  it("pretty-prints JSON", () => {
    const el = renderContent(res("application/json", "[1,2]", null));
    expect(el.querySelector("pre.rv-json")?.textContent).toBe("[\n  1,\n  2\n]");
  });

  it("shows image blobs as images and everything else as a byte count", () => {
    expect(renderContent(res("image/png", null, PNG)).querySelector("img")?.getAttribute("alt")).toContain("file:///x");
    const svg = renderContent(res("image/svg+xml", null, btoa("<svg/>")));
    expect(svg.querySelector("img, svg")).toBeNull();
    expect(svg.querySelector(".rv-placeholder")).not.toBeNull();
    const bin = renderContent(res("application/octet-stream", null, "AAAAAA=="));
    expect(bin.querySelector("img")).toBeNull();
    expect(bin.querySelector(".rv-placeholder")?.textContent).toBe("Binary, 4 bytes; not shown.");
    expect(renderContent(res(null, null, null)).textContent).toContain("Empty resource.");
  });
});

describe("renderToolResult", () => {
  it("renders every item in order, with structured content pretty-printed", () => {
    const el = renderToolResult({
      content: [
        { type: "text", text: "first" },
        { type: "image", data: PNG, mime_type: "image/png" },
        { type: "text", text: "last" },
      ],
      structured_content: '{"temp":21,"unit":"C"}',
      is_error: false,
    });
    expect(el.classList.contains("tool-error")).toBe(false);
    expect(el.querySelector("[role=alert]")).toBeNull();
    const items = Array.from(el.querySelectorAll(".rv-item"));
    expect(items.map((i) => i.className)).toEqual(["rv-item rv-text-item", "rv-item rv-image-item", "rv-item rv-text-item"]);
    expect(items[0].textContent).toBe("first");
    expect(el.querySelector(".rv-heading")?.textContent).toBe("Structured content");
    expect(el.querySelector("pre.rv-structured")?.textContent).toBe('{\n  "temp": 21,\n  "unit": "C"\n}');
  });

  it("marks errors visibly", () => {
    const el = renderToolResult({ content: [{ type: "text", text: "boom" }], structured_content: null, is_error: true });
    expect(el.classList.contains("tool-error")).toBe(true);
    expect(el.querySelector("[role=alert]")?.textContent).toBe("The tool reported an error");
    expect(el.textContent).toContain("boom");
    expect(el.querySelector(".rv-heading")).toBeNull();
  });

  it("passes the open hook down and says when there is nothing", () => {
    const open = vi.fn();
    const el = renderToolResult({ content: [{ type: "resource_link", uri: "mem://a", name: "a", mime_type: null }], structured_content: null, is_error: false }, { onOpenResource: open });
    el.querySelector<HTMLButtonElement>(".rv-open")!.click();
    expect(open).toHaveBeenCalledWith("mem://a");
    expect(renderToolResult({ content: [], structured_content: null, is_error: false }).textContent).toContain("no content");
  });
});

describe("renderProgress", () => {
  it("shows a determinate bar with a total", () => {
    const el = renderProgress({ progress: 3, total: 10, message: "<i>copying</i>" });
    const bar = el.querySelector("progress")!;
    expect(bar.getAttribute("max")).toBe("10");
    expect(bar.getAttribute("value")).toBe("3");
    expect(el.querySelector("i")).toBeNull();
    expect(el.querySelector(".rv-message")?.textContent).toBe("<i>copying</i>");
    expect(el.querySelector(".rv-amount")?.textContent).toBe("3 of 10");
  });

  it("is indeterminate without a total", () => {
    const el = renderProgress({ progress: 1500, total: null, message: null });
    const bar = el.querySelector("progress")!;
    expect(bar.hasAttribute("value")).toBe(false);
    expect(el.querySelector(".rv-message")).toBeNull();
    expect(el.querySelector(".rv-amount")?.textContent).toBe("1,500");
  });
});
