import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { buildSchemaForm } from "./schema-form";
import type { FormValue, SchemaForm } from "./schema-form";

const build = (schema: unknown) => buildSchemaForm(schema, { idPrefix: "t" });
const el = <T extends HTMLElement = HTMLInputElement>(f: SchemaForm, id: string) => {
  const found = f.element.querySelector<T>(`#${id}`);
  if (!found) throw new Error(`no #${id}`);
  return found;
};
const edit = (e: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, v: string) => {
  e.value = v;
  e.dispatchEvent(new Event("input", { bubbles: true }));
};
const ok = (r: FormValue) => {
  if (!r.ok) throw new Error(`expected ok, got ${r.errors.join(", ")}`);
  return r.value;
};
const errors = (r: FormValue) => (r.ok ? [] : r.errors);
const button = (f: SchemaForm, label: string) =>
  Array.from(f.element.querySelectorAll("button")).find((b) => b.textContent === label) as HTMLButtonElement;

describe("field kinds", () => {
  const schema = {
    type: "object",
    properties: {
      name: { type: "string" },
      ratio: { type: "number" },
      count: { type: "integer" },
      force: { type: "boolean" },
      verbose: { type: "boolean" },
    },
    required: ["name", "count", "force"],
  };

  it("gives each kind its JSON type", () => {
    const f = build(schema);
    edit(el(f, "t-name"), "hello");
    edit(el(f, "t-ratio"), "0.25");
    edit(el(f, "t-count"), "3");
    el(f, "t-force").click();
    expect(ok(f.value())).toEqual({ name: "hello", ratio: 0.25, count: 3, force: true });
  });

  it("rejects a fractional integer with its path", () => {
    const f = build(schema);
    edit(el(f, "t-name"), "x");
    edit(el(f, "t-count"), "1.5");
    expect(errors(f.value())).toEqual(["count: must be an integer"]);
  });

  it("sends a required boolean as false, and omits an optional one left unset", () => {
    const f = build(schema);
    edit(el(f, "t-name"), "x");
    edit(el(f, "t-count"), "1");
    expect(el<HTMLSelectElement>(f, "t-verbose").tagName).toBe("SELECT");
    expect(ok(f.value())).toEqual({ name: "x", count: 1, force: false });
    edit(el<HTMLSelectElement>(f, "t-verbose"), "false");
    expect(ok(f.value()).verbose).toBe(false);
    edit(el<HTMLSelectElement>(f, "t-verbose"), "");
    expect("verbose" in ok(f.value())).toBe(false);
  });

  it("reports every missing required field and omits empty optional ones", () => {
    const f = build(schema);
    expect(errors(f.value())).toEqual(["name: required", "count: required"]);
    const g = build({ type: "object", properties: { a: { type: "string" }, b: { type: "number" } } });
    expect(ok(g.value())).toEqual({});
  });

  it("marks required fields visibly and labels every input", () => {
    const f = build(schema);
    const label = f.element.querySelector('label[for="t-name"]');
    expect(label?.textContent).toContain("required");
    expect(f.element.querySelector('label[for="t-ratio"]')?.textContent).not.toContain("required");
    for (const input of f.element.querySelectorAll("input, select, textarea")) {
      expect(input.id).not.toBe("");
      expect(f.element.querySelector(`label[for="${input.id}"]`)).not.toBeNull();
    }
  });

  it("checks number bounds, exclusive bounds included", () => {
    const f = build({ type: "object", properties: { n: { type: "number", minimum: 1, exclusiveMaximum: 10 } } });
    edit(el(f, "t-n"), "0");
    expect(errors(f.value())).toEqual(["n: must be at least 1"]);
    edit(el(f, "t-n"), "10");
    expect(errors(f.value())).toEqual(["n: must be less than 10"]);
    edit(el(f, "t-n"), "9.5");
    expect(ok(f.value())).toEqual({ n: 9.5 });
  });

  it("checks string length and pattern, ignoring an invalid pattern", () => {
    const f = build({ type: "object", properties: {
      code: { type: "string", pattern: "^[A-Z]{3}$", minLength: 3 },
      odd: { type: "string", pattern: "[" },
    } });
    edit(el(f, "t-code"), "AB");
    expect(errors(f.value())).toEqual(["code: at least 3 characters"]);
    edit(el(f, "t-code"), "abc");
    expect(errors(f.value())[0]).toMatch(/^code: must match/);
    edit(el(f, "t-code"), "ABC");
    edit(el(f, "t-odd"), "[[[");
    expect(ok(f.value())).toEqual({ code: "ABC", odd: "[[[" });
  });

  it("picks input types from format and a textarea for long text", () => {
    const f = build({ type: "object", properties: {
      mail: { type: "string", format: "email" },
      when: { type: "string", format: "date-time" },
      body: { type: "string", maxLength: 5000 },
      note: { type: "string", "x-multiline": true },
    } });
    expect(el(f, "t-mail").type).toBe("email");
    expect(el(f, "t-when").type).toBe("text");
    expect(el(f, "t-body").tagName).toBe("TEXTAREA");
    expect(el(f, "t-note").tagName).toBe("TEXTAREA");
  });

  it("treats a string-or-null union as an optional string", () => {
    const f = build({ type: "object", properties: { s: { type: ["string", "null"] } } });
    expect(el(f, "t-s").type).toBe("text");
    expect(ok(f.value())).toEqual({});
    edit(el(f, "t-s"), "v");
    expect(ok(f.value())).toEqual({ s: "v" });
  });

  it("pre-fills defaults", () => {
    const f = build({ type: "object", properties: { n: { type: "integer", default: 7 }, tags: { type: "array", items: { type: "string" }, default: ["a"] } } });
    expect(ok(f.value())).toEqual({ n: 7, tags: ["a"] });
  });
});

