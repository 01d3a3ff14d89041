// The "run this tool" form: the arguments of an MCP tool call, generated from the tool's JSON Schema
// inputSchema (the editors are in schema-fields.ts). It is a plain <div>, not a <form>: the CSP has
// form-action 'none' and nothing here may navigate. "Edit as JSON" swaps the fields for one textarea
// holding the same value, checked against the same schema, so neither view can send more than the other.
import "./schema-form.css";
import { h } from "../../app/dom";
import { buildRoot, canon, isObj, join, makeId, MAX_FIELDS, noArguments, pretty } from "./schema-fields";
import type { Ctx, Field, Obj, Problem } from "./schema-fields";

export type FormValue = { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };
export interface SchemaForm {
  element: HTMLElement;
  value(): FormValue;
  setValue(v: Record<string, unknown>): void;
  onChange(cb: () => void): void;
}

let forms = 0;
const text = (p: Problem) => `${p.path || "arguments"}: ${p.message}`;
const MISFIT = "does not fit this form (unknown property or wrong type)";

function result(value: Obj, problems: Problem[]): FormValue {
  return problems.length ? { ok: false, errors: [...new Set(problems.map(text))] } : { ok: true, value };
}

function parseArgs(t: string): Obj | string {
  if (t.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(t);
    return isObj(v) ? v : "must be a JSON object";
  } catch (e) {
    return `not valid JSON (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** Where the form's own reading of `given` differs from it: what the fields cannot hold. */
function diff(form: unknown, given: unknown, path: string, out: Problem[]): void {
  if (out.length >= 20) return;
  if (isObj(form) && isObj(given)) {
    for (const k of new Set([...Object.keys(form), ...Object.keys(given)])) {
      if (!Object.hasOwn(given, k)) out.push({ path: join(path, k), message: "required" });
      else if (!Object.hasOwn(form, k)) out.push({ path: join(path, k), message: MISFIT });
      else diff(form[k], given[k], join(path, k), out);
    }
  } else if (Array.isArray(form) && Array.isArray(given) && form.length === given.length) {
    form.forEach((f, i) => diff(f, given[i], join(path, i), out));
  } else if (canon(form) !== canon(given)) {
    out.push({ path, message: MISFIT });
  }
}

export function buildSchemaForm(schema: unknown, opts: { idPrefix?: string } = {}): SchemaForm {
  const prefix = (opts.idPrefix ?? `sf${++forms}`).replace(/[^A-Za-z0-9_-]/g, "_");
  const element = h("div", { class: "schema-form" });
  const listeners: (() => void)[] = [];
  const onChange = (cb: () => void) => void listeners.push(cb);
  if (noArguments(schema)) {
    element.append(h("p", { class: "sf-none" }, "This tool takes no arguments."));
    return { element, value: () => ({ ok: true, value: {} }), setValue: () => {}, onChange };
  }
  const ctx: Ctx = { root: schema, prefix, ids: new Set(), left: MAX_FIELDS, reveal: false };
  const { field, raw } = buildRoot(ctx, schema);
  const json = jsonView(ctx, field);
  element.append(...(raw ? [field.element] : [json.toggle, field.element, json.pane]));
  element.addEventListener("input", () => {
    json.refresh();
    listeners.forEach((cb) => cb());
  });
  return { element, value: json.value, setValue: json.setValue, onChange };
}

/** The fields plus the whole-form JSON textarea, and which of the two is showing. */
function jsonView(ctx: Ctx, field: Field) {
  const area = h("textarea", { id: makeId(ctx, "(json)"), class: "sf-json", rows: "12", spellcheck: "false" });
  const error = h("p", { class: "sf-error", id: `${area.id}-error`, role: "alert", hidden: true });
  area.setAttribute("aria-describedby", error.id);
  const pane = h("div", { class: "sf-json-pane", hidden: true }, h("label", { for: area.id, class: "sf-label" }, "Arguments as JSON"), area, error);
  const toggle = h("button", { type: "button", class: "sf-toggle" }, "Edit as JSON");
  let jsonMode = false;

  const read = (reveal: boolean) => {
    if (reveal) ctx.reveal = true;
    const problems: Problem[] = [];
    const v = field.read("", problems);
    return { value: isObj(v) ? v : {}, problems };
  };
  // Puts `given` into the fields and reads them back: the schema's problems, and what did not fit.
  const load = (given: Obj) => {
    field.write(given);
    const { value, problems } = read(false);
    const misfits: Problem[] = [];
    diff(value, given, "", misfits);
    return { problems, misfits };
  };
  const showError = (message: string) => {
    error.textContent = message;
    error.hidden = message === "";
    if (message) area.setAttribute("aria-invalid", "true");
    else area.removeAttribute("aria-invalid");
  };
  const setMode = (on: boolean) => {
    jsonMode = on;
    pane.hidden = !on;
    field.element.hidden = on;
    toggle.textContent = on ? "Edit as form" : "Edit as JSON";
  };

  toggle.addEventListener("click", () => {
    if (!jsonMode) {
      area.value = pretty(read(false).value);
      showError("");
      return setMode(true);
    }
    const parsed = parseArgs(area.value);
    if (typeof parsed === "string") return showError(parsed);
    const blocking = load(parsed).misfits.filter((m) => m.message !== "required");
    if (blocking.length) return showError(`The form cannot show this JSON: ${blocking.slice(0, 5).map(text).join("; ")}`);
    showError("");
    setMode(false);
  });

  return {
    toggle,
    pane,
    refresh() {
      if (!jsonMode) return void read(false);
      const parsed = parseArgs(area.value);
      showError(typeof parsed === "string" ? parsed : "");
    },
    value(): FormValue {
      if (!jsonMode) {
        const { value, problems } = read(true);
        return result(value, problems);
      }
      const parsed = parseArgs(area.value);
      if (typeof parsed === "string") {
        showError(parsed);
        return { ok: false, errors: [`arguments: ${parsed}`] };
      }
      const { problems, misfits } = load(parsed);
      return result(parsed, [...misfits, ...problems.filter((p) => !misfits.some((m) => m.path === p.path))]);
    },
    setValue(v: Record<string, unknown>) {
      const obj = isObj(v) ? v : {};
      field.write(obj);
      if (jsonMode) {
        area.value = pretty(obj);
        showError("");
      } else read(false);
    },
  };
}
