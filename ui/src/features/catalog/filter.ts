// Searching the catalog: one flat list of (server, tool) matching a query on name, title or
// description, optionally limited to one server; disabled tools can be hidden.
import type { ServerToolsDto, ToolDto } from "../../ipc/bindings";

export type Entry = { server: string; tool: ToolDto };

export function filterTools(
  servers: ServerToolsDto[],
  query: string,
  server: string | null,
  hideDisabled = false,
): Entry[] {
  const q = query.trim().toLowerCase();
  const out: Entry[] = [];
  for (const s of servers) {
    if (server !== null && s.server !== server) continue;
    for (const tool of s.tools) {
      if (hideDisabled && !tool.enabled) continue;
      const hay = `${tool.name}\n${tool.title ?? ""}\n${tool.description ?? ""}`.toLowerCase();
      if (q === "" || hay.includes(q)) out.push({ server: s.server, tool });
    }
  }
  return out.sort((a, b) => a.tool.name.localeCompare(b.tool.name) || a.server.localeCompare(b.server));
}
