// The field editors behind the tool-run form (schema-form.ts), one per schema property. Schemas come
// from MCP servers and are untrusted: text goes in only through textContent (h()), local $refs are
// followed a bounded number of times and remote ones never, and whatever is not understood (or lies
// past the depth and field caps) becomes a raw JSON textarea instead of throwing or hanging.
import { h } from "../../app/dom";

export const MAX_DEPTH = 8; // nested objects/arrays, and $refs followed along one path
export const MAX_FIELDS = 500; // editors alive in one form
const MAX_ENUM = 1000;
const MAX_STEPS = 64; // keyword rewrites while resolving one schema (guards against cyclic objects)

export type Obj = Record<string, unknown>;
export interface Problem { path: string; message: string }

/** One editor. read() gives undefined for "not sent"; with out = null it only clears shown errors. */
export interface Field {
  element: HTMLElement;
  empty(): boolean;
  read(path: string, out: Problem[] | null): unknown;
  write(v: unknown): void; // undefined clears
  rename(text: string): void;
}

export interface Ctx { root: unknown; prefix: string; ids: Set<string>; left: number; reveal: boolean }
interface Opts { name: string; idPath: string; required: boolean; depth: number; refs: number }
type Kind = "string" | "number" | "integer" | "boolean" | "enum" | "array" | "object" | "raw";
interface Spec { kind: Kind; s: Obj; nullable: boolean; refs: number; why: string; values?: unknown[] }
interface Reading { empty: boolean; value?: unknown; message?: string }
type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const join = (path: string, key: string | number) => (path === "" ? String(key) : `${path}.${key}`);
const has = (o: object, k: string) => Object.hasOwn(o, k);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const omit = (o: Obj, k: string): Obj => { const c = { ...o }; delete c[k]; return c; };
const isMap = (ap: unknown) => isObj(ap) && Object.keys(ap).length > 0;

/** Key-order-independent JSON, for comparing values. */
export function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
  if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

export function pretty(v: unknown): string {
  try { return JSON.stringify(v, null, 2) ?? ""; } catch { return ""; }
}

