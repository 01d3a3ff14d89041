import { describe, expect, it } from "vitest";
import { filterTools } from "./filter";

const tool = (name: string, description = "", enabled = true) => ({
  name, title: null, description, input_schema: "{}", output_schema: null, hints: [], enabled,
});
const servers = [
  { server: "a", tools: [tool("echo", "Echo the text"), tool("add", "Add numbers", false)], excluded: [] },
  { server: "b", tools: [tool("echo", "Another echo")], excluded: [] },
];

describe("filterTools", () => {
  it("matches name and description, across servers", () => {
    expect(filterTools(servers, "ECHO", null).map((e) => e.server)).toEqual(["a", "b"]);
    expect(filterTools(servers, "numbers", null).map((e) => e.tool.name)).toEqual(["add"]);
  });
  it("limits to a server and hides disabled tools on request", () => {
    expect(filterTools(servers, "", "a")).toHaveLength(2);
    expect(filterTools(servers, "", "a", true)).toHaveLength(1);
  });
});
