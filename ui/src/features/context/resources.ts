// The Resources page: everything the running servers offer to read, and their resource
// templates filled in by hand. It exists so a user can see what context a server exposes before
// any model does. Nothing is read until the user clicks Read (links are never followed on their
// own, RN-03). Every server string goes in as text through h(); template values are
// percent-encoded by expandTemplate so a typed value cannot change the shape of the URI.
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import { errorLine } from "../../app/error-line";
import type { ResourceDto_Serialize, ServerContextDto_Serialize, TemplateDto_Serialize } from "../../ipc/bindings";
import { emptyState as empty, h, matchesQuery as matches } from "../../app/dom";
import { onHostChange, setServerOptions } from "../../app/live";
import { pressGuard } from "../../app/press-guard";
import { renderContent } from "../catalog";
import { expandTemplate, templateVariables } from "./uri-template";
import { waitingBar } from "./waiting";
import "./context.css";

/** A long list renders its first LIMIT matches; the search narrows the rest. */
const LIMIT = 300;
/** Element ids come from this counter, never from server-provided names. */
let nextId = 0;

const nodes = (...xs: (Node | null | false)[]): Node[] => xs.filter((x): x is Node => x instanceof Node);

function formatSize(n: number | null): string | null {
  if (n === null || !Number.isFinite(n) || n < 0) return null;
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}


