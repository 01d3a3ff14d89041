// The install form's pure parts: which values to send for an option's inputs, and what is
// still missing. Secret values are sent once, in the install request, and go to the keyring;
// nothing here keeps them.
import type { RegistryInputDto_Serialize as RegistryInputDto, RegistryInputKind } from "../../ipc/bindings";

export type Answer = { kind: RegistryInputKind; name: string; value: string };

/** The key a form field is stored under (inputs of different kinds may share a name). */
export function fieldKey(i: Pick<RegistryInputDto, "kind" | "name">): string {
  return `${i.kind}:${i.name}`;
}

/** The answers to send: every non-empty value typed for one of `inputs`. */
export function answersFor(inputs: RegistryInputDto[], values: Map<string, string>): Answer[] {
  const out: Answer[] = [];
  for (const i of inputs) {
    const v = values.get(fieldKey(i)) ?? "";
    if (v !== "") out.push({ kind: i.kind, name: i.name, value: v });
  }
  return out;
}

/** The required inputs with neither a typed value nor a default, by name. */
export function missingRequired(inputs: RegistryInputDto[], values: Map<string, string>): string[] {
  return inputs
    .filter((i) => i.required && i.default === null && (values.get(fieldKey(i)) ?? "") === "")
    .map((i) => i.name);
}

/** Where an input goes, in words for its label. */
export function kindLabel(kind: RegistryInputKind): string {
  switch (kind) {
    case "env": return "environment variable";
    case "arg": return "argument";
    case "header": return "header";
    case "var": return "value";
  }
}

/** A description cut for a list row. */
export function short(text: string, max = 280): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
