// A tiny element builder. Text always goes in through textContent, never innerHTML, so server-
// provided strings (names, stderr, warnings) can never become markup (RN-01, RN-04).
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | ((ev: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else if (v !== false) el.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** An empty state: what is missing and what to do next. */
export function emptyState(title: string, text: string): HTMLElement {
  return h("div", { class: "empty" }, h("h2", {}, title), h("p", {}, text));
}

/** Whether any of `fields` contains the lower-cased query `q` (an empty query matches all). */
export function matchesQuery(q: string, ...fields: (string | null | undefined)[]): boolean {
  return q === "" || fields.some((f) => (f ?? "").toLowerCase().includes(q));
}
