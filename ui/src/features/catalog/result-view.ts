// Shows what an MCP server returned: tool call results, resource contents and prompt messages.
// Every string here comes from an untrusted server, so text only ever goes in as text (h() and
// textContent), links are shown but never followed (RN-03), and only a short list of raster image
// and audio types with well-formed base64 ever reaches a data: URL. Anything else gets a
// placeholder that says why it is not shown.
import { h } from "../../app/dom";
import "./result-view.css";

export type ContentDto =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mime_type: string }
  | { type: "audio"; data: string; mime_type: string }
  | { type: "resource_link"; uri: string; name: string; mime_type: string | null }
  | { type: "resource"; uri: string; mime_type: string | null; text: string | null; blob: string | null };

export type ToolResultDto = { content: ContentDto[]; structured_content: string | null; is_error: boolean };

export interface RenderOptions {
  /** When given, resource links get an "Open" button that calls it; nothing is opened otherwise. */
  onOpenResource?: (uri: string) => void;
}

export interface Progress {
  progress: number;
  total: number | null;
  message: string | null;
}

/** Texts longer than this render their head only, with a "Show all" button. */
export const TEXT_CAP = 200_000;
/** Base64 payloads longer than this (about 15 MB decoded) are not turned into data: URLs. */
export const MAX_BASE64 = 20 * 1024 * 1024;
/** The only image types ever shown or attached (RN-01, RN-03). */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const AUDIO_TYPES = ["audio/mpeg", "audio/wav", "audio/ogg", "audio/webm"];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const count = (n: number) => n.toLocaleString("en-US");
export const mimeOf = (m: string | null) => (m ?? "").split(";")[0].trim().toLowerCase();
const placeholder = (why: string) => h("p", { class: "rv-placeholder" }, why);

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Checks a base64 payload; returns it without whitespace and its decoded size, or why it is unusable. */
export function checkBase64(data: string): { ok: true; b64: string; bytes: number } | { ok: false; why: string } {
  if (data.length > MAX_BASE64 * 2) return { ok: false, why: `it is too large (over ${formatBytes(MAX_BASE64)} of base64)` };
  const b64 = data.replace(/\s+/g, "");
  if (b64.length > MAX_BASE64) return { ok: false, why: `it is too large (${formatBytes(b64.length)} of base64, the limit is ${formatBytes(MAX_BASE64)})` };
  if (b64.length === 0) return { ok: false, why: "it is empty" };
  if (!BASE64.test(b64)) return { ok: false, why: "its data is not valid base64" };
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return { ok: true, b64, bytes: Math.floor((b64.length * 3) / 4) - pad };
}

/** A <pre> holding at most TEXT_CAP characters, with a note and a "Show all" button beyond that. */
function cappedPre(text: string, cls = "rv-text"): HTMLElement {
  const pre = h("pre", { class: cls });
  if (text.length <= TEXT_CAP) {
    pre.textContent = text;
    return pre;
  }
  pre.textContent = text.slice(0, TEXT_CAP);
  const note = h("p", { class: "rv-note" }, `Showing the first ${count(TEXT_CAP)} of ${count(text.length)} characters. `);
  note.append(h("button", { class: "rv-show-all", onclick: () => { pre.textContent = text; note.remove(); } }, "Show all"));
  return h("div", { class: "rv-capped" }, note, pre);
}

/** Pretty-prints text that is a JSON object or array; null for anything else. */
function prettyJson(text: string): string | null {
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("[")) || t.length > 5_000_000) return null;
  try {
    return JSON.stringify(JSON.parse(t), null, 2);
  } catch {
    return null;
  }
}

/** Text as text; JSON objects and arrays pretty-printed with a toggle back to the raw text. */
function renderText(text: string, jsonHint = false): HTMLElement {
  const pretty = prettyJson(text);
  if (pretty === null) {
    const wrap = h("div", { class: "rv-text-block" }, cappedPre(text));
    if (jsonHint) wrap.prepend(h("p", { class: "rv-note" }, "Labelled JSON, but it does not parse; shown as text."));
    return wrap;
  }
  const body = h("div", { class: "rv-body" }, cappedPre(pretty, "rv-text rv-json"));
  let raw = false;
  const toggle = h("button", { class: "rv-toggle", "aria-pressed": "true", title: "Switch between pretty-printed JSON and the raw text" }, "JSON");
  toggle.addEventListener("click", () => {
    raw = !raw;
    toggle.setAttribute("aria-pressed", String(!raw));
    toggle.textContent = raw ? "Raw" : "JSON";
    body.replaceChildren(raw ? cappedPre(text) : cappedPre(pretty, "rv-text rv-json"));
  });
  return h("div", { class: "rv-text-block" }, h("div", { class: "rv-tools" }, toggle), body);
}

