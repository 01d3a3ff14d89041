// Per server, what it may see and what the model reads of it: the folders (MCP roots) the server
// is told it may work in, and whether its tool results wait for review before a model reads them
// (AP-05). Loaded when the section is first opened; every change is saved at once and the list
// shown is what Rust stored (resolved paths, no duplicates). Paths are typed (the desktop has no
// file picker); Rust checks each one is an existing folder.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { ResultReviewDto, RootDto_Serialize as RootDto } from "../../ipc/bindings";
import { h } from "../../app/dom";

export const REVIEW_CHOICES: { value: ResultReviewDto; label: string }[] = [
  { value: "default", label: "When it brings in untrusted content (tagged so, or the tool says it reaches the open world)" },
  { value: "always", label: "Always" },
  { value: "never", label: "Never" },
];

/** The path to send back for a stored root (its URI when it is not a local folder). */
export const rootPath = (r: RootDto): string => r.path ?? r.uri;

/** The folders after adding `typed`: unchanged (and why) when it is empty or already listed. */
export function withFolder(current: string[], typed: string): { ok: true; folders: string[] } | { ok: false; why: string } {
  const t = typed.trim();
  if (t === "") return { ok: false, why: "Type the path of a folder first." };
  const norm = (p: string) => p.replace(/\/+$/, "") || "/";
  if (current.some((c) => norm(c) === norm(t))) return { ok: false, why: "That folder is already listed." };
  return { ok: true, folders: [...current, t] };
}

let panels = 0;

export function accessPanel(server: string): HTMLDetailsElement {
  const n = ++panels;
  const list = h("ul", { class: "roots-list", "aria-label": `Folders ${server} may see` });
  const path = h("input", { type: "text", class: "root-add-path", id: `root-add-${n}`, placeholder: "/home/you/project or ~/project", autocomplete: "off", spellcheck: "false" });
  const add = h("button", { type: "button", class: "root-add" }, "Add folder");
  const rootsStatus = h("p", { class: "roots-status hint", role: "status" });
  const review = h("select", { class: "result-review", id: `result-review-${n}` },
    ...REVIEW_CHOICES.map((c) => h("option", { value: c.value }, c.label)));
  const reviewStatus = h("span", { class: "review-status hint", role: "status" });
  let roots: RootDto[] = [];
  let loaded = false;

  const say = (el: HTMLElement, text: string, bad = false) => {
    el.textContent = text;
    el.classList.toggle("error", bad);
  };
  const render = () => {
    list.replaceChildren(...roots.map((r) => {
      const remove = h("button", { type: "button", class: "root-remove", "aria-label": `Remove ${rootPath(r)}` }, "Remove");
      remove.addEventListener("click", () => void save(roots.filter((x) => x !== r).map(rootPath), `Removed ${rootPath(r)}.`));
      return h("li", { class: "root-item", "data-uri": r.uri }, h("code", { class: "root-path" }, rootPath(r)), " ", remove);
    }));
    if (roots.length === 0) list.append(h("li", { class: "roots-empty hint" }, "No folders: the server is told it may see none."));
  };
  const busy = (on: boolean) => {
    add.disabled = on;
    path.disabled = on;
    list.querySelectorAll("button").forEach((b) => (b.disabled = on));
  };
  const save = async (folders: string[], done: string): Promise<boolean> => {
    busy(true);
    say(rootsStatus, "Saving…");
    try {
      const r = await attempt(ipc.setServerRoots(server, folders));
      if (r instanceof IpcFailure) {
        say(rootsStatus, r.message, true);
        return false;
      }
      roots = r as RootDto[];
      render();
      say(rootsStatus, done);
      return true;
    } finally {
      busy(false);
    }
  };
  const addTyped = async () => {
    const next = withFolder(roots.map(rootPath), path.value);
    if (!next.ok) return say(rootsStatus, next.why, true);
    if (await save(next.folders, "Added.")) path.value = "";
    path.focus();
  };
  add.addEventListener("click", () => void addTyped());
  path.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing) {
      ev.preventDefault();
      void addTyped();
    }
  });
  review.addEventListener("change", async () => {
    review.disabled = true;
    say(reviewStatus, "Saving…");
    const r = await attempt(ipc.setResultReview(server, review.value as ResultReviewDto));
    review.disabled = false;
    if (r instanceof IpcFailure) say(reviewStatus, r.message, true);
    else say(reviewStatus, "Saved.");
  });
  const load = async () => {
    const [rs, rv] = await Promise.all([attempt(ipc.serverRoots(server)), attempt(ipc.resultReview(server))]);
    if (rs instanceof IpcFailure) say(rootsStatus, rs.message, true);
    else {
      roots = rs as RootDto[];
      render();
    }
    if (rv instanceof IpcFailure) say(reviewStatus, rv.message, true);
    else review.value = rv;
  };

  const details = h("details", { class: "server-access", "data-server": server },
    h("summary", {}, "Folders and result review"),
    h("section", { class: "roots-editor" },
      h("h3", {}, "Folders it may see"),
      h("p", { class: "hint" }, "The server is told it may work in these folders (MCP roots) and is notified when they change. It is what the server is told, not a sandbox."),
      list,
      h("div", { class: "root-add-row" }, h("label", { for: path.id, class: "visually-hidden" }, "Folder to add"), path, add),
      rootsStatus,
    ),
    h("section", { class: "review-editor" },
      h("h3", {}, h("label", { for: review.id }, "Review results before the model reads them")),
      h("div", { class: "review-row" }, review, reviewStatus),
    ),
  );
  details.addEventListener("toggle", () => {
    if (details.open && !loaded) {
      loaded = true;
      void load();
    }
  });
  return details;
}
