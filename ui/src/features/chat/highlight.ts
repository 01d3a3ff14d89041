// Light syntax highlighting for fenced code blocks in model answers. It never builds markup from
// text: a small tokenizer splits the code into keywords, strings, numbers and comments, and each
// token becomes a <span class="tok-…"> holding a text node (RN-01). The concatenated text is the
// code exactly as written, so Copy and textContent stay byte-identical. Every pattern is linear
// (no nested quantifiers), and blocks over MAX_HIGHLIGHT characters are left plain.

/** Blocks longer than this are shown without highlighting. */
export const MAX_HIGHLIGHT = 20_000;

type Kind = "kw" | "str" | "num" | "com";

interface Lang {
  /** Alternatives tried in order; group 1 is a comment, 2 a string, 3 a number, 4 a word. */
  re: RegExp;
  keywords: Set<string>;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));
const NUM = String.raw`\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)`;
const WORD = String.raw`[A-Za-z_$][\w$]*`;
const DQ = String.raw`"(?:[^"\\\n]|\\.)*"?`;
const SQ = String.raw`'(?:[^'\\\n]|\\.)*'?`;

const lang = (com: string, str: string, keywords: string): Lang => ({
  re: new RegExp(`(${com})|(${str})|(${NUM})|(${WORD})`, "g"),
  keywords: words(keywords),
});

const JS_KW = `break case catch class const continue debugger default delete do else export extends false finally for
  from function if import in instanceof let new null of return static super switch this throw true try typeof undefined
  var void while with yield async await as`;
const TS_KW = `${JS_KW} interface type enum implements declare readonly private protected public namespace abstract
  keyof infer is never unknown any string number boolean symbol bigint satisfies`;
const JS_STR = String.raw`${DQ}|${SQ}|\`(?:[^\`\\]|\\[\s\S])*\`?`;
const C_COM = String.raw`\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)`;

const JS = lang(C_COM, JS_STR, JS_KW);
const TS = lang(C_COM, JS_STR, TS_KW);
const JSON_LANG = lang(String.raw`\/\/[^\n]*`, DQ, "true false null");
const PYTHON = lang(
  String.raw`#[^\n]*`,
  String.raw`[rRbBuUfF]{0,2}(?:"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|${DQ}|${SQ})`,
  `False None True and as assert async await break class continue def del elif else except finally for from global
   if import in is lambda nonlocal not or pass raise return try while with yield match case self print`,
);
const RUST = lang(
  C_COM,
  String.raw`b?(?:r#*)?"(?:[^"\\]|\\[\s\S])*"?#*|b?'(?:[^'\\\n]|\\[^\n]{1,10}?)'`,
  `as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut
   pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err Box Vec String
   Option Result i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str`,
);
const SH = lang(
  String.raw`(?<![^\s;|&(])#[^\n]*`,
  String.raw`${DQ}|'[^']*'?`,
  `if then else elif fi for while until do done case esac function in return export local readonly set unset echo
   exit source alias cd test true false shift break continue declare printf read eval exec trap`,
);

const LANGS: Record<string, Lang> = {
  js: JS, javascript: JS, jsx: JS, mjs: JS, cjs: JS, node: JS,
  ts: TS, typescript: TS, tsx: TS,
  json: JSON_LANG, jsonc: JSON_LANG, json5: JSON_LANG,
  py: PYTHON, python: PYTHON, python3: PYTHON,
  rs: RUST, rust: RUST,
  sh: SH, bash: SH, shell: SH, zsh: SH, console: SH, shellscript: SH,
};

/** Whether `lang` (a fence's info string) is highlighted. */
export function isHighlighted(lang: string): boolean {
  return Object.hasOwn(LANGS, lang.toLowerCase());
}

function span(kind: Kind, text: string): HTMLElement {
  const el = document.createElement("span");
  el.className = `tok-${kind}`;
  el.textContent = text;
  return el;
}

/** The code as text nodes and token spans; plain text for unknown languages or long blocks. */
export function highlight(code: string, langName: string): Node[] {
  const l = Object.hasOwn(LANGS, langName.toLowerCase()) ? LANGS[langName.toLowerCase()] : undefined;
  if (!l || code.length > MAX_HIGHLIGHT) return [document.createTextNode(code)];
  const out: Node[] = [];
  let plain = "";
  let last = 0;
  const re = new RegExp(l.re.source, "g");
  for (let m = re.exec(code); m !== null; m = re.exec(code)) {
    if (m[0] === "") {
      re.lastIndex++; // never loop on an empty match
      continue;
    }
    const kind: Kind | null = m[1] !== undefined ? "com" : m[2] !== undefined ? "str" : m[3] !== undefined ? "num"
      : l.keywords.has(m[4] ?? "") ? "kw" : null;
    plain += code.slice(last, m.index);
    last = m.index + m[0].length;
    if (kind === null) {
      plain += m[0];
      continue;
    }
    if (plain !== "") out.push(document.createTextNode(plain));
    plain = "";
    out.push(span(kind, m[0]));
  }
  plain += code.slice(last);
  if (plain !== "") out.push(document.createTextNode(plain));
  return out;
}
