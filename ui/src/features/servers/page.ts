// The servers page: every configured server with its live status, and the trust dialog that
// shows exactly what a server runs, or where it connects, before it may start (SP-01, SP-10). All calls go through the
// generated bindings.
import { events } from "../../ipc/bindings";
import { attempt, failureMessage, ipc, IpcFailure } from "../../ipc/client";
import type {
  AddServerRequest,
  DoctorDto,
  LogsDto_Serialize as LogsDto,
  ServerRow_Serialize as ServerRow,
} from "../../ipc/bindings";
import { h } from "../../app/dom";
import { pressGuard } from "../../app/press-guard";
import { errorLine } from "../../app/error-line";
import { modal } from "../../app/modal";
import { confirmDialog } from "../../app/confirm";
import { insecureBadge, reasonAction, rowBadge, sortRows, trustLabel } from "./format";
import { addServerDialog } from "./add-form";
import { logsDialog } from "./logs";
import { exportDialog, importDialog } from "./transfer";
import { pinReviewDialog, reviewLabel } from "./pin-review";
import { accessPanel } from "./access";
import { sandboxBadge, sandboxFindings, sandboxPanel } from "./sandbox";
import { trustDialog } from "./trust";
import { sparklines } from "../metrics";
import { cardCostLine, loadCosts } from "../catalog";
import type { CatalogCostsDto } from "../../ipc/bindings";
import { signInDialog } from "../credentials";
import { signInLine } from "../credentials";
import type { ServerCredentialsDto_Serialize as ServerCredentials } from "../../ipc/bindings";

export { trustDialog } from "./trust";
export { confirmDialog } from "../../app/confirm";

