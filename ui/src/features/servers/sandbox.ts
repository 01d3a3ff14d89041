// A local server's sandbox (SP-07) on its card: a badge that says whether it runs sandboxed,
// a section to switch the sandbox and its network on or off and to grant folders (read-only or
// writable) or hide paths, to list the domains its network may or may never reach (SP-13), and, when a sandboxed server failed because the sandbox blocked
// something, an "Allow" button per finding. The button sends back the finding's kind and the
// path it displayed: Rust re-reads the failure and grants it only if it still finds exactly
// that, never a path the window chose (SP-12). A credential store (~/.ssh, keyring files, the
// app's data) is never offered by a finding; typed in by the person it is granted only after a
// separate confirmation that says what it holds, and the approval is then voided.
// Every change is saved at once and what is shown is what Rust stored.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { SandboxDto, SandboxFindingDto, ServerRow_Serialize as ServerRow } from "../../ipc/bindings";
import { h } from "../../app/dom";

/** The card's sandbox badge: `null` for remote servers, which have none. */
export function sandboxBadge(s: Pick<ServerRow, "sandboxed">): { label: string; tone: "ok" | "warn"; title: string } | null {
  if (s.sandboxed == null) return null;
  return s.sandboxed
    ? { label: "sandboxed", tone: "ok", title: "It sees system folders, its working directory and the folders granted to it; no network unless allowed." }
    : { label: "not sandboxed", tone: "warn", title: "It runs with all your rights: every file you can read, and the network." };
}

/** The button text for a finding, or `null` when nothing can be granted. */
export function grantLabel(f: SandboxFindingDto): string | null {
  switch (f.kind) {
    case "read":
      return `Allow reading ${f.path ?? "it"}`;
    case "write":
      return `Allow writing ${f.path ?? "it"}`;
    case "network":
      return f.path ? `Allow reaching ${f.path}` : "Allow the network";
    case "masked":
    case "unavailable":
      return null;
  }
}

/** The setting with `path` added to `list` (trimmed), or why not. */
export function withPath(s: SandboxDto, list: "read" | "write" | "deny", typed: string): { ok: true; sandbox: SandboxDto } | { ok: false; why: string } {
  const t = typed.trim();
  if (t === "") return { ok: false, why: "Type a path first." };
  const norm = (p: string) => p.replace(/\/+$/, "") || "/";
  if (s[list].some((p) => norm(p) === norm(t))) return { ok: false, why: "That path is already listed." };
  return { ok: true, sandbox: { ...s, enabled: s.enabled || list !== "deny", [list]: [...s[list], t] } };
}

/** The setting with `typed` added to a domain list (and taken off the other), or why not. */
export function withDomain(s: SandboxDto, list: "allow_domains" | "deny_domains", typed: string): { ok: true; sandbox: SandboxDto } | { ok: false; why: string } {
  const t = typed.trim().toLowerCase().replace(/\.+$/, "");
  if (t === "") return { ok: false, why: "Type a domain first (example.com or *.example.com)." };
  if (s[list].includes(t)) return { ok: false, why: "That domain is already listed." };
  const other = list === "allow_domains" ? "deny_domains" : "allow_domains";
  const next = { ...s, [list]: [...s[list], t], [other]: s[other].filter((d) => d !== t) };
  // Allowing a domain switches the sandbox's network on (as the CLI's --allow-domain does).
  return { ok: true, sandbox: list === "allow_domains" ? { ...next, enabled: true, network: true } : next };
}

/**
 * The setting without `d` in `list`. Removing the last allowed domain (and no blocked one
 * left) switches the network off: no list would mean every domain, wider than what was agreed.
 */
export function withoutDomain(s: SandboxDto, list: "allow_domains" | "deny_domains", d: string): SandboxDto {
  const next = { ...s, [list]: s[list].filter((x) => x !== d) };
  const emptied = list === "allow_domains" && s.allow_domains.length > 0 && next.allow_domains.length === 0 && next.deny_domains.length === 0;
  return emptied ? { ...next, network: false } : next;
}

