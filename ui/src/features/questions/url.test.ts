import { describe, expect, it } from "vitest";
import { splitUrl, urlBody, urlText } from "./url";

const q = (over: Partial<Parameters<typeof urlBody>[0]> = {}) => ({
  kind: "url" as const,
  message: "Sign in to continue",
  url: "https://login.example.co.uk/oauth?next=/a",
  host: "login.example.co.uk",
  host_unicode: "login.example.co.uk",
  domain: "example.co.uk",
  warnings: [],
  ...over,
});

describe("splitUrl", () => {
  it("cuts the URL at its host and the host at its registrable domain", () => {
    expect(splitUrl("https://login.example.co.uk/oauth?x=1", "login.example.co.uk", "example.co.uk")).toEqual({
      before: "https://", sub: "login.", domain: "example.co.uk", after: "/oauth?x=1",
    });
    expect(splitUrl("https://example.com/", "example.com", "example.com")).toEqual({
      before: "https://", sub: "", domain: "example.com", after: "/",
    });
    expect(splitUrl("http://127.0.0.1:8080/cb", "127.0.0.1", "127.0.0.1")).toEqual({
      before: "http://", sub: "", domain: "127.0.0.1", after: ":8080/cb",
    });
  });

  it("a look-alike suffix is not the domain; a host elsewhere in the URL is not the host", () => {
    const p = splitUrl("https://bank.com.evil.test/bank.com", "bank.com.evil.test", "evil.test");
    expect(p?.domain).toBe("evil.test");
    expect(p?.sub).toBe("bank.com.");
    // A domain that is not a whole-label suffix of the host: the whole host is highlighted.
    expect(splitUrl("https://notexample.com/", "notexample.com", "example.com")?.domain).toBe("notexample.com");
    expect(splitUrl("https://a.test/x", "b.test", "b.test")).toBeNull();
    expect(splitUrl("mailto:x", "x", "x")).toBeNull();
  });
});

describe("urlBody", () => {
  it("shows the full URL as text with the domain bold, and never a link or an image", () => {
    const parts = urlBody(q({ url: "https://login.example.co.uk/<img src=x onerror=alert(1)>", message: "<b>hi</b>" }));
    const box = document.createElement("div");
    box.append(...parts);
    const url = box.querySelector(".question-url") as HTMLElement;
    expect(url.textContent).toBe("https://login.example.co.uk/<img src=x onerror=alert(1)>");
    expect(url.querySelector(".url-domain")?.textContent).toBe("example.co.uk");
    expect(url.querySelector(".url-domain")?.tagName).toBe("STRONG");
    expect(box.querySelectorAll("a, img, iframe, link, script").length).toBe(0);
    expect(box.textContent).toContain("<b>hi</b>");
  });

  it("lists the warnings and what a punycode host reads as", () => {
    const box = document.createElement("div");
    box.append(...urlBody(q({
      url: "https://xn--pypal-4ve.com/", host: "xn--pypal-4ve.com", host_unicode: "pаypal.com", domain: "xn--pypal-4ve.com",
      warnings: ["the domain is written in punycode", "the address points at this computer"],
    })));
    expect(Array.from(box.querySelectorAll(".url-warning")).map((w) => w.textContent)).toEqual([
      "the domain is written in punycode", "the address points at this computer",
    ]);
    expect(box.querySelector(".url-reads-as")?.textContent).toContain("pаypal.com");
  });

  it("falls back to the plain URL when the host cannot be found in it", () => {
    const el = urlText({ url: "https://a.test/", host: "b.test", domain: "b.test" });
    expect(el.textContent).toBe("https://a.test/");
    expect(el.querySelector(".url-domain")).toBeNull();
  });
});
