// Servers start when their tools are needed (issue 14), so the Resources and Prompts pages, which
// list what running servers offer, can miss an approved server that has not started yet. This
// bar names those servers and starts them on request: opening the page never starts anything by
// itself, the person decides.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import { h } from "../../app/dom";

/** Approved, enabled servers that are not running: they start when needed. */
export async function waitingServers(): Promise<string[]> {
  try {
    const r = await attempt(ipc.listServers());
    if (r instanceof IpcFailure) return [];
    return r
      .filter((s) => s.enabled && s.trust === "trusted" && s.status.kind === "stopped")
      .map((s) => s.name);
  } catch {
    return [];
  }
}

/** The bar: empty (hidden) when nothing waits; `what` is "resources" or "prompts". */
export function waitingBar(what: string, onError: (message: string) => void): { element: HTMLElement; update: () => Promise<void> } {
  const element = h("p", { class: "note waiting-servers", hidden: true });
  const update = async () => {
    const names = await waitingServers();
    if (names.length === 0) {
      element.hidden = true;
      element.replaceChildren();
      return;
    }
    const start = h("button", { class: "start-waiting" }, names.length === 1 ? `Start ${names[0]}` : `Start these ${names.length}`);
    start.addEventListener("click", () => {
      (start as HTMLButtonElement).disabled = true;
      void Promise.all(names.map((n) => attempt(ipc.openServer(n)))).then((rs) => {
        const bad = rs.find((r): r is IpcFailure => r instanceof IpcFailure);
        if (bad) onError(bad.message);

      });
    });
    element.replaceChildren(
      `Not running yet (they start when needed): ${names.join(", ")}. Their ${what} show once they run. `,
      start,
    );
    element.hidden = false;
  };
  return { element, update };
}
