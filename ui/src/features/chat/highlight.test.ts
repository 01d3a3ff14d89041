import { describe, expect, it } from "vitest";
import { MAX_HIGHLIGHT, highlight, isHighlighted } from "./highlight";
import { renderMarkdown } from "./markdown";

const tokens = (code: string, lang: string) => {
  const div = document.createElement("div");
  div.append(...highlight(code, lang));
  return { div, of: (k: string) => Array.from(div.querySelectorAll(`.tok-${k}`)).map((s) => s.textContent) };
};

describe("highlight", () => {
  it("marks keywords, strings, numbers and comments in TypeScript and keeps the text exact", () => {
    const code = 'const a: number = 42; // the answer\nlet s = "x\\"y" + `t${a}` /* c */; interface X {}';
    const t = tokens(code, "ts");
    expect(t.div.textContent).toBe(code);
    expect(t.of("kw")).toEqual(["const", "number", "let", "interface"]);
    expect(t.of("num")).toEqual(["42"]);
    expect(t.of("com")).toEqual(["// the answer", "/* c */"]);
    expect(t.of("str")).toEqual(['"x\\"y"', "`t${a}`"]);
  });

  it("handles Python, Rust, JSON and shell", () => {
    const py = tokens('def f(x):\n    """doc"""\n    return x + 1  # inc', "python");
    expect(py.of("kw")).toEqual(["def", "return"]);
    expect(py.of("str")).toEqual(['"""doc"""']);
    expect(py.of("com")).toEqual(["# inc"]);
    const rs = tokens("fn f<'a>(s: &'a str) -> char { let c = 'x'; r#\"raw\"#; 0x1F }", "rust");
    expect(rs.of("kw")).toEqual(["fn", "str", "char", "let"]);
    expect(rs.of("str")).toEqual(["'x'", 'r#"raw"#']);
    expect(rs.of("num")).toEqual(["0x1F"]);
    const js = tokens('{"a": [1, 2.5e3, true, null], "b": "c"}', "json");
    expect(js.of("str")).toEqual(['"a"', '"b"', '"c"']);
    expect(js.of("num")).toEqual(["1", "2.5e3"]);
    expect(js.of("kw")).toEqual(["true", "null"]);
    const sh = tokens('echo "$#" # note\nif [ -f x ]; then exit 1; fi', "bash");
    expect(sh.of("com")).toEqual(["# note"]);
    expect(sh.of("kw")).toEqual(["echo", "if", "then", "exit", "fi"]);
  });

  it("never makes markup out of code", () => {
    const code = '<img src=x onerror="alert(1)"> // <script>alert(1)</script>';
    const t = tokens(code, "js");
    expect(t.div.querySelector("img, script")).toBeNull();
    expect(t.div.textContent).toBe(code);
  });

  it("leaves unknown languages and long blocks plain", () => {
    expect(isHighlighted("TS")).toBe(true);
    expect(isHighlighted("cobol")).toBe(false);
    expect(isHighlighted("__proto__")).toBe(false);
    expect(tokens("const x = 1", "cobol").div.querySelector("span")).toBeNull();
    expect(tokens("const x = 1", "__proto__").div.querySelector("span")).toBeNull();
    const long = "const x = 1;\n".repeat(Math.ceil(MAX_HIGHLIGHT / 12) + 1);
    const t = tokens(long, "js");
    expect(t.div.querySelector("span")).toBeNull();
    expect(t.div.textContent).toBe(long);
  });

  it("stays fast on unterminated strings and comments", () => {
    const nasty = ('"' + "\\a".repeat(2000) + "/*" + "'".repeat(2000) + "`").repeat(3);
    const start = Date.now();
    for (const l of ["js", "python", "rust", "sh", "json"]) expect(tokens(nasty, l).div.textContent).toBe(nasty);
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it("is used by fenced blocks in Markdown", () => {
    const div = document.createElement("div");
    div.append(renderMarkdown("```rust\nlet x = 1; // one\n```"));
    const code = div.querySelector("pre code") as HTMLElement;
    expect(code.textContent).toBe("let x = 1; // one");
    expect(code.querySelector(".tok-kw")?.textContent).toBe("let");
    expect(code.querySelector(".tok-com")?.textContent).toBe("// one");
  });
});