export function mountServers(root: HTMLElement): () => void {
  const list = h("section", { class: "list", "aria-live": "polite" });
  const notice = h("p", { class: "notice", role: "status", hidden: true });
  const error = errorLine();
  root.replaceChildren(
    h("header", { class: "bar" },
      h("h1", {}, "Servers"),
      h("button", { class: "import", onclick: () => root.append(importDialog((msg) => { showNotice(msg); void refresh(); })) }, "Import…"),
      h("button", { class: "export", onclick: () => root.append(exportDialog()) }, "Export…"),
      h("button", { class: "primary add", onclick: () => root.append(addServerDialog(() => void refresh())) }, "Add server"),
    ),
    notice,
    error.element,
    list,
  );
  // A card rebuilt between a press and its release would lose the click (app/press-guard.ts).
  const guard = pressGuard(list);

  const showNotice = (msg: string) => {
    notice.textContent = msg;
    notice.hidden = false;
  };

  const showError = error.action;

  let rows: ServerRow[] = [];
  // Remote servers' sign-ins, by server: what their cards say about signing in. A keyring that
  // cannot be read leaves the cards without it (the Credentials page says why).
  let signIns = new Map<string, ServerCredentials>();
  // Each card's calls over 24 h (issue 16): one report for every card, a slot that outlives it.
  const spark = sparklines();
  const refresh = async () => {
    const [r, c] = await Promise.all([attempt(ipc.listServers()), attempt(ipc.credentials())]);
    announceFirstRender();
    error.read(failureMessage(r));
    if (r instanceof IpcFailure) return;
    rows = r as ServerRow[];
    for (const n of [...costSlots.keys()]) if (!rows.some((x) => x.name === n)) costSlots.delete(n);
    signIns = new Map(c instanceof IpcFailure ? [] : c.servers.filter((s) => s.remote).map((s) => [s.server, s]));
    const drawn = rows;
    guard.run(() => render(drawn));
    void priceCards();
    spark.keep(rows.map((x) => x.name));
    void spark.refresh();
  };

  // What each server's tools cost per turn (issue 16): one read for the whole page, after the
  // cards are drawn so a large catalog never delays them; only the newest read is used.
  let costs: CatalogCostsDto | null = lastCosts;
  let priced = 0;
  const priceCards = async () => {
    const mine = ++priced;
    const c = await loadCosts();
    if (mine !== priced) return;
    costs = c;
    lastCosts = c;
    for (const [name, slot] of costSlots) fillCost(name, slot);
  };
  // Each card's cost line, filled in place: redrawing the cards when the price arrives would
  // swap a button under a click (the same slot-outlives-card rule as the sparklines).
  const costSlots = new Map<string, HTMLElement>();
  const fillCost = (name: string, slot: HTMLElement) => {
    const line = cardCostLine(costs, name);
    slot.replaceChildren(...(line ? [line] : []));
  };
  const costSlot = (name: string) => {
    let slot = costSlots.get(name);
    if (!slot) {
      slot = h("div", { class: "server-cost-slot" });
      costSlots.set(name, slot);
    }
    fillCost(name, slot);
    return slot;
  };

  const signIn = (name: string) => root.append(signInDialog(name, () => void refresh()));

  const signOut = (name: string) =>
    root.append(confirmDialog(`Sign out of ${name}?`,
      "Switchboard asks the authorization server to revoke the tokens (where it offers that) and deletes them from the keyring. The server will ask you to sign in again.",
      "Sign out", () => void (async () => {
        const r = await attempt(ipc.signOut(name));
        if (r instanceof IpcFailure) showError(r.message);
        else showNotice(`${name}: ${r.message}`);
        await refresh();
      })()));

  const act = async (p: Promise<unknown>) => {
    showError(failureMessage(await attempt(p)));
    await refresh();
  };

  const review = async (name: string) => {
    const r = await attempt(ipc.trustView(name, []));
    if (r instanceof IpcFailure) return showError(r.message);
    const rebind = async (bindings: Parameters<typeof ipc.trustView>[1]) => {
      const v = await attempt(ipc.trustView(name, bindings));
      return v instanceof IpcFailure ? v.message : v;
    };
    root.append(trustDialog(r, (fp, bindings) => act(ipc.approveServer(name, fp, bindings)), rebind, loadCosts()));
  };

  // TD-02: what changed in its tools since approved; approving sends back the surface shown.
  const reviewPins = async (name: string) => {
    const r = await attempt(ipc.pinReview(name));
    if (r instanceof IpcFailure) return showError(r.message);
    const surface = r.surface;
    root.append(pinReviewDialog(r, async (names) => {
      const a = await attempt(ipc.approvePinChanges(name, names, surface));
      void refresh();
      return failureMessage(a);
    }, loadCosts()));
  };

  const diagnose = async (name: string) => {
    const r = await attempt(ipc.doctor(name));
    if (r instanceof IpcFailure) return showError(r.message);
    root.append(doctorDialog(r));
  };

  const showLogs = async (name: string) => {
    const r = await attempt(ipc.serverLogs(name));
    if (r instanceof IpcFailure) return showError(r.message);
    root.append(logsDialog(name, r as LogsDto));
  };

  const edit = async (name: string) => {
    const r = await attempt(ipc.serverForm(name));
    if (r instanceof IpcFailure) return showError(r.message);
    root.append(addServerDialog(() => void refresh(), r));

  };

  const remove = (name: string) => {
    root.append(
      confirmDialog(`Remove ${name}?`, "Its configuration, approval and saved logs are deleted. Secrets stay in the keyring.", "Remove", () =>
        act(ipc.removeServer(name)),
      ),
    );
  };

  // The access section of each server outlives its card, so a status change does not close it or
  // lose what is being typed there.
  const panels = new Map<string, HTMLDetailsElement>();
  const panel = (name: string) => {
    let p = panels.get(name);
    if (!p) {
      p = accessPanel(name);
      panels.set(name, p);
    }
    return p;
  };
  // The sandbox section (SP-07) outlives its card the same way.
  const sandboxes = new Map<string, HTMLDetailsElement>();
  const sandbox = (name: string) => {
    let p = sandboxes.get(name);
    if (!p) {
      p = sandboxPanel(name);
      sandboxes.set(name, p);
    }
    return p;
  };

  // One card per server, rebuilt only when its row changed: a crash-looping neighbour must
  // not steal the focus or the click target of the card someone is using.
  const card = (s: ServerRow, now: number): HTMLElement => {
    const badge = rowBadge(s, now);
    const trust = trustLabel(s.trust);
    const action = reasonAction(s.status, s.name);
    const sbx = sandboxBadge(s);
    const insecure = insecureBadge(s);
    const remote = s.transport === "http";
    const auth = remote ? signInLine(action?.signIn ?? false, signIns.get(s.name)) : null;
    return h("article", { class: "server", "data-name": s.name },
      h("div", { class: "head" },
        h("h2", {}, s.name),
        h("span", { class: `badge ${badge.tone}` }, badge.label),
        h("span", { class: "kind" }, s.transport),
        s.status.protocol
          ? h("span", { class: "protocol", title: "The MCP protocol revision this server and Switchboard settled on" }, `protocol ${s.status.protocol}`)
          : null,
        sbx ? h("span", { class: `badge sandbox-badge ${sbx.tone}`, title: sbx.title }, sbx.label) : null,
        insecure ? h("span", { class: `badge insecure-badge ${insecure.tone}`, title: insecure.title }, insecure.label) : null,
        s.review > 0
          ? h("button", { class: "review-badge", onclick: () => reviewPins(s.name), title: "Changed or new tools are held until you review them" }, reviewLabel(s.review))
          : null,
      ),
      h("code", { class: "summary" }, s.summary),
      costSlot(s.name),
      spark.slot(s.name),
      s.status.kind === "failed" || s.status.kind === "backoff"
        ? h("p", { class: "detail" }, s.status.detail)
        : null,
      auth ? h("p", { class: `sign-in-state ${auth.kind}`, "data-state": auth.kind }, auth.text) : null,
      action ? h("p", { class: "detail reason-action" }, action.note) : null,
      s.status.stderr_tail.length > 0
        ? h("pre", { class: "stderr" }, s.status.stderr_tail.join("\n"))
        : null,
      // SP-07: what the sandbox kept it from, each with a button that grants exactly that.
      s.sandboxed && (s.status.kind === "failed" || s.status.kind === "backoff")
        ? sandboxFindings(s.name, (msg) => { showNotice(msg); void refresh(); })
        : null,
      trust ? h("p", { class: "trust" }, trust) : null,
      s.missing_secrets.length > 0
        ? h("p", { class: "trust missing-secrets" }, `Not set in the keyring: ${s.missing_secrets.join(", ")}. Use Edit to enter ${s.missing_secrets.length === 1 ? "it" : "them"}.`)
        : null,
      h("div", { class: "actions" },
        // A remote server signs in in the browser (OAuth); any other server asking for
        // credentials gets them through its settings.
        auth?.kind === "needs" || action?.signIn
          ? h("button", { class: "primary sign-in", onclick: () => (remote ? signIn(s.name) : edit(s.name)) }, "Sign in")
          : null,
        auth?.kind === "signed_in"
          ? h("button", { class: "sign-out", onclick: () => signOut(s.name) }, "Sign out")
          : null,
        trust && s.trust !== "unresolvable"
          ? h("button", { class: "primary", onclick: () => review(s.name) }, "Review and approve…")
          : null,
        s.status.kind === "running" || s.status.kind === "starting" || s.status.kind === "backoff"
          ? h("button", { onclick: () => act(ipc.stopServer(s.name)) }, "Stop")
          : null,
        s.status.kind === "running" || s.status.kind === "failed" || s.status.kind === "backoff"
          ? h("button", { class: "restart", onclick: () => act(ipc.startServer(s.name)), disabled: !s.enabled }, "Restart")
          : s.status.kind === "starting" || (trust && s.trust !== "unresolvable")
            ? null
            : h("button", { class: "start", onclick: () => act(ipc.startServer(s.name)), disabled: !s.enabled }, "Start"),
        h("button", { onclick: () => act(ipc.setServerEnabled(s.name, !s.enabled)) }, s.enabled ? "Disable" : "Enable"),
        h("label", { class: "always-on", title: "Always on: starts with the app and keeps running. Otherwise it starts when its tools are needed and stops when idle (Settings)." },
          h("input", { type: "checkbox", class: "always-on-toggle", checked: s.always_on, disabled: !s.enabled, onchange: () => act(ipc.setAlwaysOn(s.name, !s.always_on)) }),
          " Always on"),
        h("button", { class: "edit", onclick: () => edit(s.name) }, "Edit"),
        h("button", { class: "diagnose", onclick: () => diagnose(s.name) }, "Diagnose"),
        h("button", { class: "logs", onclick: () => showLogs(s.name) }, "Logs"),
        h("button", { class: "danger", onclick: () => remove(s.name) }, "Remove"),
      ),
      panel(s.name),
      s.sandboxed != null ? sandbox(s.name) : null,
    );
  };

  const cards = new Map<string, { key: string; el: HTMLElement }>();
  const render = (rows: ServerRow[]) => {
    if (rows.length === 0) {
      cards.clear();
      panels.clear();
      sandboxes.clear();
      list.replaceChildren(
        h("div", { class: "empty" },
          h("h2", {}, "No servers yet"),
          h("p", {}, "New to MCP? Add the official sample server, which demonstrates tools, resources and prompts. You will see exactly what it runs before it starts."),
          h("div", { class: "actions first-run" },
            h("button", { class: "primary sample", onclick: () => act(ipc.addServer(sampleServer(), false)) }, "Add the sample server"),
            h("button", { class: "import", onclick: () => root.append(importDialog((msg) => { showNotice(msg); void refresh(); })) }, "Import from another app…"),
          ),
          h("p", {}, "Already use Claude Desktop, VS Code or Cursor? “Import…” brings their servers over. Or use “Add server”, or from a terminal `switchboard server add NAME -- COMMAND ARGS...`."),
        ),
      );
      return;
    }
    const now = Date.now();
    const sorted = sortRows(rows);
    const els = sorted.map((s) => {
      const key = JSON.stringify([s, signIns.get(s.name) ?? null]);
      const have = cards.get(s.name);
      if (have && have.key === key) return have.el;
      const el = card(s, now);
      cards.set(s.name, { key, el });
      return el;
    });
    for (const name of [...cards.keys()]) if (!rows.some((r) => r.name === name)) cards.delete(name);
    for (const name of [...panels.keys()]) if (!rows.some((r) => r.name === name)) panels.delete(name);
    for (const name of [...sandboxes.keys()]) if (!rows.some((r) => r.name === name)) sandboxes.delete(name);
    // Move only what is out of place.
    els.forEach((el, i) => {
      if (list.children[i] !== el) list.insertBefore(el, list.children[i] ?? null);
    });
    while (list.children.length > els.length) list.lastElementChild?.remove();
  };

  // The host pushes changes; a burst of them (a crash loop, a list_changed storm) becomes one
  // re-read. A local tick keeps backoff countdowns moving without asking the host.
  let pending: number | undefined;
  const onChange = () => {
    if (pending === undefined) {
      pending = window.setTimeout(() => {
        pending = undefined;
        void refresh();
      }, 100);
    }
  };
  const unlisten = events.hostChanged.listen(onChange);
  void refresh();
  const tick = window.setInterval(() => {
    const now = Date.now();
    for (const r of rows) {
      if (r.status.kind !== "backoff") continue;
      const badge = cards.get(r.name)?.el.querySelector(".badge");
      if (badge) badge.textContent = rowBadge(r, now).label;
    }
  }, 1000);
  return () => {
    window.clearInterval(tick);
    guard.dispose();
    void unlisten.then((stop) => stop());
  };
}

