// Slash prompts: a "/" typed first in an empty composer lists the prompts of the running servers,
// filtered by what follows the slash. Arrow keys move, Enter or Tab picks, Escape closes. A prompt
// with arguments asks for them in a small form; then get_prompt runs and the text of its messages
// goes into the composer, to be read and sent by the person (never sent on its own). Every server
// string goes in as text; ids come from a counter, never from a server's names.
import { attempt, ipc, IpcFailure, thrown } from "../../ipc/client";
import type { ContentDto, PromptDto, PromptResultDto, ServerContextDto } from "../../ipc/bindings";
import { h, matchesQuery } from "../../app/dom";

/** The list shows at most this many prompts. */
const LIMIT = 50;
let nextId = 0;

export interface SlashPrompts {
  /** The popup (list or argument form), placed above the composer. */
  el: HTMLElement;
  /** Handles a key pressed in the composer; true when it was the popup's. */
  onKey(ev: KeyboardEvent): boolean;
  close(): void;
}

const QUERY = /^\/(\S*)$/;

function contentText(c: ContentDto): string | null {
  if (c.type === "text") return c.text;
  if (c.type === "resource" && typeof c.text === "string") return c.text;
  return null;
}

/** The text of an expanded prompt, and how many non-text pieces were left out. */
export function promptText(r: PromptResultDto): { text: string; skipped: number } {
  const parts = r.messages.map((m) => contentText(m.content));
  return { text: parts.filter((t): t is string => t !== null && t !== "").join("\n\n"), skipped: parts.filter((t) => t === null).length };
}

/** Where an expanded prompt goes: the conversation ("" for one not started yet), and a note of
 * the server it came from (the trifecta guard counts it once the message is sent). */
export interface SlashTarget {
  conversation(): string;
  from(server: string): void;
}

