// Pages follow the host live: the host pushes typed change events and a page re-reads what it
// shows. A burst of events (a crash loop, a list_changed storm) becomes one re-read.
import { events } from "../ipc/bindings";
import type { ChangeKind } from "../ipc/bindings";
import { h } from "./dom";

/** Calls `refresh` once per burst of host changes of `kinds`; returns the stop function. */
export function onHostChange(kinds: ChangeKind[], refresh: () => void, delayMs = 150): () => void {
  let pending: number | undefined;
  let stopped = false;
  const unlisten = events.hostChanged.listen((ev) => {
    if (stopped || !kinds.includes(ev.payload.kind) || pending !== undefined) return;
    pending = window.setTimeout(() => {
      pending = undefined;
      if (!stopped) refresh();
    }, delayMs);
  });
  return () => {
    stopped = true;
    window.clearTimeout(pending);
    void unlisten.then((stop) => stop());
  };
}

/** Fills a server filter with "All servers" and `names`, keeping the choice if it still exists. */
export function setServerOptions(select: HTMLSelectElement, names: string[]): void {
  const current = select.value;
  select.replaceChildren(h("option", { value: "" }, "All servers"), ...names.map((n) => h("option", { value: n }, n)));
  select.value = names.includes(current) ? current : "";
}
