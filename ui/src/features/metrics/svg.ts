// Building SVG elements for the plots (features/metrics): attributes through setAttribute and
// text through textContent, never markup, like app/dom.ts does for HTML.
const NS = "http://www.w3.org/2000/svg";

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  ...children: (SVGElement | string | null)[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) {
    if (c === null) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** `v` scaled from [0, max] onto [bottom, top] (a flat 0 at the bottom when max is 0). */
export function scale(v: number, max: number, bottom: number, top: number): number {
  return +(bottom - (max > 0 ? (v / max) * (bottom - top) : 0)).toFixed(2);
}
