// Hygiene flags on a tool's texts (TD-04) and its hold for review (TD-02), as the catalog rows,
// the tool detail and the pin review show them. Every text arrives from Rust with hidden
// characters already made visible (⟨U+202E⟩) and goes in as text, never markup.
import type { FindingDto } from "../../ipc/bindings";

/** What these helpers read of a tool. */
export type Flagged = { findings: FindingDto[]; held?: string | null };
import { h } from "../../app/dom";

/** The list of findings: a ⚠ line per finding, with the text around it. */
export function findingsList(findings: FindingDto[]): HTMLElement | null {
  if (findings.length === 0) return null;
  return h("ul", { class: "findings", "aria-label": "Warnings about this text" },
    ...findings.map((f) =>
      h("li", { class: `finding ${f.kind}` },
        h("span", { class: "finding-mark", "aria-hidden": "true" }, "⚠ "),
        f.message,
        f.excerpt ? h("code", { class: "finding-excerpt" }, f.excerpt) : null,
      ),
    ),
  );
}

/** Small badges for a catalog row: held for review, and how many flags. */
export function flagBadges(t: Flagged): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (t.held) out.push(h("span", { class: "hint-badge held", title: `Held: ${t.held}` }, "held for review"));
  if (t.findings.length > 0) {
    out.push(h("span", { class: "hint-badge flag", title: t.findings.map((f) => f.message).join("\n") }, `⚠ ${t.findings.length}`));
  }
  return out;
}

/** What the tool detail says about a hold and the flags. */
export function toolWarnings(t: Flagged): HTMLElement | null {
  if (!t.held && t.findings.length === 0) return null;
  return h("section", { class: "tool-warnings" },
    t.held
      ? h("p", { class: "held-notice", role: "status" }, `Held for review: ${t.held}. It is not offered to models and cannot run until you approve it on the Servers page.`)
      : null,
    findingsList(t.findings),
  );
}
