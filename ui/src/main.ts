// Entry point of the web view: a tab bar (arrow keys move between tabs, as WAI-ARIA tabs do)
// and the page it selects; the approval and question dialogs are mounted once above every page.
import "./styles.css";
import { h } from "./app/dom";
import { mountChat } from "./features/chat";
import { mountAgents } from "./features/agents";
import { mountCatalog } from "./features/catalog";
import { mountPipelines } from "./features/pipelines";
import { mountPrompts } from "./features/context";
import { mountResources } from "./features/context";
import { mountSkills } from "./features/skills";
import { mountServers } from "./features/servers";
import { mountRegistry } from "./features/registry";
import { mountApprovals } from "./features/approvals";
import { mountQuestions } from "./features/questions";
import { mountLinks } from "./features/links";
import { mountAudit } from "./features/audit";
import { mountMetrics } from "./features/metrics";
import { mountPolicy } from "./features/policy";
import { mountCredentials } from "./features/credentials";
import { applySavedTheme, installShortcuts, mountSettings } from "./features/settings";
import { ipc } from "./ipc/client";

const pages = {
  chat: { label: "Chat", mount: mountChat },
  agents: { label: "Agents", mount: mountAgents },
  servers: { label: "Servers", mount: mountServers },
  registry: { label: "Registry", mount: mountRegistry },
  credentials: { label: "Credentials", mount: mountCredentials },
  tools: { label: "Tools", mount: mountCatalog },
  pipelines: { label: "Pipelines", mount: mountPipelines },
  resources: { label: "Resources", mount: mountResources },
  prompts: { label: "Prompts", mount: mountPrompts },
  skills: { label: "Skills", mount: mountSkills },
  audit: { label: "Audit", mount: mountAudit },
  metrics: { label: "Metrics", mount: mountMetrics },
  policy: { label: "Policy", mount: mountPolicy },
  settings: { label: "Settings", mount: mountSettings },
} as const;
type Page = keyof typeof pages;
const order = Object.keys(pages) as Page[];

// The CSP blocks injected scripts, remote images and frames (TA-02); say so when it does.
document.addEventListener("securitypolicyviolation", (e) => {
  console.warn(`blocked by the content security policy: ${e.violatedDirective} ${e.blockedURI}`);
});

/** The whole window when Switchboard could not open its data: the reason and the ways out,
 * as the CLI says them (ST-04). */
function showStartupProblem(root: HTMLElement, problem: string) {
  root.replaceChildren(h("main", { class: "startup-problem", role: "alert" },
    h("h1", {}, "Switchboard cannot start"),
    h("p", { class: "startup-message" }, problem),
    h("p", { class: "hint" }, "Nothing was changed. Close this window, do one of the above, and start Switchboard again.")));
}

async function start(root: HTMLElement) {
  const problem = await ipc.startupProblem().catch(() => null);
  if (problem) {
    showStartupProblem(root, problem);
    return;
  }
  void applySavedTheme();
  mountPages(root);
  installShortcuts();
}

function mountPages(root: HTMLElement) {
  const main = h("main", { id: "page", role: "tabpanel" });
  let unmount: (() => void) | null = null;
  let current: Page = "servers";
  const tabs = order.map((p) =>
    h("button", { class: "tab", id: `tab-${p}`, "data-page": p, role: "tab", "aria-controls": "page", onclick: () => show(p) }, pages[p].label),
  );
  const show = (p: Page) => {
    unmount?.();
    current = p;
    tabs.forEach((t) => {
      const on = t.dataset.page === p;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
    });
    main.setAttribute("aria-labelledby", `tab-${p}`);
    unmount = pages[p].mount(main);
  };
  const nav = h("nav", { class: "tabs", role: "tablist", "aria-label": "Pages" }, ...tabs);
  nav.addEventListener("keydown", (ev) => {
    const i = order.indexOf(current);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: order.length - 1 }[ev.key];
    if (next === undefined) return;
    ev.preventDefault();
    const p = order[(next + order.length) % order.length] ?? "servers";
    show(p);
    tabs[order.indexOf(p)]?.focus();
  });
  root.replaceChildren(nav, main);
  show("servers");
  // Approval requests and servers' questions can arrive on any page; their dialogs sit above
  // them all.
  mountApprovals(document.body);
  mountQuestions(document.body);
  // A `switchboard://` link proposes a server: its trust dialog sits above every page too.
  mountLinks(document.body);
}

const root = document.getElementById("app");
if (root) void start(root);
