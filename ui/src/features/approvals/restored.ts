// The lines of an approval's reason that say a placeholder was put back (issue 16, point 5):
// the model saw "[REDACTED_EMAIL_1]" where the person's data was, wrote it into a call, and
// Switchboard put the real value back before running. Rust words them (outbound::runner,
// `with_restored_note`) with names and argument paths only; the prompt shows each next to the
// real value, read here from the call's arguments (which the prompt shows anyway).
import { h } from "../../app/dom";

/** One placeholder put back, and the arguments it was in. */
export interface RestoredLine {
  placeholder: string;
  at: string[];
}

const LINE = /^The model wrote (\[REDACTED_[A-Z_]+_\d+\]) \(in (.+)\); Switchboard put back the real value before running\.$/;

/** The reason split: the policy's own words, and the placeholders put back. */
export function splitReason(reason: string): { reason: string; restored: RestoredLine[] } {
  const rest: string[] = [];
  const restored: RestoredLine[] = [];
  for (const line of reason.split("\n")) {
    const m = LINE.exec(line.trim());
    if (m && m[1] && m[2]) restored.push({ placeholder: m[1], at: m[2].split(", ").map((p) => p.replace(/^`|`$/g, "")) });
    else rest.push(line);
  }
  return { reason: rest.join(" ").trim(), restored };
}

/** The value at `path` (`text`, `mail.to`, `list[0]`) in `args`, or `undefined`. */
export function valueAt(args: unknown, path: string): unknown {
  let v: unknown = args;
  for (const step of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (v === null || typeof v !== "object") return undefined;
    v = step.startsWith("[") ? (v as unknown[])[Number(step.slice(1, -1))] : (v as Record<string, unknown>)[step];
  }
  return v;
}

function parsed(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The list of placeholders put back, each with the real value now in its argument. */
export function restoredList(restored: RestoredLine[], argumentsJson: string | undefined): HTMLElement {
  const args = parsed(argumentsJson);
  return h("ul", { class: "approval-restored" }, ...restored.map((r) =>
    h("li", { class: "approval-restored-item" },
      "The model wrote ", h("code", { class: "approval-placeholder" }, r.placeholder),
      `; Switchboard put back the real value before running. Now in ${r.at.join(", ")}: `,
      ...r.at.slice(0, 3).map((p) => {
        const v = valueAt(args, p);
        return h("code", { class: "approval-restored-value" }, typeof v === "string" ? v : v === undefined ? "(see the arguments)" : JSON.stringify(v));
      }))));
}
