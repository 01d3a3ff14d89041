// "Attach resource": a picker over the resources of the running servers, with a filter. Nothing
// is read until the person picks one (RN-03). Its text contents are appended to the message as a
// fenced block headed "Attached resource <uri>:"; images of an allowed type become image
// attachments; anything else is refused with a reason. Every server string goes in as text.
import { attempt, ipc, IpcFailure, thrown } from "../../ipc/client";
import type { ContentDto, ImageDto, ResourceDto, ServerContextDto } from "../../ipc/bindings";
import { h, matchesQuery } from "../../app/dom";
import { modal } from "../../app/modal";
import { mimeOf } from "../catalog";

/** Text the host accepts in one message (512 KB); an attachment may not push past it. */
export const MAX_TEXT = 512 * 1024;
/** The picker lists this many matches; the filter narrows the rest. */
const LIMIT = 200;

export interface ResourceTarget {
  /** The composer's current text. */
  text(): string;
  setText(text: string): void;
  /** Attaches an image; returns why not, or null. */
  addImage(img: ImageDto, name: string): string | null;
  /** The conversation the message goes into ("" for one not started yet). */
  conversation(): string;
  /** Notes that the message now carries something from `server` (the trifecta guard counts it). */
  from(server: string): void;
}

/** A fenced block that no backtick run inside `text` can close early. */
export function fenced(uri: string, text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `Attached resource ${uri}:\n${fence}\n${text.replace(/\n$/, "")}\n${fence}`;
}

/** Applies read contents to `target`: how many pieces went in, and why the others did not. */
export function attachContents(uri: string, contents: ContentDto[], target: ResourceTarget): { attached: number; refused: string[] } {
  const texts: string[] = [];
  const refused: string[] = [];
  let attached = 0;
  for (const c of contents) {
    if (c.type === "text") texts.push(c.text);
    else if (c.type === "resource" && typeof c.text === "string") texts.push(c.text);
    else if (c.type === "image" || (c.type === "resource" && typeof c.blob === "string" && mimeOf(c.mime_type ?? null).startsWith("image/"))) {
      const img = c.type === "image" ? { mime_type: c.mime_type, data: c.data } : { mime_type: mimeOf(c.mime_type ?? null), data: c.blob ?? "" };
      const why = target.addImage(img, uri);
      if (why !== null) refused.push(why);
      else attached++;
    } else {
      const what = c.type === "resource" ? `${mimeOf(c.mime_type ?? null) || "binary"} contents` : c.type === "resource_link" ? "a link to another resource" : `${c.type} content`;
      refused.push(`${uri}: ${what} cannot be attached (only text and PNG, JPEG, GIF or WebP images can).`);
    }
  }
  if (texts.length > 0) {
    const block = fenced(uri, texts.join("\n\n"));
    const current = target.text().replace(/\s+$/, "");
    const next = current === "" ? block : `${current}\n\n${block}`;
    if (next.length > MAX_TEXT) refused.push(`${uri} is too long to attach: a message holds at most 512 KB of text.`);
    else {
      target.setText(next);
      attached++;
    }
  }
  if (contents.length === 0) refused.push(`${uri} has no contents.`);
  return { attached, refused };
}

/** The "Attach resource" button. `report` shows a problem in the page (null clears it). */
export function resourcePicker(target: ResourceTarget, report: (message: string | null) => void): HTMLButtonElement {
  const button = h("button", { type: "button", class: "attach-resource" }, "Attach resource");
  button.addEventListener("click", () => {
    const filter = h("input", { type: "search", class: "resource-filter", placeholder: "Filter resources", "aria-label": "Filter resources", autocomplete: "off" });
    const list = h("ul", { class: "resource-options", "aria-label": "Resources" });
    const status = h("p", { class: "resource-picker-status hint", role: "status" }, "Loading the resources of the running servers…");
    let entries: { server: string; r: ResourceDto }[] = [];
    let reading = false;
    const { dialog, close } = modal("add-dialog resource-picker", "Attach a resource", [
      h("h2", {}, "Attach a resource"),
      filter, status, list,
      h("div", { class: "actions" }, h("button", { type: "button", class: "resource-picker-close", onclick: () => close() }, "Cancel")),
    ]);
    const render = () => {
      const q = filter.value.trim().toLowerCase();
      const shown = entries.filter(({ server, r }) => matchesQuery(q, server, r.name, r.title, r.uri, r.description, r.mime_type));
      list.replaceChildren(...shown.slice(0, LIMIT).map(({ server, r }) => {
        const pick = h("button", { type: "button", class: "resource-option", "data-server": server, "data-uri": r.uri },
          h("strong", {}, r.title ?? r.name), " ", h("span", { class: "hint" }, server), h("code", { class: "resource-option-uri" }, r.uri));
        pick.addEventListener("click", () => void choose(server, r.uri));
        return h("li", {}, pick);
      }));
      if (entries.length > 0) status.textContent = shown.length === 0 ? "No resource matches." : shown.length > LIMIT ? `Showing ${LIMIT} of ${shown.length}; filter to narrow.` : "";
    };
    const choose = async (server: string, uri: string) => {
      if (reading) return;
      reading = true;
      status.textContent = `Reading ${uri}…`;
      status.classList.remove("error");
      const r = await attempt(ipc.readResource(server, uri, target.conversation())).catch(thrown);
      reading = false;
      if (r instanceof IpcFailure) {
        status.textContent = r.message;
        status.classList.add("error");
        return;
      }
      const { attached, refused } = attachContents(uri, r, target);
      if (attached === 0) {
        status.textContent = refused.join(" ");
        status.classList.add("error");
        return;
      }
      target.from(server);
      report(refused.length > 0 ? refused.join(" ") : null);
      close();
      button.focus();
    };
    filter.addEventListener("input", render);
    void attempt(ipc.serverContext()).then((r) => {
      if (r instanceof IpcFailure) {
        status.textContent = r.message;
        status.classList.add("error");
        return;
      }
      entries = r.flatMap((ctx: ServerContextDto) => ctx.resources.map((res) => ({ server: ctx.server, r: res })));
      if (entries.length === 0) status.textContent = "The running servers offer no resources. Start a server that has some on the Servers page.";
      render();
    }, (e: unknown) => {
      status.textContent = e instanceof Error ? e.message : String(e);
      status.classList.add("error");
    });
    document.body.append(dialog);
    queueMicrotask(() => filter.focus());
  });
  return button;
}