describe("enum and const", () => {
  it("yields the enum's own values, numbers as numbers", () => {
    const f = build({ type: "object", properties: { level: { enum: [1, 2, 3] }, mode: { type: "string", enum: ["fast", "slow"] } } });
    const level = el<HTMLSelectElement>(f, "t-level");
    expect(Array.from(level.options).map((o) => o.textContent)).toEqual(["— unset —", "1", "2", "3"]);
    edit(level, "1");
    edit(el<HTMLSelectElement>(f, "t-mode"), "0");
    expect(ok(f.value())).toEqual({ level: 2, mode: "fast" });
  });

  it("preselects a required const", () => {
    const f = build({ type: "object", properties: { kind: { const: "v1" } }, required: ["kind"] });
    expect(ok(f.value())).toEqual({ kind: "v1" });
  });
});

describe("arrays", () => {
  const schema = { type: "object", properties: { tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 3 } }, required: ["tags"] };

  it("adds and removes items, with real buttons", () => {
    const f = build(schema);
    const add = button(f, "+ Add item");
    expect(add.type).toBe("button");
    add.click();
    add.click();
    const inputs = f.element.querySelectorAll<HTMLInputElement>(".sf-items input");
    edit(inputs[0], "a");
    edit(inputs[1], "b");
    expect(ok(f.value())).toEqual({ tags: ["a", "b"] });
    add.click();
    expect(add.disabled).toBe(true);
    const remove = f.element.querySelectorAll<HTMLButtonElement>("button.sf-remove");
    expect(remove[0].type).toBe("button");
    remove[2].click();
    remove[0].click();
    expect(add.disabled).toBe(false);
    expect(errors(f.value())).toEqual(["tags: at least 2 items"]);
  });

  it("paths item errors by index and renumbers after a removal", () => {
    const f = build({ type: "object", properties: { ns: { type: "array", items: { type: "integer" } } } });
    f.setValue({ ns: [1, 2, 3] });
    edit(f.element.querySelectorAll<HTMLInputElement>(".sf-items input")[2], "3.5");
    f.element.querySelectorAll<HTMLButtonElement>("button.sf-remove")[0].click();
    expect(errors(f.value())).toEqual(["ns.1: must be an integer"]);
    expect(f.element.querySelector(".sf-item .sf-name")?.textContent).toBe("Item 1");
  });

  it("edits arrays of objects", () => {
    const f = build({ type: "object", properties: { people: { type: "array", items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } } });
    button(f, "+ Add item").click();
    expect(errors(f.value())).toEqual(["people.0.name: required"]);
    edit(f.element.querySelector<HTMLInputElement>(".sf-items input")!, "Ada");
    expect(ok(f.value())).toEqual({ people: [{ name: "Ada" }] });
  });
});

