// Entry point of the web view: a tab bar and the page it selects.
import "./styles.css";
import { h } from "./app/dom";
import { mountCatalog } from "./features/catalog/page";
import { mountServers } from "./features/servers/page";
import { mountApprovals } from "./features/approvals/dialog";

const pages = { servers: mountServers, tools: mountCatalog } as const;
type Page = keyof typeof pages;

const root = document.getElementById("app");
if (root) {
  const main = h("main", {});
  let unmount: (() => void) | null = null;
  const tabs = (Object.keys(pages) as Page[]).map((p) =>
    h("button", { class: "tab", "data-page": p, role: "tab", onclick: () => show(p) }, p === "servers" ? "Servers" : "Tools"),
  );
  const show = (p: Page) => {
    unmount?.();
    tabs.forEach((t) => t.setAttribute("aria-selected", String(t.dataset.page === p)));
    unmount = pages[p](main);
  };
  root.replaceChildren(h("nav", { class: "tabs", role: "tablist" }, ...tabs), main);
  show("servers");
  // Approval requests can arrive on any page; the dialog sits above them all.
  mountApprovals(document.body);
}