let firstRenderAnnounced = false;
// The last costs read, for the next visit's first draw: cards drawn without their cost line
// grew when it arrived and moved the cards below them under the pointer. A price that changed
// meanwhile (another model picked) shows once the visit's own read arrives, in place.
let lastCosts: CatalogCostsDto | null = null;
/** The servers page is the window's first: once it has its data, the host may start the servers
 * kept always on, which it held back so they would not compete with this render (issue 14). */
function announceFirstRender() {
  if (firstRenderAnnounced) return;
  firstRenderAnnounced = true;
  // After this frame is drawn, not before.
  requestAnimationFrame(() => void Promise.resolve().then(() => ipc.windowReady()).catch(() => undefined));
}

/** The first-run sample: the reference server from npm, pinned so what is approved is what runs. */
export function sampleServer(): AddServerRequest {
  return {
    kind: "stdio",
    name: "everything",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"],
    cwd: "",
    env: [],
  };
}

/** What doctor found: each check with its verdict, what would run, and the trial's stderr. */
export function doctorDialog(d: DoctorDto): HTMLDialogElement {
  const mark = { ok: "ok", warn: "warn", fail: "FAIL", skipped: "skip" } as const;
  const ok = h("button", { autofocus: true }, "Close");
  const m = modal("doctor-dialog", `Diagnosis of ${d.name}`, [
    h("h2", {}, `Diagnosis of ${d.name}`),
    d.plan.length > 0
      ? h("dl", { class: "plan" }, ...d.plan.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, h("code", {}, v))]))
      : null,
    h("ul", { class: "checks" }, ...d.checks.map((c) => h("li", { class: `check ${c.level}` }, h("b", {}, `[${mark[c.level]}] ${c.name}`), " ", c.detail))),
    d.stderr_tail.length > 0 ? h("pre", { class: "stderr" }, d.stderr_tail.join("\n")) : null,
    h("div", { class: "actions" }, ok),
  ]);
  ok.addEventListener("click", m.close);
  return m.dialog;
}