function pointer(root: unknown, p: string): unknown {
  if (p === "") return root;
  if (!p.startsWith("/")) return undefined; // plain-name anchors are not supported
  let at = root;
  for (const part of p.slice(1).split("/")) {
    let key: string;
    try { key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~"); } catch { return undefined; }
    if (typeof at !== "object" || at === null || !has(at, key)) return undefined;
    at = (at as Obj)[key];
  }
  return at;
}

/** Follows $ref, single-alternative anyOf/oneOf/allOf and nullable type lists down to one kind. */
function resolve(schema: unknown, root: unknown, refs: number): Spec {
  let s = schema;
  let nullable = false;
  const spec = (kind: Kind, why = "", values?: unknown[]): Spec => ({ kind, s: isObj(s) ? s : {}, nullable, refs, why, values });
  for (let step = 0; step < MAX_STEPS; step++) {
    if (!isObj(s)) return spec("raw", "the schema is not an object");
    const o: Obj = s;
    const ref = o.$ref;
    if (typeof ref === "string") {
      if (!ref.startsWith("#")) return spec("raw", "remote $ref is not fetched");
      if (++refs > MAX_DEPTH) return spec("raw", "$ref nested too deeply");
      const target = pointer(root, ref.slice(1));
      if (!isObj(target)) return spec("raw", "unresolved $ref");
      s = { ...target, ...omit(o, "$ref") };
      continue;
    }
    const combo = (["anyOf", "oneOf", "allOf"] as const).find((k) => o[k] !== undefined);
    if (combo) {
      const list = o[combo];
      if (!Array.isArray(list)) return spec("raw", `${combo} is not a list`);
      const real = list.filter((a) => !(isObj(a) && a.type === "null"));
      if (real.length < list.length) nullable = true;
      if (real.length !== 1 || !isObj(real[0])) return spec("raw", `${combo} with several alternatives`);
      s = { ...omit(o, combo), ...real[0] };
      continue;
    }
    let type = o.type;
    if (Array.isArray(type)) {
      const real = type.filter((t) => t !== "null");
      if (real.length < type.length) nullable = true;
      if (real.length !== 1) return spec("raw", "several types");
      type = real[0];
    }
    if (has(o, "const") || Array.isArray(o.enum)) {
      const values = has(o, "const") ? [o.const] : (o.enum as unknown[]);
      return values.length > 0 && values.length <= MAX_ENUM ? spec("enum", "", values) : spec("raw", "enum too large");
    }
    if (type === undefined) type = isObj(o.properties) ? "object" : o.items !== undefined ? "array" : undefined;
    switch (type) {
      case "string": case "number": case "integer": case "boolean":
        return spec(type);
      case "object":
        return isObj(o.properties) && o.patternProperties === undefined && !isMap(o.additionalProperties)
          ? spec("object") : spec("raw", "free-form object");
      case "array":
        return isObj(o.items) && o.prefixItems === undefined ? spec("array") : spec("raw", "array without one item schema");
      default:
        return spec("raw", type === undefined ? "no type given" : "unsupported type");
    }
  }
  return spec("raw", "schema too convoluted");
}

/** True for {} and property-less object schemas: the tool takes no arguments. */
export function noArguments(schema: unknown): boolean {
  if (!isObj(schema)) return false;
  const { kind, s } = resolve(schema, schema, 0);
  const props = s.properties;
  const plain = ["$ref", "anyOf", "oneOf", "allOf", "enum", "const", "items", "patternProperties"].every((k) => !has(s, k));
  return (kind === "object" || kind === "raw") && plain && (s.type === "object" || s.type === undefined)
    && (props === undefined || (isObj(props) && Object.keys(props).length === 0)) && !isMap(s.additionalProperties);
}

export function makeId(ctx: Ctx, idPath: string): string {
  const base = `${ctx.prefix}-${idPath}`.replace(/[^A-Za-z0-9_-]/g, "_");
  let id = base;
  for (let n = 2; ctx.ids.has(id); n++) id = `${base}-${n}`;
  ctx.ids.add(id);
  return id;
}

function heading(name: HTMLElement, s: Obj, required: boolean): HTMLElement[] {
  const title = typeof s.title === "string" && s.title !== name.textContent ? h("span", { class: "sf-title" }, s.title) : null;
  return [name, ...(title ? [title] : []), ...(required ? [h("span", { class: "sf-req" }, "required")] : [])];
}

function describe(id: string, s: Obj, note = ""): HTMLElement | null {
  const text = typeof s.description === "string" ? s.description : "";
  if (text === "" && note === "") return null;
  return h("p", { class: "sf-help", id: `${id}-help` }, text, note && h("span", { class: "sf-note" }, `${text ? " " : ""}${note}`));
}

/** Shows one field's error, once the field was edited or the whole form was asked for its value. */
function errorSlot(id: string, ctx: Ctx, target: HTMLElement) {
  const slot = h("p", { class: "sf-error", id: `${id}-error`, hidden: true });
  let touched = false;
  target.addEventListener("input", () => (touched = true));
  const show = (message: string | null) => {
    const visible = message !== null && (touched || ctx.reveal);
    slot.textContent = visible ? message : "";
    slot.hidden = !visible;
    if (visible) target.setAttribute("aria-invalid", "true");
    else target.removeAttribute("aria-invalid");
  };
  return { slot, show, touch: () => (touched = true) };
}

function leaf(ctx: Ctx, o: Opts, spec: Spec, control: Control, get: () => Reading, set: (v: unknown) => void, note = ""): Field {
  const must = o.required && !spec.nullable;
  const name = h("span", { class: "sf-name" }, o.name);
  const help = describe(control.id, spec.s, note);
  const error = errorSlot(control.id, ctx, control);
  control.setAttribute("aria-describedby", [help?.id, error.slot.id].filter(Boolean).join(" "));
  if (must) control.setAttribute("aria-required", "true");
  const label = h("label", { for: control.id, class: "sf-label" }, ...heading(name, spec.s, must));
  const check = control.type === "checkbox";
  const element = h("div", { class: check ? "sf-field sf-check" : "sf-field" }, ...(check ? [control, label] : [label, control]), help, error.slot);
  return {
    element,
    empty: () => get().empty,
    read(path, out) {
      const r = get();
      let { value, message } = r;
      if (r.empty && value === undefined) {
        value = o.required && spec.nullable ? null : undefined;
        message = must ? "required" : undefined;
      }
      error.show(out && message ? message : null);
      if (out && message) out.push({ path, message });
      return value;
    },
    write: set,
    rename: (text) => (name.textContent = text),
  };
}

function stringProblem(v: string, s: Obj, re: RegExp | null): string | undefined {
  const n = [...v].length;
  if (isCount(s.minLength) && n < s.minLength) return `at least ${s.minLength} characters`;
  if (isCount(s.maxLength) && n > s.maxLength) return `at most ${s.maxLength} characters`;
  if (re && !re.test(v)) return `must match the pattern ${String(s.pattern).slice(0, 200)}`;
  return undefined;
}

function stringField(ctx: Ctx, o: Opts, spec: Spec): Field {
  const s = spec.s, id = makeId(ctx, o.idPath), f = s.format;
  const long = f === undefined && (s["x-multiline"] === true || (typeof s.maxLength === "number" && s.maxLength > 200));
  const type = f === "date" ? "date" : f === "email" ? "email" : f === "uri" ? "url" : "text";
  const control = long ? h("textarea", { id, rows: "4" }) : h("input", { id, type });
  if (f === "date-time") control.setAttribute("placeholder", "2025-01-31T09:00:00Z");
  let re: RegExp | null = null;
  try { if (typeof s.pattern === "string") re = new RegExp(s.pattern, "u"); } catch { re = null; }
  return leaf(ctx, o, spec, control,
    () => (control.value === "" ? { empty: true } : { empty: false, value: control.value, message: stringProblem(control.value, s, re) }),
    (v) => (control.value = typeof v === "string" ? v : ""));
}

function numberProblem(n: number, s: Obj, integer: boolean): string | undefined {
  if (!Number.isFinite(n)) return "must be a number";
  if (integer && !Number.isInteger(n)) return "must be an integer";
  const { minimum: min, maximum: max, exclusiveMinimum: xmin, exclusiveMaximum: xmax, multipleOf: step } = s;
  if (typeof xmin === "number" && n <= xmin) return `must be greater than ${xmin}`;
  if (typeof xmax === "number" && n >= xmax) return `must be less than ${xmax}`;
  if (typeof min === "number" && (xmin === true ? n <= min : n < min)) return xmin === true ? `must be greater than ${min}` : `must be at least ${min}`;
  if (typeof max === "number" && (xmax === true ? n >= max : n > max)) return xmax === true ? `must be less than ${max}` : `must be at most ${max}`;
  if (typeof step === "number" && step > 0 && Math.abs(n / step - Math.round(n / step)) > 1e-9) return `must be a multiple of ${step}`;
  return undefined;
}

function numberField(ctx: Ctx, o: Opts, spec: Spec): Field {
  const s = spec.s, integer = spec.kind === "integer";
  const control = h("input", { id: makeId(ctx, o.idPath), type: "number", step: integer ? "1" : "any" });
  if (typeof s.minimum === "number") control.min = String(s.minimum);
  if (typeof s.maximum === "number") control.max = String(s.maximum);
  return leaf(ctx, o, spec, control, () => {
    if (control.value === "") return control.validity?.badInput ? { empty: false, message: "must be a number" } : { empty: true };
    const n = Number(control.value);
    return { empty: false, value: n, message: numberProblem(n, s, integer) };
  }, (v) => (control.value = typeof v === "number" && Number.isFinite(v) ? String(v) : ""));
}

function booleanField(ctx: Ctx, o: Opts, spec: Spec): Field {
  const id = makeId(ctx, o.idPath);
  if (o.required && !spec.nullable) {
    const box = h("input", { id, type: "checkbox" });
    return leaf(ctx, o, spec, box, () => ({ empty: !box.checked, value: box.checked }), (v) => (box.checked = v === true));
  }
  // Optional: a tri-state, so "not sent" stays possible.
  const sel = h("select", { id }, h("option", { value: "" }, "— unset —"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  return leaf(ctx, o, spec, sel, () => (sel.value === "" ? { empty: true } : { empty: false, value: sel.value === "true" }),
    (v) => (sel.value = v === true ? "true" : v === false ? "false" : ""));
}

function enumField(ctx: Ctx, o: Opts, spec: Spec): Field {
  const values = spec.values ?? [];
  const sel = h("select", { id: makeId(ctx, o.idPath) },
    h("option", { value: "" }, o.required && !spec.nullable ? "— choose —" : "— unset —"),
    ...values.map((v, i) => h("option", { value: String(i) }, typeof v === "string" ? v : String(JSON.stringify(v)))));
  if (values.length === 1 && o.required) sel.value = "0";
  const keys = values.map(canon);
  return leaf(ctx, o, spec, sel, () => (sel.value === "" ? { empty: true } : { empty: false, value: values[Number(sel.value)] }), (v) => {
    const i = v === undefined ? -1 : keys.indexOf(canon(v));
    sel.value = i < 0 ? "" : String(i);
  });
}

function rawField(ctx: Ctx, o: Opts, spec: Spec, objectOnly = false): Field {
  const area = h("textarea", { id: makeId(ctx, o.idPath), class: "sf-raw", rows: "4", spellcheck: "false" });
  return leaf(ctx, o, spec, area, () => {
    if (area.value.trim() === "") return { empty: true };
    try {
      const value: unknown = JSON.parse(area.value);
      return objectOnly && !isObj(value) ? { empty: false, message: "must be a JSON object" } : { empty: false, value };
    } catch {
      return { empty: false, message: "not valid JSON" };
    }
  }, (v) => (area.value = v === undefined ? "" : pretty(v)), `Enter JSON${spec.why ? ` (${spec.why})` : ""}.`);
}

function objectField(ctx: Ctx, o: Opts, spec: Spec, top: boolean): Field {
  const s = spec.s, props = s.properties as Obj;
  const required = new Set(Array.isArray(s.required) ? s.required.filter((k) => typeof k === "string") : []);
  const id = makeId(ctx, o.idPath || "arguments");
  const keys = Object.keys(props);
  const kids: { key: string; field: Field }[] = [];
  for (const key of keys) {
    if (ctx.left <= 0) break;
    kids.push({ key, field: build(ctx, props[key], { name: key, idPath: o.idPath ? `${o.idPath}-${key}` : key, required: required.has(key), depth: o.depth + 1, refs: spec.refs }) });
  }
  // Past the field cap, the remaining properties are typed as one JSON object.
  const restKeys = new Set(keys.slice(kids.length));
  const rest = restKeys.size === 0 ? null : rawField(ctx, { ...o, name: "other properties", idPath: `${o.idPath}-more`, required: false },
    { kind: "raw", s: {}, nullable: false, refs: 0, why: `${restKeys.size} more properties than this form shows` }, true);
  const name = h("span", { class: "sf-name" }, o.name);
  const body = [describe(id, s), ...kids.map((k) => k.field.element), rest?.element];
  const element = top ? h("div", { class: "sf-object sf-top", id }, ...body)
    : h("fieldset", { class: "sf-object", id }, h("legend", {}, ...heading(name, s, o.required && !spec.nullable)), ...body);
  const empty = () => kids.every((k) => k.field.empty()) && (!rest || rest.empty());
  return {
    element,
    empty,
    read(path, out) {
      if (empty() && (!o.required || spec.nullable)) {
        for (const k of kids) k.field.read(join(path, k.key), null);
        rest?.read(path, null);
        return o.required ? null : undefined;
      }
      const entries: [string, unknown][] = [];
      for (const k of kids) {
        const v = k.field.read(join(path, k.key), out);
        if (v !== undefined) entries.push([k.key, v]);
      }
      const more = rest?.read(path, out);
      if (isObj(more)) entries.push(...Object.entries(more).filter(([k]) => restKeys.has(k)));
      return Object.fromEntries(entries);
    },
    write(v) {
      const obj = isObj(v) ? v : {};
      for (const k of kids) k.field.write(has(obj, k.key) ? obj[k.key] : undefined);
      const extra = Object.entries(obj).filter(([k]) => restKeys.has(k));
      rest?.write(extra.length ? Object.fromEntries(extra) : undefined);
    },
    rename: (text) => (name.textContent = text),
  };
}

function arrayField(ctx: Ctx, o: Opts, spec: Spec): Field {
  const s = spec.s, id = makeId(ctx, o.idPath);
  const min = isCount(s.minItems) ? s.minItems : 0, max = isCount(s.maxItems) ? s.maxItems : Infinity;
  const items: { field: Field; row: HTMLElement; remove: HTMLButtonElement; cost: number }[] = [];
  const list = h("div", { class: "sf-items" });
  const add = h("button", { type: "button", class: "sf-add" }, "+ Add item");
  const name = h("span", { class: "sf-name" }, o.name);
  const element = h("fieldset", { class: "sf-array", id }, h("legend", {}, ...heading(name, s, o.required && !spec.nullable)), describe(id, s), list, add);
  const error = errorSlot(id, ctx, element);
  element.append(error.slot);
  element.setAttribute("aria-describedby", error.slot.id);
  let created = 0;
  const refresh = () => {
    items.forEach((it, i) => { it.field.rename(`Item ${i + 1}`); it.remove.setAttribute("aria-label", `Remove item ${i + 1} of ${name.textContent}`); });
    add.disabled = items.length >= max;
  };
  const edited = () => { error.touch(); list.dispatchEvent(new Event("input", { bubbles: true })); };
  const addItem = (v?: unknown) => {
    const before = ctx.left;
    const field = build(ctx, s.items, { name: "", idPath: `${o.idPath}-${created++}`, required: true, depth: o.depth + 1, refs: spec.refs });
    if (v !== undefined) field.write(v);
    const remove = h("button", { type: "button", class: "sf-remove" }, "Remove");
    const item = { field, row: h("div", { class: "sf-item" }, field.element, remove), remove, cost: before - ctx.left };
    remove.addEventListener("click", () => {
      const i = items.indexOf(item);
      items.splice(i, 1);
      item.row.remove();
      ctx.left += item.cost;
      refresh();
      (items[i]?.remove ?? add).focus();
      edited();
    });
    items.push(item);
    list.append(item.row);
    refresh();
    return item;
  };
  add.addEventListener("click", () => {
    addItem().row.querySelector<HTMLElement>("input, select, textarea")?.focus();
    edited();
  });
  return {
    element,
    empty: () => items.length === 0,
    read(path, out) {
      if (items.length === 0 && (!o.required || spec.nullable)) { error.show(null); return o.required ? null : undefined; }
      const values = items.map((it, i) => it.field.read(join(path, i), out)).filter((v) => v !== undefined);
      let message: string | null = null;
      if (items.length < min) message = `at least ${min} item${min === 1 ? "" : "s"}`;
      else if (items.length > max) message = `at most ${max} item${max === 1 ? "" : "s"}`;
      else if (s.uniqueItems === true && new Set(values.map(canon)).size < values.length) message = "items must be unique";
      error.show(out ? message : null);
      if (out && message) out.push({ path, message });
      return values;
    },
    write(v) {
      for (const it of items.splice(0)) { it.row.remove(); ctx.left += it.cost; }
      if (Array.isArray(v)) v.forEach((x) => addItem(x));
      refresh();
    },
    rename: (text) => (name.textContent = text),
  };
}

function build(ctx: Ctx, schema: unknown, o: Opts): Field {
  ctx.left--;
  const spec = resolve(schema, ctx.root, o.refs);
  if (o.depth > MAX_DEPTH && (spec.kind === "object" || spec.kind === "array")) Object.assign(spec, { kind: "raw", why: "nested too deeply" });
  const field = spec.kind === "string" ? stringField(ctx, o, spec)
    : spec.kind === "number" || spec.kind === "integer" ? numberField(ctx, o, spec)
    : spec.kind === "boolean" ? booleanField(ctx, o, spec)
    : spec.kind === "enum" ? enumField(ctx, o, spec)
    : spec.kind === "object" ? objectField(ctx, o, spec, false)
    : spec.kind === "array" ? arrayField(ctx, o, spec)
    : rawField(ctx, o, spec);
  if (has(spec.s, "default")) field.write(spec.s.default);
  return field;
}

/** The editor for the whole arguments object; raw says it is one JSON textarea (schema not usable). */
export function buildRoot(ctx: Ctx, schema: unknown): { field: Field; raw: boolean } {
  ctx.left--;
  const spec = resolve(schema, schema, 0);
  const o: Opts = { name: "arguments", idPath: "", required: true, depth: 0, refs: spec.refs };
  if (spec.kind === "object") return { field: objectField(ctx, o, spec, true), raw: false };
  const why = spec.kind === "raw" ? spec.why : "the schema is not an object schema";
  return { field: rawField(ctx, { ...o, idPath: "arguments", required: false }, { ...spec, kind: "raw", why }, true), raw: true };
}