export function slashPrompts(input: HTMLTextAreaElement, target: SlashTarget = { conversation: () => "", from: () => {} }): SlashPrompts {
  const el = h("div", { class: "slash-popup", hidden: true });
  const listId = `slash-list-${++nextId}`;
  let contexts: ServerContextDto[] | null = null;
  /** The `seq` a server_context read is under way for (a close makes it stale). */
  let loadingFor = -1;
  let items: { ctx: ServerContextDto; p: PromptDto; el: HTMLElement }[] = [];
  let active = 0;
  let mode: "closed" | "list" | "form" = "closed";
  let seq = 0;

  const close = () => {
    mode = "closed";
    seq++;
    contexts = null; // re-read on the next "/": servers come and go
    el.hidden = true;
    el.replaceChildren();
    input.removeAttribute("aria-activedescendant");
    input.setAttribute("aria-expanded", "false");
  };
  const message = (cls: string, text: string) => h("p", { class: cls }, text);

  const highlight = () => {
    items.forEach((it, i) => it.el.setAttribute("aria-selected", String(i === active)));
    const cur = items[active];
    if (cur) {
      input.setAttribute("aria-activedescendant", cur.el.id);
      cur.el.scrollIntoView?.({ block: "nearest" });
    } else input.removeAttribute("aria-activedescendant");
  };

  const insert = (r: PromptResultDto) => {
    const { text, skipped } = promptText(r);
    const current = input.value;
    close();
    input.value = QUERY.test(current) || current.trim() === "" ? text : `${current.replace(/\s+$/, "")}\n\n${text}`;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.focus();
    input.setSelectionRange?.(input.value.length, input.value.length);
    if (skipped > 0 || text === "") {
      el.hidden = false;
      el.replaceChildren(message("slash-note hint", text === "" ? "The prompt gave no text to insert." : `${skipped} non-text part${skipped === 1 ? " was" : "s were"} left out.`));
    }
  };

  const run = async (ctx: ServerContextDto, p: PromptDto, args: Record<string, string>, status: HTMLElement) => {
    const mine = ++seq;
    status.textContent = "Getting the prompt…";
    status.className = "slash-status hint";
    const r = await attempt(ipc.getPrompt(ctx.server, p.name, args, target.conversation())).catch(thrown);
    if (mine !== seq) return;
    if (r instanceof IpcFailure) {
      status.textContent = r.message;
      status.className = "slash-status slash-error error";
      return;
    }
    target.from(ctx.server);
    insert(r);
  };

  const choose = (ctx: ServerContextDto, p: PromptDto) => {
    mode = "form";
    const status = h("p", { class: "slash-status hint", role: "status" });
    input.removeAttribute("aria-activedescendant");
    if (p.arguments.length === 0) {
      el.replaceChildren(message("slash-title", `/${p.name} · ${ctx.server}`), status);
      void run(ctx, p, {}, status);
      return;
    }
    const fields = p.arguments.map((a) => {
      const id = `slash-arg-${++nextId}`;
      const field = h("input", { id, type: "text", class: "slash-arg", autocomplete: "off", "data-name": a.name, "aria-required": a.required ? "true" : "false" });
      const row = h("div", { class: "slash-field" },
        h("label", { for: id }, a.name, a.required ? h("span", { class: "slash-required", "aria-hidden": "true" }, " *") : null),
        field,
        a.description ? h("span", { class: "hint" }, a.description) : null);
      return { a, field, row };
    });
    const insertBtn = h("button", { type: "submit", class: "primary slash-insert" }, "Insert");
    const cancel = h("button", { type: "button", class: "slash-cancel" }, "Cancel");
    const sync = () => { insertBtn.disabled = fields.some((f) => f.a.required && f.field.value.trim() === ""); };
    const form = h("form", { class: "slash-form", "aria-label": `Arguments of ${p.name}` },
      message("slash-title", `/${p.name} · ${ctx.server}`),
      ...fields.map((f) => f.row),
      fields.some((f) => f.a.required) ? message("hint", "* required") : null,
      h("div", { class: "actions" }, insertBtn, cancel),
      status);
    fields.forEach((f) => f.field.addEventListener("input", sync));
    sync();
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (insertBtn.disabled) return;
      // Object.fromEntries makes own properties, so even an argument named __proto__ is sent.
      void run(ctx, p, Object.fromEntries(fields.filter((f) => f.field.value.trim() !== "").map((f) => [f.a.name, f.field.value])), status);
    });
    form.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        ev.stopPropagation();
        close();
        input.focus();
      }
    });
    cancel.addEventListener("click", () => {
      close();
      input.focus();
    });
    el.replaceChildren(form);
    fields[0]?.field.focus();
  };

  const renderList = (q: string) => {
    if (contexts === null) return;
    const all = contexts.flatMap((ctx) => ctx.prompts.map((p) => ({ ctx, p })));
    const query = q.toLowerCase();
    const shown = all.filter(({ ctx, p }) => matchesQuery(query, p.name, p.title, ctx.server)).slice(0, LIMIT);
    items = shown.map(({ ctx, p }) => {
      const opt = h("li", { id: `slash-opt-${++nextId}`, class: "slash-item", role: "option", "aria-selected": "false" },
        h("span", { class: "slash-name" }, `/${p.name}`), " ", h("span", { class: "hint slash-server" }, ctx.server),
        p.title || p.description ? h("span", { class: "slash-desc" }, p.title ?? p.description ?? "") : null);
      opt.addEventListener("mousedown", (ev) => ev.preventDefault()); // keep the composer's focus
      opt.addEventListener("click", () => choose(ctx, p));
      return { ctx, p, el: opt };
    });
    active = Math.min(active, Math.max(0, items.length - 1));
    const empty = all.length === 0 ? "No running server offers prompts." : items.length === 0 ? "No prompt matches." : null;
    el.replaceChildren(
      h("ul", { id: listId, class: "slash-list", role: "listbox", "aria-label": "Prompts" }, ...items.map((i) => i.el)),
      ...(empty ? [message("slash-empty hint", empty)] : []),
    );
    highlight();
  };

  const open = (q: string) => {
    if (mode === "form") return;
    mode = "list";
    el.hidden = false;
    input.setAttribute("aria-expanded", "true");
    input.setAttribute("aria-controls", listId);
    if (contexts !== null) return renderList(q);
    if (loadingFor === seq) return;
    el.replaceChildren(message("slash-status hint", "Loading prompts…"));
    const mine = (loadingFor = seq);
    attempt(ipc.serverContext()).then((r) => {
      if (mine !== seq || mode !== "list") return;
      if (r instanceof IpcFailure) {
        el.replaceChildren(message("slash-error error", r.message));
        return;
      }
      contexts = r;
      renderList(QUERY.exec(input.value)?.[1] ?? "");
    }, (e: unknown) => {
      if (mine === seq) el.replaceChildren(message("slash-error error", e instanceof Error ? e.message : String(e)));
    });
  };

  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-expanded", "false");
  input.addEventListener("input", () => {
    const m = QUERY.exec(input.value);
    if (m) open(m[1]);
    else if (mode === "list" || (mode === "closed" && !el.hidden)) close();
  });

  const onKey = (ev: KeyboardEvent): boolean => {
    if (mode === "form" && ev.key === "Escape") {
      ev.preventDefault();
      close();
      return true;
    }
    if (mode !== "list") return false;
    if (ev.key === "Escape") close();
    else if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      if (items.length > 0) active = (active + (ev.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      highlight();
    } else if ((ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) || ev.key === "Tab") {
      const cur = items[active];
      if (!cur) {
        if (ev.key === "Tab") return false;
        close();
        return false; // Enter with nothing to pick: the composer's own Enter
      }
      choose(cur.ctx, cur.p);
    } else return false;
    ev.preventDefault();
    return true;
  };

  return { el, onKey, close };
}
