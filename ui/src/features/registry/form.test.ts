import { describe, expect, it } from "vitest";
import type { RegistryInputDto_Serialize as RegistryInputDto } from "../../ipc/bindings";
import { answersFor, fieldKey, missingRequired, short } from "./form";

const input = (over: Partial<RegistryInputDto>): RegistryInputDto => ({
  kind: "env", name: "X", description: "", required: false, secret: false, default: null, choices: [], ...over,
});

describe("install form", () => {
  it("sends only typed values, keyed by kind and name", () => {
    const inputs = [input({ name: "A" }), input({ name: "--root", kind: "arg" }), input({ name: "TOKEN", secret: true })];
    const values = new Map([[fieldKey(inputs[1]), "/srv"], [fieldKey(inputs[2]), "s3cret"], ["env:A", ""]]);
    expect(answersFor(inputs, values)).toEqual([
      { kind: "arg", name: "--root", value: "/srv" },
      { kind: "env", name: "TOKEN", value: "s3cret" },
    ]);
  });

  it("lists required inputs without a value or default", () => {
    const inputs = [input({ name: "A", required: true }), input({ name: "B", required: true, default: "x" }), input({ name: "C" })];
    expect(missingRequired(inputs, new Map())).toEqual(["A"]);
    expect(missingRequired(inputs, new Map([["env:A", "v"]]))).toEqual([]);
  });

  it("cuts long descriptions", () => {
    expect(short("d".repeat(1_000_000)).length).toBe(281);
    expect(short("ok")).toBe("ok");
  });
});
