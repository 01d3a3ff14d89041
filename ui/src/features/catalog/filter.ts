// Searching the catalog: one flat list of (server, tool) matching a query on name, title or
// description, optionally limited to one server, to tools claiming every chosen hint, and to
// enabled tools.
import type { ServerToolsDto, ToolDto } from "../../ipc/bindings";

export type Entry = { server: string; tool: ToolDto };

export interface ToolFilter {
  query: string;
  server: string | null;
  /** Hint labels ("read-only", "destructive", ...) a tool must all claim. */
  hints?: string[];
  hideDisabled?: boolean;
}

export function filterTools(servers: ServerToolsDto[], f: ToolFilter): Entry[] {
  const q = f.query.trim().toLowerCase();
  const hints = f.hints ?? [];
  const out: Entry[] = [];
  for (const s of servers) {
    if (f.server !== null && s.server !== f.server) continue;
    for (const tool of s.tools) {
      if (f.hideDisabled && !tool.enabled) continue;
      if (!hints.every((x) => tool.hints.includes(x))) continue;
      if (q !== "" && !`${tool.name}\n${tool.title ?? ""}\n${tool.description ?? ""}`.toLowerCase().includes(q)) continue;
      out.push({ server: s.server, tool });
    }
  }
  return out.sort((a, b) => a.tool.name.localeCompare(b.tool.name) || a.server.localeCompare(b.server));
}

/** The key of a catalog entry: unique across servers. */
export const entryKey = (e: Entry) => `${e.server}\u0000${e.tool.name}`;
