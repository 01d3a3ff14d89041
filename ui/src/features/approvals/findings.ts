// Hygiene flags (TD-04) in the approval prompt: the tool's texts are fetched from Rust after
// the dialog opens and shown above the arguments. A failure to fetch them shows nothing: the
// flags add friction, and their absence must never block answering.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { FindingDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { findingsList } from "../catalog";

/** The block shown in the prompt, or null for a clean tool. */
export function approvalFindings(findings: FindingDto[]): HTMLElement | null {
  const list = findingsList(findings);
  if (!list) return null;
  return h("section", { class: "approval-findings", role: "note" },
    h("h3", {}, "Warnings about this tool's description"),
    list,
  );
}

/** Fetches the tool's findings and puts them before the arguments of `dialog`. */
export async function attachFindings(dialog: HTMLElement, server: string, tool: string): Promise<void> {
  try {
    const r = await attempt(ipc.toolFindings(server, tool));
    if (r instanceof IpcFailure) return;
    const block = approvalFindings(r);
    if (!block || !dialog.isConnected) return;
    const anchor = dialog.querySelector(".approval-args-head");
    if (anchor) anchor.before(block);
    else dialog.append(block);
  } catch {
    // No flags rather than no prompt.
  }
}
