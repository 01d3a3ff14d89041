// The pin review (TD-02): what changed in a server's tools, prompts, templates and instructions
// since the person approved them, field by field, before and after, with hygiene flags
// (TD-04). Changed and new tools are held in Rust until approved here (or with
// `switchboard server review`). The approval carries the surface digest the review was made
// from, so Rust refuses it if the server changed again while the dialog was open. With the
// catalog's costs it also says what approving the held tools adds to every turn (issue 16).
import type { CatalogCostsDto } from "../../ipc/bindings";
import { heldCost } from "../catalog";
import type { ChangeDto_Serialize as ChangeDto, PinReviewDto_Serialize as PinReviewDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { modal } from "../../app/modal";
import { findingsList } from "../catalog";

/** Sends an approval (`null` = everything); resolves to why it was refused, or null. */
export type ApproveFn = (names: string[] | null) => Promise<string | null>;

const STATUS = { added: "New", changed: "Changed", removed: "Removed" } as const;
const KIND = { tool: "tool", prompt: "prompt", resource_template: "resource template", instructions: "instructions" } as const;

/** The label on a server card: how many items wait for review. */
export function reviewLabel(n: number): string {
  return n === 1 ? "1 change to review" : `${n} changes to review`;
}

function changeView(c: ChangeDto, approveOne: ((key: string, done: (ok: boolean) => void) => void) | null): HTMLElement {
  const title = c.kind === "instructions" ? "Instructions" : `${KIND[c.kind]} ${c.name}`;
  const button = approveOne
    ? h("button", { type: "button", class: "approve-one" }, c.status === "removed" ? "Forget it" : "Approve")
    : null;
  const section = h("section", { class: `pin-change ${c.status}`, "data-name": c.key, "data-kind": c.kind },
    h("header", {},
      h("span", { class: `badge ${c.status === "removed" ? "idle" : "warn"}` }, STATUS[c.status]),
      " ",
      h("b", {}, title),
      button,
    ),
    findingsList(c.findings),
    ...c.fields.map((f) =>
      h("div", { class: "pin-field" },
        h("div", { class: "pin-field-label" }, f.label),
        f.before !== null ? h("pre", { class: "before", "aria-label": "before" }, f.before) : null,
        f.after !== null ? h("pre", { class: "after", "aria-label": "after" }, f.after) : null,
      ),
    ),
  );
  if (button && approveOne) {
    button.addEventListener("click", () => {
      button.disabled = true;
      approveOne(c.key, (ok) => {
        if (ok) {
          section.classList.add("approved");
          button.textContent = "Approved";
        } else {
          button.disabled = false;
        }
      });
    });
  }
  return section;
}

/** The review dialog. "Close" has the focus; nothing is approved unless a button says so. */
export function pinReviewDialog(review: PinReviewDto, approve: ApproveFn, costs?: Promise<CatalogCostsDto | null>): HTMLDialogElement {
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const showError = (m: string | null) => {
    error.hidden = m === null;
    error.textContent = m ?? "";
  };
  const approveOne = (key: string, done: (ok: boolean) => void) => {
    void approve([key]).then((why) => {
      showError(why);
      done(why === null);
    });
  };
  const close = h("button", { type: "button", autofocus: true }, "Close");
  const all = h("button", { type: "button", class: "primary approve-all" }, "Approve all");
  const title = `Changes to review on ${review.server}`;
  const notes: string[] = [
    "Changed and new tools are not offered to models and cannot run until you approve them. Hidden characters are shown as ⟨U+…⟩.",
  ];
  if (review.instructions_changed) notes.push("The server's instructions changed; they are not sent to models until you approve them.");
  if (!review.live) notes.push("The server is not running: this is what its last catalog brought.");
  if (review.changes.some((c) => c.status === "added" && c.kind === "tool")) {
    notes.push(`A server's first ${review.first_pin_cap} tools are approved with the server; more than that wait here like new ones.`);
  }
  const cost = h("p", { class: "pin-note held-cost", hidden: true });
  const held = review.changes.filter((c) => c.kind === "tool" && c.status !== "removed").map((c) => c.key);
  void costs?.then((c) => {
    const note = heldCost(c, review.server, held);
    cost.textContent = note ?? "";
    cost.hidden = note === null;
  });
  const m = modal("pin-review-dialog", title, [
    h("h2", {}, title),
    ...notes.map((n) => h("p", { class: "pin-note" }, n)),
    cost,
    error,
    review.changes.length === 0
      ? h("p", {}, "Nothing changed since its tools were approved.")
      : h("div", { class: "pin-changes" },
        ...review.changes.map((c) => changeView(c, c.kind === "instructions" ? null : approveOne))),
    h("div", { class: "actions" }, close, review.changes.length > 0 ? all : null),
  ]);
  close.addEventListener("click", m.close);
  all.addEventListener("click", () => {
    all.disabled = true;
    void approve(null).then((why) => {
      showError(why);
      if (why === null) m.close();
      else all.disabled = false;
    });
  });
  queueMicrotask(() => close.focus());
  return m.dialog;
}