/** What the sandbox blocked in the last failed run, each with an "Allow" button. */
export function sandboxFindings(server: string, onGranted: (msg: string) => void): HTMLElement {
  const box = h("div", { class: "sandbox-findings", role: "status" });
  const load = async () => {
    const r = await attempt(ipc.sandboxFindings(server));
    if (r instanceof IpcFailure) {
      box.replaceChildren(h("p", { class: "error" }, r.message));
      return;
    }
    const found = r as SandboxFindingDto[];
    box.replaceChildren(...found.map((f) => {
      const label = grantLabel(f);
      const grant = label ? h("button", { class: "primary grant-sandbox" }, label) : null;
      grant?.addEventListener("click", async () => {
        grant.disabled = true;
        const g = await attempt(ipc.grantSandboxFinding(server, f.kind, f.path ?? null));
        if (g instanceof IpcFailure) {
          grant.disabled = false;
          box.append(h("p", { class: "error" }, g.message));
          return;
        }
        onGranted(g.approval_kept ? `${label}: done; ${server} restarts with it.` : `${label}: done; review and approve ${server} again.`);
      });
      return h("p", { class: "sandbox-finding", "data-kind": f.kind }, f.message, " ", grant);
    }));
  };
  void load();
  return box;
}

let panels = 0;

