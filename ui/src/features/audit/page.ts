// The Audit page (OB-01): the hash-chained log of tool calls, decisions, edits, results,
// elicitation and sampling answers, newest first, searchable, with a "Verify chain" check.
// Read-only by construction: the only commands it calls read the log. Every field (server and
// tool names, rule ids, error text, arguments) is untrusted and goes in as text through h().
import { attempt, ipc, IpcFailure, thrown } from "../../ipc/client";
import type { AuditEntryDto_Serialize as Entry, AuditVerifyDto_Serialize as Verify } from "../../ipc/bindings";
import { emptyState, h } from "../../app/dom";
import "./audit.css";

/** Entries per page. */
export const PAGE = 100;
/** A search waits this long after the last keystroke. */
const DEBOUNCE_MS = 250;
/** Kinds that get their own colour; anything else is shown plainly. */
const KINDS = new Set(["proposed", "decided", "edited", "started", "finished", "elicitation", "sampling", "grant", "policy", "pin", "config"]);

/** `server › tool`, `server`, or a dash when the entry is about neither. */
export function target(e: Pick<Entry, "server" | "tool">): string {
  if (e.server && e.tool) return `${e.server} › ${e.tool}`;
  return e.server ?? e.tool ?? "—";
}

/** `YYYY-MM-DD HH:MM:SS` in local time. */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The sentence a verification result reads as. */
export function verifyMessage(v: Verify): string {
  if (v.ok) {
    const n = v.rows === 1 ? "1 entry" : `${v.rows ?? 0} entries`;
    return v.head ? `Chain intact: ${n}, head ${v.head.slice(0, 16)}…` : `Chain intact: ${n}.`;
  }
  return `Chain broken at entry #${v.first_bad ?? "?"}: ${v.problem ?? "unknown problem"}.`;
}

function entryView(e: Entry): HTMLElement {
  const kind = KINDS.has(e.kind) ? e.kind : "other";
  const facts: [string, string | null][] = [
    ["Conversation", e.conversation],
    ["Call", e.call_ref],
    ["Hash", e.hash],
  ];
  const at = e.at_ms ?? 0;
  return h("li", { class: `audit-entry kind-${kind}`, "data-id": e.id },
    h("div", { class: "audit-head" },
      h("time", { class: "audit-time", datetime: new Date(at).toISOString() }, formatTime(at)),
      h("span", { class: "audit-kind" }, e.kind),
      h("span", { class: "audit-target" }, target(e)),
      h("span", { class: "audit-actor" }, e.actor),
    ),
    h("p", { class: "audit-summary" }, e.summary),
    h("details", { class: "audit-more" },
      h("summary", {}, "Details"),
      h("dl", { class: "audit-facts" }, ...facts.filter(([, v]) => v !== null).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "")])),
      h("pre", { class: "audit-detail" }, e.detail),
    ),
  );
}

export function mountAudit(root: HTMLElement): () => void {
  let disposed = false;
  /** Bumped by every fresh load, so a slow answer to an older search is dropped. */
  let seq = 0;
  let next: string | null = null;
  let timer: number | undefined;
  const search = h("input", { type: "search", class: "audit-search", placeholder: "Search server, tool, kind, actor, details", "aria-label": "Search the audit log" });
  const refresh = h("button", { class: "audit-refresh" }, "Refresh");
  const verify = h("button", { class: "audit-verify" }, "Verify chain");
  const status = h("p", { class: "audit-status", role: "status", "aria-live": "polite", hidden: true });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const list = h("ol", { class: "audit-list", "aria-label": "Audit entries, newest first" });
  const empty = h("div", { class: "audit-empty", hidden: true });
  const more = h("button", { class: "audit-more-button", hidden: true }, "Load more");
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Audit"), search, refresh, verify),
    status, error, list, empty, h("div", { class: "actions" }, more),
  );

  const showError = (message: string | null) => {
    error.hidden = message === null;
    error.textContent = message ?? "";
  };

  /** Loads the first page (`append` false) or the next one. */
  const load = async (append: boolean) => {
    const mine = append ? seq : ++seq;
    const query = search.value.trim();
    more.disabled = true;
    const r = await attempt(ipc.auditEntries(query === "" ? null : query, append ? next : null, PAGE)).catch(thrown);
    if (disposed || mine !== seq) return;
    more.disabled = false;
    if (r instanceof IpcFailure) {
      showError(r.message);
      return;
    }
    showError(null);
    const views = r.entries.map(entryView);
    if (append) list.append(...views);
    else list.replaceChildren(...views);
    next = r.next_before;
    more.hidden = next === null;
    const none = list.childElementCount === 0;
    empty.hidden = !none;
    empty.replaceChildren(...(none ? [query === ""
      ? emptyState("Nothing audited yet", "Tool calls, the decisions on them and their results are recorded here as they happen.")
      : emptyState("No matching entries", "Try another search.")] : []));
  };

  search.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void load(false), DEBOUNCE_MS);
  });
  refresh.addEventListener("click", () => void load(false));
  more.addEventListener("click", () => void load(true));
  verify.addEventListener("click", async () => {
    verify.disabled = true;
    status.hidden = false;
    status.classList.remove("ok", "bad");
    status.textContent = "Verifying…";
    let text: string;
    let ok = false;
    try {
      const r = await attempt(ipc.verifyAudit());
      if (!(r instanceof IpcFailure)) {
        text = verifyMessage(r);
        ok = r.ok;
      } else {
        text = r.message;
      }
    } catch (e) {
      text = e instanceof Error ? e.message : String(e);
    }
    if (disposed) return;
    verify.disabled = false;
    status.textContent = text;
    status.classList.add(ok ? "ok" : "bad");
  });

  void load(false);
  return () => {
    disposed = true;
    window.clearTimeout(timer);
  };
}
