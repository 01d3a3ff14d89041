import { describe, expect, it } from "vitest";
import { filterTools } from "./filter";

const tool = (name: string, description = "", enabled = true, hints: string[] = []) => ({
  name, title: null, description, input_schema: "{}", output_schema: null, hints, enabled, icon: null, findings: [], held: null,
});
const servers = [
  { server: "a", tools: [tool("echo", "Echo the text", true, ["read-only"]), tool("add", "Add numbers", false, ["read-only", "idempotent"])], excluded: [] },
  { server: "b", tools: [tool("echo", "Another echo", true, ["destructive"])], excluded: [] },
];

describe("filterTools", () => {
  it("matches name and description, across servers", () => {
    expect(filterTools(servers, { query: "ECHO", server: null }).map((e) => e.server)).toEqual(["a", "b"]);
    expect(filterTools(servers, { query: "numbers", server: null }).map((e) => e.tool.name)).toEqual(["add"]);
  });
  it("limits to a server and hides disabled tools on request", () => {
    expect(filterTools(servers, { query: "", server: "a" })).toHaveLength(2);
    expect(filterTools(servers, { query: "", server: "a", hideDisabled: true })).toHaveLength(1);
  });
  it("keeps only tools claiming every chosen hint", () => {
    expect(filterTools(servers, { query: "", server: null, hints: ["read-only"] }).map((e) => e.tool.name)).toEqual(["add", "echo"]);
    expect(filterTools(servers, { query: "", server: null, hints: ["read-only", "idempotent"] }).map((e) => e.tool.name)).toEqual(["add"]);
    expect(filterTools(servers, { query: "", server: null, hints: ["destructive"] }).map((e) => e.server)).toEqual(["b"]);
  });
  it("sorts 5,000 tools by name", () => {
    const many = [{ server: "big", tools: Array.from({ length: 5000 }, (_, i) => tool(`t${String(4999 - i).padStart(4, "0")}`)), excluded: [] }];
    const out = filterTools(many, { query: "", server: null });
    expect(out).toHaveLength(5000);
    expect(out[0]?.tool.name).toBe("t0000");
    expect(out[4999]?.tool.name).toBe("t4999");
  });
});
