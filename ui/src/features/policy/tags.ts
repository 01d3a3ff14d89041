// Server tags: per configured server, four checkboxes saved at once with set_server_tags.
// "trusted" lets a server's read-only claims relax friction; the other three are the legs of the
// lethal-trifecta guard, which warns before a conversation combines all three. Tags this page
// does not know are kept as they are.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import { h } from "../../app/dom";

export const TAGS = [
  { tag: "trusted", label: "Trusted", help: "Its read-only claims (tool annotations) may relax friction. Without this tag, annotations relax nothing." },
  { tag: "private-data", label: "Private data", help: "It can read your private data (files, mail, accounts). One leg of the lethal trifecta." },
  { tag: "untrusted-content", label: "Untrusted content", help: "It returns text others wrote (web pages, issues, messages). One leg of the lethal trifecta." },
  { tag: "external", label: "External", help: "It can send data out (network requests, messages, public posts). One leg of the lethal trifecta." },
] as const;
const KNOWN = new Set<string>(TAGS.map((t) => t.tag));
/** Makes help ids unique (server names may hold spaces, which an IDREF cannot). */
let uid = 0;

/** The tags to store: the ticked known tags, in a fixed order, then any unknown ones kept. */
export function nextTags(ticked: Set<string>, before: string[]): string[] {
  return [...TAGS.map((t) => t.tag).filter((t) => ticked.has(t)), ...before.filter((t) => !KNOWN.has(t))];
}

function serverTags(server: string, current: string[]): HTMLElement {
  let stored = [...current];
  const id = `tag-help-${++uid}`;
  const status = h("span", { class: "tags-status hint", role: "status" });
  const boxes = TAGS.map((t) => {
    const box = h("input", { type: "checkbox", class: `server-tag tag-${t.tag}`, "data-tag": t.tag, "aria-describedby": `${id}-${t.tag}` });
    box.checked = current.includes(t.tag);
    return box;
  });
  const save = async (changed: HTMLInputElement) => {
    const ticked = new Set(boxes.filter((b) => b.checked).map((b) => b.dataset.tag ?? ""));
    const tags = nextTags(ticked, stored);
    boxes.forEach((b) => (b.disabled = true));
    status.classList.remove("error");
    status.textContent = "Saving…";
    try {
      const r = await attempt(ipc.setServerTags(server, tags));
      if (r instanceof IpcFailure) {
        changed.checked = !changed.checked; // not stored: show what is
        status.classList.add("error");
        status.textContent = r.message;
        return;
      }
      stored = tags;
      status.textContent = "Saved.";
    } finally {
      boxes.forEach((b) => (b.disabled = false));
    }
  };
  boxes.forEach((b) => b.addEventListener("change", () => void save(b)));
  return h("fieldset", { class: "server-tags", "data-server": server },
    h("legend", {}, server),
    ...TAGS.map((t, i) => h("label", { class: "server-tag-choice" }, boxes[i] ?? null,
      h("span", { class: "server-tag-name" }, t.label),
      h("span", { class: "hint", id: `${id}-${t.tag}` }, t.help))),
    status,
  );
}

export interface TagsSection {
  el: HTMLElement;
  reload: () => Promise<void>;
}

export function tagsSection(): TagsSection {
  const list = h("div", { class: "tags-list" });
  const error = h("p", { class: "error tags-error", role: "alert", hidden: true });
  let seq = 0;
  const reload = async () => {
    const mine = ++seq;
    const r = await attempt(ipc.listServers());
    if (mine !== seq) return;
    if (r instanceof IpcFailure) {
      error.hidden = false;
      error.textContent = r.message;
      return;
    }
    const names = r.map((s) => s.name);
    const tags = await Promise.all(names.map((n) => attempt(ipc.serverTags(n))));
    if (mine !== seq) return;
    const failed = tags.flatMap((t, i) => (t instanceof IpcFailure ? [`${names[i]}: ${t.message}`] : []));
    error.hidden = failed.length === 0;
    error.textContent = failed.join("\n");
    list.replaceChildren(...(names.length === 0
      ? [h("p", { class: "hint tags-empty" }, "No servers configured yet: add one on the Servers page.")]
      : names.flatMap((n, i) => {
        const t = tags[i];
        return t && !(t instanceof IpcFailure) ? [serverTags(n, t)] : [];
      })));
  };
  const el = h("section", { class: "policy-tags", "aria-labelledby": "policy-tags-title" },
    h("h2", { id: "policy-tags-title" }, "Server tags"),
    h("p", { class: "hint" },
      "Private data, untrusted content and external are the three legs of the lethal trifecta: when one conversation " +
      "would combine all three, the guard warns before the call that completes it. Changes are saved at once."),
    error, list,
  );
  return { el, reload };
}