export function mountResources(root: HTMLElement): () => void {
  let servers: ServerContextDto_Serialize[] = [];
  let disposed = false;
  let readSeq = 0;
  /** What the user typed into each template's variables, kept across re-renders. */
  const values = new Map<string, Record<string, string>>();
  const search = h("input", { type: "search", placeholder: "Search resources", class: "resource-search", "aria-label": "Search resources" });
  const which = h("select", { class: "resource-server", "aria-label": "Server" });
  const error = errorLine();
  const viewer = h("section", { class: "resource-viewer", "aria-label": "Resource contents", hidden: true });
  const list = h("section", { class: "resources" });
  const guard = pressGuard(list);
  const waiting = waitingBar("resources", error.action);
  root.replaceChildren(h("header", { class: "bar" }, h("h1", {}, "Resources"), search, which), error.element, waiting.element, viewer, list);

  const closeViewer = () => {
    readSeq++;
    viewer.hidden = true;
    viewer.replaceChildren();
  };

  /** Reads `uri` from `server` into the viewer; a later read supersedes an earlier one. */
  const read = async (server: string, uri: string) => {
    const seq = ++readSeq;
    const heading = h("h2", { tabindex: "-1" }, uri);
    const body = h("div", { class: "ctx-viewer-body", "aria-busy": "true" }, h("p", { class: "hint" }, "Reading…"));
    viewer.replaceChildren(
      h("div", { class: "ctx-viewer-head" },
        heading,
        h("span", { class: "tool-server-name" }, server),
        h("button", { class: "ctx-close", onclick: closeViewer }, "Close"),
      ),
      body,
    );
    viewer.hidden = false;
    heading.focus();
    let shown: Node[];
    try {
      const r = await attempt(ipc.readResource(server, uri, null));
      if (r instanceof IpcFailure) shown = [h("p", { class: "error", role: "alert" }, r.message)];
      else if (r.length === 0) shown = [h("p", { class: "hint" }, "The resource has no contents.")];
      else shown = r.map((c) => renderContent(c, { onOpenResource: (u) => void read(server, u) }));
    } catch (e) {
      shown = [h("p", { class: "error", role: "alert" }, e instanceof Error ? e.message : String(e))];
    }
    if (disposed || seq !== readSeq) return;
    body.removeAttribute("aria-busy");
    body.replaceChildren(...shown);
  };

  const resourceCard = (server: string, r: ResourceDto_Serialize) => {
    const meta = [r.mime_type, formatSize(r.size)].filter((x): x is string => !!x).join(" · ");
    return h("article", { class: "tool ctx-resource" },
      h("div", { class: "head" },
        h("h3", {}, r.title ?? r.name),
        h("span", { class: "tool-server-name" }, server),
        h("button", { class: "read", "aria-label": `Read ${r.title ?? r.name}`, onclick: () => void read(server, r.uri) }, "Read"),
      ),
      h("code", { class: "ctx-uri" }, r.uri),
      meta ? h("p", { class: "ctx-meta" }, meta) : null,
      r.description ? h("p", { class: "description" }, r.description) : null,
    );
  };

  const templateCard = (server: string, t: TemplateDto_Serialize) => {
    const key = `${server}\u0000${t.uri_template}`;
    const vals = values.get(key) ?? {};
    values.set(key, vals);
    const expanded = h("code", { class: "ctx-expanded" });
    const update = () => { expanded.textContent = expandTemplate(t.uri_template, vals); };
    const fields = templateVariables(t.uri_template).map((name) => {
      const id = `ctx-var-${++nextId}`;
      const input = h("input", { id, type: "text", class: "ctx-var", autocomplete: "off", spellcheck: "false" });
      input.value = vals[name] ?? "";
      input.addEventListener("input", () => { vals[name] = input.value; update(); });
      return h("div", { class: "ctx-field" }, h("label", { for: id }, name), input);
    });
    update();
    const form = h("form", { class: "ctx-form" },
      ...fields,
      h("p", { class: "ctx-expanded-line" }, h("span", { class: "ctx-meta" }, "URI "), expanded),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "read", "aria-label": `Read ${t.title ?? t.name}` }, "Read")),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      void read(server, expandTemplate(t.uri_template, vals));
    });
    return h("article", { class: "tool ctx-template" },
      h("div", { class: "head" }, h("h3", {}, t.title ?? t.name), h("span", { class: "tool-server-name" }, server)),
      h("code", { class: "ctx-uri" }, t.uri_template),
      t.mime_type ? h("p", { class: "ctx-meta" }, t.mime_type) : null,
      t.description ? h("p", { class: "description" }, t.description) : null,
      form,
    );
  };

  const render = () => {
    if (servers.length === 0) {
      list.replaceChildren(empty("No running servers", "Approve a server on the Servers page; servers start when needed, and those not running yet are listed above with a Start button."));
      return;
    }
    if (servers.every((s) => s.resources.length === 0 && s.templates.length === 0)) {
      list.replaceChildren(empty("No resources", "The running servers offer no resources or resource templates."));
      return;
    }
    const q = search.value.trim().toLowerCase();
    const shown = servers.filter((s) => which.value === "" || s.server === which.value);
    const res = shown.flatMap((s) => s.resources
      .filter((r) => matches(q, s.server, r.name, r.title, r.uri, r.description, r.mime_type))
      .map((r) => ({ server: s.server, r })));
    const tpl = shown.flatMap((s) => s.templates
      .filter((t) => matches(q, s.server, t.name, t.title, t.uri_template, t.description, t.mime_type))
      .map((t) => ({ server: s.server, t })));
    if (res.length === 0 && tpl.length === 0) {
      list.replaceChildren(empty("Nothing matches", "No resource or template matches the search and server filter."));
      return;
    }
    list.replaceChildren(...nodes(
      h("p", { class: "count" }, `${res.length} resources`),
      ...res.slice(0, LIMIT).map(({ server, r }) => resourceCard(server, r)),
      res.length > LIMIT && h("p", { class: "count" }, `Showing the first ${LIMIT}; search to narrow the rest.`),
      h("h2", { class: "ctx-section" }, "Templates"),
      tpl.length === 0 ? h("p", { class: "hint" }, "No resource templates.") : null,
      ...tpl.slice(0, LIMIT).map(({ server, t }) => templateCard(server, t)),
    ));
  };

  const refresh = async () => {
    const r = await attempt(ipc.serverContext());
    if (disposed) return;
    error.read(failureMessage(r));
    if (r instanceof IpcFailure) return;
    servers = r;
    void waiting.update();
    setServerOptions(which, servers.map((s) => s.server));
    // A host change while a button is pressed waits for the click (app/press-guard.ts).
    guard.run(render);
  };

  search.addEventListener("input", render);
  which.addEventListener("change", render);
  const stop = onHostChange(["catalog", "status", "servers"], () => void refresh());
  void refresh();
  return () => {
    disposed = true;
    guard.dispose();
    stop();
  };
}
