// The tools catalog: every tool of every running server, searchable, with its schema and the
// hints the server claims, and a per-tool switch.
import { commands, events } from "../../ipc/bindings";
import type { ServerToolsDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { filterTools } from "./filter";

export function mountCatalog(root: HTMLElement): () => void {
  let servers: ServerToolsDto[] = [];
  const search = h("input", { type: "search", placeholder: "Search tools", class: "tool-search" });
  const which = h("select", { class: "tool-server" });
  const list = h("section", { class: "tools" });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  root.replaceChildren(h("header", { class: "bar" }, h("h1", {}, "Tools"), search, which), error, list);

  const render = () => {
    const selected = which.value === "" ? null : which.value;
    const entries = filterTools(servers, search.value, selected);
    if (servers.length === 0) {
      list.replaceChildren(h("div", { class: "empty" }, h("h2", {}, "No running servers"), h("p", {}, "Start or approve a server on the Servers page; its tools appear here.")));
      return;
    }
    // A large catalog renders the first 300 matches; the search narrows the rest.
    list.replaceChildren(
      h("p", { class: "count" }, `${entries.length} tools`),
      ...entries.slice(0, 300).map(({ server, tool }) =>
        h("article", { class: `tool${tool.enabled ? "" : " off"}`, "data-tool": `${server}/${tool.name}` },
          h("div", { class: "head" },
            h("h2", {}, tool.title ?? tool.name),
            h("code", { class: "tool-name" }, tool.name),
            h("span", { class: "tool-server-name" }, server),
            ...tool.hints.map((hint) => h("span", { class: "hint-badge", title: "claimed by the server; never relaxes approval" }, hint)),
            h("button", { class: "toggle", onclick: () => toggle(server, tool.name, !tool.enabled) }, tool.enabled ? "Disable" : "Enable"),
          ),
          tool.description ? h("p", { class: "description" }, tool.description) : null,
          h("details", {}, h("summary", {}, "Input schema"), h("pre", {}, tool.input_schema)),
          tool.output_schema ? h("details", {}, h("summary", {}, "Output schema"), h("pre", {}, tool.output_schema)) : null,
        ),
      ),
    );
  };

  const refresh = async () => {
    const r = await commands.catalog();
    if (r.status === "error") {
      error.textContent = r.error.message;
      error.hidden = false;
      return;
    }
    error.hidden = true;
    servers = r.data;
    const current = which.value;
    which.replaceChildren(h("option", { value: "" }, "All servers"), ...servers.map((s) => h("option", { value: s.server }, s.server)));
    which.value = servers.some((s) => s.server === current) ? current : "";
    render();
  };

  const toggle = async (server: string, tool: string, enabled: boolean) => {
    const r = await commands.setToolEnabled(server, tool, enabled);
    if (r.status === "error") {
      error.textContent = r.error.message;
      error.hidden = false;
    }
    await refresh();
  };

  search.addEventListener("input", render);
  which.addEventListener("change", render);
  let pending: number | undefined;
  const unlisten = events.hostChanged.listen(() => {
    if (pending === undefined) pending = window.setTimeout(() => { pending = undefined; void refresh(); }, 150);
  });
  void refresh();
  return () => void unlisten.then((stop) => stop());
}