/** An allowed image as a data: URL in a <figure>, or a placeholder saying why it is not shown. */
export function renderImage(data: string, mime: string, what: string): HTMLElement {
  const m = mimeOf(mime);
  if (!IMAGE_TYPES.includes(m)) {
    return placeholder(`${what} not shown: ${m || "no type"} is not a displayed image type (only PNG, JPEG, GIF and WebP are).`);
  }
  const b = checkBase64(data);
  if (!b.ok) return placeholder(`${what} not shown: ${b.why}.`);
  return h("figure", { class: "rv-image" },
    h("img", { src: `data:${m};base64,${b.b64}`, alt: `${what} (${m}, ${formatBytes(b.bytes)})` }),
    h("figcaption", {}, `${m}, ${formatBytes(b.bytes)}`),
  );
}

function renderAudio(data: string, mime: string): HTMLElement {
  const m = mimeOf(mime);
  if (!AUDIO_TYPES.includes(m)) {
    return placeholder(`Audio not shown: ${m || "no type"} is not a played audio type (only MPEG, WAV, Ogg and WebM are).`);
  }
  const b = checkBase64(data);
  if (!b.ok) return placeholder(`Audio not shown: ${b.why}.`);
  // The page's CSP may still refuse data: media; the caption keeps the result visible either way.
  return h("figure", { class: "rv-audio" },
    h("audio", { controls: true, src: `data:${m};base64,${b.b64}`, "aria-label": `Audio (${m})` }),
    h("figcaption", {}, `Audio, ${m}, ${formatBytes(b.bytes)}`),
  );
}

function resourceHead(uri: string, mime: string | null, name?: string): HTMLElement {
  return h("div", { class: "rv-resource-head" },
    name !== undefined ? h("strong", { class: "rv-name" }, name) : null,
    h("code", { class: "rv-uri" }, uri),
    h("span", { class: "rv-mime" }, mime ?? "type not given"),
  );
}

export function renderContent(c: ContentDto, opts: RenderOptions = {}): HTMLElement {
  const box = (kind: string, ...children: (Node | null)[]) => h("div", { class: `rv-item rv-${kind}` }, ...children);
  switch (c.type) {
    case "text":
      return box("text-item", renderText(c.text));
    case "image":
      return box("image-item", renderImage(c.data, c.mime_type, "Image"));
    case "audio":
      return box("audio-item", renderAudio(c.data, c.mime_type));
    case "resource_link": {
      const open = opts.onOpenResource;
      return box("link",
        h("p", { class: "rv-label" }, "Resource link"),
        resourceHead(c.uri, c.mime_type, c.name),
        open ? h("button", { class: "rv-open", onclick: () => open(c.uri) }, "Open") : null,
      );
    }
    case "resource": {
      const m = mimeOf(c.mime_type);
      let body: HTMLElement;
      if (c.text !== null) body = renderText(c.text, m === "application/json" || m.endsWith("+json"));
      else if (c.blob !== null && m.startsWith("image/")) body = renderImage(c.blob, m, `Image ${c.uri}`);
      else if (c.blob !== null) {
        const b = checkBase64(c.blob);
        body = placeholder(b.ok ? `Binary, ${count(b.bytes)} bytes; not shown.` : `Binary; not shown: ${b.why}.`);
      } else body = placeholder("Empty resource.");
      return box("resource", h("p", { class: "rv-label" }, "Embedded resource"), resourceHead(c.uri, c.mime_type), body);
    }
    default:
      return box("unknown", placeholder(`Content of type ${String((c as { type: unknown }).type)} is not shown.`));
  }
}

export function renderToolResult(r: ToolResultDto, opts: RenderOptions = {}): HTMLElement {
  const block = h("section", { class: `tool-result${r.is_error ? " tool-error" : ""}` });
  if (r.is_error) block.append(h("h3", { class: "rv-error", role: "alert" }, "The tool reported an error"));
  block.append(...r.content.map((c) => renderContent(c, opts)));
  if (r.structured_content !== null) {
    block.append(
      h("h3", { class: "rv-heading" }, "Structured content"),
      cappedPre(prettyJson(r.structured_content) ?? r.structured_content, "rv-text rv-json rv-structured"),
    );
  }
  if (r.content.length === 0 && r.structured_content === null) block.append(placeholder("The tool returned no content."));
  return block;
}

export function renderProgress(p: Progress): HTMLElement {
  const bar = h("progress", { class: "rv-progress-bar" });
  const known = p.total !== null && Number.isFinite(p.total) && p.total > 0 && Number.isFinite(p.progress);
  if (known) {
    bar.max = p.total!;
    bar.value = Math.min(Math.max(p.progress, 0), p.total!);
  }
  const amount = known ? `${count(p.progress)} of ${count(p.total!)}` : Number.isFinite(p.progress) ? count(p.progress) : "";
  bar.setAttribute("aria-label", p.message ?? "Progress");
  return h("div", { class: "rv-progress" },
    bar,
    amount ? h("span", { class: "rv-amount" }, amount) : null,
    p.message !== null ? h("span", { class: "rv-message" }, p.message) : null,
  );
}
