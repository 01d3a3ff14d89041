// A small, safe Markdown renderer for model answers. It builds DOM nodes and puts every piece of
// text in through text nodes, so nothing a model writes ever becomes markup (RN-01): `<script>`
// stays text, links are shown as "text (url)" and never become anchors, and no image is loaded
// from a URL. Supported: paragraphs, headings, fenced code blocks (with a Copy button), inline
// code, **bold**, *italic*, bullet and numbered lists. Anything else is shown as written.
// Code blocks of common languages get light highlighting (highlight.ts), still as text nodes.
import { h } from "../../app/dom";
import { highlight } from "./highlight";

/** How deep emphasis may nest before the rest is shown as text. */
const MAX_DEPTH = 8;
const INLINE = /`([^`\n]+)`|\*\*([^\n]+?)\*\*(?!\*)|__([^\n]+?)__(?!_)|\*([^*\n]+)\*|_([^_\n]+)_|\[([^\]\n]+)\]\(([^)\s]+)\)/;

/** Renders inline Markdown (code, bold, italic, links) as nodes. */
export function renderInline(text: string, depth = 0): Node[] {
  const out: Node[] = [];
  let rest = text;
  while (rest !== "") {
    const m = depth < MAX_DEPTH ? INLINE.exec(rest) : null;
    if (!m) {
      out.push(document.createTextNode(rest));
      break;
    }
    if (m.index > 0) out.push(document.createTextNode(rest.slice(0, m.index)));
    const [whole, code, bold, bold2, em, em2, label, url] = m;
    if (code !== undefined) out.push(h("code", { class: "md-code" }, code));
    else if (bold !== undefined || bold2 !== undefined) out.push(h("strong", {}, ...renderInline(bold ?? bold2 ?? "", depth + 1)));
    else if (em !== undefined || em2 !== undefined) out.push(h("em", {}, ...renderInline(em ?? em2 ?? "", depth + 1)));
    else if (label !== undefined && url !== undefined) {
      out.push(h("span", { class: "md-link" }, ...renderInline(label, depth + 1)), document.createTextNode(` (${url})`));
    } else out.push(document.createTextNode(whole));
    rest = rest.slice(m.index + whole.length);
  }
  return out;
}

function codeBlock(code: string, lang: string): HTMLElement {
  const copy = h("button", { type: "button", class: "md-copy", "aria-label": "Copy code" }, "Copy");
  copy.addEventListener("click", () => {
    void navigator.clipboard?.writeText(code).then(
      () => (copy.textContent = "Copied"),
      () => (copy.textContent = "Copy failed"),
    );
  });
  const codeEl = h("code", {}, ...highlight(code, lang));
  if (lang) codeEl.dataset.lang = lang;
  return h("div", { class: "md-pre" }, lang ? h("span", { class: "md-lang" }, lang) : null, copy, h("pre", {}, codeEl));
}

const FENCE = /^\s{0,3}(```|~~~)\s*([\w+#.-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;

/** Renders a Markdown document into a fragment of safe nodes. Never throws on odd input. */
export function renderMarkdown(text: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let para: string[] = [];
  const flush = () => {
    if (para.length === 0) return;
    const p = h("p", {});
    para.forEach((line, i) => {
      if (i > 0) p.append(h("br"));
      p.append(...renderInline(line));
    });
    frag.append(p);
    para = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++; // the closing fence (or the end)
      frag.append(codeBlock(body.join("\n"), fence[2]));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1].length + 2, 6) as 3 | 4 | 5 | 6;
      frag.append(h(`h${level}`, { class: "md-h" }, ...renderInline(heading[2])));
      i++;
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    if (bullet || numbered) {
      flush();
      const ordered = !bullet;
      const list = ordered ? h("ol", {}) : h("ul", {});
      if (numbered && numbered[1] !== "1") list.setAttribute("start", String(Number(numbered[1])));
      while (i < lines.length) {
        const item = ordered ? NUMBERED.exec(lines[i]) : BULLET.exec(lines[i]);
        if (!item) break;
        list.append(h("li", {}, ...renderInline(ordered ? item[2] : item[1])));
        i++;
      }
      frag.append(list);
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line);
    i++;
  }
  flush();
  return frag;
}
