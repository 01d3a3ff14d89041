// The Policy page: how tool calls are decided, the rules and grants (with Remove / Revoke and
// "Reset all grants"), the rules as an editable TOML file, and per-server tags. Everything shown
// comes from files the user or an import wrote, so it all goes in as text through h().
import { events } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { editorSection } from "./editor";
import { rulesSection } from "./rules";
import { tagsSection } from "./tags";

export function mountPolicy(root: HTMLElement): () => void {
  let disposed = false;
  const editor = editorSection(() => rules.reload());
  const rules = rulesSection(root, () => void editor.load());
  const tags = tagsSection();
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Policy")),
    h("section", { class: "policy-intro", "aria-label": "How tool calls are decided" },
      h("p", {}, "Every tool call is checked against the rules below. When several match, the strictest wins: ",
        h("strong", {}, "deny"), " over ", h("strong", {}, "ask"), " over ", h("strong", {}, "allow"),
        ". A call that no rule matches asks."),
      h("p", {}, "Tool annotations (read-only, destructive…) are the server's own claims: they relax nothing unless you tag the server ",
        h("em", {}, "trusted"), " below."),
      h("p", { class: "hint" }, "Grants are the \"always\" and \"this conversation\" answers given at an approval prompt; revoke them here."),
    ),
    rules.el,
    editor.el,
    tags.el,
  );
  // A grant appears when an approval is answered; the server list changes on the Servers page.
  let timer: number | undefined;
  const unlisten = events.hostChanged.listen((e) => {
    if (disposed) return;
    if (e.payload.kind === "servers") void tags.reload();
    if (e.payload.kind !== "approvals") return;
    window.clearTimeout(timer);
    timer = window.setTimeout(() => {
      if (disposed) return;
      void rules.reload();
    }, 100);
  });
  void rules.reload();
  void editor.load(true);
  void tags.reload();
  return () => {
    disposed = true;
    window.clearTimeout(timer);
    void unlisten.then((stop) => stop());
  };
}