/** The card's sandbox section, loaded when first opened. */
export function sandboxPanel(server: string): HTMLDetailsElement {
  const n = ++panels;
  const enabled = h("input", { type: "checkbox", class: "sandbox-enabled", id: `sandbox-on-${n}` });
  const network = h("input", { type: "checkbox", class: "sandbox-network", id: `sandbox-net-${n}` });
  const lists = h("div", { class: "sandbox-lists" });
  const path = h("input", { type: "text", class: "sandbox-path", id: `sandbox-path-${n}`, placeholder: "/home/you/project or ~/project", autocomplete: "off", spellcheck: "false" });
  const addRead = h("button", { type: "button", class: "sandbox-add-read" }, "Allow reading");
  const addWrite = h("button", { type: "button", class: "sandbox-add-write" }, "Allow writing");
  const addDeny = h("button", { type: "button", class: "sandbox-add-deny" }, "Hide");
  const domain = h("input", { type: "text", class: "sandbox-domain", id: `sandbox-domain-${n}`, placeholder: "api.example.com or *.example.com", autocomplete: "off", spellcheck: "false" });
  const allowDomain = h("button", { type: "button", class: "sandbox-allow-domain" }, "Allow domain");
  const denyDomain = h("button", { type: "button", class: "sandbox-deny-domain" }, "Block domain");
  const status = h("p", { class: "sandbox-status hint", role: "status" });
  const confirmBox = h("div", { class: "sandbox-unmask-confirm", role: "alertdialog", hidden: "" });
  let current: SandboxDto = { enabled: false, read: [], write: [], deny: [], network: false, allow_domains: [], deny_domains: [], unmask: [] };
  let loaded = false;

  const say = (text: string, bad = false) => {
    status.textContent = text;
    status.classList.toggle("error", bad);
  };
  const controls = () => [enabled, network, path, addRead, addWrite, addDeny, domain, allowDomain, denyDomain, ...lists.querySelectorAll("button")] as (HTMLInputElement | HTMLButtonElement)[];
  const render = () => {
    enabled.checked = current.enabled;
    network.checked = current.network;
    network.disabled = !current.enabled;
    const section = (list: "read" | "write" | "deny", title: string) => {
      const items = current[list].map((p) => {
        const remove = h("button", { type: "button", class: "sandbox-remove", "aria-label": `Remove ${p}` }, "Remove");
        remove.addEventListener("click", () => void save({ ...current, [list]: current[list].filter((x) => x !== p), unmask: current.unmask.filter((x) => x !== p) }, `Removed ${p}.`));
        return h("li", { class: "sandbox-item" }, h("code", {}, p), " ", remove);
      });
      return items.length ? h("div", { class: `sandbox-${list}` }, h("h4", {}, title), h("ul", {}, ...items)) : null;
    };
    const domains = (list: "allow_domains" | "deny_domains", title: string) => {
      const items = current[list].map((d) => {
        const remove = h("button", { type: "button", class: "sandbox-remove", "aria-label": `Remove ${d}` }, "Remove");
        remove.addEventListener("click", () => {
          const next = withoutDomain(current, list, d);
          void save(next, next.network === current.network ? `Removed ${d}.` : `Removed ${d}; no domain is left, so the network is off.`);
        });
        return h("li", { class: "sandbox-item" }, h("code", {}, d), " ", remove);
      });
      return items.length ? h("div", { class: `sandbox-${list.replace("_", "-")}` }, h("h4", {}, title), h("ul", {}, ...items)) : null;
    };
    const unmasked = current.unmask.length
      ? h("div", { class: "sandbox-unmask" }, h("h4", {}, "Credential stores you unmasked"), h("ul", {}, ...current.unmask.map((p) => h("li", {}, h("code", {}, p)))))
      : null;
    lists.replaceChildren(
      ...[section("read", "May read"), section("write", "May read and write"), section("deny", "Hidden"), domains("allow_domains", "May reach only these domains"), domains("deny_domains", "Never reaches"), unmasked].filter((x): x is HTMLDivElement => x !== null),
    );
  };
  const save = async (next: SandboxDto, done: string): Promise<boolean> => {
    controls().forEach((c) => (c.disabled = true));
    say("Saving…");
    try {
      const r = await attempt(ipc.setServerSandbox(server, next));
      if (r instanceof IpcFailure) {
        say(r.message, true);
        return false;
      }
      current = r.sandbox;
      say(r.approval_kept ? `${done} It stays approved.` : `${done} Review and approve it before it starts.`);
      return true;
    } finally {
      controls().forEach((c) => (c.disabled = false));
      render();
    }
  };
  const add = async (list: "read" | "write" | "deny") => {
    confirmBox.hidden = true;
    const next = withPath(current, list, path.value);
    if (!next.ok) return say(next.why, true);
    if (list !== "deny") {
      // SP-12: a credential store needs its own confirmation, which says what it holds.
      const store = await attempt(ipc.sandboxCredentialStore(path.value.trim()));
      if (store instanceof IpcFailure) return say(store.message, true);
      if (store != null) return askUnmask(next.sandbox, list, path.value.trim(), store);
    }
    if (await save(next.sandbox, "Saved.")) path.value = "";
    path.focus();
  };
  const askUnmask = (next: SandboxDto, list: "read" | "write", typed: string, holds: string) => {
    const verb = list === "read" ? "reading" : "reading and writing";
    const yes = h("button", { type: "button", class: "danger sandbox-unmask-yes" }, `Unmask it and allow ${verb}`);
    const no = h("button", { type: "button", class: "sandbox-unmask-no" }, "Cancel");
    confirmBox.replaceChildren(
      h("p", {}, h("code", {}, typed), ` holds ${holds}. The sandbox hides it from every server, even inside a granted folder. Unmask it for ${server}? Nothing a server printed asked for this: only grant it if you mean it. ${server} must then be reviewed and approved again before it starts.`),
      yes, " ", no,
    );
    confirmBox.hidden = false;
    say("");
    no.addEventListener("click", () => { confirmBox.hidden = true; path.focus(); });
    yes.addEventListener("click", async () => {
      confirmBox.hidden = true;
      if (await save({ ...next, unmask: [...next.unmask, typed] }, `Unmasked ${typed}.`)) path.value = "";
    });
    yes.focus();
  };
  const addDomain = async (list: "allow_domains" | "deny_domains") => {
    const next = withDomain(current, list, domain.value);
    if (!next.ok) return say(next.why, true);
    if (await save(next.sandbox, "Saved.")) domain.value = "";
    domain.focus();
  };
  allowDomain.addEventListener("click", () => void addDomain("allow_domains"));
  denyDomain.addEventListener("click", () => void addDomain("deny_domains"));
  addRead.addEventListener("click", () => void add("read"));
  addWrite.addEventListener("click", () => void add("write"));
  addDeny.addEventListener("click", () => void add("deny"));
  enabled.addEventListener("change", () => void save({ ...current, enabled: enabled.checked }, enabled.checked ? "Sandbox on." : "Sandbox off."));
  network.addEventListener("change", () => void save({ ...current, network: network.checked }, network.checked ? "Network allowed." : "Network off."));

  const details = h("details", { class: "server-sandbox", "data-server": server },
    h("summary", {}, "Sandbox"),
    h("p", { class: "hint" }, "Sandboxed, the server sees the system folders (read-only), its working directory and the folders granted here, with an empty home folder: no ~/.ssh, cloud credentials or keyring files. Linux only (bubblewrap); not available on Windows or macOS yet."),
    h("label", { for: enabled.id }, enabled, " Run it in a sandbox"),
    h("label", { for: network.id }, network, " Allow the network"),
    lists,
    h("div", { class: "sandbox-add-row" }, h("label", { for: path.id, class: "visually-hidden" }, "Path to grant or hide"), path, addRead, addWrite, addDeny),
    h("p", { class: "hint" }, "The network is the server's own, never this computer's services. With domains listed it reaches only those (a blocked one never), through Switchboard's filtering proxy."),
    h("div", { class: "sandbox-add-row" }, h("label", { for: domain.id, class: "visually-hidden" }, "Domain to allow or block"), domain, allowDomain, denyDomain),
    confirmBox,
    status,
  );
  details.addEventListener("toggle", async () => {
    if (!details.open || loaded) return;
    loaded = true;
    const r = await attempt(ipc.serverSandbox(server));
    if (r instanceof IpcFailure) return say(r.message, true);
    current = r;
    render();
  });
  return details;
}
