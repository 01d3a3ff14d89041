// The tools catalog: every tool of every running server, and the last-known tools of servers that
// start when needed (opening one starts it), in one virtualised list (thousands stay smooth), filtered by text, server and claimed hints, and a detail pane with the tool's schema,
// its switch and the "run this tool" form. It follows list_changed live: the host pushes a
// change event and the page re-reads the catalog, keeping the selection and any typed arguments.
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import type { CatalogCostsDto, ServerToolsDto, ToolDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { createVirtualList } from "../../app/virtual-list";
import { pressGuard } from "../../app/press-guard";
import { errorLine } from "../../app/error-line";
import { onHostChange, setServerOptions } from "../../app/live";
import { entryKey, filterTools } from "./filter";
import type { Entry } from "./filter";
import { runPanel } from "./run-panel";
import { flagBadges, toolWarnings } from "./findings";
import { toolCost, turnCost } from "./cost";

const HINTS = ["read-only", "destructive", "idempotent", "open world"];

/** A row of the list; `lastKnown` marks a tool of a server that is not running (the tools it
 * offered when it last ran; it starts when they are needed). */
function row(e: Entry, lastKnown: boolean): HTMLElement {
  const t = e.tool;
  return h("div", { class: `tool-row${t.enabled ? "" : " off"}`, "data-tool": `${e.server}/${t.name}` },
    t.icon ? h("img", { class: "tool-icon", src: t.icon, alt: "" }) : h("span", { class: "tool-icon none" }),
    h("div", { class: "tool-row-text" },
      h("div", { class: "tool-row-head" },
        h("b", {}, t.title ?? t.name),
        h("span", { class: "tool-server-name" }, e.server),
        lastKnown ? h("span", { class: "hint-badge last-known", title: "The server is not running: this is what it offered when it last ran" }, "last known") : null,
        ...t.hints.map((x) => h("span", { class: "hint-badge" }, x)),
        t.enabled || t.held ? null : h("span", { class: "hint-badge" }, "off"),
        ...flagBadges(t),
      ),
      h("div", { class: "tool-row-desc" }, (t.description ?? "").split("\n")[0] ?? ""),
    ),
  );
}

/** The note of a tool whose server is not running, or nothing. */
function lastKnownNote(server: string, lastKnown: boolean): HTMLElement[] {
  return lastKnown
    ? [h("p", { class: "note last-known-note" }, `${server} is not running; these are the tools it offered when it last ran. It is starting now, because you opened it.`)]
    : [];
}

function detail(server: string, t: ToolDto, note: HTMLElement, toggle: (enabled: boolean) => void, cost: HTMLElement): HTMLElement {
  return h("article", { class: "tool-detail", "data-tool": `${server}/${t.name}` },
    note,
    h("div", { class: "head" },
      t.icon ? h("img", { class: "tool-icon", src: t.icon, alt: "" }) : null,
      h("h2", {}, t.title ?? t.name),
      h("button", { class: "toggle", onclick: () => toggle(!t.enabled) }, t.enabled ? "Disable" : "Enable"),
    ),
    h("p", { class: "meta" }, h("code", { class: "tool-name" }, t.name), " on ", h("span", { class: "tool-server-name" }, server)),
    t.hints.length > 0
      ? h("p", { class: "hints" }, ...t.hints.map((x) => h("span", { class: "hint-badge", title: "claimed by the server; never relaxes approval" }, x)))
      : null,
    toolWarnings(t),
    cost,
    t.description ? h("p", { class: "description" }, t.description) : null,
    h("details", {}, h("summary", {}, "Input schema"), h("pre", {}, t.input_schema)),
    t.output_schema ? h("details", {}, h("summary", {}, "Output schema"), h("pre", {}, t.output_schema)) : null,
    runPanel(server, t),
  );
}

export function mountCatalog(root: HTMLElement): () => void {
  let servers: ServerToolsDto[] = [];
  // What the definitions cost in tokens (issue 16); null until read, or when it cannot be.
  let costs: CatalogCostsDto | null = null;
  // Servers shown with last-known tools, and those already asked to start from this page.
  let lastKnown = new Set<string>();
  const opened = new Set<string>();
  // The catalog opened on a server that starts when needed starts it (issue 14).
  const open = (server: string) => {
    if (!lastKnown.has(server) || opened.has(server)) return;
    opened.add(server);
    void attempt(ipc.openServer(server)).then((r) => {
      // Opened on its own when a tool is picked: its success is no answer to the person's
      // last action, so it leaves that action's error alone.
      if (r instanceof IpcFailure) error.action(r.message);
      void refresh();
    });
  };
  const search = h("input", { type: "search", placeholder: "Search tools", class: "tool-search", "aria-label": "Search tools" });
  const which = h("select", { class: "tool-server", "aria-label": "Server" });
  const hideOff = h("input", { type: "checkbox", class: "hide-off" });
  const hintBoxes = HINTS.map((x) => ({ hint: x, box: h("input", { type: "checkbox", class: "hint-filter", value: x }) }));
  const count = h("p", { class: "count", "aria-live": "polite" });
  const error = errorLine();
  const empty = h("div", { class: "empty", hidden: true });
  const pane = h("section", { class: "tool-pane", "aria-live": "polite" },
    h("p", { class: "hint" }, "Select a tool to see its schema and run it."));
  let shown: { key: string; schema: string; enabled: boolean; flags: string } | null = null;
  // The cost line of the shown tool: filled in place, because costs arrive after the catalog
  // and rebuilding the pane for them would wipe a running tool's output and typed arguments.
  const costSlot = h("div", { class: "token-cost-slot" });
  // The "not running" note, also filled in place: the server opened from here starts while the
  // person types its arguments, and that must not wipe them.
  const noteSlot = h("div", { class: "last-known-slot" });
  // Only the newest read of the catalog is drawn: an older one answering late would undo it.
  let generation = 0;

  const showDetail = (e: Entry | null) => {
    if (!e) {
      shown = null;
      pane.replaceChildren(h("p", { class: "hint" }, "Select a tool to see its schema and run it."));
      return;
    }
    // Rebuilding would wipe typed arguments: only when the tool itself changed.
    const k = entryKey(e);
    const flags = JSON.stringify([e.tool.held, e.tool.findings, e.tool.description]);
    costSlot.replaceChildren(...[toolCost(costs, e.server, e.tool.name)].filter((x) => x !== null));
    noteSlot.replaceChildren(...lastKnownNote(e.server, lastKnown.has(e.server)));
    if (shown && shown.key === k && shown.schema === e.tool.input_schema && shown.enabled === e.tool.enabled && shown.flags === flags) return;
    shown = { key: k, schema: e.tool.input_schema, enabled: e.tool.enabled, flags };
    pane.replaceChildren(detail(e.server, e.tool, noteSlot, (on) => void toggle(e.server, e.tool.name, on), costSlot));
    open(e.server);
  };

  const list = createVirtualList<Entry>({
    rowHeight: 56,
    key: entryKey,
    render: (e) => row(e, lastKnown.has(e.server)),
    label: "Tools",
    onSelect: showDetail,
  });
  const split = h("div", { class: "catalog-split" }, list.element, pane);
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Tools"), search, which),
    h("div", { class: "filters", role: "group", "aria-label": "Filters" },
      ...hintBoxes.map(({ hint, box }) => h("label", { class: "chip" }, box, ` ${hint}`)),
      h("label", { class: "chip" }, hideOff, " hide switched off"),
      count,
    ),
    error.element,
    empty,
    split,
  );
  // A row or the detail rebuilt between a press and its release would lose the click: a row
  // that does not select, a Run that does nothing (app/press-guard.ts).
  const guard = pressGuard(split);

  const render = () => guard.run(draw);
  const draw = () => {
    const entries = filterTools(servers, {
      query: search.value,
      server: which.value === "" ? null : which.value,
      hints: hintBoxes.filter((b) => b.box.checked).map((b) => b.hint),
      hideDisabled: hideOff.checked,
    });
    empty.hidden = servers.length > 0;
    if (servers.length === 0) {
      empty.replaceChildren(h("h2", {}, "No tools yet"), h("p", {}, "Approve a server on the Servers page, or start it there: its tools appear here, and stay listed (marked “last known”) while it is not running."));
    }
    const total = servers.reduce((n, s) => n + s.tools.length, 0);
    const perTurn = turnCost(costs);
    count.textContent = (entries.length === total ? `${total} tools` : `${entries.length} of ${total} tools`) + (perTurn ? ` · ${perTurn}` : "");
    list.setItems(entries);
    const sel = list.selected();
    showDetail(sel);
  };

  const refresh = async () => {
    const mine = ++generation;
    const r = await attempt(ipc.catalog());
    if (mine !== generation) return;
    error.read(failureMessage(r));
    if (r instanceof IpcFailure) return;
    servers = r;
    const c = await attempt(ipc.catalogCosts());
    if (mine !== generation) return;
    costs = c instanceof IpcFailure ? null : c;
    lastKnown = new Set(servers.filter((s) => s.last_known_ms != null).map((s) => s.server));
    for (const s of [...opened]) if (!lastKnown.has(s)) opened.delete(s);
    setServerOptions(which, servers.map((s) => s.server));
    render();
  };

  const toggle = async (server: string, tool: string, enabled: boolean) => {
    const r = await attempt(ipc.setToolEnabled(server, tool, enabled));
    error.action(failureMessage(r));
    await refresh();
  };

  search.addEventListener("input", render);
  which.addEventListener("change", () => {
    if (which.value !== "") open(which.value);
    render();
  });
  hideOff.addEventListener("change", render);
  hintBoxes.forEach((b) => b.box.addEventListener("change", render));
  const stop = onHostChange(["catalog", "status", "servers"], () => void refresh());
  void refresh();
  return () => {
    guard.dispose();
    stop();
  };
}
