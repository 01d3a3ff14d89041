import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

const render = (md: string) => {
  const div = document.createElement("div");
  div.append(renderMarkdown(md));
  return div;
};

describe("renderMarkdown", () => {
  it("renders paragraphs with line breaks", () => {
    const d = render("one\ntwo\n\nthree");
    const ps = d.querySelectorAll("p");
    expect(ps).toHaveLength(2);
    expect(ps[0].querySelector("br")).not.toBeNull();
    expect(ps[1].textContent).toBe("three");
  });

  it("renders fenced code blocks verbatim with a Copy button", () => {
    const d = render("before\n```ts\nconst a = **1**;\n<b>x</b>\n```\nafter");
    const code = d.querySelector("pre code");
    expect(code?.textContent).toBe("const a = **1**;\n<b>x</b>");
    expect((code as HTMLElement).dataset.lang).toBe("ts");
    expect(d.querySelector("b")).toBeNull();
    expect(d.querySelector("button.md-copy")?.textContent).toBe("Copy");
    expect(d.querySelectorAll("p")).toHaveLength(2);
  });

  it("keeps an unclosed fence to the end", () => {
    expect(render("```\nopen").querySelector("pre code")?.textContent).toBe("open");
  });

  it("renders inline code, bold and italic", () => {
    const d = render("a `x*y*` and **bold *it*** and *em* and _em2_");
    expect(d.querySelector("code")?.textContent).toBe("x*y*");
    expect(d.querySelector("strong")?.textContent).toBe("bold it");
    expect(d.querySelector("strong em")?.textContent).toBe("it");
    expect(Array.from(d.querySelectorAll("em")).map((e) => e.textContent)).toEqual(["it", "em", "em2"]);
  });

  it("renders bullet and numbered lists", () => {
    const d = render("- one\n- **two**\n\n3. three\n4. four");
    expect(Array.from(d.querySelectorAll("ul li")).map((l) => l.textContent)).toEqual(["one", "two"]);
    expect(d.querySelector("ul li strong")).not.toBeNull();
    const ol = d.querySelector("ol");
    expect(ol?.getAttribute("start")).toBe("3");
    expect(ol?.querySelectorAll("li")).toHaveLength(2);
  });

  it("renders headings below the page's own", () => {
    const d = render("# Title\n### Sub");
    expect(d.querySelector("h3")?.textContent).toBe("Title");
    expect(d.querySelector("h5")?.textContent).toBe("Sub");
    expect(d.querySelector("h1")).toBeNull();
  });

  it("shows a link as text and its URL, never as an anchor", () => {
    const d = render("see [the docs](https://evil.example/x) and [js](javascript:alert(1))");
    expect(d.querySelector("a")).toBeNull();
    expect(d.querySelector("[href]")).toBeNull();
    expect(d.textContent).toContain("the docs (https://evil.example/x)");
    expect(d.querySelector(".md-link")?.textContent).toBe("the docs");
  });

  it("keeps markup in model text as text", () => {
    const d = render('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">\n\n![pic](https://evil.example/p.png)');
    expect(d.querySelector("script")).toBeNull();
    expect(d.querySelector("img")).toBeNull();
    expect(d.textContent).toContain("<script>alert(1)</script>");
    expect(d.textContent).toContain('<img src=x onerror="alert(1)">');
    expect(d.textContent).toContain("https://evil.example/p.png");
  });

  it("does not throw on nested or unbalanced markers", () => {
    const odd = ["**unclosed", "*a **b* c**", "`", "``", "[x](", "[](y)", "***", "- ", "1.", "#", "_*_*_*", "*".repeat(10_000), "**".repeat(50) + "x" + "**".repeat(50)];
    for (const s of odd) expect(() => render(s)).not.toThrow();
    expect(render("**unclosed").textContent).toBe("**unclosed");
  });
});
