// The rules-and-grants table: every rule and every grant made at an approval prompt, in the
// order the policy holds them, each with Remove (a rule) or Revoke (a grant) behind a
// confirmation, and "Reset all grants". Rule ids, patterns, conditions and notes come from a
// file the user (or an import) wrote: all of it goes in as text.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { RuleDto_Serialize as Rule } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { modal } from "../../app/modal";

/** A yes/no question whose safe answer (Cancel) has the focus. */
export function confirmPolicy(title: string, text: string, yes: string, onYes: () => void): HTMLDialogElement {
  const cancel = h("button", { type: "button", class: "policy-confirm-no", autofocus: true }, "Cancel");
  const ok = h("button", { type: "button", class: "danger policy-confirm-yes" }, yes);
  const m = modal("confirm-dialog policy-confirm", title, [h("h2", {}, title), h("p", {}, text), h("div", { class: "actions" }, cancel, ok)]);
  cancel.addEventListener("click", m.close);
  ok.addEventListener("click", () => {
    m.close();
    onYes();
  });
  queueMicrotask(() => cancel.focus());
  return m.dialog;
}

/** What kind of entry a row is: "grant: always", "grant: this conversation", or "rule". */
export function grantLabel(r: Pick<Rule, "grant" | "conversation">): string | null {
  if (!r.grant) return null;
  return r.conversation ? "grant: this conversation" : "grant: always";
}

function row(r: Rule, ask: (r: Rule) => void): HTMLTableRowElement {
  const label = grantLabel(r);
  const effect = ["allow", "ask", "deny"].includes(r.effect) ? r.effect : "other";
  return h("tr", { class: `rule-row${r.grant ? " rule-grant-row" : ""}`, "data-id": r.id },
    h("td", { class: "rule-id" }, h("code", {}, r.id)),
    h("td", { class: "rule-effect" }, h("span", { class: `rule-effect-badge effect-${effect}` }, r.effect),
      label ? h("span", { class: "rule-grant" }, label) : null),
    h("td", { class: "rule-target" }, `${r.server} › ${r.on === "tool" ? "" : `${r.on} `}${r.tool}`),
    h("td", { class: "rule-conditions" }, ...(r.conditions.length === 0 ? ["—"] : r.conditions.map((c) => h("code", { class: "rule-condition" }, c)))),
    h("td", { class: "rule-limit" }, r.limit ?? "—"),
    h("td", { class: "rule-note" }, r.note ?? "", r.grant && r.conversation ? h("span", { class: "hint" }, ` conversation ${r.conversation}`) : null),
    h("td", {}, h("button", { type: "button", class: "danger rule-remove", onclick: () => ask(r), "aria-label": `${r.grant ? "Revoke grant" : "Remove rule"} ${r.id}` },
      r.grant ? "Revoke" : "Remove")),
  );
}

export interface RulesSection {
  el: HTMLElement;
  /** Re-reads the rules; resolves to how many there are (null on failure). */
  reload: () => Promise<number | null>;
}

/** `onRulesChanged` runs after a rule (not a grant) was removed: the editor re-reads the file. */
export function rulesSection(host: HTMLElement, onRulesChanged: () => void): RulesSection {
  const body = h("tbody", {});
  const error = h("p", { class: "error rules-error", role: "alert", hidden: true });
  const status = h("p", { class: "rules-status notice", role: "status", hidden: true });
  const reset = h("button", { type: "button", class: "danger grants-reset" }, "Reset all grants");
  const say = (el: HTMLElement, m: string | null) => {
    el.hidden = m === null;
    el.textContent = m ?? "";
  };
  let seq = 0;
  const reload = async (): Promise<number | null> => {
    const mine = ++seq;
    const r = await attempt(ipc.policyRules());
    if (mine !== seq) return null;
    if (r instanceof IpcFailure) {
      say(error, r.message);
      return null;
    }
    const rules = r;
    body.replaceChildren(...(rules.length === 0
      ? [h("tr", {}, h("td", { colspan: "7", class: "hint rules-empty" }, "No rules and no grants: every tool call asks."))]
      : rules.map((x) => row(x, ask))));
    reset.disabled = !rules.some((x) => x.grant);
    return rules.length;
  };
  const ask = (r: Rule) => {
    const what = r.grant ? `Revoke grant ${r.id}?` : `Remove rule ${r.id}?`;
    const why = r.grant
      ? `Calls of ${r.server} › ${r.tool} will ask again${r.conversation ? " in that conversation" : ""}.`
      : `Rule ${r.effect} for ${r.server} › ${r.tool} stops applying; the rules file is rewritten without it.`;
    host.append(confirmPolicy(what, why, r.grant ? "Revoke" : "Remove", async () => {
      say(status, null);
      const x = await attempt(ipc.removePolicyRule(r.id));
      if (x instanceof IpcFailure) say(error, x.message);
      else say(error, null);
      await reload();
      if (!r.grant) onRulesChanged();
    }));
  };
  reset.addEventListener("click", () => {
    host.append(confirmPolicy("Reset all grants?", "Every \"always\" and \"this conversation\" grant is revoked; those tools ask again. Rules stay.", "Reset grants", async () => {
      const x = await attempt(ipc.resetGrants());
      if (x instanceof IpcFailure) say(error, x.message);
      else {
        say(error, null);
        const n = x ?? 0;
        say(status, `${n} ${n === 1 ? "grant" : "grants"} revoked.`);
      }
      await reload();
    }));
  });
  const el = h("section", { class: "policy-rules", "aria-labelledby": "policy-rules-title" },
    h("div", { class: "bar" }, h("h2", { id: "policy-rules-title" }, "Rules and grants"), reset),
    error, status,
    h("div", { class: "policy-table-wrap" },
      h("table", { class: "policy-table" },
        h("thead", {}, h("tr", {}, ...["Id", "Effect", "Server › tool", "Conditions", "Limit", "Note", ""].map((t) => h("th", { scope: "col" }, t)))),
        body)),
  );
  return { el, reload };
}
