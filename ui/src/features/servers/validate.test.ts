import { describe, expect, it } from "vitest";
import { validate } from "./validate";

const stdio = (over: object = {}) => ({ kind: "stdio" as const, name: "fs", command: "npx", args: [], cwd: "", env: [], ...over });
const http = (over: object = {}) => ({ kind: "http" as const, name: "remote", url: "https://example.com/mcp", headers: [], ...over });

describe("validate", () => {
  it("accepts good forms", () => {
    expect(validate(stdio())).toEqual({});
    expect(validate(http({ headers: [{ name: "Authorization", value: "Bearer x", secret: true }] }))).toEqual({});
  });
  it("explains bad names, commands and cwd", () => {
    expect(validate(stdio({ name: "bad name" })).name).toBeDefined();
    expect(validate(stdio({ command: "" })).command).toBeDefined();
    expect(validate(stdio({ command: "./server" })).command).toMatch(/absolute/);
    expect(validate(stdio({ cwd: "relative" })).cwd).toBeDefined();
  });
  it("checks env and header entries", () => {
    const e = validate(stdio({ env: [{ name: "1X", value: "", secret: false }, { name: "A", value: "x\ny", secret: false }] }));
    expect(e["env.0.name"]).toBeDefined();
    expect(e["env.1.value"]).toBeDefined();
    const dup = validate(stdio({ env: [{ name: "A", value: "1", secret: false }, { name: "a", value: "2", secret: false }] }));
    expect(dup["env.1.name"]).toMatch(/twice/);
    expect(validate(http({ headers: [{ name: "X Bad", value: "", secret: false }] }))["headers.0.name"]).toBeDefined();
    expect(validate(http({ headers: [{ name: "X-Key", value: "", secret: true }] }))["headers.0.value"]).toBeDefined();
  });
  it("refuses unusable URLs", () => {
    expect(validate(http({ url: "ftp://x" })).url).toMatch(/http/);
    expect(validate(http({ url: "nope" })).url).toBeDefined();
    expect(validate(http({ url: "https://u:p@x/" })).url).toMatch(/credentials/);
  });
});
