// A form a server asks the person to fill in (AP-07, form mode): the requested schema rendered
// with the catalog's schema-form generator, so it is reviewed and edited before anything is sent.
// Fields Rust flagged as looking like passwords, keys or other credentials carry a visible
// warning: the protocol forbids servers to ask for secrets in a form.
import type { QuestionKindDto_Serialize as QuestionKind } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { buildSchemaForm, type FormValue } from "../catalog";

export type FormQuestion = Extract<QuestionKind, { kind: "form" }>;

export const SENSITIVE_WARNING =
  "This server asks for what looks like a password or key; servers must not ask for secrets in a form. Don't enter one unless you are sure.";

/** The schema as sent, or an empty object schema when it does not parse (Rust checked it). */
export function parseSchema(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { type: "object", properties: {} };
  }
}

export interface FormBody {
  parts: HTMLElement[];
  /** The values to send, or the problems that keep them from being sent. */
  value(): FormValue;
}

let forms = 0;

/** The form's editor, with a warning beside each field that looks like a credential. */
export function formBody(q: FormQuestion): FormBody {
  const form = buildSchemaForm(parseSchema(q.schema), { idPrefix: `question-form-${++forms}` });
  const fields = Array.from(form.element.querySelectorAll<HTMLElement>(".sf-field, .sf-array"));
  const flagged: string[] = [];
  for (const name of q.sensitive) {
    const field = fields.find((f) => f.querySelector(".sf-name")?.textContent === name);
    const warning = h("p", { class: "sensitive-warning", role: "note" }, h("strong", {}, "Careful: "), SENSITIVE_WARNING);
    if (field) {
      field.classList.add("sensitive-field");
      field.append(warning);
      field.querySelector("input")?.setAttribute("autocomplete", "off");
    } else flagged.push(name);
  }
  const summary = q.sensitive.length > 0
    ? h("p", { class: "sensitive-warning sensitive-summary", role: "alert" },
      h("strong", {}, "Warning: "),
      `${q.sensitive.length === 1 ? "The field" : "The fields"} ${q.sensitive.join(", ")} ${q.sensitive.length === 1 ? "looks" : "look"} like a password or key. `,
      "Servers must not ask for secrets in a form.")
    : null;
  const parts: (HTMLElement | null)[] = [
    q.message.trim() !== "" ? h("blockquote", { class: "question-message" }, q.message) : null,
    summary,
    form.element,
    flagged.length > 0 ? h("p", { class: "hint" }, `Also flagged: ${flagged.join(", ")}.`) : null,
    h("p", { class: "hint" }, "Nothing is sent until you press Accept. Decline says no; Cancel dismisses the question."),
  ];
  return { parts: parts.filter((p): p is HTMLElement => p !== null), value: () => form.value() };
}