describe("nested objects", () => {
  const schema = {
    type: "object",
    properties: {
      address: { type: "object", title: "Postal address", properties: { street: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" } }, required: ["zip"] },
    },
  };

  it("puts the full path in errors", () => {
    const f = build(schema);
    expect(f.element.querySelector("fieldset legend")?.textContent).toContain("Postal address");
    edit(el(f, "t-address-street"), "Main St");
    expect(errors(f.value())).toEqual(["address.zip: required"]);
    edit(el(f, "t-address-zip"), "12a");
    expect(errors(f.value())[0]).toMatch(/^address\.zip: must match/);
    edit(el(f, "t-address-zip"), "12345");
    expect(ok(f.value())).toEqual({ address: { street: "Main St", zip: "12345" } });
  });

  it("omits an optional object left empty, without complaining about its required fields", () => {
    expect(ok(build(schema).value())).toEqual({});
  });
});

describe("$ref", () => {
  it("resolves #/$defs and #/definitions", () => {
    const f = build({
      type: "object",
      properties: { home: { $ref: "#/$defs/addr" }, n: { $ref: "#/definitions/num" } },
      $defs: { addr: { type: "object", properties: { city: { type: "string" } } } },
      definitions: { num: { type: "integer" } },
    });
    edit(el(f, "t-home-city"), "Oslo");
    edit(el(f, "t-n"), "4");
    expect(ok(f.value())).toEqual({ home: { city: "Oslo" }, n: 4 });
  });

  it("stops a self-recursive $ref at the depth limit", () => {
    const schema = {
      $ref: "#/$defs/node",
      $defs: { node: { type: "object", properties: { name: { type: "string" }, child: { $ref: "#/$defs/node" } }, required: ["child"] } },
    };
    const start = performance.now();
    const f = build(schema);
    expect(performance.now() - start).toBeLessThan(2000);
    expect(f.element.querySelectorAll("fieldset").length).toBeLessThanOrEqual(8);
    expect(f.element.querySelector("textarea.sf-raw")).not.toBeNull();
    const loop = build({ type: "object", properties: { x: { $ref: "#/$defs/a" } }, $defs: { a: { $ref: "#/$defs/a" } } });
    expect(loop.element.querySelector("#t-x")?.tagName).toBe("TEXTAREA");
  });

  it("never fetches a remote $ref: the field becomes raw JSON", () => {
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const f = build({ type: "object", properties: { cfg: { $ref: "https://example.com/schema.json" } } });
    const area = el<HTMLTextAreaElement>(f, "t-cfg");
    expect(area.tagName).toBe("TEXTAREA");
    expect(f.element.textContent).toContain("remote $ref is not fetched");
    edit(area, '{"a": [1, 2]}');
    expect(ok(f.value())).toEqual({ cfg: { a: [1, 2] } });
    expect(fetchSpy).not.toHaveBeenCalled();
    fetchSpy.mockRestore();
  });
});

describe("raw JSON fields", () => {
  it("handles anyOf alternatives and maps as raw JSON, which must parse", () => {
    const f = build({ type: "object", properties: {
      either: { anyOf: [{ type: "string" }, { type: "number" }] },
      map: { type: "object", additionalProperties: { type: "string" } },
      maybe: { anyOf: [{ type: "integer" }, { type: "null" }] },
    } });
    expect(el(f, "t-either").tagName).toBe("TEXTAREA");
    expect(el(f, "t-map").tagName).toBe("TEXTAREA");
    expect(el(f, "t-maybe").type).toBe("number");
    edit(el<HTMLTextAreaElement>(f, "t-either"), "{nope");
    expect(errors(f.value())).toEqual(["either: not valid JSON"]);
    edit(el<HTMLTextAreaElement>(f, "t-either"), "42");
    edit(el<HTMLTextAreaElement>(f, "t-map"), '{"k": "v"}');
    expect(ok(f.value())).toEqual({ either: 42, map: { k: "v" } });
  });
});

describe("Edit as JSON", () => {
  const schema = { type: "object", properties: { q: { type: "string" }, n: { type: "integer" }, tags: { type: "array", items: { type: "string" } } }, required: ["q"] };

  it("round-trips between the form and the JSON text", () => {
    const f = build(schema);
    edit(el(f, "t-q"), "cats");
    edit(el(f, "t-n"), "2");
    button(f, "Edit as JSON").click();
    const area = f.element.querySelector<HTMLTextAreaElement>("textarea.sf-json")!;
    expect(area.closest("[hidden]")).toBeNull();
    expect(JSON.parse(area.value)).toEqual({ q: "cats", n: 2 });
    edit(area, '{"q": "dogs", "tags": ["x", "y"]}');
    expect(ok(f.value())).toEqual({ q: "dogs", tags: ["x", "y"] });
    button(f, "Edit as form").click();
    expect(area.closest("[hidden]")).not.toBeNull();
    expect(el(f, "t-q").value).toBe("dogs");
    expect(el(f, "t-n").value).toBe("");
    expect(ok(f.value())).toEqual({ q: "dogs", tags: ["x", "y"] });
  });

  it("stays in JSON mode on a parse error or on JSON the form cannot hold", () => {
    const f = build(schema);
    button(f, "Edit as JSON").click();
    const area = f.element.querySelector<HTMLTextAreaElement>("textarea.sf-json")!;
    edit(area, "{bad");
    expect(errors(f.value())[0]).toMatch(/^arguments: not valid JSON/);
    button(f, "Edit as form").click();
    expect(area.closest("[hidden]")).toBeNull();
    expect(f.element.querySelector('[role="alert"]')?.textContent).toMatch(/not valid JSON/);
    edit(area, '{"q": "x", "extra": 1}');
    button(f, "Edit as form").click();
    expect(area.closest("[hidden]")).toBeNull();
    expect(f.element.querySelector('[role="alert"]')?.textContent).toContain("extra");
    expect(errors(f.value())[0]).toMatch(/^extra: /);
    edit(area, '{"q": "x", "n": "two"}');
    expect(errors(f.value())[0]).toMatch(/^n: /);
  });
});

describe("setValue and onChange", () => {
  it("fills every kind of field from an object", () => {
    const f = build({ type: "object", properties: {
      s: { type: "string" }, n: { type: "number" }, b: { type: "boolean" }, e: { enum: [1, "1"] },
      o: { type: "object", properties: { x: { type: "integer" } } }, a: { type: "array", items: { type: "boolean" } },
    } });
    const v = { s: "hi", n: -2.5, b: false, e: "1", o: { x: 3 }, a: [true, false] };
    f.setValue(v);
    expect(el(f, "t-s").value).toBe("hi");
    expect(el(f, "t-o-x").value).toBe("3");
    expect(ok(f.value())).toEqual(v);
    f.setValue({ s: "only" });
    expect(ok(f.value())).toEqual({ s: "only" });
  });

  it("calls onChange on every edit", () => {
    const f = build({ type: "object", properties: { s: { type: "string" }, a: { type: "array", items: { type: "string" } } } });
    const cb = vi.fn();
    f.onChange(cb);
    edit(el(f, "t-s"), "a");
    edit(el(f, "t-s"), "ab");
    button(f, "+ Add item").click();
    expect(cb).toHaveBeenCalledTimes(3);
  });

  it("shows errors next to the field once edited", () => {
    const f = build({ type: "object", properties: { n: { type: "integer" }, m: { type: "integer" } }, required: ["m"] });
    const n = el(f, "t-n");
    edit(n, "1.5");
    const slot = el(f, "t-n-error");
    expect(slot.hidden).toBe(false);
    expect(slot.textContent).toBe("must be an integer");
    expect(n.getAttribute("aria-invalid")).toBe("true");
    expect(n.getAttribute("aria-describedby")).toContain("t-n-error");
    expect(el(f, "t-m-error").hidden).toBe(true);
    f.value();
    expect(el(f, "t-m-error").textContent).toBe("required");
    edit(n, "1");
    expect(slot.hidden).toBe(true);
    expect(n.hasAttribute("aria-invalid")).toBe(false);
  });
});

describe("hostile and empty schemas", () => {
  it("says when a tool takes no arguments", () => {
    for (const schema of [{}, { type: "object" }, { type: "object", properties: {} }, { type: "object", additionalProperties: false }]) {
      const f = build(schema);
      expect(f.element.textContent).toContain("This tool takes no arguments.");
      expect(f.value()).toEqual({ ok: true, value: {} });
    }
  });

  it("falls back to a raw JSON object for unusable schemas", () => {
    for (const schema of [null, "x", 10, [], true, { type: "object", properties: [] }, { type: "string" }, { $ref: "http://x/y" }]) {
      const f = build(schema);
      const area = f.element.querySelector<HTMLTextAreaElement>("textarea")!;
      expect(area).not.toBeNull();
      expect(ok(f.value())).toEqual({});
      edit(area, '{"a": 1}');
      expect(ok(f.value())).toEqual({ a: 1 });
      edit(area, "[1]");
      expect(errors(f.value())).toEqual(["arguments: must be a JSON object"]);
    }
  });

  it("caps the number of generated fields", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) properties[`p${i}`] = { type: "string" };
    const f = build({ type: "object", properties, required: ["p9999"] });
    expect(f.element.querySelectorAll("input").length).toBeLessThanOrEqual(500);
    const more = f.element.querySelector<HTMLTextAreaElement>("textarea.sf-raw")!;
    expect(more).not.toBeNull();
    edit(more, '{"p9999": "z"}');
    edit(el(f, "t-p0"), "a");
    expect(ok(f.value())).toEqual({ p0: "a", p9999: "z" });
  });

  it("survives cycles, odd keywords and junk property schemas", () => {
    const cyclic: Record<string, unknown> = { type: "object", properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    const alt: Record<string, unknown> = {};
    alt.anyOf = [alt];
    const junk = { type: "object", properties: { a: null, b: 5, c: { type: 7 }, d: { enum: [] }, e: { type: "array", items: [{}] }, f: { $ref: "#/nope/__proto__" } } };
    for (const schema of [cyclic, { type: "object", properties: { x: alt } }, junk]) {
      expect(() => build(schema).value()).not.toThrow();
    }
    expect(build(junk).element.querySelectorAll("textarea.sf-raw").length).toBe(6);
  });

  it("keeps a __proto__ property an own key and pollutes nothing", () => {
    const f = build(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'));
    edit(f.element.querySelector("input")!, "polluted");
    const v = ok(f.value());
    expect(Object.getOwnPropertyDescriptor(v, "__proto__")?.value).toBe("polluted");
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(v))).toEqual(JSON.parse('{"__proto__":"polluted"}'));
  });

  it("shows server text as text, never markup", () => {
    const evil = "<img src=x onerror=alert(1)>";
    const f = build({ type: "object", title: evil, description: evil, properties: { [evil]: { type: "string", title: evil, description: evil, enum: [evil] } } });
    expect(f.element.querySelector("img")).toBeNull();
    expect(f.element.textContent).toContain(evil);
    expect(f.element.querySelector(".sf-help")?.textContent).toBe(evil);
  });

  it("builds no markup from strings in its source", () => {
    for (const file of ["./schema-form.ts", "./schema-fields.ts"]) {
      const src = readFileSync(new URL(file, import.meta.url), "utf8");
      expect(src).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|DOMParser|document\.write/);
    }
  });
});
